#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "error.h"

static void wrap(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A module's own prefixing wrapper, as error_vsetf is meant for. */
static void wrap(struct error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vsetf(err, fmt, ap);
    va_end(ap);
}

static void test_vsetf(void **state)
{
    (void)state;
    struct error err = {{0}};
    wrap(&err, "%s.%s: %d", "spec", "x", 7);
    assert_string_equal(err.message, "spec.x: 7");
}

/* OpenSSL's reason is appended, and its queue left empty; with nothing queued, the message alone. */
static void test_set_openssl(void **state)
{
    (void)state;
    struct error err = {{0}};
    ERR_clear_error();
    error_set_openssl(&err, "cannot load %s", "key.pem");
    assert_string_equal(err.message, "cannot load key.pem");
    assert_null(EVP_get_digestbyname("no-such-digest"));
    ERR_raise(ERR_LIB_EVP, EVP_R_UNSUPPORTED_ALGORITHM);
    error_set_openssl(&err, "cannot load %s", "key.pem");
    assert_true(strncmp(err.message, "cannot load key.pem (error:", 27) == 0);
    assert_int_equal(ERR_peek_error(), 0);
}

static void test_setf(void **state)
{
    (void)state;
    struct error err = {{0}};
    error_setf(&err, "%s: %d", "spec.x", 3);
    assert_string_equal(err.message, "spec.x: 3");
    error_setf(NULL, "ignored"); /* callers that do not want the message pass NULL */
}

/* A long message is cut to the buffer, never in the middle of a UTF-8 character. */
static void test_cut_at_character(void **state)
{
    (void)state;
    char text[2 * sizeof(((struct error *)0)->message)];
    for (size_t i = 0; i + 2 < sizeof(text); i += 2)
        memcpy(text + i, "\xc3\xa9", 2); /* é */
    text[sizeof(text) - 2] = 'x';
    text[sizeof(text) - 1] = '\0';
    for (size_t shift = 0; shift < 2; shift++) {
        struct error err = {{0}};
        error_setf(&err, "%.*s%s", (int)shift, "a", text);
        size_t n = strlen(err.message);
        assert_true(n < sizeof(err.message));
        assert_true(n >= sizeof(err.message) - 2);
        assert_int_equal((n - shift) % 2, 0); /* whole characters only */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setf),
        cmocka_unit_test(test_cut_at_character),
        cmocka_unit_test(test_vsetf),
        cmocka_unit_test(test_set_openssl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
