#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "quantity.h"

/* Splits a table line at '|' into exactly n fields (in place); returns 0 or -1. */
static int split_fields(char *line, char **fields, int n)
{
    int i = 0;
    fields[i++] = line;
    for (char *c = line; *c != '\0'; c++) {
        if (*c == '|') {
            if (i == n)
                return -1;
            *c = '\0';
            fields[i++] = c + 1;
        }
    }
    return i == n ? 0 : -1;
}

static enum quantity_unit parse_unit(const char *s)
{
    if (strcmp(s, "milli") == 0)
        return QUANTITY_UNIT_MILLI;
    assert_string_equal(s, "base");
    return QUANTITY_UNIT_BASE;
}

static int64_t parse_int64(const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        fail_msg("bad integer in fixture: %s", s);
    return (int64_t)v;
}

/* Calls fn for every data line of a table; returns how many lines it saw. */
static int for_each_row(const char *rel, int nfields, void (*fn)(char **fields, int lineno))
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
        if (line[0] == '#' || (line[0] == '\0'))
            continue;
        char *fields[4];
        if (split_fields(line, fields, nfields) != 0)
            fail_msg("%s:%d: expected %d fields", path, lineno, nfields);
        fn(fields, lineno);
        rows++;
    }
    fclose(f);
    free(path);
    return rows;
}

static void parse_row(char **f, int lineno)
{
    struct quantity q = {0, QUANTITY_DECIMAL_SI};
    struct error err = {{0}};
    int rc = quantity_parse(f[0], parse_unit(f[1]), &q, &err);
    if (strcmp(f[2], "error") == 0) {
        if (rc != -1)
            fail_msg("parse.txt:%d: \"%s\" parsed as %" PRId64 ", expected an error", lineno, f[0], q.value);
        if (strstr(err.message, f[3]) == NULL)
            fail_msg("parse.txt:%d: message \"%s\" lacks \"%s\"", lineno, err.message, f[3]);
        return;
    }
    if (rc != 0)
        fail_msg("parse.txt:%d: \"%s\" failed: %s", lineno, f[0], err.message);
    if (q.value != parse_int64(f[2]))
        fail_msg("parse.txt:%d: \"%s\" is %" PRId64 ", expected %s", lineno, f[0], q.value, f[2]);
    char buf[QUANTITY_FORMAT_MAX];
    size_t n = quantity_format(&q, parse_unit(f[1]), buf, sizeof(buf));
    assert_int_equal(n, strlen(buf));
    if (strcmp(buf, f[3]) != 0)
        fail_msg("parse.txt:%d: \"%s\" formats as \"%s\", expected \"%s\"", lineno, f[0], buf, f[3]);
    /* The canonical string parses back to the same value. */
    struct quantity again;
    assert_int_equal(quantity_parse(buf, parse_unit(f[1]), &again, &err), 0);
    assert_int_equal(again.value, q.value);
}

static void test_parse_table(void **state)
{
    (void)state;
    assert_true(for_each_row("quantity/parse.txt", 4, parse_row) > 90);
}

static void format_row(char **f, int lineno)
{
    struct quantity q = {parse_int64(f[0]), QUANTITY_DECIMAL_SI};
    if (strcmp(f[2], "binary") == 0)
        q.format = QUANTITY_BINARY_SI;
    else if (strcmp(f[2], "exponent") == 0)
        q.format = QUANTITY_DECIMAL_EXPONENT;
    else
        assert_string_equal(f[2], "decimal");
    char buf[QUANTITY_FORMAT_MAX];
    quantity_format(&q, parse_unit(f[1]), buf, sizeof(buf));
    if (strcmp(buf, f[3]) != 0)
        fail_msg("format.txt:%d: %s formats as \"%s\", expected \"%s\"", lineno, f[0], buf, f[3]);
}

static void test_format_table(void **state)
{
    (void)state;
    assert_true(for_each_row("quantity/format.txt", 4, format_row) > 20);
}

/* The format of the parsed string survives: binary stays binary, and sums take the first non-zero term's. */
static void test_format_kept(void **state)
{
    (void)state;
    struct quantity a, b;
    struct error err;
    assert_int_equal(quantity_parse("2Gi", QUANTITY_UNIT_BASE, &a, &err), 0);
    assert_int_equal(a.format, QUANTITY_BINARY_SI);
    assert_int_equal(quantity_parse("2G", QUANTITY_UNIT_BASE, &b, &err), 0);
    assert_int_equal(b.format, QUANTITY_DECIMAL_SI);
    assert_int_equal(quantity_parse("1e3", QUANTITY_UNIT_BASE, &b, &err), 0);
    assert_int_equal(b.format, QUANTITY_DECIMAL_EXPONENT);
    /* A binary amount below one is decimal, as ParseQuantity says. */
    assert_int_equal(quantity_parse("0.0001Ki", QUANTITY_UNIT_BASE, &b, &err), 0);
    assert_int_equal(b.format, QUANTITY_DECIMAL_SI);
    assert_int_equal(b.value, 1);

    struct quantity sum = {0, QUANTITY_DECIMAL_SI};
    assert_int_equal(quantity_add(&sum, &a), 0);
    assert_int_equal(sum.format, QUANTITY_BINARY_SI);
    assert_int_equal(quantity_parse("1G", QUANTITY_UNIT_BASE, &b, &err), 0);
    assert_int_equal(quantity_add(&sum, &b), 0);
    assert_int_equal(sum.format, QUANTITY_BINARY_SI);
    assert_int_equal(sum.value, 2147483648LL + 1000000000LL);
}

static void test_arithmetic_overflow(void **state)
{
    (void)state;
    struct quantity a = {INT64_MAX - 1, QUANTITY_DECIMAL_SI}, one = {1, QUANTITY_DECIMAL_SI};
    assert_int_equal(quantity_add(&a, &one), 0);
    assert_int_equal(a.value, INT64_MAX);
    assert_int_equal(quantity_add(&a, &one), -1);
    assert_int_equal(a.value, INT64_MAX); /* unchanged */

    struct quantity m = {4611686018427387904LL, QUANTITY_BINARY_SI}; /* 2^62 */
    assert_int_equal(quantity_mul(&m, 2), -1);
    assert_int_equal(m.value, 4611686018427387904LL);
    assert_int_equal(quantity_mul(&m, 1), 0);
    struct quantity g = {1LL << 30, QUANTITY_BINARY_SI};
    assert_int_equal(quantity_mul(&g, 3), 0);
    assert_int_equal(g.value, 3LL << 30);
    assert_int_equal(g.format, QUANTITY_BINARY_SI);
}

/* A long string is cut in the message, and control bytes never reach it. */
static void test_error_message_sanitized(void **state)
{
    (void)state;
    char s[300];
    memset(s, '9', sizeof(s) - 1);
    s[sizeof(s) - 1] = '\0';
    s[5] = '\n';
    struct quantity q;
    struct error err;
    assert_int_equal(quantity_parse(s, QUANTITY_UNIT_BASE, &q, &err), -1);
    assert_null(strchr(err.message, '\n'));
    assert_non_null(strstr(err.message, "..."));
    assert_true(strlen(err.message) < 80);
}

/*
 * The quick path for digits and a suffix (quantity.c's parse_plain) agrees with
 * the exact one: "<digits><suffix>" parses as "<digits>.0<suffix>" does (a
 * point goes the long way), in value, format and refusal, over seeded random
 * digits (leading zeros, up to 17 of them), every suffix and both units.
 */
static void test_plain_as_general(void **state)
{
    (void)state;
    static const char *const suffixes[] = {"",   "m",  "k",  "M",  "G",   "T",   "P",   "E", "Ki", "Mi", "Gi",
                                           "Ti", "Pi", "Ei", "e3", "E-2", "e+6", "e-3", "u", "n",  "x"};
    unsigned seed = 37;
    for (int round = 0; round < 4000; round++) {
        char digits[20], plain[32], pointed[40];
        int n = 1 + rand_r(&seed) % 17;
        for (int i = 0; i < n; i++)
            digits[i] = (char)('0' + (i == 0 && rand_r(&seed) % 3 == 0 ? 0 : rand_r(&seed) % 10));
        digits[n] = '\0';
        const char *suffix = suffixes[rand_r(&seed) % (sizeof(suffixes) / sizeof(suffixes[0]))];
        enum quantity_unit unit = rand_r(&seed) % 2 ? QUANTITY_UNIT_MILLI : QUANTITY_UNIT_BASE;
        snprintf(plain, sizeof(plain), "%s%s", digits, suffix);
        snprintf(pointed, sizeof(pointed), "%s.0%s", digits, suffix);
        struct quantity a = {-1, QUANTITY_DECIMAL_EXPONENT}, b = {-1, QUANTITY_DECIMAL_EXPONENT};
        struct error ea, eb;
        int ra = quantity_parse(plain, unit, &a, &ea), rb = quantity_parse(pointed, unit, &b, &eb);
        if (ra != rb || (ra == 0 && (a.value != b.value || a.format != b.format)))
            fail_msg("%s (unit %d): %d %lld %d, as %s: %d %lld %d", plain, (int)unit, ra, (long long)a.value, (int)a.format,
                     pointed, rb, (long long)b.value, (int)b.format);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_format_table),
        cmocka_unit_test(test_format_kept),
        cmocka_unit_test(test_arithmetic_overflow),
        cmocka_unit_test(test_error_message_sanitized),
        cmocka_unit_test(test_plain_as_general),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
