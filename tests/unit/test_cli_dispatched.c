/* Unit tests for cli/dispatched: `kubectl raygate gangs` and `why` on a manager cluster. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dispatched.h"

/* An owner with the annotations of the JSON object text annotations (NULL: none). New. */
static json_t *owner(const char *annotations)
{
    json_t *a = annotations != NULL ? json_loads(annotations, 0, NULL) : json_object();
    assert_non_null(a);
    return json_pack("{s:{s:s,s:o}}", "metadata", "name", "r1", "annotations", a);
}

static const char *get(const json_t *row, const char *key)
{
    return json_string_value(json_object_get(row, key));
}

/* A gang the dispatcher does not handle keeps its row as it was. */
static void test_not_dispatched(void **state)
{
    (void)state;
    json_t *row = json_pack("{s:s}", "state", "Waiting"), *o = owner(NULL), *lines = json_array();
    assert_int_equal(dispatched_row(row, o, NULL), 0);
    assert_null(json_object_get(row, "worker"));
    assert_string_equal(get(row, "state"), "Waiting");
    assert_int_equal(dispatched_explain(lines, row), 0);
    assert_int_equal(json_array_size(lines), 0);
    json_decref(row);
    json_decref(o);
    json_decref(lines);
}

/* Dispatched: the worker, in the row and in why. */
static void test_dispatched(void **state)
{
    (void)state;
    json_t *row = json_pack("{s:s}", "state", "Waiting"), *lines = json_array();
    json_t *o = owner("{\"raygate.io/dispatched-to\":\"gpu-west\",\"raygate.io/dispatched-at\":\"2026-11-26T06:00:00Z\"}");
    assert_int_equal(dispatched_row(row, o, NULL), 1);
    assert_string_equal(get(row, "worker"), "gpu-west");
    assert_string_equal(get(row, "state"), "Dispatched");
    assert_string_equal(get(row, "waitingFor"), "worker gpu-west");
    assert_int_equal(dispatched_explain(lines, row), 1);
    assert_non_null(strstr(json_string_value(json_array_get(lines, 0)), "dispatched to worker gpu-west at 2026-11-26T06:00:00Z"));
    json_decref(row);
    json_decref(o);
    json_decref(lines);
}

/* No worker fits: the reasons per worker, in the annotation's order. */
static void test_no_worker_fits(void **state)
{
    (void)state;
    json_t *row = json_pack("{s:s}", "state", "Waiting"), *lines = json_array();
    json_t *o = owner("{\"raygate.io/dispatch-reasons\":"
                      "\"{\\\"gpu-west\\\":\\\"cpu needs 8, 4 free\\\",\\\"gpu-east\\\":\\\"queue a is Closed\\\"}\"}");
    assert_int_equal(dispatched_row(row, o, NULL), 1);
    assert_true(json_is_null(json_object_get(row, "worker")));
    assert_string_equal(get(row, "state"), "Waiting");
    assert_string_equal(get(row, "waitingFor"), "no worker fits: gpu-west: cpu needs 8, 4 free; gpu-east: queue a is Closed");
    assert_int_equal(dispatched_explain(lines, row), 1);
    assert_int_equal(json_array_size(lines), 3);
    assert_string_equal(json_string_value(json_array_get(lines, 1)), "  gpu-west: cpu needs 8, 4 free");
    assert_string_equal(json_string_value(json_array_get(lines, 2)), "  gpu-east: queue a is Closed");
    json_decref(row);
    json_decref(o);
    json_decref(lines);
}

/* Only the PodGroup's Dispatched condition (reasons not written, or not JSON): its message. */
static void test_condition_only(void **state)
{
    (void)state;
    json_t *row = json_object(), *lines = json_array();
    json_t *o = owner("{\"raygate.io/dispatch-reasons\":\"not json\"}");
    json_t *pg = json_pack("{s:{s:[{s:s,s:s,s:s}]}}", "status", "conditions", "type", "Dispatched", "status", "False", "message",
                           "gave up after 10m");
    assert_int_equal(dispatched_row(row, o, pg), 1);
    assert_string_equal(get(row, "waitingFor"), "gave up after 10m");
    assert_int_equal(dispatched_explain(lines, row), 1);
    assert_string_equal(json_string_value(json_array_get(lines, 0)), "gave up after 10m");
    json_decref(row);
    json_decref(o);
    json_decref(pg);
    json_decref(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_dispatched),
        cmocka_unit_test(test_dispatched),
        cmocka_unit_test(test_no_worker_fits),
        cmocka_unit_test(test_condition_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
