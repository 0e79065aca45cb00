/*
 * lib/sched/admit/early.c: a gang weighed before its pods all exist, on
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

#include <stdio.h>
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

/* Every gang early_reserves() is on the cache's early list (the pass reads only the list), wherever the list was pruned;
   exact: no other gang either (just pruned). */
static void assert_early_listed(const struct cache *c, int exact)
{
    for (const struct cache_gang *e = c->early; exact && e != NULL; e = e->early_next) {
        if (!early_reserves(e))
            fail_msg("gang %s is on the early list just pruned but does not early_reserves()", e->name);
    }
    for (const struct cache_gang *g = c->all_gangs; g != NULL; g = g->all_next) {
        if (!early_reserves(g))
            continue;
        const struct cache_gang *e = c->early;
        while (e != NULL && e != g)
            e = e->early_next;
        if (e == NULL)
            fail_msg("gang %s early_reserves() but is not on the early list", g->name);
    }
}

/* A copy of fx's array kind item i (new; json_decref) renamed name (and labelled cluster, unless NULL). */
static json_t *renamed(const json_t *fx, const char *kind, size_t i, const char *name, const char *cluster)
{
    json_t *o = json_deep_copy(json_array_get(json_object_get(fx, kind), i));
    json_t *meta = json_object_get(o, "metadata");
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "uid", json_sprintf("uid-%s", name));
    if (cluster != NULL)
        json_object_set_new(json_object_get(meta, "labels"), "ray.io/cluster", json_string(cluster));
    return o;
}

/* One random change of gang k's RayCluster or of its pod j (early-reserve.json's big and its pods as the models). */
static void random_change(struct cache *c, const json_t *fx, int k, int j, unsigned op)
{
    char gang[16], pod[32];
    snprintf(gang, sizeof(gang), "g%d", k);
    snprintf(pod, sizeof(pod), "g%d-p%d", k, j);
    json_t *o = NULL;
    struct cache_gang *g = cache_gang_get(c, "default", gang);
    struct cache_pod *p = cache_pod_get(c, "default", pod);
    struct evict_record rec = {.count = 1, .evicted_at_ms = 1000, .generation = 1};
    if (op < 3) { /* a pod made or changed: ungated and pending, gated, or failed */
        o = renamed(fx, "pods", op == 1 ? 2 : 1, pod, gang);
        if (op == 2)
            json_object_set_new(json_object_get(o, "status"), "phase", json_string("Failed"));
        cachefixture_upsert(c, "pods", o);
    } else if (op == 3) {
        cache_delete_pod(c, "default", pod);
    } else if (op == 4 && p != NULL) {
        cache_pod_mark_ungated(c, p);
    } else if (op == 5 && g != NULL && g->present) {
        cache_gang_mark_admitted(c, g, "2024-05-01T10:01:05Z");
    } else if (op == 6 && g != NULL && g->present) {
        cache_gang_mark_evicted(c, g, &rec);
    } else if (op == 7 || op == 8) { /* the RayCluster, admitted or not */
        o = renamed(fx, "rayclusters", 0, gang, NULL);
        if (op == 8)
            json_object_del(json_object_get(json_object_get(o, "metadata"), "annotations"), "raygate.io/admitted-at");
        cachefixture_upsert(c, "rayclusters", o);
    } else if (op == 9) {
        cache_delete_raycluster(c, "default", gang);
    } else if (op == 10) {
        early_prune(c);
    }
    json_decref(o);
}

/* 4,000 seeded changes of 8 gangs of up to 5 pods: the early list always holds every gang early_reserves(). */
static void test_early_list(void **state)
{
    (void)state;
    json_t *fx = fixture_json("admit/early-reserve.json");
    struct cache *c = cachefixture_load(fx, 0);
    unsigned seed = 37;
    size_t dropped = 0, kept = 0;
    for (int round = 0; round < 4000; round++) {
        random_change(c, fx, rand_r(&seed) % 8, rand_r(&seed) % 5, (unsigned)rand_r(&seed) % 11);
        assert_early_listed(c, 0);
        size_t before = 0, after = 0;
        for (const struct cache_gang *e = c->early; e != NULL; e = e->early_next)
            before++;
        early_prune(c);
        assert_early_listed(c, 1);
        for (const struct cache_gang *e = c->early; e != NULL; e = e->early_next)
            after++;
        dropped += before - after;
        kept += after;
    }
    assert_true(dropped > 100 && kept > 100); /* both kinds of gang were met */
    cache_destroy(c);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_no_preemptor),
        cmocka_unit_test(test_early_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
