#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fixtures.h"
#include "jsonscan.h"

static int scans(const char *text)
{
    struct jsonscan s;
    jsonscan_init(&s);
    int rc = jsonscan_parse(&s, text, strlen(text));
    jsonscan_finish(&s);
    return rc == 0;
}

static void test_accepts(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "{}",
        " \t\r\n{ } \n",
        "{\"a\":1}",
        "{\"a\":-0.5,\"b\":[true,false,null,\"x\"],\"c\":{\"d\":[]}}",
        "{\"s\":\"with \\\"escapes\\\" \\\\ \\/ \\b\\f\\n\\r\\t\"}",
        "{\"\":0}",
        "{\"a\":123456789012345}",
        "{\"a\":[[[[[]]]]]}",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        if (!scans(ok[i]))
            fail_msg("declined %s", ok[i]);
    }
}

static void test_declines(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "[]",
        "\"x\"",
        "1",
        "{",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{\"a\":1} x",
        "{\"a\":1}{}",
        "{a:1}",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":-}",
        "{\"a\":1e5}",
        "{\"a\":1234567890123456}",
        "{\"a\":tru}",
        "{\"a\":nul}",
        "{\"a\":\"\\u0000\"}",
        "{\"a\":\"\\udc00\"}",
        "{\"a\":\"\\ud83d\"}",
        "{\"a\":\"\\ud83dx\"}",
        "{\"a\":\"\\u00g1\"}",
        "{\"a\":\"\\u12\"}",
        "{\"\\u0041\":1}",
        "{\"a\":\"\\x\"}",
        "{\"a\":\"tab\there\"}",
        "{\"a\":\"\xc3\xa9\"}",
        "{\"a\":1,\"a\":2}",
        "{\"b\\/\":1}",
        "{\"a\":[1 2]}",
        "{\"a\":\"unterminated}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (scans(bad[i]))
            fail_msg("accepted %s", bad[i]);
    }
    /* Duplicates are found in objects of any size and depth. */
    char big[4096];
    size_t n = (size_t)snprintf(big, sizeof(big), "{\"x\":{");
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, "\"k%d\":%d,", i, i);
    snprintf(big + n, sizeof(big) - n, "\"k7\":0}}");
    assert_false(scans(big));
    big[n - 1] = '}';
    big[n] = '}';
    big[n + 1] = '\0';
    assert_true(scans(big));
    /* Nesting deeper than JSONSCAN_MAX_DEPTH. */
    char deep[2 * JSONSCAN_MAX_DEPTH + 16];
    n = 0;
    deep[n++] = '{';
    deep[n++] = '"';
    deep[n++] = 'a';
    deep[n++] = '"';
    deep[n++] = ':';
    for (int i = 0; i < JSONSCAN_MAX_DEPTH; i++)
        deep[n++] = '[';
    for (int i = 0; i < JSONSCAN_MAX_DEPTH; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    deep[n] = '\0';
    assert_false(scans(deep));
}

static void test_tokens(void **state)
{
    (void)state;
    const char *text =
        "{\"kind\":\"Pod\",\"spec\":{\"gates\":[{\"name\":\"g\"},{\"name\":\"h\"}],\"n\":-2.5},\"e\":\"a\\nb\",\"z\":null}";
    struct jsonscan s;
    jsonscan_init(&s);
    assert_int_equal(jsonscan_parse(&s, text, strlen(text)), 0);
    assert_int_equal(jsonscan_type(&s, 0), JSONSCAN_OBJECT);
    assert_int_equal(s.tokens[0].count, 4);
    assert_int_equal(s.tokens[0].next, s.len);
    assert_true(jsonscan_string_is(&s, jsonscan_get(&s, 0, "kind"), "Pod"));
    long spec = jsonscan_get(&s, 0, "spec");
    assert_int_equal(jsonscan_type(&s, spec), JSONSCAN_OBJECT);
    long gates = jsonscan_get(&s, spec, "gates");
    assert_int_equal(jsonscan_type(&s, gates), JSONSCAN_ARRAY);
    assert_int_equal(s.tokens[gates].count, 2);
    long second = (long)s.tokens[gates + 1].next;
    assert_true(jsonscan_string_is(&s, jsonscan_get(&s, second, "name"), "h"));
    long num = jsonscan_get(&s, spec, "n");
    assert_int_equal(jsonscan_type(&s, num), JSONSCAN_NUMBER);
    assert_memory_equal(text + s.tokens[num].start, "-2.5", 4);
    long e = jsonscan_get(&s, 0, "e");
    assert_true(s.tokens[e].escaped);
    assert_false(jsonscan_string_is(&s, e, "a\\nb")); /* escaped text is never compared raw */
    assert_int_equal(jsonscan_type(&s, jsonscan_get(&s, 0, "z")), JSONSCAN_NULL);
    assert_int_equal(jsonscan_get(&s, 0, "missing"), -1);
    assert_int_equal(jsonscan_get(&s, gates, "name"), -1); /* not an object */
    assert_int_equal(jsonscan_type(&s, -1), 0);
    jsonscan_finish(&s);
}

/*
 * A byte that is not plain in a string is found wherever it sits, in the runs
 * read 8 bytes at a time or in the bytes after them: each kind at every offset
 * of strings of 1 to 24 bytes, as the one byte of the string that is not 'a'.
 */
static void test_string_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *bytes; /* what replaces the 'a' */
        int accepted, escaped;
    } kinds[] = {{"\"", 0, 0},   {"\\n", 1, 1}, {"\x1f", 0, 0}, {"\x01", 0, 0}, {"\x80", 0, 0}, {"\xff", 0, 0},
                 {"\x7f", 1, 0}, {" ", 1, 0},   {"!", 1, 0},    {"~", 1, 0},    {"\t", 0, 0}};
    char text[64];
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        for (size_t n = 1; n <= 24; n++) {
            for (size_t at = 0; at < n; at++) {
                size_t len = strlen(kinds[k].bytes), o = 0;
                memcpy(text + o, "{\"k\":\"", 6);
                o += 6;
                memset(text + o, 'a', n);
                memcpy(text + o + at, kinds[k].bytes, len);
                memset(text + o + at + len, 'a', n - at - 1);
                o += n - 1 + len;
                memcpy(text + o, "\"}", 3);
                struct jsonscan s;
                jsonscan_init(&s);
                int rc = jsonscan_parse(&s, text, strlen(text));
                if ((rc == 0) != kinds[k].accepted)
                    fail_msg("kind %zu at %zu of %zu: %s", k, at, n, rc == 0 ? "accepted" : "declined");
                if (rc == 0) {
                    assert_int_equal(s.tokens[2].len, n - 1 + len);
                    assert_int_equal(s.tokens[2].escaped, kinds[k].escaped);
                }
                jsonscan_finish(&s);
            }
        }
    }
}

/* jsonscan_value() of the whole document is what jansson read (want): equal values of equal types, in the same order. */
static void check_value(const char *what, const struct jsonscan *s, const json_t *want)
{
    json_t *got = jsonscan_value(s, 0, JSONSCAN_WHOLE, NULL);
    char *a = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY), *b = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!json_equal(got, want) || strcmp(a, b) != 0)
        fail_msg("jsonscan_value differs from jansson on %.200s:\n  %.300s\n  %.300s", what, a, b);
    free(a);
    free(b);
    json_decref(got);
}

/* The values of documents with every kind of token, as jansson reads them. */
static void test_value(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{}",
        "{\"a\":-0.5,\"b\":[true,false,null,\"x\"],\"c\":{\"d\":[]},\"e\":-0,\"f\":0.0,\"g\":1.25}",
        "{\"s\":\"with \\\"escapes\\\" \\\\ \\/ \\b\\f\\n\\r\\t\",\"\":\"\"}",
        "{\"a\":123456789012345,\"b\":-12345678901234,\"z\":1,\"y\":2,\"x\":{\"k\":[[1],[2.5]]}}",
        /* \u escapes as the API server writes <, > and &, and every UTF-8 length, a surrogate pair */
        "{\"cmd\":\"a \\u0026\\u0026 b \\u003e /dev/null\",\"u\":\"\\u0041\\u00e9\\u20ac\\ud83d\\ude00\\u0001\\/\"}",
    };
    struct jsonscan s;
    jsonscan_init(&s);
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        assert_int_equal(jsonscan_parse(&s, docs[i], strlen(docs[i])), 0);
        json_t *want = json_loads(docs[i], JSON_REJECT_DUPLICATES, NULL);
        assert_non_null(want);
        check_value(docs[i], &s, want);
        json_decref(want);
    }
    assert_null(jsonscan_value(&s, -1, JSONSCAN_WHOLE, NULL));
    jsonscan_finish(&s);
}

/* Never more than jansson: every byte-level mutation of a real AdmissionReview the scan accepts, jansson accepts too. */
/* escaped_keys: a managedFields key with quotes is read as jansson reads it; a decoded duplicate is still declined. */
static void test_escaped_keys(void **state)
{
    (void)state;
    const char *doc = "{\"f\":{\"k:{\\\"uid\\\":\\\"u\\\"}\":{},\"\\u0061\":1,\"b\":2}}";
    struct jsonscan s;
    jsonscan_init(&s);
    assert_int_equal(jsonscan_parse(&s, doc, strlen(doc)), -1); /* by default, left to jansson */
    s.escaped_keys = 1;
    assert_int_equal(jsonscan_parse(&s, doc, strlen(doc)), 0);
    json_t *want = json_loads(doc, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(want);
    check_value(doc, &s, want);
    json_decref(want);
    assert_int_equal(jsonscan_get(&s, jsonscan_get(&s, 0, "f"), "a"), -1); /* raw keys only */
    const char *dup = "{\"a\":1,\"\\u0061\":2}";
    assert_int_equal(jsonscan_parse(&s, dup, strlen(dup)), -1);
    jsonscan_finish(&s);
}

static void test_subset_of_jansson(void **state)
{
    (void)state;
    size_t len;
    char *body = fixture_read("bench/pod-review.json", &len);
    char *copy = malloc(len);
    static const char subst[] = "{}[]\",:\\ 0-.ea\x01\x80";
    unsigned seed = 12345;
    size_t accepted = 0, declined = 0;
    struct jsonscan s;
    jsonscan_init(&s);
    for (int round = 0; round < 4000; round++) {
        memcpy(copy, body, len);
        int flips = 1 + round % 3;
        for (int f = 0; f < flips; f++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            copy[at] = subst[(seed >> 8) % (sizeof(subst) - 1)];
        }
        if (jsonscan_parse(&s, copy, len) != 0) {
            declined++;
            continue;
        }
        accepted++;
        json_error_t err;
        json_t *j = json_loadb(copy, len, JSON_REJECT_DUPLICATES, &err);
        if (j == NULL)
            fail_msg("round %d: scanned, but jansson says: %s (line %d, column %d)", round, err.text, err.line, err.column);
        check_value(copy, &s, j);
        json_decref(j);
    }
    /* Both outcomes happened: the property was exercised. */
    assert_true(accepted > 100);
    assert_true(declined > 100);
    jsonscan_finish(&s);
    free(copy);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),           cmocka_unit_test(test_declines), cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_subset_of_jansson), cmocka_unit_test(test_value),    cmocka_unit_test(test_string_bytes),
        cmocka_unit_test(test_escaped_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
