/*
 * Unit tests for lib/gang/queuespec: the rules of a Queue's own quantities,
 * driven by tests/fixtures/queuespec/cases.json, and the children's sum.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "fixtures.h"
#include "queuespec.h"

static void test_cases(void **state)
{
    (void)state;
    json_t *fx = fixture_json("queuespec/cases.json");
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(fx, "cases"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *want = json_string_value(json_object_get(c, "message"));
        json_t *queue = json_pack("{s:{s:s}, s:O}", "metadata", "name", "q", "spec", json_object_get(c, "spec"));
        struct queuespec_problem p;
        struct error err = {{0}};
        int rc = queuespec_check(queue, &p, &err);
        if (want == NULL && rc != 0)
            fail_msg("%s: denied (%s), expected allowed", name, err.message);
        if (want != NULL && (rc == 0 || strcmp(err.message, want) != 0))
            fail_msg("%s: \"%s\", expected \"%s\"", name, rc == 0 ? "(allowed)" : err.message, want);
        json_decref(queue);
    }
    assert_true(json_array_size(json_object_get(fx, "cases")) >= 12);
    json_decref(fx);
}

/* The rule order, and unset values never compared. */
static void test_resource(void **state)
{
    (void)state;
    const int64_t U = QUEUESPEC_UNSET;
    assert_int_equal(queuespec_resource("cpu", U, U, U, NULL), QUEUESPEC_OK);
    assert_int_equal(queuespec_resource("cpu", -1, -1, -1, NULL), QUEUESPEC_NEGATIVE_CAPABILITY);
    assert_int_equal(queuespec_resource("cpu", U, -1, -1, NULL), QUEUESPEC_NEGATIVE_DESERVED);
    assert_int_equal(queuespec_resource("cpu", U, U, -1, NULL), QUEUESPEC_NEGATIVE_GUARANTEE);
    assert_int_equal(queuespec_resource("cpu", 1, 2, 3, NULL), QUEUESPEC_DESERVED_ABOVE_CAPABILITY);
    assert_int_equal(queuespec_resource("cpu", U, 2, 3, NULL), QUEUESPEC_GUARANTEE_ABOVE_DESERVED);
    assert_int_equal(queuespec_resource("cpu", U, U, 1, NULL), QUEUESPEC_GUARANTEE_ABOVE_DESERVED);
    assert_int_equal(queuespec_resource("cpu", 0, 0, 0, NULL), QUEUESPEC_OK);
    assert_int_equal(queuespec_resource("cpu", INT64_MAX, INT64_MAX, INT64_MAX, NULL), QUEUESPEC_OK);
}

/* The children's sum against the parent's guarantee: an unlisted resource of the parent's is 0. */
static void test_over_guarantee(void **state)
{
    (void)state;
    struct resources sum, parent;
    resources_init(&sum);
    resources_init(&parent);
    struct quantity two = {2000, QUANTITY_DECIMAL_SI}, three = {3000, QUANTITY_DECIMAL_SI}, gib = {1 << 30, QUANTITY_BINARY_SI};
    resources_set(&sum, "cpu", &two);
    resources_set(&parent, "cpu", &three);
    struct queuespec_problem p;
    assert_int_equal(queuespec_over_guarantee(&sum, &parent, &p), 0);
    resources_set(&sum, "memory", &gib);
    assert_int_equal(queuespec_over_guarantee(&sum, &parent, &p), 1);
    assert_string_equal(p.resource, "memory");
    char text[200];
    queuespec_text(&p, text, sizeof(text));
    assert_string_equal(text, "spec.guarantee.resource.memory: sum of children's guarantee (memory 1Gi) exceeds parent's guarantee "
                              "limit (memory 0)");
    resources_set(&parent, "memory", &gib);
    assert_int_equal(queuespec_over_guarantee(&sum, &parent, &p), 0);
    resources_finish(&sum);
    resources_finish(&parent);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_resource),
        cmocka_unit_test(test_over_guarantee),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
