#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dispatchcopy.h"
#include "fixtures.h"

/* The copy is the fixture's, member for member: manager bookkeeping, dispatch annotations and status stripped. */
static void test_copy_strips(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/copy.json");
    struct error err = {{0}};
    json_t *copy = dispatch_copy_worker(json_object_get(fx, "manager"), "hub", 120, &err);
    assert_non_null(copy);
    if (!json_equal(copy, json_object_get(fx, "copy"))) {
        char *got = json_dumps(copy, JSON_INDENT(1) | JSON_SORT_KEYS);
        fail_msg("copy differs:\n%s", got);
    }
    /* The copy is its own: changing it leaves the manager object alone. */
    json_object_set_new(json_object_get(copy, "spec"), "suspend", json_true());
    assert_null(json_object_get(json_object_get(json_object_get(fx, "manager"), "spec"), "suspend"));
    /* It is recognised as this manager's, and no other's. */
    assert_string_equal(dispatch_copy_origin(copy, "hub"), "m-uid-1");
    assert_null(dispatch_copy_origin(copy, "other-hub"));
    assert_null(dispatch_copy_origin(json_object_get(fx, "manager"), "hub"));
    json_decref(copy);
    /* A lease sighting written on the manager object (by hand) does not reach the worker: only its gate writes one. */
    json_t *annotations = json_object_get(json_object_get(json_object_get(fx, "manager"), "metadata"), "annotations");
    json_object_set_new(annotations, "raygate.io/dispatch-lease-seen", json_string("7@2026-11-28T00:00:00.000Z"));
    copy = dispatch_copy_worker(json_object_get(fx, "manager"), "hub", 120, &err);
    assert_non_null(copy);
    assert_null(
        json_object_get(json_object_get(json_object_get(copy, "metadata"), "annotations"), "raygate.io/dispatch-lease-seen"));
    json_decref(copy);
    json_decref(fx);
}

static void test_copy_refuses(void **state)
{
    (void)state;
    struct error err = {{0}};
    json_t *pod = json_pack("{s:s,s:{s:s,s:s,s:s}}", "kind", "Pod", "metadata", "name", "p", "namespace", "d", "uid", "u");
    assert_null(dispatch_copy_worker(pod, "hub", 120, &err));
    assert_string_equal(err.message, "kind Pod: only RayCluster and RayJob are dispatched");
    json_object_set_new(pod, "kind", json_string("RayJob"));
    json_object_del(json_object_get(pod, "metadata"), "uid");
    assert_null(dispatch_copy_worker(pod, "hub", 120, &err));
    assert_string_equal(err.message, "metadata.uid: missing");
    json_decref(pod);
}

static void test_renew_patch(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/copy.json");
    struct error err = {{0}};
    json_t *p = dispatch_copy_renew_patch(json_object_get(fx, "worker_rayjob"), &err);
    assert_non_null(p);
    char *s = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, "{\"metadata\":{\"annotations\":{\"raygate.io/dispatch-lease\":\"42\"},\"uid\":\"w-uid-2\"}}");
    free(s);
    json_decref(p);
    /* A counter without a value, or edited by hand, starts again at 1: still a change. */
    p = dispatch_copy_renew_patch(json_object_get(fx, "worker_rayjob_cluster"), &err);
    s = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, "{\"metadata\":{\"annotations\":{\"raygate.io/dispatch-lease\":\"1\"},\"uid\":\"w-uid-3\"}}");
    free(s);
    json_decref(p);
    json_object_del(json_object_get(json_object_get(fx, "worker_rayjob"), "metadata"), "uid");
    assert_null(dispatch_copy_renew_patch(json_object_get(fx, "worker_rayjob"), &err));
    json_decref(fx);
}

/* A RayJob finished on a worker: admitted, terminal, its two statuses mirrored; the manager shows them once written. */
static void test_remote_rayjob(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/copy.json");
    struct dispatch_remote r;
    struct error err = {{0}};
    dispatch_copy_remote_init(&r);
    assert_int_equal(dispatch_copy_remote_read(json_object_get(fx, "worker_rayjob"), NULL, &r, &err), 0);
    assert_true(r.admitted); /* its cluster is gone, but it ran */
    assert_true(r.terminal);
    char *s = json_dumps(r.status, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, "{\"jobDeploymentStatus\":\"Complete\",\"jobStatus\":\"SUCCEEDED\"}");
    free(s);
    json_t *mgr = json_pack("{s:s,s:{s:s}}", "kind", "RayJob", "status", "jobDeploymentStatus", "Running");
    assert_false(dispatch_copy_remote_shown(mgr, &r));
    json_object_set(mgr, "status", r.status);
    assert_true(dispatch_copy_remote_shown(mgr, &r));
    json_decref(mgr);

    /* Initializing: admitted only once the gate marked KubeRay's cluster. */
    json_t *job = json_object_get(fx, "worker_rayjob");
    json_object_set_new(json_object_get(job, "status"), "jobDeploymentStatus", json_string("Initializing"));
    assert_int_equal(dispatch_copy_remote_read(job, NULL, &r, &err), 0);
    assert_false(r.admitted);
    assert_false(r.terminal);
    assert_int_equal(dispatch_copy_remote_read(job, json_object_get(fx, "worker_rayjob_cluster"), &r, &err), 0);
    assert_true(r.admitted);
    dispatch_copy_remote_finish(&r);
    json_decref(fx);
}

static void test_remote_raycluster(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/copy.json");
    struct dispatch_remote r;
    struct error err = {{0}};
    dispatch_copy_remote_init(&r);
    json_t *c = json_object_get(fx, "worker_rayjob_cluster");
    assert_int_equal(dispatch_copy_remote_read(c, NULL, &r, &err), 0);
    assert_true(r.admitted);
    assert_false(r.terminal);
    assert_string_equal(json_string_value(json_object_get(r.status, "state")), "ready");
    /* The manager object's status shows "ready" already (copy.json's manager). */
    assert_true(dispatch_copy_remote_shown(json_object_get(fx, "manager"), &r));
    json_object_del(json_object_get(c, "metadata"), "annotations");
    json_object_del(c, "status");
    assert_int_equal(dispatch_copy_remote_read(c, NULL, &r, &err), 0);
    assert_false(r.admitted);
    assert_int_equal(json_object_size(r.status), 0);
    dispatch_copy_remote_finish(&r);
    dispatch_copy_remote_finish(NULL);
    json_decref(fx);
}

/* A manager object suspended for a KubeRay there: the copy runs, and KubeRay's fields are left to KubeRay. */
static void test_suspended(void **state)
{
    (void)state;
    struct error err = {{0}};
    json_t *mgr = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s}},s:{s:b,s:b},s:{s:s,s:s}}", "apiVersion", "ray.io/v1", "kind",
                            "RayJob", "metadata", "name", "j", "namespace", "d", "uid", "m-1", "annotations",
                            NAMES_ANNOTATION_DISPATCH_SUSPENDED, "true", "spec", "suspend", 1, "shutdownAfterJobFinishes", 1,
                            "status", "jobDeploymentStatus", "Suspended", "jobStatus", "NEW");
    assert_true(dispatch_copy_suspended(mgr));
    json_t *copy = dispatch_copy_worker(mgr, "hub", 120, &err);
    assert_non_null(copy);
    assert_null(json_object_get(json_object_get(copy, "spec"), "suspend"));
    assert_true(json_is_true(json_object_get(json_object_get(copy, "spec"), "shutdownAfterJobFinishes")));
    assert_null(
        json_object_get(json_object_get(json_object_get(copy, "metadata"), "annotations"), NAMES_ANNOTATION_DISPATCH_SUSPENDED));

    /* Running on the worker: jobStatus mirrored, the deployment status in the annotation only. */
    json_t *worker =
        json_pack("{s:s,s:{s:s,s:s}}", "kind", "RayJob", "status", "jobDeploymentStatus", "Running", "jobStatus", "RUNNING");
    struct dispatch_remote r;
    dispatch_copy_remote_init(&r);
    assert_int_equal(dispatch_copy_remote_read(worker, NULL, &r, &err), 0);
    dispatch_copy_remote_for_suspended(mgr, &r);
    assert_string_equal(json_string_value(r.worker_state), "Running");
    assert_null(json_object_get(r.status, "jobDeploymentStatus"));
    assert_string_equal(json_string_value(json_object_get(r.status, "jobStatus")), "RUNNING");
    json_object_set_new(json_object_get(mgr, "status"), "jobStatus", json_string("RUNNING"));
    assert_false(dispatch_copy_remote_shown(mgr, &r)); /* the annotation is not there yet */
    json_object_set_new(json_object_get(json_object_get(mgr, "metadata"), "annotations"), NAMES_ANNOTATION_DISPATCH_WORKER_STATE,
                        json_string("Running"));
    assert_true(dispatch_copy_remote_shown(mgr, &r)); /* KubeRay's Suspended stays: no MIRROR fights it */

    /* Complete: KubeRay leaves a finished RayJob alone, so it is shown in its status too, with its endTime. */
    json_object_set_new(json_object_get(worker, "status"), "jobDeploymentStatus", json_string("Complete"));
    json_object_set_new(json_object_get(worker, "status"), "endTime", json_string("2026-11-26T10:00:00Z"));
    assert_int_equal(dispatch_copy_remote_read(worker, NULL, &r, &err), 0);
    dispatch_copy_remote_for_suspended(mgr, &r);
    assert_string_equal(json_string_value(json_object_get(r.status, "jobDeploymentStatus")), "Complete");
    assert_string_equal(json_string_value(json_object_get(r.status, "endTime")), "2026-11-26T10:00:00Z");
    assert_string_equal(json_string_value(r.worker_state), "Complete");

    /* A RayCluster: its state goes to the annotation; KubeRay's "suspended" stays. */
    json_object_set_new(mgr, "kind", json_string("RayCluster"));
    json_t *wc = json_pack("{s:s,s:{s:s}}", "kind", "RayCluster", "status", "state", "ready");
    assert_int_equal(dispatch_copy_remote_read(wc, NULL, &r, &err), 0);
    dispatch_copy_remote_for_suspended(mgr, &r);
    assert_int_equal(json_object_size(r.status), 0);
    assert_string_equal(json_string_value(r.worker_state), "ready");

    /* Not suspended by raygate: as before, the status is mirrored whole. */
    json_object_del(json_object_get(json_object_get(mgr, "metadata"), "annotations"), NAMES_ANNOTATION_DISPATCH_SUSPENDED);
    assert_int_equal(dispatch_copy_remote_read(wc, NULL, &r, &err), 0);
    dispatch_copy_remote_for_suspended(mgr, &r);
    assert_null(r.worker_state);
    assert_string_equal(json_string_value(json_object_get(r.status, "state")), "ready");
    dispatch_copy_remote_finish(&r);
    json_decref(wc);
    json_decref(worker);
    json_decref(copy);
    json_decref(mgr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_strips),   cmocka_unit_test(test_copy_refuses),      cmocka_unit_test(test_renew_patch),
        cmocka_unit_test(test_remote_rayjob), cmocka_unit_test(test_remote_raycluster), cmocka_unit_test(test_suspended),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
