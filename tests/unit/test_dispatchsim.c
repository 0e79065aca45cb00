#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "cache.h"
#include "cachefixture.h"
#include "dispatchpick.h"
#include "dispatchsim.h"
#include "evict.h"
#include "fixtures.h"
#include "util.h"

/* What the cache models, as text: nodes and what is bound to them, queues, gangs and what each holds. */
static char *snapshot(const struct cache *c)
{
    struct util_buf b = {0};
    util_buf_printf(&b, "nodes %zu (%zu present) pods %zu gangs %zu queues %zu reserving %zu\n", c->nodes.len, c->nnodes_present,
                    c->pods.len, c->gangs.len, c->queues.len, c->nreserving);
    const struct cache_node *n;
    cache_node_for_each(n, c) {
        util_buf_printf(&b, "node %s bound %zu pods %lld:", n->name, n->bound, (long long)n->used_pods);
        for (uint32_t k = 0; k < n->nused; k++)
            util_buf_printf(&b, " %lld", (long long)n->used[k]);
        util_buf_puts(&b, "\n");
    }
    const struct cache_queue *q;
    cache_queue_for_each(q, c)
        util_buf_printf(&b, "queue %s present %d gangs %zu\n", q->name, q->present, q->ngangs);
    for (const struct cache_gang *g = c->all_gangs; g != NULL; g = g->all_next) {
        struct resources hold;
        struct error err;
        resources_init(&hold);
        assert_int_equal(admit_gang_hold(c, g, &hold, &err), 0);
        char *h = resources_to_string(&hold);
        util_buf_printf(&b, "gang %s/%s pods %zu present %d admitted %d holds %s\n", g->namespace_, g->name, g->npods, g->present,
                        g->admitted, h);
        free(h);
        resources_finish(&hold);
    }
    return util_buf_take(&b);
}

struct world {
    json_t *fx;
    int64_t now;
};

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    w->fx = fixture_json("dispatch/sim.json");
    assert_int_equal(evict_parse_time(json_string_value(json_object_get(w->fx, "now")), &w->now), 0);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    json_decref(w->fx);
    free(w);
    return 0;
}

/* The worker's "copies" as the view keeps them ({"Kind/ns/name": object}), or NULL when it lists none. New reference. */
static json_t *copies_of(const json_t *worker)
{
    const json_t *list = json_object_get(worker, "copies");
    if (list == NULL)
        return NULL;
    json_t *out = json_object();
    size_t i;
    const json_t *o;
    json_array_foreach(list, i, o)
    {
        const json_t *meta = json_object_get(o, "metadata");
        char *key =
            util_strdupf("%s/%s/%s", json_string_value(json_object_get(o, "kind")),
                         json_string_value(json_object_get(meta, "namespace")), json_string_value(json_object_get(meta, "name")));
        json_object_set(out, key, (json_t *)o);
        free(key);
    }
    return out;
}

/* Weighs object on worker (with its copies unless without_copies), checking the cache is as before; out initialised by the
 * caller. */
static int weigh_with(const struct world *w, const char *worker, const char *object, int without_copies,
                      struct dispatch_verdict *out)
{
    const json_t *wk = json_object_get(json_object_get(w->fx, "workers"), worker);
    struct cache *c = cachefixture_load(wk, 0);
    struct admit *a = admit_create(c);
    json_t *copies = without_copies ? NULL : copies_of(wk);
    char *before = snapshot(c);
    struct error err = {{0}};
    int rc = dispatch_sim(c, a, json_object_get(json_object_get(w->fx, "objects"), object), copies, w->now, out, &err);
    char *after = snapshot(c);
    if (strcmp(before, after) != 0)
        fail_msg("%s on %s: the cache changed:\n%s---\n%s", object, worker, before, after);
    /* Twice: the same verdict (nothing of the first run is left to sway the second). */
    struct dispatch_verdict again;
    dispatch_sim_verdict_init(&again);
    dispatch_sim(c, a, json_object_get(json_object_get(w->fx, "objects"), object), copies, w->now, &again, &err);
    assert_int_equal(again.fits, out->fits);
    assert_int_equal(again.stranded, out->stranded);
    assert_int_equal(again.reason, out->reason);
    dispatch_sim_verdict_finish(&again);
    free(before);
    free(after);
    json_decref(copies);
    admit_destroy(a);
    cache_destroy(c);
    return rc;
}

static int weigh(const struct world *w, const char *worker, const char *object, struct dispatch_verdict *out)
{
    return weigh_with(w, worker, object, 0, out);
}

static void test_sim_cases(void **state)
{
    struct world *w = *state;
    const json_t *cases = json_object_get(w->fx, "cases");
    assert_true(json_array_size(cases) >= 10);
    for (size_t i = 0; i < json_array_size(cases); i++) {
        const json_t *tc = json_array_get(cases, i);
        const char *object = json_string_value(json_object_get(tc, "object"));
        const char *worker = json_string_value(json_object_get(tc, "worker"));
        struct dispatch_verdict v;
        dispatch_sim_verdict_init(&v);
        int rc = weigh(w, worker, object, &v);
        int want_fits = json_is_true(json_object_get(tc, "fits"));
        const char *reason = json_string_value(json_object_get(tc, "reason"));
        const char *message = json_string_value(json_object_get(tc, "message"));
        const json_t *stranded = json_object_get(tc, "stranded");
        int ok = v.fits == want_fits && (rc == 0) == (v.reason != ADMIT_REASON_INVALID);
        ok = ok && (reason == NULL || strcmp(admit_result_reason_name(v.reason), reason) == 0);
        ok = ok && (message == NULL || (v.message != NULL && strcmp(v.message, message) == 0));
        ok = ok && (stranded == NULL || v.stranded == json_integer_value(stranded));
        ok = ok && (v.fits ? v.message == NULL && v.reason == ADMIT_REASON_NONE : v.message != NULL && v.message[0] != '\0');
        if (!ok)
            fail_msg("%s on %s: fits %d reason %s stranded %lld message %s", object, worker, v.fits,
                     admit_result_reason_name(v.reason), (long long)v.stranded, v.message ? v.message : "(none)");
        dispatch_sim_verdict_finish(&v);
    }
}

/* The message of a queue that blocks says which queue and what does not fit. */
static void test_sim_queue_message(void **state)
{
    struct world *w = *state;
    struct dispatch_verdict v;
    dispatch_sim_verdict_init(&v);
    assert_int_equal(weigh(w, "east", "train", &v), 0);
    assert_false(v.fits);
    assert_non_null(strstr(v.message, "does not fit queue a: cpu needs 8, 4 of 4 free"));
    dispatch_sim_verdict_finish(&v);
}

/* Pick on the fixtures: of the fitting workers the least stranded, whatever the order; the why text when none fits. */
static void test_sim_pick(void **state)
{
    struct world *w = *state;
    static const char *const names[] = {"east", "big", "west", "north"};
    struct dispatch_verdict v[4];
    struct dispatch_candidate cand[4];
    for (size_t i = 0; i < 4; i++) {
        dispatch_sim_verdict_init(&v[i]);
        weigh(w, names[i], "train", &v[i]);
        cand[i] = (struct dispatch_candidate){.name = names[i], .up = 1, .verdict = &v[i]};
    }
    assert_int_equal(dispatch_pick(cand, 4), 2); /* west: 16 cpu with 4 used; big has 64 */
    cand[2].up = 0;
    cand[2].error = "connection refused";
    assert_int_equal(dispatch_pick(cand, 4), 1);
    cand[1].up = 0;
    cand[1].error = "timeout";
    assert_int_equal(dispatch_pick(cand, 4), DISPATCH_NO_WORKER);
    char *why = dispatch_pick_why(cand, 4);
    assert_non_null(strstr(why, "east: gang ray-train-pg"));
    assert_non_null(strstr(why, "; big: unreachable: timeout; west: unreachable: connection refused; north: "));
    assert_non_null(strstr(why, "does not fit the nodes"));
    free(why);
    for (size_t i = 0; i < 4; i++)
        dispatch_sim_verdict_finish(&v[i]);
}

/* The RayCluster the worker would hold for a RayJob: KubeRay's labels, the webhook's annotations, the submitter counted. */
static void test_sim_rayjob_cluster(void **state)
{
    struct world *w = *state;
    struct error err = {{0}};
    json_t *c = dispatch_sim_cluster(json_object_get(json_object_get(w->fx, "objects"), "job"), "job", w->now, &err);
    assert_non_null(c);
    const json_t *meta = json_object_get(c, "metadata");
    const json_t *labels = json_object_get(meta, "labels"), *ann = json_object_get(meta, "annotations");
    assert_string_equal(json_string_value(json_object_get(labels, NAMES_LABEL_ORIGIN_CRD)), "RayJob");
    assert_string_equal(json_string_value(json_object_get(labels, "ray.io/originated-from-cr-name")), "job");
    assert_string_equal(json_string_value(json_object_get(ann, NAMES_ANNOTATION_MIN_MEMBER)), "4");
    assert_string_equal(json_string_value(json_object_get(ann, NAMES_ANNOTATION_MIN_RESOURCES)),
                        "{\"cpu\":\"8500m\",\"memory\":\"8392Mi\"}");
    assert_string_equal(json_string_value(json_object_get(meta, "creationTimestamp")), "2026-11-26T10:00:00Z");
    json_decref(c);
    /* No queue label: nothing to weigh. */
    json_t *bare = json_deep_copy(json_object_get(json_object_get(w->fx, "objects"), "train"));
    json_object_del(json_object_get(json_object_get(bare, "metadata"), "labels"), NAMES_LABEL_QUEUE);
    assert_null(dispatch_sim_cluster(bare, "train", w->now, &err));
    assert_string_equal(err.message, "metadata.labels." NAMES_LABEL_QUEUE ": missing");
    json_decref(bare);
    /* A RayJob on an existing cluster (clusterSelector) has no cluster of its own to send. */
    json_t *selector = json_deep_copy(json_object_get(json_object_get(w->fx, "objects"), "job"));
    json_object_del(json_object_get(selector, "spec"), "rayClusterSpec");
    json_object_set_new(json_object_get(selector, "spec"), "clusterSelector", json_pack("{s:s}", "ray.io/cluster", "shared"));
    assert_null(dispatch_sim_cluster(selector, "job", w->now, &err));
    assert_string_equal(err.message, "spec.rayClusterSpec: missing (a RayJob on an existing cluster is not dispatched)");
    json_decref(selector);
}

/*
 * A copy made a moment ago, whose pods KubeRay has not made yet, takes its
 * room in the pass: without the view's copies the same worker would be weighed
 * as fitting (the second nomination to a worker about to be full). "created":
 * the copy is in the view's copies (the dispatcher created it) but the cache
 * has not seen its RayCluster yet, nor any pod.
 */
static void test_sim_pending_copy(void **state)
{
    struct world *w = *state;
    static const char *const workers[] = {"filling", "created", "half", "jobwait"};
    for (size_t i = 0; i < sizeof(workers) / sizeof(*workers); i++) {
        struct dispatch_verdict with, without;
        dispatch_sim_verdict_init(&with);
        dispatch_sim_verdict_init(&without);
        assert_int_equal(weigh_with(w, workers[i], "train", 0, &with), 0);
        assert_int_equal(weigh_with(w, workers[i], "train", 1, &without), 0);
        if (with.fits || !without.fits)
            fail_msg("%s: fits %d with its copies, %d without", workers[i], with.fits, without.fits);
        assert_non_null(strstr(with.message, "does not fit the nodes"));
        dispatch_sim_verdict_finish(&with);
        dispatch_sim_verdict_finish(&without);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_cases),          cmocka_unit_test(test_sim_queue_message), cmocka_unit_test(test_sim_pick),
        cmocka_unit_test(test_sim_rayjob_cluster), cmocka_unit_test(test_sim_pending_copy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
