#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dispatchpick.h"

static void test_to_parse(void **state)
{
    (void)state;
    struct dispatch_to to;
    struct error err = {{0}};
    dispatch_pick_to_init(&to);
    assert_int_equal(dispatch_pick_to_parse(" gpu-east,gpu-west ,\tcpu ", &to, &err), 0);
    assert_int_equal(to.n, 3);
    assert_string_equal(to.names[0], "gpu-east");
    assert_string_equal(to.names[1], "gpu-west");
    assert_string_equal(to.names[2], "cpu");
    assert_int_equal(dispatch_pick_to_index(&to, "cpu"), 2);
    assert_int_equal(dispatch_pick_to_index(&to, "gpu"), DISPATCH_NO_WORKER);
    assert_int_equal(dispatch_pick_to_parse("solo", &to, &err), 0);
    assert_int_equal(to.n, 1);
    assert_int_equal(dispatch_pick_to_parse(NULL, &to, &err), 0);
    assert_int_equal(to.n, 0);

    static const struct {
        const char *value, *error;
    } bad[] = {
        {"a,,b", NAMES_ANNOTATION_DISPATCH_TO ": empty entry 2"},
        {"a, b,", NAMES_ANNOTATION_DISPATCH_TO ": empty entry 3"},
        {"", NAMES_ANNOTATION_DISPATCH_TO ": empty entry 1"},
        {"  ", NAMES_ANNOTATION_DISPATCH_TO ": empty entry 1"},
        {"a, b, a", NAMES_ANNOTATION_DISPATCH_TO ": \"a\" named twice"},
        {"b,b ", NAMES_ANNOTATION_DISPATCH_TO ": \"b\" named twice"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(dispatch_pick_to_parse("x,y", &to, &err), 0);
        if (dispatch_pick_to_parse(bad[i].value, &to, &err) != -1 || strcmp(err.message, bad[i].error) != 0)
            fail_msg("\"%s\": %s", bad[i].value, err.message);
        assert_int_equal(to.n, 0);
    }
    dispatch_pick_to_finish(&to);
}

static struct dispatch_verdict fits(int64_t stranded)
{
    return (struct dispatch_verdict){.fits = 1, .reason = ADMIT_REASON_NONE, .stranded = stranded};
}

static void test_pick_least_stranded_ties_by_order(void **state)
{
    (void)state;
    struct dispatch_verdict v[4] = {fits(500000), fits(200000), fits(200000), fits(100000)};
    struct dispatch_candidate c[4] = {
        {.name = "a", .up = 1, .verdict = &v[0]},
        {.name = "b", .up = 1, .verdict = &v[1]},
        {.name = "c", .up = 1, .verdict = &v[2]},
        {.name = "d", .up = 0, .error = "refused", .verdict = &v[3]}, /* the best fit, but unreachable */
    };
    assert_int_equal(dispatch_pick(c, 4), 1); /* b and c tie: b is named first */
    v[1].fits = 0;
    assert_int_equal(dispatch_pick(c, 4), 2);
    v[2].stranded = 500000;
    assert_int_equal(dispatch_pick(c, 4), 0); /* a and c tie again: a first */
    assert_int_equal(dispatch_pick(c, 0), DISPATCH_NO_WORKER);
    c[3].up = 1;
    assert_int_equal(dispatch_pick(c, 4), 3);
}

static void test_pick_why(void **state)
{
    (void)state;
    struct dispatch_verdict east = {
        .reason = ADMIT_REASON_QUEUE_CAPACITY, .message = "cpu needs 8, 4 free", .stranded = DISPATCH_PPM};
    struct dispatch_verdict west = {.reason = ADMIT_REASON_QUEUE_CLOSED, .message = "queue a is Closed", .stranded = DISPATCH_PPM};
    struct dispatch_candidate c[3] = {
        {.name = "gpu-east", .up = 1, .verdict = &east},
        {.name = "gpu-west", .up = 1, .verdict = &west},
        {.name = "gpu-north", .up = 0, .error = "connect: connection refused\n"},
    };
    assert_int_equal(dispatch_pick(c, 3), DISPATCH_NO_WORKER);
    char *why = dispatch_pick_why(c, 2);
    assert_string_equal(why, "gpu-east: cpu needs 8, 4 free; gpu-west: queue a is Closed");
    free(why);
    why = dispatch_pick_why(c, 3);
    assert_string_equal(why,
                        "gpu-east: cpu needs 8, 4 free; gpu-west: queue a is Closed; gpu-north: unreachable: connect: connection "
                        "refused ");
    free(why);
    why = dispatch_pick_why(c, 0);
    assert_string_equal(why, "");
    free(why);
    json_t *r = dispatch_pick_reasons(c, 3);
    char *s = json_dumps(r, JSON_COMPACT);
    assert_string_equal(s, "{\"gpu-east\":\"cpu needs 8, 4 free\",\"gpu-west\":\"queue a is Closed\",\"gpu-north\":\"unreachable: "
                           "connect: connection refused \"}");
    free(s);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_to_parse),
        cmocka_unit_test(test_pick_least_stranded_ties_by_order),
        cmocka_unit_test(test_pick_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
