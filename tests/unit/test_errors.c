#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "errors.h"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
