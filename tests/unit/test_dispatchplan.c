#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dispatchplan.h"
#include "evict.h"
#include "fixtures.h"
#include "flags.h"

static int64_t fixture_time(const json_t *v)
{
    int64_t ms;
    if (evict_parse_time(json_string_value(v), &ms) != 0)
        fail_msg("bad time in fixture: %s", json_string_value(v));
    return ms;
}

static int64_t fixture_duration(const json_t *config, const char *key)
{
    int64_t ms;
    struct error err;
    if (flags_parse_duration(json_string_value(json_object_get(config, key)), 0, INT64_MAX / 4, &ms, &err) != 0)
        fail_msg("config.%s: %s", key, err.message);
    return ms;
}

/* Runs one case of plan.json: the object's state parsed, the workers and pick as given, the action checked. */
static void run_case(const json_t *fx, const json_t *tc)
{
    const char *name = json_string_value(json_object_get(tc, "name"));
    struct dispatch_state st;
    struct error err = {{0}};
    dispatch_plan_state_init(&st);
    if (dispatch_plan_state_parse(json_object_get(tc, "object"), &st, &err) != 0)
        fail_msg("%s: %s", name, err.message);
    const json_t *ws = json_object_get(tc, "workers");
    struct dispatch_worker_view views[8];
    size_t n = json_array_size(ws);
    assert_true(n <= 8);
    struct dispatch_plan_input in = {.st = &st, .workers = views, .nworkers = n, .quota_room = 1};
    const char *pick = NULL;
    const json_t *jpick = json_object_get(tc, "pick");
    in.pick_ran = jpick != NULL;
    in.pick = DISPATCH_NO_WORKER;
    if (jpick != NULL && !json_is_null(jpick))
        pick = json_string_value(jpick);
    for (size_t i = 0; i < n; i++) {
        const json_t *w = json_array_get(ws, i);
        views[i] = (struct dispatch_worker_view){
            .name = json_string_value(json_object_get(w, "name")),
            .up = json_is_true(json_object_get(w, "up")),
            .copy = json_is_true(json_object_get(w, "copy")),
            .going = json_is_true(json_object_get(w, "going")),
            .admitted = json_is_true(json_object_get(w, "admitted")),
            .shown = json_is_true(json_object_get(w, "shown")),
        };
        if (pick != NULL && strcmp(pick, views[i].name) == 0)
            in.pick = i;
    }
    if (json_is_false(json_object_get(tc, "quota_room")))
        in.quota_room = 0;
    const json_t *config = json_object_get(fx, "config");
    in.now_ms = fixture_time(json_object_get(fx, "now"));
    in.cfg.timeout_ms = fixture_duration(config, "timeout");
    in.cfg.lease_ms = fixture_duration(config, "lease");
    in.cfg.margin_ms = fixture_duration(config, "margin");

    struct dispatch_plan plan;
    dispatch_plan(&in, &plan);
    const json_t *want = json_object_get(tc, "want");
    const char *want_action = json_string_value(json_object_get(want, "action"));
    const char *want_worker = json_string_value(json_object_get(want, "worker"));
    const char *got_worker = plan.worker == DISPATCH_NO_WORKER ? NULL : views[plan.worker].name;
    if (strcmp(dispatch_plan_action_name(plan.action), want_action) != 0 ||
        (want_worker != NULL && (got_worker == NULL || strcmp(got_worker, want_worker) != 0)))
        fail_msg("%s: want %s on %s, got %s on %s (%s)", name, want_action, want_worker ? want_worker : "-",
                 dispatch_plan_action_name(plan.action), got_worker ? got_worker : "-", plan.reason);
    if (plan.reason[0] == '\0')
        fail_msg("%s: no reason given", name);
    const json_t *next = json_object_get(want, "next_in_ms");
    if (next != NULL && plan.next_ms - in.now_ms != json_integer_value(next))
        fail_msg("%s: next in %lld ms, want %lld", name, (long long)(plan.next_ms - in.now_ms),
                 (long long)json_integer_value(next));
    dispatch_plan_state_finish(&st);
}

static void test_plan_transitions(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/plan.json");
    const json_t *cases = json_object_get(fx, "cases");
    assert_true(json_array_size(cases) > 20);
    for (size_t i = 0; i < json_array_size(cases); i++)
        run_case(fx, json_array_get(cases, i));
    json_decref(fx);
}

static void test_state_errors(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/plan.json");
    const json_t *bad = json_object_get(fx, "bad");
    assert_true(json_array_size(bad) > 0);
    for (size_t i = 0; i < json_array_size(bad); i++) {
        const json_t *tc = json_array_get(bad, i);
        struct dispatch_state st;
        struct error err = {{0}};
        dispatch_plan_state_init(&st);
        int rc = dispatch_plan_state_parse(json_object_get(tc, "object"), &st, &err);
        const char *name = json_string_value(json_object_get(tc, "name"));
        if (rc != -1)
            fail_msg("%s: parsed", name);
        const char *want = json_string_value(json_object_get(tc, "error"));
        const char *prefix = json_string_value(json_object_get(tc, "error_prefix"));
        if ((want != NULL && strcmp(err.message, want) != 0) ||
            (prefix != NULL && strncmp(err.message, prefix, strlen(prefix)) != 0))
            fail_msg("%s: error \"%s\"", name, err.message);
        assert_null(st.uid);
        assert_null(st.dispatched_to);
        dispatch_plan_state_finish(&st);
    }
    json_decref(fx);
}

/* The fields read from a dispatched RayJob, and a time at the far end does not wrap the deadlines. */
static void test_state_fields(void **state)
{
    (void)state;
    json_t *obj =
        json_pack("{s:s,s:{s:s,s:s,s:s,s:[s],s:{s:s,s:s,s:s,s:s}},s:{s:s}}", "kind", "RayJob", "metadata", "uid", "u-9",
                  "creationTimestamp", "2026-11-26T09:00:00Z", "deletionTimestamp", "2026-11-26T09:59:00Z", "finalizers",
                  NAMES_FINALIZER_DISPATCH, "annotations", NAMES_ANNOTATION_DISPATCHED_TO, "east", NAMES_ANNOTATION_DISPATCHED_AT,
                  "2026-11-26T09:10:00Z", NAMES_ANNOTATION_DISPATCH_RENEWED, "2026-11-26T09:50:00Z",
                  NAMES_ANNOTATION_DISPATCH_GIVE_UP, "1h30m", "status", "jobDeploymentStatus", "Failed");
    struct dispatch_state st;
    struct error err = {{0}};
    dispatch_plan_state_init(&st);
    assert_int_equal(dispatch_plan_state_parse(obj, &st, &err), 0);
    assert_int_equal(st.kind, DISPATCH_KIND_RAYJOB);
    assert_string_equal(st.uid, "u-9");
    assert_string_equal(st.dispatched_to, "east");
    assert_int_equal(st.renewed_at - st.dispatched_at, 40 * 60 * 1000);
    assert_int_equal(st.give_up_ms, 90 * 60 * 1000);
    assert_true(st.deleting && st.finalizer && st.terminal && st.started);

    /* Lost, with a lease that would overflow a plain sum: waits, never wraps into a re-dispatch. */
    st.deleting = 0;
    struct dispatch_worker_view w = {.name = "east"};
    struct dispatch_plan_input in = {.st = &st,
                                     .workers = &w,
                                     .nworkers = 1,
                                     .now_ms = st.renewed_at + 1,
                                     .cfg = {.timeout_ms = 1000, .lease_ms = INT64_MAX - 5, .margin_ms = INT64_MAX - 5}};
    struct dispatch_plan plan;
    dispatch_plan(&in, &plan);
    assert_int_equal(plan.action, DISPATCH_ACTION_WAIT_LOST);
    dispatch_plan_state_finish(&st);
    json_decref(obj);
}

/* Suspended for a KubeRay on the manager: KubeRay's own Suspended is not "started"; the worker's state is. */
static void test_state_suspended(void **state)
{
    (void)state;
    json_t *obj = json_pack("{s:s,s:{s:s,s:{s:s}},s:{s:s}}", "kind", "RayJob", "metadata", "uid", "u-1", "annotations",
                            NAMES_ANNOTATION_DISPATCH_SUSPENDED, "true", "status", "jobDeploymentStatus", "Suspended");
    struct dispatch_state st;
    struct error err = {{0}};
    dispatch_plan_state_init(&st);
    assert_int_equal(dispatch_plan_state_parse(obj, &st, &err), 0);
    assert_false(st.started || st.terminal);
    json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "annotations"), NAMES_ANNOTATION_DISPATCH_WORKER_STATE,
                        json_string("Running"));
    assert_int_equal(dispatch_plan_state_parse(obj, &st, &err), 0);
    assert_true(st.started);
    assert_false(st.terminal);
    json_object_set_new(json_object_get(obj, "status"), "jobDeploymentStatus", json_string("Complete"));
    assert_int_equal(dispatch_plan_state_parse(obj, &st, &err), 0);
    assert_true(st.started && st.terminal);
    /* Without the mark, a Suspended is taken as it is: it started (a worker suspended it). */
    json_object_del(json_object_get(json_object_get(obj, "metadata"), "annotations"), NAMES_ANNOTATION_DISPATCH_SUSPENDED);
    json_object_set_new(json_object_get(obj, "status"), "jobDeploymentStatus", json_string("Suspended"));
    assert_int_equal(dispatch_plan_state_parse(obj, &st, &err), 0);
    assert_true(st.started);
    dispatch_plan_state_finish(&st);
    json_decref(obj);
}

static void test_action_names(void **state)
{
    (void)state;
    assert_string_equal(dispatch_plan_action_name(DISPATCH_ACTION_DELETE_STALE), "delete-stale");
    assert_string_equal(dispatch_plan_action_name(DISPATCH_ACTION_FINALIZE), "finalize");
    assert_string_equal(dispatch_plan_action_name((enum dispatch_action)99), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_transitions), cmocka_unit_test(test_state_errors), cmocka_unit_test(test_state_fields),
        cmocka_unit_test(test_state_suspended),  cmocka_unit_test(test_action_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
