/*
 * lib/sched/admit/early.c: a gang weighed before its pods all exist (issue 26), on
 * tests/fixtures/admit/early-admit.json and early-reserve.json (the pass's
 * verdicts on them are test_admit's), and preemptscan/guide.json: which
 * members a gang lacks and the pods that stand for them, what an admitted
 * gang's members to come keep on the nodes, the counts of live and ungated
 * pods the cache keeps and since when a gang is short of pods, and that a
 * gang weighed early preempts nobody.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "cachefixture.h"
#include "early.h"
#include "fit.h"
#include "fixtures.h"
#include "members.h"
#include "preemptscan.h"

/* big: head and worker-a of 3 workers; nogroup: its head, none of its 1 worker. */
static void test_missing(void **state)
{
    (void)state;
    json_t *fx = fixture_json("admit/early-admit.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct cache_gang *g = cache_gang_get(c, "default", "big");
    assert_non_null(g);
    assert_true(early_applies(g));
    assert_false(early_reserves(g)); /* not admitted */
    struct cache_pod **live, *out[8] = {0};
    size_t ncore = members_of(g, &live);
    assert_int_equal(ncore, 2);
    int complete = 0;
    assert_int_equal(early_missing(g, live, ncore, live, ncore, out, &complete), 2);
    assert_true(complete);
    assert_string_equal(out[0]->name, "big-worker-a");
    assert_ptr_equal(out[0], out[1]);
    /* Nothing filled: the head and the three workers lack, each copied from its role's pod. */
    assert_int_equal(early_missing(g, live, 0, live, ncore, out, &complete), 4);
    assert_string_equal(out[0]->name, "big-head");
    assert_string_equal(out[3]->name, "big-worker-a");
    free(live);

    g = cache_gang_get(c, "default", "nogroup");
    ncore = members_of(g, &live);
    assert_int_equal(early_missing(g, live, ncore, live, ncore, out, &complete), 0);
    assert_false(complete);
    free(live);
    cache_destroy(c);
    json_decref(fx);
}

static size_t reserve_count(const struct cache *c)
{
    struct fit *f = fit_create(c);
    fit_begin(f);
    size_t n = early_reserve(c, f);
    fit_end(f);
    fit_destroy(f);
    return n;
}

/* big is admitted: head bound, worker-a ungated, worker-b gated, worker-c to come. */
static void test_reserve(void **state)
{
    (void)state;
    json_t *fx = fixture_json("admit/early-reserve.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct cache_gang *g = cache_gang_get(c, "default", "big");
    assert_int_equal(g->nopen, 2);
    assert_true(early_reserves(g));
    assert_int_equal(reserve_count(c), 2); /* worker-b's and worker-c's */

    cache_pod_mark_ungated(c, cache_pod_get(c, "default", "big-worker-b"));
    assert_int_equal(g->nopen, 3);
    assert_int_equal(reserve_count(c), 1);
    cache_pod_mark_ungated(c, cache_pod_get(c, "default", "big-worker-b")); /* counted once */
    assert_int_equal(g->nopen, 3);

    assert_int_equal(g->nlive, 3);
    assert_int_equal(g->short_since_ms, 0); /* short since it was loaded, when the clock was unknown */
    cache_set_clock(c, 5000);
    /* worker-a fails: no longer live, no longer counted; its slot is to fill again. */
    json_t *pod = json_deep_copy(json_array_get(json_object_get(fx, "pods"), 1));
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")), "big-worker-a");
    json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Failed"));
    cachefixture_upsert(c, "pods", pod);
    json_decref(pod);
    assert_int_equal(g->nopen, 2);
    assert_int_equal(reserve_count(c), 2);
    assert_int_equal(g->nlive, 2);
    assert_int_equal(g->short_since_ms, 5000); /* evictscan.h times its members to come from then */

    /* worker-c arrives ungated (a controller that ungated it before a restart), and worker-a's replacement: none lacks. */
    for (int k = 0; k < 2; k++) {
        pod = json_deep_copy(json_array_get(json_object_get(fx, "pods"), 1));
        json_t *meta = json_object_get(pod, "metadata");
        json_object_set_new(meta, "name", json_string(k ? "big-worker-d" : "big-worker-c"));
        json_object_set_new(meta, "uid", json_string(k ? "uid-d" : "uid-c"));
        cachefixture_upsert(c, "pods", pod);
        json_decref(pod);
    }
    assert_int_equal(g->nopen, 4);
    assert_false(early_reserves(g));
    assert_int_equal(g->short_since_ms, 0);
    assert_int_equal(reserve_count(c), 0);
    cache_delete_pod(c, "default", "big-worker-d");
    assert_int_equal(g->nopen, 3);
    assert_true(early_reserves(g));
    cache_destroy(c);
    json_decref(fx);
}

/* guide.json with group labels: test-cluster-1 (priority 1000) would preempt test-cluster-0, but not when incomplete. */
static void scan_guide(int drop_worker, struct preemptscan_result *r)
{
    json_t *fx = fixture_json("preemptscan/guide.json");
    size_t i;
    json_t *pod;
    json_array_foreach(json_object_get(fx, "pods"), i, pod)
    {
        json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
        if (strcmp(json_string_value(json_object_get(labels, "ray.io/node-type")), "worker") == 0)
            json_object_set_new(labels, "ray.io/group", json_string("worker"));
    }
    if (drop_worker)
        json_array_remove(json_object_get(fx, "pods"), json_array_size(json_object_get(fx, "pods")) - 1);
    struct cache *c = cachefixture_load(fx, 0);
    struct admit *a = admit_create(c);
    admit_set_early(a, 1);
    struct admit_result d;
    admit_result_init(&d);
    admit_pass(a, ADMIT_PASS_FULL, &d);
    assert_int_equal(d.len, 1);
    assert_int_equal(d.items[0].action, ADMIT_ACTION_WAIT); /* weighed, early or not: it does not fit */
    assert_int_not_equal(d.items[0].reason, ADMIT_REASON_PODS);
    struct error err = {{0}};
    assert_int_equal(preemptscan_run(c, &d, NULL, 0, r, &err), 0);
    admit_result_finish(&d);
    admit_destroy(a);
    cache_destroy(c);
    json_decref(fx);
}

static void test_no_preemptor(void **state)
{
    (void)state;
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    scan_guide(0, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_PREEMPT);
    scan_guide(1, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    assert_int_equal(r.nvictims, 0);
    preemptscan_result_finish(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_no_preemptor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
