#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "clicases.h"
#include "fixtures.h"
#include "why.h"

/* The values of key in every object of arr (new array). */
static json_t *pluck(const json_t *arr, const char *key)
{
    json_t *out = json_array();
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v) json_array_append(out, json_object_get(v, key));
    return out;
}

/* tests/fixtures/cli/why-cases.json: the explanation line by line, the gangs ahead, the events. */
static void test_cases(void **state)
{
    json_t *cases = fixture_json("cli/why-cases.json");
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *where = clicase_str(c, "comment");
        json_t *snap = clicase_snapshot(c);
        json_t *why = why_explain(snap, clicase_now(c), clicase_str(c, "namespace"), clicase_str(c, "name"));
        if (json_is_true(json_object_get(c, "missing"))) {
            if (why != NULL)
                fail_msg("%s: found a gang", where);
            json_decref(snap);
            continue;
        }
        if (why == NULL)
            fail_msg("%s: no gang", where);
        fixture_check_json(where, "explanation", json_object_get(why, "explanation"), json_object_get(c, "explanation"));
        json_t *ahead = pluck(json_object_get(why, "ahead"), "name"), *events = pluck(json_object_get(why, "events"), "reason");
        fixture_check_json(where, "ahead", ahead, json_object_get(c, "ahead"));
        fixture_check_json(where, "events", events, json_object_get(c, "events"));
        json_decref(ahead);
        json_decref(events);
        json_decref(why);
        json_decref(snap);
    }
    json_decref(cases);
}

/*
 * tests/fixtures/cli/reasons-cases.json: one waiting gang per admit reason. why
 * explains each from the reason code, so the explanation is the same when
 * every message says something else (quoted where why quotes it).
 */
static void check_reason(const json_t *c, json_t *snap, const char *where, void *seen)
{
    json_t *why = why_explain(snap, clicase_now(c), clicase_str(c, "namespace"), clicase_str(c, "name"));
    if (why == NULL)
        fail_msg("%s: no gang", where);
    const json_t *gang = json_object_get(why, "gang");
    json_t *want = clicase_with_message(json_object_get(c, "explanation"), json_string_value(json_object_get(gang, "message")));
    fixture_check_json(where, "explanation", json_object_get(why, "explanation"), want);
    json_object_set_new(seen, admit_result_reason_name(view_wait_reason(gang)), json_true());
    json_decref(want);
    json_decref(why);
}

static void test_reason_codes(void **state)
{
    json_t *seen = json_object();
    clicase_each_reason(check_reason, seen);
    /* One case per reason the gate gives, and one without a code (""). */
    for (int r = ADMIT_REASON_NONE; r == ADMIT_REASON_NONE || admit_result_reason_name((enum admit_reason)r)[0] != '\0'; r++) {
        if (json_object_get(seen, admit_result_reason_name((enum admit_reason)r)) == NULL)
            fail_msg("no case for reason \"%s\"", admit_result_reason_name((enum admit_reason)r));
    }
    json_decref(seen);
}

/* A gang short of memory only: the line is in memory's units and names only memory. */
static void test_memory_only(void **state)
{
    json_t *snap = fixture_json("cli/walkthrough.json");
    json_t *q = json_object_get(json_array_get(json_object_get(snap, "queues"), 0), "spec");
    json_object_set_new(json_object_get(q, "capability"), "cpu", json_string("100"));
    json_t *why = why_explain(snap, 1714561320, "default", "test-cluster-1");
    assert_non_null(why);
    json_t *lines = json_object_get(why, "explanation");
    assert_int_equal(json_array_size(lines), 1);
    assert_string_equal(json_string_value(json_array_get(lines, 0)),
                        "needs memory 4Gi; 2Gi free in queue kuberay-test-queue; 2Gi more when test-cluster-0 (priority 0) ends");
    json_decref(why);
    json_decref(snap);
}

/* Room held by something other than the queue's gangs: the rest is said to be held outside them. */
static void test_held_outside(void **state)
{
    json_t *snap = fixture_json("cli/walkthrough.json");
    json_t *st = json_object_get(json_array_get(json_object_get(snap, "queues"), 0), "status");
    json_object_set_new(json_object_get(st, "allocated"), "cpu", json_string("4"));
    json_object_del(json_object_get(st, "allocated"), "memory");
    json_t *pg0 = json_object_get(json_array_get(json_object_get(snap, "podGroups"), 0), "spec");
    json_object_set_new(json_object_get(pg0, "minResources"), "cpu", json_string("1500m"));
    json_t *why = why_explain(snap, 1714561320, "default", "test-cluster-1");
    assert_non_null(why);
    json_t *lines = json_object_get(why, "explanation");
    assert_int_equal(json_array_size(lines), 1);
    assert_string_equal(
        json_string_value(json_array_get(lines, 0)),
        "needs cpu 3; 0 free in queue kuberay-test-queue; 3 more: 1500m when test-cluster-0 (priority 0) ends, 1500m held "
        "outside the queue's admitted gangs");
    json_decref(why);
    json_decref(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_reason_codes),
        cmocka_unit_test(test_memory_only),
        cmocka_unit_test(test_held_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
