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
#include "admitfixture.h"
#include "fixtures.h"

static char *decision_text(const struct admit_decision *d)
{
    json_t *pods = json_array(), *messages = json_array();
    for (size_t i = 0; i < d->npods; i++) {
        json_array_append_new(pods, json_string(d->pods[i].name));
        json_array_append_new(messages, d->pods[i].message ? json_string(d->pods[i].message) : json_null());
    }
    json_t *j = json_pack("{s:s,s:s++,s:s,s:s,s:o,s:o}", "action", admit_result_action_name(d->action), "cluster", d->namespace_,
                          "/", d->cluster, "reason", admit_result_reason_name(d->reason), "message", d->message ? d->message : "",
                          "pods", pods, "podMessages", messages);
    char *s = fixture_dump(j);
    json_decref(j);
    return s;
}

/* Compares decisions [from, r->len) with the expected array: action, cluster and every field the fixture gives. */
static void check_decisions(const char *what, const struct admit_result *r, size_t from, const json_t *want)
{
    size_t n = r->len - from;
    for (size_t i = 0; i < n && i < json_array_size(want); i++) {
        const struct admit_decision *d = &r->items[from + i];
        const json_t *w = json_array_get(want, i);
        char *got = decision_text(d);
        char cluster[256];
        snprintf(cluster, sizeof(cluster), "%s/%s", d->namespace_, d->cluster);
        const char *wreason = json_string_value(json_object_get(w, "reason"));
        const char *wmessage = json_string_value(json_object_get(w, "message"));
        const json_t *wpods = json_object_get(w, "pods");
        int ok = strcmp(admit_result_action_name(d->action), json_string_value(json_object_get(w, "action"))) == 0 &&
                 strcmp(cluster, json_string_value(json_object_get(w, "cluster"))) == 0 &&
                 (wreason == NULL || strcmp(admit_result_reason_name(d->reason), wreason) == 0) &&
                 (wmessage == NULL || (d->message != NULL && strcmp(d->message, wmessage) == 0));
        if (wpods != NULL) {
            ok = ok && json_array_size(wpods) == d->npods;
            for (size_t k = 0; ok && k < d->npods; k++)
                ok = strcmp(d->pods[k].name, json_string_value(json_array_get(wpods, k))) == 0;
        }
        /* podMessages: why each pod of a tail-wait waits. */
        const json_t *wpm = json_object_get(w, "podMessages");
        if (wpm != NULL) {
            ok = ok && json_array_size(wpm) == d->npods;
            for (size_t k = 0; ok && k < d->npods; k++)
                ok = d->pods[k].message != NULL && strcmp(d->pods[k].message, json_string_value(json_array_get(wpm, k))) == 0;
        }
        /* topology: the domains recorded; confine: each pod's confinement (compact JSON, null for none). */
        const json_t *wtopo = json_object_get(w, "topology"), *wconf = json_object_get(w, "confine");
        if (wtopo != NULL)
            ok = ok && d->topology != NULL && strcmp(d->topology, json_string_value(wtopo)) == 0;
        if (wconf != NULL) {
            ok = ok && json_array_size(wconf) == d->npods;
            for (size_t k = 0; ok && k < d->npods; k++) {
                char *got_conf = d->pods[k].confine != NULL ? json_dumps(d->pods[k].confine, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
                const char *want_conf = json_string_value(json_array_get(wconf, k));
                ok = (got_conf == NULL) == (want_conf == NULL) && (got_conf == NULL || strcmp(got_conf, want_conf) == 0);
                free(got_conf);
            }
        }
        if (d->action == ADMIT_ACTION_TAIL_WAIT) {
            for (size_t k = 0; k < d->npods; k++)
                ok = ok && d->pods[k].message != NULL && d->pods[k].message[0] != '\0';
        }
        /* A wait always says why, in words. */
        if ((d->action == ADMIT_ACTION_WAIT || d->action == ADMIT_ACTION_TAIL_WAIT) &&
            (d->reason == ADMIT_REASON_NONE || d->message == NULL || d->message[0] == '\0'))
            ok = 0;
        if (!ok) {
            char *ws = fixture_dump(w);
            fail_msg("%s: decision %zu is\n  %s\nexpected\n  %s", what, i, got, ws);
        }
        free(got);
    }
    if (n != json_array_size(want)) {
        char *extra = n > json_array_size(want) ? decision_text(&r->items[from + json_array_size(want)]) : strdup("-");
        fail_msg("%s: %zu decisions, expected %zu (first extra: %s)", what, n, json_array_size(want), extra);
    }
}

/* A fixture's "now" (RFC 3339) and "evict" ({"requeue_limit": n}), for its evicted gangs (evict.h), and "early" (early.h). */
static void fixture_clock(struct admit *a, const json_t *fx)
{
    int64_t now = 0;
    const char *at = json_string_value(json_object_get(fx, "now"));
    if (at != NULL)
        assert_int_equal(evict_parse_time(at, &now), 0);
    admit_set_now(a, now);
    struct evict_config cfg;
    evict_config_default(&cfg);
    cfg.requeue_limit = json_integer_value(json_object_get(json_object_get(fx, "evict"), "requeue_limit"));
    admit_set_evict(a, &cfg);
    admit_set_early(a, json_is_true(json_object_get(fx, "early")));
}

/* Every fixture in admit/: the decisions of a pass over its state, whatever order the objects came in. */
static void test_fixtures(void **state)
{
    (void)state;
    size_t n, total = 0;
    char **files = fixture_list("admit", &n);
    assert_true(n >= 25);
    for (size_t i = 0; i < n; i++) {
        json_t *fx = fixture_json(files[i]);
        const json_t *want = json_object_get(fx, "decisions");
        assert_true(json_is_array(want));
        for (int reverse = 0; reverse < 2; reverse++) {
            struct cache *c = cachefixture_load(fx, reverse);
            struct admit *a = admit_create(c);
            fixture_clock(a, fx);
            struct admit_result r;
            admit_result_init(&r);
            char what[256];
            snprintf(what, sizeof(what), "%s (%s)", files[i], reverse ? "reversed, full pass" : "incremental pass");
            admit_pass(a, reverse ? ADMIT_PASS_FULL : 0, &r);
            check_decisions(what, &r, 0, want);
            /* Nothing changed: an incremental pass has nothing to look at and decides nothing. */
            size_t len = r.len;
            assert_int_equal(admit_pass(a, 0, &r), 0);
            assert_int_equal(r.len, len);
            admit_result_finish(&r);
            admit_destroy(a);
            cache_destroy(c);
        }
        total += json_array_size(want);
        json_decref(fx);
    }
    assert_true(total >= 50);
    fixture_list_free(files, n);
}

/* The pod as the watch shows it once the scheduler bound it: ungated, on node, Running, a new resourceVersion. */
static json_t *bound(const json_t *pod, const char *node, const char *rv)
{
    json_t *p = json_deep_copy(pod);
    json_t *spec = json_object_get(p, "spec");
    json_object_del(spec, "schedulingGates");
    json_object_set_new(spec, "nodeName", json_string(node));
    json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_string(rv));
    json_object_set_new(json_object_get(p, "status"), "phase", json_string("Running"));
    return p;
}

/* The watch shows test-cluster-0 with its admission record and its 3 pods (names) bound to node-1. */
static void watch_catches_up(struct cache *c, const json_t *fx, const char *const names[3])
{
    struct error err;
    json_t *rc0 = json_deep_copy(find_object(fx, "rayclusters", "test-cluster-0"));
    json_object_set_new(json_object_get(rc0, "metadata"), "annotations",
                        json_pack("{s:s}", "raygate.io/admitted-at", "2024-05-01T11:00:00Z"));
    json_object_set_new(json_object_get(rc0, "metadata"), "resourceVersion", json_string("900"));
    assert_int_equal(cache_upsert_raycluster(c, rc0, &err), 0);
    json_decref(rc0);
    for (size_t i = 0; i < 3; i++) {
        json_t *p = bound(find_object(fx, "pods", names[i]), "node-1", "901");
        assert_int_equal(cache_upsert_pod(c, p, &err), 0);
        json_decref(p);
    }
}

/* What gang g holds (admit_gang_hold) is want, as resources_to_string writes it. */
static void check_hold(const struct cache *c, const struct cache_gang *g, const char *want)
{
    struct resources held;
    struct error err;
    resources_init(&held);
    assert_int_equal(admit_gang_hold(c, g, &held, &err), 0);
    char *s = resources_to_string(&held);
    assert_string_equal(s, want);
    free(s);
    resources_finish(&held);
}

/* The guide's walkthrough, step by step: admitted pods keep their share until they are gone, then the next gang goes. */
static void test_walkthrough(void **state)
{
    struct admit_test *fix = *state;
    json_t *fx = fix->fx;
    struct cache *c = fix->c;
    struct admit *a = fix->a;
    struct admit_result r;
    admit_result_init(&r);
    struct error err;

    assert_int_equal(admit_pass(a, 0, &r), 2);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_ADMIT);
    assert_int_equal(r.items[1].action, ADMIT_ACTION_WAIT);
    assert_int_equal(admit_reason_changed(c, &r.items[0]), 1);
    assert_int_equal(admit_reason_changed(c, &r.items[1]), 1);
    apply(c, &r, 0);
    struct cache_gang *g0 = cache_gang_get(c, "default", "test-cluster-0");
    assert_non_null(g0);
    assert_true(g0->admitted);
    /* Three admitted pods wait for the scheduler and reserve their room. */
    assert_int_equal(c->nreserving, 3);

    /* The marks changed test-cluster-0's queue: it is looked at again, decides nothing new, and the wait is no news. */
    size_t from = r.len;
    assert_int_equal(admit_pass(a, 0, &r), 1);
    assert_int_equal(r.items[from].action, ADMIT_ACTION_WAIT);
    assert_string_equal(r.items[from].message, r.items[1].message);
    assert_int_equal(admit_reason_changed(c, &r.items[from]), 0);

    /* The watch catches up: the apiserver's copy of the cluster carries the annotation; the scheduler binds the pods. */
    const char *names[] = {"test-cluster-0-head", "test-cluster-0-worker-worker-a", "test-cluster-0-worker-worker-b"};
    watch_catches_up(c, fx, names);
    assert_int_equal(c->nreserving, 0);
    assert_int_equal(cache_node_get(c, "node-1")->used_pods, 3);
    from = r.len;
    admit_pass(a, 0, &r);
    assert_int_equal(r.len - from, 1);
    assert_int_equal(r.items[from].reason, ADMIT_REASON_QUEUE_CAPACITY);

    /* What the gang holds, as the Queue's status.allocated shows it; test-cluster-1 nothing: none of its pods is admitted. */
    check_hold(c, g0, "{\"cpu\":\"3\",\"memory\":\"4Gi\"}");
    check_hold(c, cache_gang_get(c, "default", "test-cluster-1"), "{}");

    /* Deleting the RayCluster is not enough: its pods, terminating, still hold the queue. */
    cache_delete_raycluster(c, "default", "test-cluster-0");
    assert_non_null(cache_gang_get(c, "default", "test-cluster-0"));
    g0 = cache_gang_get(c, "default", "test-cluster-0");
    check_hold(c, g0, "{\"cpu\":\"3\",\"memory\":\"4Gi\"}");
    /* One pod finished: the gang still holds at least its minResources. */
    json_t *done = bound(find_object(fx, "pods", "test-cluster-0-head"), "node-1", "902");
    json_object_set_new(json_object_get(done, "status"), "phase", json_string("Succeeded"));
    assert_int_equal(cache_upsert_pod(c, done, &err), 0);
    json_decref(done);
    check_hold(c, g0, "{\"cpu\":\"3\",\"memory\":\"4Gi\"}");
    from = r.len;
    admit_pass(a, 0, &r);
    assert_int_equal(r.len - from, 1);
    assert_int_equal(r.items[from].action, ADMIT_ACTION_WAIT);
    assert_string_equal(r.items[from].message, r.items[1].message);

    /* Once they are gone, test-cluster-1 is admitted with all its pods at once. */
    for (size_t i = 0; i < 3; i++)
        cache_delete_pod(c, "default", names[i]);
    assert_null(cache_gang_get(c, "default", "test-cluster-0"));
    assert_int_equal(cache_node_get(c, "node-1")->used_pods, 0);
    from = r.len;
    admit_pass(a, 0, &r);
    assert_int_equal(r.len - from, 1);
    assert_int_equal(r.items[from].action, ADMIT_ACTION_ADMIT);
    assert_string_equal(r.items[from].cluster, "test-cluster-1");
    assert_int_equal(r.items[from].npods, 3);
    assert_string_equal(r.items[from].message, "admitted by queue kuberay-test-queue; scheduling gates removed from 3 pods");
    assert_string_equal(r.items[from].gang, "ray-test-cluster-1-pg");

    admit_result_finish(&r);
}

/* An event in one queue re-evaluates that queue only; a node added re-evaluates all. */
static void test_incremental(void **state)
{
    struct admit_test *fix = *state;
    json_t *fx = fix->fx;
    struct cache *c = fix->c;
    struct admit *a = fix->a;
    struct admit_result r;
    struct error err;
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.queues_evaluated, 2);
    assert_int_equal(r.gangs_evaluated, 2);
    apply(c, &r, 0);
    admit_pass(a, 0, &r); /* open-queue, dirty from the marks */
    admit_result_finish(&r);

    /* A pod of a cluster in the Closed queue: only that queue is looked at. */
    json_t *p = json_deep_copy(find_object(fx, "pods", "test-cluster-1-head"));
    json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_string("999"));
    assert_int_equal(cache_upsert_pod(c, p, &err), 0);
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.queues_evaluated, 1);
    assert_int_equal(r.gangs_evaluated, 1);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].reason, ADMIT_REASON_QUEUE_CLOSED);
    admit_result_finish(&r);

    /* The queue opens: its gang is admitted. */
    json_t *q = json_deep_copy(find_object(fx, "queues", "kuberay-test-queue"));
    json_object_set_new(json_object_get(q, "status"), "state", json_string("Open"));
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.queues_evaluated, 1);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_ADMIT);
    admit_result_finish(&r);

    /* The same queue again (same content): nothing to do. */
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    admit_result_init(&r);
    assert_int_equal(admit_pass(a, 0, &r), 0);
    assert_int_equal(r.queues_evaluated, 0);
    admit_result_finish(&r);

    /* A new node makes room, but no gang waits on node room: nothing to look at (see test_node_waiters). */
    json_t *node = json_deep_copy(find_object(fx, "nodes", "node-1"));
    json_object_set_new(json_object_get(node, "metadata"), "name", json_string("node-2"));
    assert_int_equal(cache_upsert_node(c, node, &err), 0);
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.queues_evaluated, 0);
    assert_int_equal(r.gangs_evaluated, 0);
    admit_result_finish(&r);
    /* A node's heartbeat that changes nothing we use does not. */
    assert_int_equal(cache_upsert_node(c, node, &err), 0);
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.queues_evaluated, 0);
    admit_result_finish(&r);

    json_decref(node);
    json_decref(q);
    json_decref(p);
}

/* GLUE, walkthrough 2: a node with 2 GPUs appears and the gang is admitted. */
static void test_node_added(void **state)
{
    struct admit_test *fix = *state;
    json_t *fx = fix->fx;
    struct cache *c = fix->c;
    struct admit *a = fix->a;
    struct admit_result r;
    struct error err;
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].reason, ADMIT_REASON_NODES);
    for (int i = 3; i <= 4; i++) {
        json_t *node = json_deep_copy(find_object(fx, "nodes", "gpu-node-1"));
        char name[32];
        snprintf(name, sizeof(name), "gpu-node-%d", i);
        json_object_set_new(json_object_get(node, "metadata"), "name", json_string(name));
        json_object_set_new(json_object_get(json_object_get(node, "status"), "allocatable"), "nvidia.com/gpu", json_string("2"));
        assert_int_equal(cache_upsert_node(c, node, &err), 0);
        json_decref(node);
        admit_pass(a, 0, &r);
    }
    /* One node: the second worker still has nowhere to go; two: admitted. */
    assert_int_equal(r.len, 3);
    assert_int_equal(r.items[1].action, ADMIT_ACTION_WAIT);
    assert_non_null(strstr(r.items[1].message, "after placing 1 other pod of the gang"));
    assert_int_equal(r.items[2].action, ADMIT_ACTION_ADMIT);
    assert_int_equal(r.items[2].npods, 3);
    admit_result_finish(&r);
}

/* Room on the nodes: only gangs that waited on node room are looked at again, and they decide as a full pass would. */
static void test_node_waiters(void **state)
{
    struct admit_test *fix = *state;
    json_t *fx = fix->fx;
    struct cache *c = fix->c;
    struct admit *a = fix->a;
    struct admit_result r;
    struct error err;
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.len, 2);
    admit_result_finish(&r);

    /* A second node: big-a (waiting on nodes) is evaluated and admitted; wait-b (waiting on its queue) is not looked at. */
    json_t *node = json_deep_copy(find_object(fx, "nodes", "node-1"));
    json_object_set_new(json_object_get(node, "metadata"), "name", json_string("node-2"));
    assert_int_equal(cache_upsert_node(c, node, &err), 0);
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.queues_evaluated, 1);
    assert_int_equal(r.gangs_evaluated, 1);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_ADMIT);
    assert_string_equal(r.items[0].cluster, "big-a");
    /* A full pass over the same state agrees: big-a admitted, wait-b still waits on its queue. */
    struct admit_result full;
    admit_result_init(&full);
    admit_pass(a, ADMIT_PASS_FULL, &full);
    assert_int_equal(full.len, 2);
    assert_int_equal(full.items[0].action, ADMIT_ACTION_ADMIT);
    assert_string_equal(full.items[0].cluster, "big-a");
    assert_int_equal(full.items[1].reason, ADMIT_REASON_QUEUE_CAPACITY);
    admit_result_finish(&full);
    apply(c, &r, 0);
    admit_result_finish(&r);
    admit_result_init(&r);
    admit_pass(a, 0, &r); /* queue-a, dirty from the marks */
    assert_int_equal(r.len, 0);
    admit_result_finish(&r);

    /* run-b's pod is gone: room in queue-b and on node-1; its queue changed, so wait-b is looked at and admitted. */
    cache_delete_pod(c, "default", "run-b-head");
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.queues_evaluated, 1);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_ADMIT);
    assert_string_equal(r.items[0].cluster, "wait-b");
    admit_result_finish(&r);

    json_decref(node);
}

/* Events only when the reason changes: never once per pass. */
static void test_reason_changed(void **state)
{
    struct admit_test *fix = *state;
    json_t *fx = fix->fx;
    struct cache *c = fix->c;
    struct admit *a = fix->a;
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(a, ADMIT_PASS_FULL, &r);
    admit_pass(a, ADMIT_PASS_FULL, &r);
    assert_int_equal(r.len, 8);
    const struct admit_decision *first = &r.items[0], *again = &r.items[4];
    assert_int_equal(first->action, ADMIT_ACTION_WAIT);
    assert_string_equal(first->cluster, "incomplete");
    assert_string_equal(again->cluster, "incomplete");
    assert_int_equal(admit_reason_changed(c, first), 1);
    assert_int_equal(admit_reason_changed(c, again), 0);

    /* Another count of the same story is not news... */
    struct admit_decision d = *first;
    assert_int_equal(d.reason, ADMIT_REASON_PODS);
    d.message = "waiting for pods: 1 of 3 created";
    assert_int_equal(admit_reason_changed(c, &d), 0);
    /* ...though the count is kept, for the PodGroup's condition. */
    struct cache_gang *g = cache_gang_get(c, first->namespace_, first->cluster);
    assert_string_equal(g->last_message, "waiting for pods: 1 of 3 created");
    /* ...another message under another reason is, and the pods are to be told again. */
    assert_non_null(g->pods);
    cache_pod_mark_told(g->pods);
    assert_true(g->pods->flags & CACHE_POD_TOLD);
    d.reason = ADMIT_REASON_QUEUE_CAPACITY;
    d.message = "gang ray-incomplete-pg does not fit queue q: cpu needs 3, 1 of 4 free";
    assert_int_equal(admit_reason_changed(c, &d), 1);
    assert_false(g->pods->flags & CACHE_POD_TOLD);
    d.message = "gang ray-incomplete-pg does not fit queue q: cpu needs 3, 2 of 4 free";
    assert_int_equal(admit_reason_changed(c, &d), 1);
    assert_int_equal(admit_reason_changed(c, &d), 0);
    /* The tail keeps its own record. */
    d.action = ADMIT_ACTION_TAIL_WAIT;
    assert_int_equal(admit_reason_changed(c, &d), 1);
    assert_int_equal(admit_reason_changed(c, first), 1);
    /* Admission forgets the reason: waiting again later is reported. */
    d.action = ADMIT_ACTION_ADMIT;
    assert_int_equal(admit_reason_changed(c, &d), 1);
    assert_int_equal(admit_reason_changed(c, first), 1);
    /* A gang that is gone: nothing to report. */
    d.cluster = "no-such-cluster";
    assert_int_equal(admit_reason_changed(c, &d), 0);

    /* Being told survives an update of the same pod (a status change), not a new pod of that name. */
    json_t *pj = json_deep_copy(json_array_get(json_object_get(fx, "pods"), 0));
    json_t *meta = json_object_get(pj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace")),
               *name = json_string_value(json_object_get(meta, "name"));
    struct error gerr;
    cache_pod_mark_told(cache_pod_get(c, ns, name));
    json_object_set_new(meta, "resourceVersion", json_string("999999"));
    assert_int_equal(cache_upsert_pod(c, pj, &gerr), 0);
    assert_true(cache_pod_get(c, ns, name)->flags & CACHE_POD_TOLD);
    json_object_set_new(meta, "uid", json_string("another-uid"));
    assert_int_equal(cache_upsert_pod(c, pj, &gerr), 0);
    assert_false(cache_pod_get(c, ns, name)->flags & CACHE_POD_TOLD);
    json_decref(pj);
    admit_result_finish(&r);
}

/* The ungate patch keeps foreign gates and carries the resourceVersion; a mark survives a stale watch event only. */
static void test_ungate_patch_and_marks(void **state)
{
    struct admit_test *fix = *state;
    json_t *fx = fix->fx;
    struct cache *c = fix->c;
    struct admit *a = fix->a;
    json_t *head = json_array_get(json_object_get(fx, "pods"), 0); /* with the foreign gate */
    struct admit_result r;
    struct error err;
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_ADMIT);
    assert_string_equal(r.items[0].pods[0].name, "test-cluster-0-head");
    json_t *patch = admit_result_ungate_patch(&r.items[0].pods[0]);
    json_t *want = json_loads(
        "{\"metadata\":{\"resourceVersion\":\"102\"},\"spec\":{\"schedulingGates\":[{\"name\":\"example.com/quota\"}]}}", 0, NULL);
    assert_non_null(want);
    if (!json_equal(patch, want)) {
        char *s = fixture_dump(patch);
        fail_msg("patch %s", s);
    }
    json_decref(patch);
    json_decref(want);
    patch = admit_result_ungate_patch(&r.items[0].pods[1]);
    assert_int_equal(json_array_size(json_object_get(json_object_get(patch, "spec"), "schedulingGates")), 0);
    json_decref(patch);

    struct cache_pod *p = cache_pod_get(c, "default", "test-cluster-0-head");
    assert_true(cache_pod_gated(p));
    cache_pod_mark_ungated(c, p);
    assert_false(cache_pod_gated(p));
    /* The watch delivers the version we had: still ungated as far as we know. */
    assert_int_equal(cache_upsert_pod(c, head, &err), 0);
    p = cache_pod_get(c, "default", "test-cluster-0-head");
    assert_false(cache_pod_gated(p));
    /* Another version that still has the gate: one written before our patch (kube-scheduler's status, say, which
       made our patch a 409, re-read and sent again), delivered after we marked the pod. The gate cannot come back,
       so the pod stays ungated; gated again, its request would leave its queue's share until the next event (CI run
       g-3 saw a queue 256Mi over its capability). The other gate is still read. */
    json_t *newer = json_deep_copy(head);
    json_object_set_new(json_object_get(newer, "metadata"), "resourceVersion", json_string("555"));
    assert_int_equal(cache_upsert_pod(c, newer, &err), 0);
    p = cache_pod_get(c, "default", "test-cluster-0-head");
    assert_false(cache_pod_gated(p));
    assert_int_equal(p->nforeign_gates, 1);
    assert_string_equal(p->foreign_gates[0], "example.com/quota");
    /* A new pod of that name (another uid) is not ours: gated. */
    json_t *other = json_deep_copy(newer);
    json_object_set_new(json_object_get(other, "metadata"), "uid", json_string("00000000-0000-0000-0000-00000000ffff"));
    assert_int_equal(cache_upsert_pod(c, other, &err), 0);
    assert_true(cache_pod_gated(cache_pod_get(c, "default", "test-cluster-0-head")));
    json_decref(other);

    /* Likewise for the admitted-at mark on the RayCluster. */
    struct cache_gang *g = cache_gang_get(c, "default", "test-cluster-0");
    cache_gang_mark_admitted(c, g, "2024-05-01T11:00:00Z");
    assert_int_equal(cache_upsert_raycluster(c, find_object(fx, "rayclusters", "test-cluster-0"), &err), 0);
    assert_true(cache_gang_get(c, "default", "test-cluster-0")->admitted);
    json_t *rc = json_deep_copy(find_object(fx, "rayclusters", "test-cluster-0"));
    json_object_set_new(json_object_get(rc, "metadata"), "resourceVersion", json_string("556"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    assert_false(cache_gang_get(c, "default", "test-cluster-0")->admitted);

    json_decref(rc);
    json_decref(newer);
    admit_result_finish(&r);
}

/* The tail: once admitted one pod of it, the next pass goes on with the next one. */
static void test_tail_progress(void **state)
{
    struct admit_test *fix = *state;
    json_t *fx = fix->fx;
    struct cache *c = fix->c;
    struct admit *a = fix->a;
    struct admit_result r;
    struct error err;
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.len, 2);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_TAIL_ADMIT);
    apply(c, &r, 0);
    /* The queue grows to 5 cpu: worker-c, then worker-d, follow. */
    json_t *q = json_deep_copy(find_object(fx, "queues", "kuberay-test-queue"));
    json_object_set_new(json_object_get(json_object_get(q, "spec"), "capability"), "cpu", json_string("5"));
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    size_t from = r.len;
    admit_pass(a, 0, &r);
    assert_int_equal(r.len - from, 2);
    assert_int_equal(r.items[from].action, ADMIT_ACTION_TAIL_ADMIT);
    assert_string_equal(r.items[from].pods[0].name, "scaled-worker-c");
    assert_int_equal(r.items[from + 1].action, ADMIT_ACTION_TAIL_ADMIT);
    assert_string_equal(r.items[from + 1].pods[0].name, "scaled-worker-d");
    json_decref(q);
    admit_result_finish(&r);
}

/* The pod as the watch shows it once deleted: deletionTimestamp set, a new resourceVersion. */
static json_t *terminating(const json_t *pod, const char *rv)
{
    json_t *p = json_deep_copy(pod);
    json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp", json_string("2024-05-01T11:00:00Z"));
    json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_string(rv));
    return p;
}

/* Sets the cpu request and limit of a pod spec's first container. */
static void set_first_cpu(json_t *pod_spec, const char *cpu)
{
    json_t *res = json_object_get(json_array_get(json_object_get(pod_spec, "containers"), 0), "resources");
    json_object_set_new(json_object_get(res, "requests"), "cpu", json_string(cpu));
    json_object_set_new(json_object_get(res, "limits"), "cpu", json_string(cpu));
}

/* A gang shrinking gives back its tail's share once the pods are gone, not while they terminate; its members' share stays. */
static void test_tail_release(void **state)
{
    struct admit_test *fix = *state;
    json_t *fx = fix->fx;
    struct cache *c = fix->c;
    struct admit *a = fix->a;
    struct admit_result r;
    struct error err;
    admit_result_init(&r);
    admit_pass(a, 0, &r);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].reason, ADMIT_REASON_QUEUE_CAPACITY);

    /* The autoscaler scales down by 1: worker-c terminates, still running, still held. */
    json_t *t = terminating(find_object(fx, "pods", "scaled-worker-worker-c"), "990");
    assert_int_equal(cache_upsert_pod(c, t, &err), 0);
    json_decref(t);
    size_t from = r.len;
    admit_pass(a, 0, &r);
    assert_int_equal(r.len - from, 1);
    assert_int_equal(r.items[from].action, ADMIT_ACTION_WAIT);
    assert_string_equal(r.items[from].message, r.items[0].message);

    /* Gone: next (cpu 2) fits in the 2 given back. */
    cache_delete_pod(c, "default", "scaled-worker-worker-c");
    from = r.len;
    admit_pass(a, 0, &r);
    assert_int_equal(r.len - from, 1);
    assert_int_equal(r.items[from].action, ADMIT_ACTION_ADMIT);
    assert_string_equal(r.items[from].cluster, "next");
    apply(c, &r, from);

    /* The autoscaler's scale-down may delete a member (worker-a): worker-b, of the same group, takes its place, and
     * the gang's share falls to max(2, head + worker-b) = 2. A 1-cpu gang that waited on the full queue follows. */
    json_t *one = json_deep_copy(find_object(fx, "rayclusters", "next"));
    json_t *one_pod = json_deep_copy(find_object(fx, "pods", "next-head"));
    json_object_set_new(json_object_get(one, "metadata"), "name", json_string("one"));
    json_object_set_new(json_object_get(one, "metadata"), "uid", json_string("00000000-0000-0000-0000-000000000999"));
    set_first_cpu(
        json_object_get(json_object_get(json_object_get(json_object_get(one, "spec"), "headGroupSpec"), "template"), "spec"), "1");
    json_object_set_new(json_object_get(one_pod, "metadata"), "name", json_string("one-head"));
    json_object_set_new(json_object_get(one_pod, "metadata"), "uid", json_string("00000000-0000-0000-0000-000000000998"));
    json_object_set_new(json_object_get(json_object_get(one_pod, "metadata"), "labels"), "ray.io/cluster", json_string("one"));
    set_first_cpu(json_object_get(one_pod, "spec"), "1");
    assert_int_equal(cache_upsert_raycluster(c, one, &err), 0);
    assert_int_equal(cache_upsert_pod(c, one_pod, &err), 0);
    from = r.len;
    admit_pass(a, 0, &r);
    assert_int_equal(r.len - from, 1);
    assert_string_equal(r.items[from].message, "gang ray-one-pg (1 pod; cpu 1, memory 1Gi) does not fit queue kuberay-test-queue: "
                                               "cpu needs 1, 0 of 5 free");
    cache_delete_pod(c, "default", "scaled-worker-worker-a");
    from = r.len;
    admit_pass(a, 0, &r);
    assert_int_equal(r.len - from, 1);
    assert_int_equal(r.items[from].action, ADMIT_ACTION_ADMIT);
    assert_string_equal(r.items[from].cluster, "one");
    apply(c, &r, from);

    /* Nothing is left over: the queue is full again (scaled 2 + next 2 + one 1), and the gang without worker-a
     * is still whole (nothing to finish). */
    from = r.len;
    admit_pass(a, ADMIT_PASS_FULL, &r);
    for (size_t i = from; i < r.len; i++)
        assert_int_not_equal(r.items[i].action, ADMIT_ACTION_FINISH);

    json_decref(one);
    json_decref(one_pod);
    admit_result_finish(&r);
}

/* A gang kept out by an idle queue's guarantee waits on room, as one short of node room does (admit/tree-guarantee.json). */
static void test_tree_guarantee_room(void **state)
{
    struct admit_test *fix = *state;
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(fix->a, 0, &r);
    assert_int_equal(r.len, 2);
    assert_string_equal(r.items[0].cluster, "train-a");
    assert_int_equal(r.items[0].reason, ADMIT_REASON_QUEUE_TREE);
    assert_true(cache_gang_get(fix->c, "default", "train-a")->node_wait);
    assert_false(cache_gang_get(fix->c, "default", "train-b")->node_wait);
    admit_result_finish(&r);
}

/*
 * In a tree a gang's verdict depends on other queues (admit/tree-ancestor-capability.json):
 * infer's gang ends, only infer changed, and train-big, kept out by eng, is admitted in the
 * same incremental pass, every queue weighed.
 */
static void test_tree_incremental(void **state)
{
    struct admit_test *fix = *state;
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(fix->a, 0, &r);
    assert_int_equal(r.len, 4);
    assert_string_equal(r.items[3].cluster, "train-big");
    assert_int_equal(r.items[3].reason, ADMIT_REASON_QUEUE_TREE);
    apply(fix->c, &r, 0);
    admit_pass(fix->a, 0, &r); /* the queues the marks made dirty */
    admit_result_finish(&r);

    cache_delete_pod(fix->c, "default", "infer-a-head");
    cache_delete_raycluster(fix->c, "default", "infer-a");
    admit_result_init(&r);
    admit_pass(fix->a, 0, &r);
    assert_int_equal(r.queues_evaluated, 4);
    size_t admitted = 0;
    for (size_t i = 0; i < r.len; i++)
        admitted += r.items[i].action == ADMIT_ACTION_ADMIT && strcmp(r.items[i].cluster, "train-big") == 0;
    assert_int_equal(admitted, 1);
    admit_result_finish(&r);
}

/*
 * A deleted RayCluster's last pod keeps its queue share until it is gone,
 * also across its updates: the garbage collector's deletionTimestamp on gone's
 * head (the fixture's first pod) once its RayCluster is deleted. An update of
 * the last pod of a gang without RayCluster used to free the gang, and its
 * share with it, while the pod still ran: same was admitted into a full parent
 * (queue_fairshare's over-capability in CI, with gangs of one head).
 */
static void test_gone_cluster_pod_update(void **state)
{
    struct admit_test *t = *state;
    cache_delete_raycluster(t->c, "default", "gone");
    json_t *pod = json_deep_copy(json_array_get(json_object_get(t->fx, "pods"), 0));
    json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp", json_string("2024-05-01T10:09:00Z"));
    json_object_set_new(json_object_get(pod, "metadata"), "resourceVersion", json_string("900"));
    cachefixture_upsert(t->c, "pods", pod);
    json_decref(pod);
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(t->a, ADMIT_PASS_FULL, &r);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_WAIT);
    assert_string_equal(r.items[0].cluster, "same");
    assert_int_equal(r.items[0].reason, ADMIT_REASON_QUEUE_TREE);
    admit_result_finish(&r);
    /* Gone for good: the room is free. */
    cache_delete_pod(t->c, "default", "gone-head");
    admit_result_init(&r);
    admit_pass(t->a, ADMIT_PASS_FULL, &r);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_ADMIT);
    admit_result_finish(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        ADMIT_TEST(test_walkthrough, "admit/queue-walkthrough.json"),
        ADMIT_TEST(test_incremental, "admit/queue-closed.json"),
        ADMIT_TEST(test_node_added, "admit/nodes-fragmentation.json"),
        ADMIT_TEST(test_node_waiters, "admit/incremental-node-waiters.json"),
        ADMIT_TEST(test_reason_changed, "admit/pods-incomplete.json"),
        cmocka_unit_test_prestate_setup_teardown(test_ungate_patch_and_marks, admit_test_setup_foreign_gate, admit_test_teardown,
                                                 "admit/queue-walkthrough.json"),
        ADMIT_TEST(test_tail_progress, "admit/tail-queue.json"),
        ADMIT_TEST(test_tail_release, "admit/tail-release.json"),
        ADMIT_TEST(test_tree_guarantee_room, "admit/tree-guarantee.json"),
        ADMIT_TEST(test_tree_incremental, "admit/tree-ancestor-capability.json"),
        ADMIT_TEST(test_gone_cluster_pod_update, "admit/tree-gone-cluster-pods.json"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
