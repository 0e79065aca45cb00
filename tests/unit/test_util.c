#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static void check_decode(const char *in, const char *want, size_t want_len)
{
    size_t len = 99;
    char *out = util_base64_decode(in, strlen(in), &len);
    if (want == NULL) {
        if (out != NULL)
            fail_msg("\"%s\" decoded, expected an error", in);
        return;
    }
    if (out == NULL)
        fail_msg("\"%s\" did not decode", in);
    assert_int_equal(len, want_len);
    assert_memory_equal(out, want, len);
    assert_int_equal(out[len], '\0');
    free(out);
}

/* RFC 4648 section 10 vectors both ways; the leniency kubeconfig data needs; and what is refused. */
static void test_base64(void **state)
{
    (void)state;
    const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        char *s = util_base64_encode(plain[i], strlen(plain[i]));
        assert_string_equal(s, coded[i]);
        free(s);
        check_decode(coded[i], plain[i], strlen(plain[i]));
    }
    check_decode("Zm9vYg", "foob", 4); /* padding optional */
    check_decode("Zm9v\nYmFy\r\n", "foobar", 6);
    check_decode("+/+/", "\xfb\xff\xbf", 3);
    const char *bad[] = {"Z", "Zm9v=", "Zg=a", "Zg===", "Zm 9v", "Zm9v-_", "Zg=", "Zm9*", "Z=g=", "=Zm9"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_decode(bad[i], NULL, 0);
}

static void test_buf(void **state)
{
    (void)state;
    struct util_buf b = {0};
    char *empty = util_buf_take(&b);
    assert_string_equal(empty, "");
    free(empty);
    util_buf_puts(&b, "gang ");
    for (int i = 0; i < 200; i++) /* past the first allocation */
        util_buf_printf(&b, "%d,", i % 10);
    util_buf_append(&b, "xyz", 2);
    assert_int_equal(b.len, 5 + 400 + 2);
    assert_int_equal(strlen(b.data), b.len);
    char *s = util_buf_take(&b);
    assert_memory_equal(s, "gang 0,1,", 9);
    assert_string_equal(s + strlen(s) - 4, "9,xy");
    assert_null(b.data);
    free(s);
}

static void test_read_file(void **state)
{
    (void)state;
    char path[] = "/tmp/raygate-test-util-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char big[40000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)('a' + i % 26);
    assert_int_equal(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
    close(fd);

    size_t len = 0;
    char *got = util_read_file(path, sizeof(big), &len);
    assert_non_null(got);
    assert_int_equal(len, sizeof(big));
    assert_memory_equal(got, big, len);
    assert_int_equal(got[len], '\0');
    free(got);

    errno = 0;
    assert_null(util_read_file(path, sizeof(big) - 1, &len));
    assert_int_equal(errno, EFBIG);
    unlink(path);
    assert_null(util_read_file(path, 100, &len));
    assert_int_equal(errno, ENOENT);
}

static void test_strings(void **state)
{
    (void)state;
    assert_null(util_strdup(NULL));
    char *d = util_memdup("abcdef", 3);
    assert_string_equal(d, "abc");
    free(d);
    util_wipe_free(util_strdup("secret"), (size_t)-1);
    util_wipe_free(NULL, 0);
    assert_true(util_streq(NULL, NULL));
    assert_true(util_streq("a", "a"));
    assert_false(util_streq("a", NULL));
    assert_false(util_streq(NULL, "a"));
    assert_false(util_streq("a", "ab"));
}

/* A cut never leaves half a UTF-8 character: jansson would refuse the message (an empty AdmissionReview status). */
static void test_format_cut(void **state)
{
    (void)state;
    char buf[6];
    util_format(buf, sizeof(buf), "%s", "ab\xc3\xa9\xc3\xa9"); /* "abéé": the second é is cut after its first byte */
    assert_string_equal(buf, "ab\xc3\xa9");
    util_format(buf, sizeof(buf), "%s", "a\xe2\x82\xac\xe2\x82\xac"); /* "a€€" */
    assert_string_equal(buf, "a\xe2\x82\xac");
    util_format(buf, sizeof(buf), "%s", "abcd\xf0\x9f\x98\x80"); /* 4-byte character cut after one byte */
    assert_string_equal(buf, "abcd");
    util_format(buf, sizeof(buf), "%s", "ab\xe2\x82\xac"); /* fits exactly: kept */
    assert_string_equal(buf, "ab\xe2\x82\xac");
    util_format(buf, sizeof(buf), "%s", "abcdefgh"); /* ASCII: plain truncation */
    assert_string_equal(buf, "abcde");
}

static void test_one_line(void **state)
{
    (void)state;
    char s[] = "a\nb\r\tc\x7f \xc3\xa9 \xff \xc3 \xed\xa0\x80 \xe2\x82\xac";
    util_one_line(s);
    /* newline, CR, tab, DEL -> space; é and € kept; 0xff, a lone lead byte and a surrogate -> '?' per byte */
    assert_string_equal(s, "a b  c  \xc3\xa9 ? ? ??? \xe2\x82\xac");
}

static void test_parse_time(void **state)
{
    (void)state;
    int64_t t = -7;
    assert_int_equal(util_parse_time("1970-01-01T00:00:00Z", &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(util_parse_time("2024-05-01T10:00:00Z", &t), 0);
    assert_int_equal(t, 1714557600);
    assert_int_equal(util_parse_time("2024-02-29T23:59:59.123456Z", &t), 0); /* a fraction is dropped */
    assert_int_equal(t, 1709251199);
    t = 42;
    static const char *const bad[] = {
        "",
        "2024-05-01",
        "2024-05-01T10:00:00",
        "2024-05-01T10:00:00+02:00",
        "2024-05-01T10:00:00.Z",
        "2024-13-01T10:00:00Z",
        "2024-05-01T24:00:00Z",
        "1969-12-31T23:59:59Z",
        "2024-05-01T10:00:00Zjunk",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(util_parse_time(bad[i], &t), -1);
    assert_int_equal(util_parse_time(NULL, &t), -1);
    assert_int_equal(t, 42); /* untouched on failure */
}

static void test_parse_int64(void **state)
{
    (void)state;
    int64_t v = -7;
    assert_int_equal(util_parse_int64("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(util_parse_int64("-42", &v), 0);
    assert_int_equal(v, -42);
    assert_int_equal(util_parse_int64("+17", &v), 0);
    assert_int_equal(v, 17);
    assert_int_equal(util_parse_int64("9223372036854775807", &v), 0);
    assert_true(v == INT64_MAX);
    v = 42;
    static const char *const bad[] = {"", " 1", "1 ", "1x", "0x10", "-", "+", "9223372036854775808", "--1", "1.5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(util_parse_int64(bad[i], &v), -1);
    assert_int_equal(util_parse_int64(NULL, &v), -1);
    assert_int_equal(v, 42); /* untouched on failure */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),     cmocka_unit_test(test_buf),         cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_strings),    cmocka_unit_test(test_format_cut),  cmocka_unit_test(test_one_line),
        cmocka_unit_test(test_parse_time), cmocka_unit_test(test_parse_int64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
