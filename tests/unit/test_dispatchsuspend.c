/*
 * dispatchsuspend: a manager's webhook suspends the RayClusters and RayJobs
 * of dispatching Queues for a KubeRay there, driven by
 * tests/fixtures/dispatch/suspend.json (each case: the request, whether the
 * Queues are listed, and the patch or the denial expected).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "dispatchsuspend.h"
#include "fixtures.h"

static void check_case(const json_t *c, struct queuecheck_set *queues)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const json_t *request = json_object_get(c, "request");
    queues->synced = json_is_true(json_object_get(c, "synced"));
    struct mutate_result r;
    struct error err = {{0}};
    mutate_result_init(&r);
    int denied = dispatchsuspend_decide(request, json_object_get(request, "object"), json_is_true(json_object_get(c, "job")),
                                        queues, &r, &err);
    const char *want_denied = json_string_value(json_object_get(c, "denied"));
    if (want_denied != NULL) {
        if (!denied)
            fail_msg("%s: allowed, want denied", name);
        assert_string_equal(err.message, want_denied);
        assert_null(r.patch);
    } else {
        if (denied)
            fail_msg("%s: denied: %s", name, err.message);
        const json_t *want = json_object_get(c, "patch");
        int same = json_is_null(want) ? r.patch == NULL : r.patch != NULL && json_equal(r.patch, want);
        if (!same) {
            char *got = r.patch != NULL ? json_dumps(r.patch, JSON_COMPACT) : NULL;
            fail_msg("%s: patch %s", name, got != NULL ? got : "none");
        }
    }
    mutate_result_finish(&r);
}

static void test_cases(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/suspend.json");
    struct queuecheck_set queues;
    queuecheck_set_init(&queues);
    size_t i;
    json_t *q, *c;
    json_array_foreach(json_object_get(fx, "queues"), i, q) assert_int_equal(queuecheck_set_put(&queues, q), 0);
    assert_int_equal(json_array_size(json_object_get(fx, "cases")), 13);
    json_array_foreach(json_object_get(fx, "cases"), i, c) check_case(c, &queues);
    queuecheck_set_finish(&queues);
    json_decref(fx);
}

/* Through the AdmissionReview: /dispatch-suspend answers with the patch, and leaves a Pod alone. */
static void test_review(void **state)
{
    (void)state;
    struct queuecheck_set queues;
    queuecheck_set_init(&queues);
    json_t *q = json_pack("{s:{s:s,s:{s:s}}}", "metadata", "name", "a", "annotations", "raygate.io/dispatch-to", "east");
    assert_int_equal(queuecheck_set_put(&queues, q), 0);
    queues.synced = 1;
    json_t *review = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s,s:s},s:{s:{s:s,s:{s:s}},s:{s:b}}}}", "apiVersion",
                               "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", "u1", "operation", "CREATE",
                               "kind", "group", "ray.io", "version", "v1", "kind", "RayCluster", "object", "metadata", "name", "c",
                               "labels", "volcano.sh/queue-name", "a", "spec", "suspend", 0);
    char *body = json_dumps(review, JSON_COMPACT);
    char *text = NULL;
    size_t len = 0;
    struct admission_info info;
    struct error err = {{0}};
    assert_int_equal(admission_respond_dispatch(body, strlen(body), &queues, &text, &len, &info, &err), 0);
    assert_string_equal(info.result, "patched");
    assert_non_null(strstr(text, "\"patchType\":\"JSONPatch\""));
    free(text);
    free(body);
    /* A Pod is not the manager webhook's business: allowed as it is. */
    json_object_set_new(json_object_get(json_object_get(review, "request"), "kind"), "kind", json_string("Pod"));
    json_object_set_new(json_object_get(json_object_get(review, "request"), "kind"), "group", json_string(""));
    body = json_dumps(review, JSON_COMPACT);
    assert_int_equal(admission_respond_dispatch(body, strlen(body), &queues, &text, &len, &info, &err), 0);
    assert_string_equal(info.result, "allowed");
    free(text);
    free(body);
    json_decref(review);
    json_decref(q);
    queuecheck_set_finish(&queues);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_review),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
