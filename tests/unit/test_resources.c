#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "resources.h"

static void test_parse_cases(void **state)
{
    (void)state;
    json_t *cases = fixture_json("resources/parse.json");
    size_t i;
    json_t *c;
    assert_true(json_array_size(cases) >= 10);
    json_array_foreach(cases, i, c)
    {
        const char *comment = json_string_value(json_object_get(c, "comment"));
        const char *path = json_string_value(json_object_get(c, "path"));
        unsigned flags = json_is_true(json_object_get(c, "nonnegative")) ? RESOURCES_NONNEGATIVE : 0;
        struct resources r;
        struct error err = {{0}};
        resources_init(&r);
        int rc = resources_parse(&r, json_object_get(c, "input"), path ? path : "resources", flags, &err);
        const char *want_error = json_string_value(json_object_get(c, "error"));
        if (want_error != NULL) {
            if (rc != -1)
                fail_msg("%s: parsed, expected an error", comment);
            if (strcmp(err.message, want_error) != 0)
                fail_msg("%s: message \"%s\", expected \"%s\"", comment, err.message, want_error);
            assert_int_equal(r.len, 0);
            continue;
        }
        if (rc != 0)
            fail_msg("%s: %s", comment, err.message);
        json_t *got = resources_to_json(&r);
        fixture_check_json(comment, NULL, got, json_object_get(c, "expect"));
        json_decref(got);
        const char *text = json_string_value(json_object_get(c, "expectText"));
        if (text != NULL) {
            char *s = resources_to_string(&r);
            assert_string_equal(s, text);
            free(s);
        }
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(c, "values"), name, v)
        {
            const struct quantity *q = resources_get(&r, name);
            assert_non_null(q);
            assert_int_equal(q->value, json_integer_value(v));
        }
        resources_finish(&r);
    }
    json_decref(cases);
}

static void test_arithmetic_cases(void **state)
{
    (void)state;
    json_t *cases = fixture_json("resources/arithmetic.json");
    size_t i;
    json_t *c;
    assert_true(json_array_size(cases) >= 8);
    json_array_foreach(cases, i, c)
    {
        const char *comment = json_string_value(json_object_get(c, "comment"));
        const char *op = json_string_value(json_object_get(c, "op"));
        json_t *terms = json_object_get(c, "terms");
        struct resources acc, term;
        struct error err = {{0}};
        int rc = 0;
        resources_init(&acc);
        resources_init(&term);
        for (size_t t = 0; t < json_array_size(terms) && rc == 0; t++) {
            if (resources_parse(&term, json_array_get(terms, t), "terms", 0, &err) != 0)
                fail_msg("%s: %s", comment, err.message);
            if (strcmp(op, "max") == 0) {
                resources_max(&acc, &term);
            } else {
                json_int_t factor = json_integer_value(json_array_get(json_object_get(c, "factors"), t));
                rc = resources_add_scaled(&acc, &term, factor, &err);
            }
        }
        const char *want_error = json_string_value(json_object_get(c, "error"));
        if (want_error != NULL) {
            if (rc != -1 || strstr(err.message, want_error) == NULL)
                fail_msg("%s: rc %d message \"%s\", expected \"%s\"", comment, rc, err.message, want_error);
        } else {
            if (rc != 0)
                fail_msg("%s: %s", comment, err.message);
            json_t *got = resources_to_json(&acc);
            fixture_check_json(comment, NULL, got, json_object_get(c, "expect"));
            json_decref(got);
        }
        resources_finish(&term);
        resources_finish(&acc);
    }
    json_decref(cases);
}

/* Insertions in any order come out sorted, and copy is deep. */
static void test_sorted_and_copy(void **state)
{
    (void)state;
    struct resources a, b;
    struct quantity q = {1, QUANTITY_DECIMAL_SI};
    resources_init(&a);
    resources_init(&b);
    const char *names[] = {"memory", "cpu", "zz/x", "nvidia.com/gpu", "ephemeral-storage", "a"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        resources_set(&a, names[i], &q);
    assert_int_equal(a.len, 6);
    for (size_t i = 1; i < a.len; i++)
        assert_true(strcmp(a.items[i - 1].name, a.items[i].name) < 0);
    resources_copy(&b, &a);
    q.value = 7;
    resources_set(&a, "cpu", &q);
    assert_int_equal(resources_get(&b, "cpu")->value, 1);
    assert_int_equal(resources_get(&a, "cpu")->value, 7);
    assert_null(resources_get(&a, "disk"));
    assert_int_equal(resources_unit("cpu"), QUANTITY_UNIT_MILLI);
    assert_int_equal(resources_unit("memory"), QUANTITY_UNIT_BASE);
    resources_finish(&a);
    resources_finish(&b);
    resources_finish(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_cases),
        cmocka_unit_test(test_arithmetic_cases),
        cmocka_unit_test(test_sorted_and_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
