#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* A line must be one valid JSON object with the fields we promise. */
static json_t *parse_line(const char *line)
{
    size_t n = strlen(line);
    assert_true(n > 0);
    assert_int_equal(line[n - 1], '\n');
    json_error_t err;
    json_t *j = json_loadb(line, n - 1, 0, &err);
    if (j == NULL)
        fail_msg("not JSON: %s (%s)", line, err.text);
    return j;
}

static void test_format_fields(void **state)
{
    (void)state;
    char buf[512];
    size_t n = log_format_line(buf, sizeof(buf), 1700000000123LL, LOG_LEVEL_WARN, "gate/main.c:7", "hello");
    assert_int_equal(n, strlen(buf));
    json_t *j = parse_line(buf);
    assert_string_equal(json_string_value(json_object_get(j, "ts")), "2023-11-14T22:13:20.123Z");
    assert_string_equal(json_string_value(json_object_get(j, "level")), "warn");
    assert_string_equal(json_string_value(json_object_get(j, "src")), "gate/main.c:7");
    assert_string_equal(json_string_value(json_object_get(j, "msg")), "hello");
    json_decref(j);
}

static void test_format_escapes(void **state)
{
    (void)state;
    char buf[512];
    const char *msg = "quote \" backslash \\ newline \n tab \t bell \a end";
    log_format_line(buf, sizeof(buf), 0, LOG_LEVEL_ERROR, "x.c:1", msg);
    assert_null(strchr(buf, '\n') == buf + strlen(buf) - 1 ? NULL : "inner newline");
    json_t *j = parse_line(buf);
    assert_string_equal(json_string_value(json_object_get(j, "msg")), msg);
    json_decref(j);
}

/* A message too long for the buffer is cut, and the line is still valid JSON. */
static void test_format_truncates_validly(void **state)
{
    (void)state;
    char msg[600];
    memset(msg, 'b', sizeof(msg)); /* the loop below leaves the last bytes before the NUL (valgrind: uninitialised) */
    /* Mix escapes and multi-byte UTF-8 so the cut can land inside either. */
    for (size_t i = 0; i + 3 < sizeof(msg); i += 3) {
        msg[i] = (i % 2) ? '"' : (char)0xC3;
        msg[i + 1] = (i % 2) ? '\x01' : (char)0xA9;
        msg[i + 2] = 'a';
    }
    msg[sizeof(msg) - 1] = '\0';
    for (size_t size = 80; size < 200; size++) {
        char buf[200];
        size_t n = log_format_line(buf, size, 0, LOG_LEVEL_INFO, "x.c:1", msg);
        assert_true(n < size);
        json_t *j = parse_line(buf);
        assert_true(strlen(json_string_value(json_object_get(j, "msg"))) < strlen(msg));
        json_decref(j);
    }
}

static void test_level_parse(void **state)
{
    (void)state;
    enum log_level l;
    assert_int_equal(log_level_parse("debug", &l), 0);
    assert_int_equal(l, LOG_LEVEL_DEBUG);
    assert_int_equal(log_level_parse("loud", &l), -1);
    log_set_level(LOG_LEVEL_WARN);
    assert_false(log_enabled(LOG_LEVEL_INFO));
    assert_true(log_enabled(LOG_LEVEL_ERROR));
    log_set_level(LOG_LEVEL_INFO);
}

/* Runs fn with stderr (where log lines go) captured; returns what it wrote (caller frees). */
static char *capture_stderr(void (*fn)(int *line), int *line)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
    fn(line);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    long n = ftell(tmp) >= 0 ? (fseek(tmp, 0, SEEK_END), ftell(tmp)) : -1;
    assert_true(n > 0);
    char *out = calloc(1, (size_t)n + 1);
    rewind(tmp);
    assert_int_equal(fread(out, 1, (size_t)n, tmp), (size_t)n);
    fclose(tmp);
    return out;
}

static void log_here(int *line)
{
    *line = __LINE__ + 1;
    log_warnf("where am I");
}

/*
 * log.h promises "gate/main.c:42": the path from the source root, wherever the
 * build directory is (meson names sources "../x.c" from build/, and
 * "../../../elsewhere/raygate/x.c" from a build directory outside the tree).
 * meson.build strips that prefix; without it this fails in any build directory.
 */
static void test_source_path_from_root(void **state)
{
    (void)state;
    int line = 0;
    char *out = capture_stderr(log_here, &line);
    json_t *j = parse_line(out);
    char want[64];
    snprintf(want, sizeof(want), "tests/unit/test_log.c:%d", line);
    assert_string_equal(json_string_value(json_object_get(j, "src")), want);
    assert_string_equal(json_string_value(json_object_get(j, "msg")), "where am I");
    json_decref(j);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_fields),
        cmocka_unit_test(test_format_escapes),
        cmocka_unit_test(test_format_truncates_validly),
        cmocka_unit_test(test_level_parse),
        cmocka_unit_test(test_source_path_from_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
