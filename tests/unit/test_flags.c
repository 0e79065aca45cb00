#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "flags.h"

/* Splits a table line at '|' into at most n fields (in place); returns how many. */
static int split_fields(char *line, char **fields, int n)
{
    int i = 0;
    fields[i++] = line;
    for (char *c = line; *c != '\0' && i < n; c++) {
        if (*c == '|') {
            *c = '\0';
            fields[i++] = c + 1;
        }
    }
    return i;
}

/* Calls fn for every data line of a fixture table; returns how many it saw. */
static int for_each_row(const char *rel, int nfields, void (*fn)(char **fields, int nf, int lineno))
{
    char *path = fixture_path(rel);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    char line[512];
    int lineno = 0, rows = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *fields[6];
        int nf = split_fields(line, fields, nfields);
        if (nf < nfields - 1)
            fail_msg("%s:%d: expected %d or %d fields", path, lineno, nfields - 1, nfields);
        fn(fields, nf, lineno);
        rows++;
    }
    fclose(f);
    free(path);
    return rows;
}

static int64_t bound_duration(const char *s)
{
    int64_t v;
    struct error err = {{0}};
    if (flags_parse_duration(s, 0, INT64_MAX, &v, &err) != 0)
        fail_msg("bad bound in fixture: %s (%s)", s, err.message);
    return v;
}

static int64_t bound_int(const char *s)
{
    int64_t v;
    struct error err = {{0}};
    if (flags_parse_int(s, INT64_MIN, INT64_MAX, &v, &err) != 0)
        fail_msg("bad bound in fixture: %s (%s)", s, err.message);
    return v;
}

/* Checks one parse result against "value" or "error|substring". */
static void check_result(const char *what, int lineno, int rc, int64_t got, const struct error *err, char **f, int nf)
{
    if (strcmp(f[3], "error") == 0) {
        if (rc == 0)
            fail_msg("%s:%d: \"%s\" parsed as %" PRId64 ", want an error", what, lineno, f[0], got);
        if (nf < 5 || strstr(err->message, f[4]) == NULL)
            fail_msg("%s:%d: \"%s\": message \"%s\" lacks \"%s\"", what, lineno, f[0], err->message, nf < 5 ? "" : f[4]);
        return;
    }
    if (rc != 0)
        fail_msg("%s:%d: \"%s\" failed: %s", what, lineno, f[0], err->message);
    if (got != bound_int(f[3]))
        fail_msg("%s:%d: \"%s\" is %" PRId64 ", want %s", what, lineno, f[0], got, f[3]);
}

static void duration_row(char **f, int nf, int lineno)
{
    struct error err = {{0}};
    int64_t v = -42;
    int rc = flags_parse_duration(f[0], bound_duration(f[1]), bound_duration(f[2]), &v, &err);
    check_result("duration.txt", lineno, rc, v, &err, f, nf);
    if (rc != 0)
        assert_int_equal(v, -42); /* untouched on error */
}

static void test_duration_table(void **state)
{
    assert_true(for_each_row("flags/duration.txt", 5, duration_row) > 30);
}

static void int_row(char **f, int nf, int lineno)
{
    struct error err = {{0}};
    int64_t v = -42;
    int rc = flags_parse_int(f[0], bound_int(f[1]), bound_int(f[2]), &v, &err);
    check_result("int.txt", lineno, rc, v, &err, f, nf);
}

static void test_int_table(void **state)
{
    assert_true(for_each_row("flags/int.txt", 5, int_row) > 15);
}

static void format_row(char **f, int nf, int lineno)
{
    char buf[FLAGS_DURATION_MAX];
    int64_t ms = bound_int(f[0]), back = -1;
    flags_format_duration(ms, buf, sizeof(buf));
    if (strcmp(buf, f[1]) != 0)
        fail_msg("format.txt:%d: %s ms formats as \"%s\", want \"%s\"", lineno, f[0], buf, f[1]);
    struct error err = {{0}};
    if (flags_parse_duration(buf, 0, INT64_MAX, &back, &err) != 0 || back != ms)
        fail_msg("format.txt:%d: \"%s\" does not parse back to %s ms (%s)", lineno, buf, f[0], err.message);
}

static void test_format_table(void **state)
{
    assert_true(for_each_row("flags/format.txt", 2, format_row) > 5);
}

/* A table like a program's, over variables with defaults. */
struct vars {
    const char *name, *list[3];
    size_t nlist;
    int on, level;
    int64_t count, wait_ms;
};

static const char *const levels[] = {"low", "high", NULL};

#define TABLE(v)                                                                                                                   \
    const struct flag table[] = {                                                                                                  \
        FLAG_STRING_ENV("name", "NAME", "T_NAME", &(v)->name, "a name"),                                                           \
        FLAG_LIST("item", "X", (v)->list, &(v)->nlist, "an item"),                                                                 \
        FLAG_BOOL("on", &(v)->on, "switch"),                                                                                       \
        FLAG_CHOICE_ENV("level", "L", "T_LEVEL", levels, &(v)->level, "low or high"),                                              \
        FLAG_INT("count", "N", &(v)->count, 0, 10, "a count"),                                                                     \
        FLAG_DURATION("wait", &(v)->wait_ms, FLAGS_SECOND, FLAGS_HOUR, "a wait"),                                                  \
        FLAG_DURATION("wait-more", &(v)->wait_ms, FLAGS_SECOND, FLAGS_HOUR, "a longer name sharing a prefix"),                     \
    };                                                                                                                             \
    const size_t ntable = sizeof(table) / sizeof(table[0])

/* Parses a NULL-terminated argument list (argv[0] added) with envp; returns the result and fills err. */
static enum flags_result parse(struct vars *v, char **envp, struct error *err, ...)
{
    TABLE(v);
    char *argv[32] = {"prog"};
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    for (char *a; (a = va_arg(ap, char *)) != NULL;)
        argv[argc++] = a;
    va_end(ap);
    memset(err, 0, sizeof(*err));
    return flags_parse(table, ntable, argc, argv, envp, err);
}

static struct vars defaults(void)
{
    return (struct vars){.name = "default", .level = 0, .count = 3, .wait_ms = 30000};
}

static void test_parse_values(void **state)
{
    struct vars v = defaults();
    struct error err;
    assert_int_equal(parse(&v, NULL, &err, "--name", "a", "--item=x", "--item", "y", "--on", "--level", "high", "--count=10",
                           "--wait", "1m30s", NULL),
                     FLAGS_OK);
    assert_string_equal(v.name, "a");
    assert_int_equal(v.nlist, 2);
    assert_string_equal(v.list[0], "x");
    assert_string_equal(v.list[1], "y");
    assert_int_equal(v.on, 1);
    assert_int_equal(v.level, 1);
    assert_int_equal(v.count, 10);
    assert_int_equal(v.wait_ms, 90000);

    /* Nothing given: the defaults stay. */
    v = defaults();
    assert_int_equal(parse(&v, NULL, &err, NULL), FLAGS_OK);
    assert_string_equal(v.name, "default");
    assert_int_equal(v.count, 3);
    assert_int_equal(v.wait_ms, 30000);
    assert_int_equal(v.on, 0);

    /* A flag given twice keeps the last value; --on=false turns a switch off. */
    v = defaults();
    assert_int_equal(parse(&v, NULL, &err, "--on", "--count", "1", "--count", "2", "--on=false", NULL), FLAGS_OK);
    assert_int_equal(v.count, 2);
    assert_int_equal(v.on, 0);

    /* An exact name that is also a prefix of another is itself. */
    v = defaults();
    assert_int_equal(parse(&v, NULL, &err, "--wait", "2s", "--wait-more", "3s", NULL), FLAGS_OK);
    assert_int_equal(v.wait_ms, 3000);
}

static void test_parse_errors(void **state)
{
    static const struct {
        const char *args[4];
        const char *message;
    } cases[] = {
        {{"--wait", "99999999999999999", NULL}, "--wait: \"99999999999999999\" has no unit"},
        {{"--wait=99999999999999999s", NULL}, "--wait: 99999999999999999s is out of range (1s..1h)"},
        {{"--count", "11", NULL}, "--count: 11 is out of range (0..10)"},
        {{"--count", NULL}, "--count needs a value"},
        {{"--level", "medium", NULL}, "--level: \"medium\" is not one of low, high"},
        {{"--on=yes", NULL}, "--on: \"yes\" is not true or false"},
        {{"--item", "a", "--item", "b"}, NULL}, /* fine so far: see below */
        /* getopt_long would take these unique prefixes; a later flag would change what they mean. */
        {{"--cou", "1", NULL}, "unknown flag --cou"},
        {{"--wait-m", "1s", NULL}, "unknown flag --wait-m"},
        {{"--nope", NULL}, "unknown flag --nope"},
        {{"-x", NULL}, "unknown flag -x"},
        {{"positional", NULL}, "unexpected argument \"positional\""},
        {{"--count", "1", "--", "--count"}, "unexpected argument \"--count\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct vars v = defaults();
        struct error err;
        enum flags_result r = parse(&v, NULL, &err, cases[i].args[0], cases[i].args[1], cases[i].args[2], cases[i].args[3], NULL);
        if (cases[i].message == NULL) {
            assert_int_equal(r, FLAGS_OK);
            continue;
        }
        if (r != FLAGS_ERROR || strstr(err.message, cases[i].message) == NULL)
            fail_msg("case %zu: result %d, message \"%s\", want \"%s\"", i, r, err.message, cases[i].message);
    }
    /* A list holds at most its capacity. */
    struct vars v = defaults();
    struct error err;
    assert_int_equal(parse(&v, NULL, &err, "--item", "a", "--item", "b", "--item", "c", "--item", "d", NULL), FLAGS_ERROR);
    assert_string_equal(err.message, "--item: given more than 3 times");
    assert_int_equal(v.nlist, 3);
}

static void test_help_and_version_win(void **state)
{
    struct vars v = defaults();
    struct error err;
    /* Wherever they are, and before anything is set: --help shows the defaults. */
    assert_int_equal(parse(&v, NULL, &err, "--count", "7", "--help", NULL), FLAGS_HELP);
    assert_int_equal(v.count, 3);
    assert_int_equal(parse(&v, NULL, &err, "--count", "bad", "-h", NULL), FLAGS_HELP);
    assert_int_equal(parse(&v, NULL, &err, "--version", "--count", "bad", NULL), FLAGS_VERSION);
    /* After "--" they are arguments (refused). */
    assert_int_equal(parse(&v, NULL, &err, "--", "--help", NULL), FLAGS_ERROR);
}

static void test_environment(void **state)
{
    char *env[] = {"T_NAME=from-env", "T_LEVEL=high", "T_NAMEX=other", NULL};
    struct vars v = defaults();
    struct error err;
    assert_int_equal(parse(&v, env, &err, NULL), FLAGS_OK);
    assert_string_equal(v.name, "from-env");
    assert_int_equal(v.level, 1);
    /* The command line wins. */
    v = defaults();
    assert_int_equal(parse(&v, env, &err, "--name", "from-flag", NULL), FLAGS_OK);
    assert_string_equal(v.name, "from-flag");
    /* An empty variable is unset; a bad one names the variable. */
    char *empty[] = {"T_NAME=", NULL};
    v = defaults();
    assert_int_equal(parse(&v, empty, &err, NULL), FLAGS_OK);
    assert_string_equal(v.name, "default");
    char *bad[] = {"T_LEVEL=loud", NULL};
    assert_int_equal(parse(&v, bad, &err, NULL), FLAGS_ERROR);
    assert_string_equal(err.message, "T_LEVEL: \"loud\" is not one of low, high");
}

/* --help is generated from the table: defaults, bounds and variables. */
static void test_usage(void **state)
{
    struct vars v = defaults();
    v.count = -1; /* outside the bounds: "unset", no default shown */
    TABLE(&v);
    struct flags_program p = {.name = "prog", .synopsis = "prog [flags]", .epilog = "end\n", .flags = table, .nflags = ntable};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    flags_usage(&p, f);
    fclose(f);
    /* Columns are aligned to the longest flag: compare with runs of spaces made one. */
    char *w = text;
    for (char *r = text; *r != '\0'; r++)
        if (!(*r == ' ' && w > text && w[-1] == ' '))
            *w++ = *r;
    *w = '\0';
    assert_non_null(strstr(text, "usage: prog [flags]\n"));
    assert_non_null(strstr(text, "--wait D a wait (default 30s; 1s..1h)\n"));
    assert_non_null(strstr(text, "--name NAME a name (default default; env T_NAME)\n"));
    assert_non_null(strstr(text, "--count N a count (0..10)\n"));
    assert_non_null(strstr(text, "--level L low or high (default low; env T_LEVEL)\n"));
    assert_non_null(strstr(text, "--item X an item (repeatable, at most 3 times)\n"));
    assert_non_null(strstr(text, "--on switch\n"));
    assert_non_null(strstr(text, "end\n"));
    free(text);
    /* A switch on by default says so, and how to turn it off. */
    v.on = 1;
    text = NULL;
    f = open_memstream(&text, &len);
    flags_usage(&p, f);
    fclose(f);
    assert_non_null(strstr(text, "switch (on by default; --on=false turns it off)\n"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration_table), cmocka_unit_test(test_int_table),    cmocka_unit_test(test_format_table),
        cmocka_unit_test(test_parse_values),   cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_help_and_version_win),
        cmocka_unit_test(test_environment),    cmocka_unit_test(test_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
