#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
#endif

#include "cache.h"
#include "fixtures.h"

/* A pod of fixture admit/nodes-other-pods.json by name (borrowed). */
static json_t *fixture_pod(json_t *fx, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(fx, "pods"), i, p)
    {
        if (strcmp(json_string_value(json_object_get(json_object_get(p, "metadata"), "name")), name) == 0)
            return p;
    }
    fail_msg("no pod %s", name);
    return NULL;
}

static int64_t used(const struct cache *c, const char *node, const char *resource)
{
    const struct cache_node *n = cache_node_get(c, node);
    assert_non_null(n);
    for (uint32_t i = 0; i < n->nused; i++) {
        if (strcmp(cache_resource_name(c, i), resource) == 0)
            return n->used[i];
    }
    return 0;
}

static void note_queue(struct cache_queue *q, void *arg)
{
    json_t *seen = arg;
    json_object_set_new(seen, q->name, json_integer(json_integer_value(json_object_get(seen, q->name)) + 1));
}

/* What a test starts from: a fixture (its path the test's initial state) and an empty cache. */
struct cache_test {
    json_t *fx;
    struct cache *c;
};

static int cache_test_setup(void **state)
{
    struct cache_test *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    t->fx = fixture_json(*state);
    t->c = cache_create();
    *state = t;
    return 0;
}

static int cache_test_teardown(void **state)
{
    struct cache_test *t = *state;
    cache_destroy(t->c);
    json_decref(t->fx);
    free(t);
    return 0;
}

/* A test of the cache loaded from FIXTURE. */
#define CACHE_TEST(f, fixture) cmocka_unit_test_prestate_setup_teardown(f, cache_test_setup, cache_test_teardown, fixture)

/* Node usage follows every pod bound to it, Ray or not, and drops when a pod terminates or goes. */
static void test_node_usage(void **state)
{
    struct cache_test *t = *state;
    json_t *fx = t->fx;
    struct cache *c = t->c;
    struct error err;
    /* The pod comes before its node: the node is known by name, its usage counted. */
    assert_int_equal(cache_upsert_pod(c, fixture_pod(fx, "web-1"), &err), 0);
    assert_int_equal(used(c, "node-a", "cpu"), 3000);
    assert_false(cache_node_get(c, "node-a")->present);
    assert_int_equal(cache_upsert_node(c, json_array_get(json_object_get(fx, "nodes"), 0), &err), 0);
    assert_true(cache_node_get(c, "node-a")->present);
    assert_int_equal(used(c, "node-a", "cpu"), 3000);
    assert_int_equal(cache_node_get(c, "node-a")->used_pods, 1);

    /* Terminated pods and unbound pods use nothing. */
    assert_int_equal(cache_upsert_pod(c, fixture_pod(fx, "batch-done"), &err), 0);
    assert_int_equal(cache_upsert_pod(c, fixture_pod(fx, "batch-failed"), &err), 0);
    assert_int_equal(cache_upsert_pod(c, fixture_pod(fx, "web-pending"), &err), 0);
    assert_int_equal(used(c, "node-a", "cpu"), 3000);
    assert_int_equal(cache_node_get(c, "node-a")->used_pods, 1);

    /* web-1 finishes: its cpu is free again, and capacity is marked as grown. */
    cache_take_changes(c);
    json_t *done = json_deep_copy(fixture_pod(fx, "web-1"));
    json_object_set_new(json_object_get(done, "status"), "phase", json_string("Succeeded"));
    assert_int_equal(cache_upsert_pod(c, done, &err), 0);
    assert_int_equal(used(c, "node-a", "cpu"), 0);
    assert_true(cache_take_changes(c) & CACHE_CHANGED_CAPACITY);
    /* Back to Running (a test of accounting, not of kubelet): counted once, not twice. */
    assert_int_equal(cache_upsert_pod(c, fixture_pod(fx, "web-1"), &err), 0);
    assert_int_equal(cache_upsert_pod(c, fixture_pod(fx, "web-1"), &err), 0);
    assert_int_equal(used(c, "node-a", "cpu"), 3000);
    cache_delete_pod(c, "web", "web-1");
    assert_int_equal(used(c, "node-a", "cpu"), 0);
    assert_int_equal(cache_node_get(c, "node-a")->used_pods, 0);
    assert_null(cache_pod_get(c, "web", "web-1"));

    /* A node deleted while pods are bound to it stays known by name until they go. */
    assert_int_equal(cache_upsert_pod(c, fixture_pod(fx, "web-1"), &err), 0);
    cache_delete_node(c, "node-a");
    assert_non_null(cache_node_get(c, "node-a"));
    assert_false(cache_node_get(c, "node-a")->present);
    cache_delete_pod(c, "web", "web-1");
    /* The terminated pods still name it. */
    assert_non_null(cache_node_get(c, "node-a"));
    cache_delete_pod(c, "batch", "batch-done");
    cache_delete_pod(c, "batch", "batch-failed");
    assert_null(cache_node_get(c, "node-a"));

    json_decref(done);
}

/* Lookups by namespace/name and uid; a pod recreated under its name gets its new uid; gangs appear with pods. */
static void test_lookups(void **state)
{
    struct cache_test *t = *state;
    json_t *fx = t->fx;
    struct cache *c = t->c;
    struct error err;
    json_t *head = json_array_get(json_object_get(fx, "pods"), 0);
    json_t *worker = json_array_get(json_object_get(fx, "pods"), 1);
    assert_int_equal(cache_upsert_pod(c, head, &err), 0);
    assert_int_equal(cache_upsert_pod(c, worker, &err), 0);
    struct cache_pod *p = cache_pod_get(c, "default", "test-cluster-0-head");
    assert_non_null(p);
    assert_ptr_equal(cache_pod_by_uid(c, p->uid), p);
    assert_string_equal(p->cluster, "test-cluster-0");
    assert_string_equal(p->queue, "kuberay-test-queue");
    assert_string_equal(p->node_type, "head");
    assert_true(cache_pod_gated(p));
    assert_true(cache_pod_live(p));
    assert_null(cache_pod_get(c, "other", "test-cluster-0-head"));

    /* Interned: the same label value is one string. */
    struct cache_pod *w = cache_pod_get(c, "default", "test-cluster-0-worker-worker-a");
    assert_ptr_equal(w->cluster, p->cluster);
    assert_ptr_equal(w->namespace_, p->namespace_);

    /* Pods before their RayCluster: the gang exists, unmanaged (no queue) until the cluster comes. */
    struct cache_gang *g = cache_gang_get(c, "default", "test-cluster-0");
    assert_non_null(g);
    assert_false(g->present);
    assert_null(g->queue);
    assert_int_equal(g->npods, 2);
    assert_int_equal(cache_upsert_raycluster(c, json_array_get(json_object_get(fx, "rayclusters"), 0), &err), 0);
    assert_true(g->present);
    assert_int_equal(g->min_member, 3);
    /* Its shape: the head and 2 of group "worker", the name interned like the pods' ray.io/group label. */
    assert_int_equal(g->ngroups, 1);
    assert_string_equal(g->groups[0].name, "worker");
    assert_int_equal(g->groups[0].pods, 2);
    assert_non_null(g->queue);
    assert_string_equal(g->queue->name, "kuberay-test-queue");
    assert_false(g->queue->present);

    /* Every queue is visited once: the placeholder of a queue a gang names, and a present one. */
    assert_int_equal(cache_upsert_queue(c, json_array_get(json_object_get(fx, "queues"), 0), &err), 0);
    json_t *other_q = json_pack("{s:{s:s}}", "metadata", "name", "other-queue");
    assert_int_equal(cache_upsert_queue(c, other_q, &err), 0);
    json_decref(other_q);
    json_t *seen = json_object();
    struct cache_queue *q;
    cache_queue_for_each(q, c)
        note_queue(q, seen);
    assert_int_equal(json_object_size(seen), 2);
    assert_int_equal(json_integer_value(json_object_get(seen, "kuberay-test-queue")), 1);
    assert_int_equal(json_integer_value(json_object_get(seen, "other-queue")), 1);
    json_decref(seen);

    json_t *again = json_deep_copy(head);
    json_object_set_new(json_object_get(again, "metadata"), "uid", json_string("new-uid"));
    assert_int_equal(cache_upsert_pod(c, again, &err), 0);
    assert_null(cache_pod_by_uid(c, "00000000-0000-0000-0000-000000000002"));
    assert_non_null(cache_pod_by_uid(c, "new-uid"));
    assert_int_equal(g->npods, 2);

    /* Objects without a name are refused with a reason. */
    json_t *nameless = json_pack("{s:{}}", "metadata");
    assert_int_equal(cache_upsert_pod(c, nameless, &err), -1);
    assert_non_null(strstr(err.message, "metadata.name"));

    json_decref(nameless);
    json_decref(again);
}

/* What preemption reads: a Queue's spec.deserved, spec.reclaimable and raygate.io/preemption; a RayCluster's volcano.sh/preemptable
 * and raygate.io/preempted-by. */
static void test_preemption_fields(void **state)
{
    struct cache_test *t = *state;
    json_t *fx = t->fx;
    struct cache *c = t->c;
    struct error err;
    json_t *q = json_deep_copy(json_array_get(json_object_get(fx, "queues"), 0));
    const char *qname = json_string_value(json_object_get(json_object_get(q, "metadata"), "name"));
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    struct cache_queue *cq = cache_queue_get(c, qname);
    assert_null(cq->deserved);
    assert_true(cq->reclaimable);
    assert_null(cq->preemption);
    cache_queue_mark_clean(c, cq);
    json_object_set_new(json_object_get(q, "spec"), "deserved", json_pack("{s:s, s:s}", "cpu", "2", "memory", "3Gi"));
    json_object_set_new(json_object_get(q, "spec"), "reclaimable", json_false());
    json_object_set_new(json_object_get(q, "metadata"), "annotations", json_pack("{s:s}", "raygate.io/preemption", "Never"));
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    assert_true(cq->dirty); /* a change of policy is a change of the queue's decisions */
    assert_non_null(cq->deserved);
    assert_int_equal(cq->deserved->len, 2);
    assert_false(cq->reclaimable);
    assert_string_equal(cq->preemption, "Never");
    /* A malformed deserved is none. */
    json_object_set_new(json_object_get(q, "spec"), "deserved", json_pack("{s:s}", "cpu", "2x"));
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    assert_null(cq->deserved);

    json_t *rc = json_deep_copy(json_array_get(json_object_get(fx, "rayclusters"), 0));
    const char *name = json_string_value(json_object_get(json_object_get(rc, "metadata"), "name"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    struct cache_gang *g = cache_gang_get(c, "default", name);
    assert_true(g->preemptable);
    assert_null(g->preempted_by);
    json_t *meta = json_object_get(rc, "metadata");
    json_object_set_new(meta, "annotations",
                        json_pack("{s:s, s:s}", "volcano.sh/preemptable", "false", "raygate.io/preempted-by", "ns/x"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    assert_false(g->preemptable);
    assert_string_equal(g->preempted_by, "ns/x");
    json_object_del(meta, "annotations");
    json_object_set_new(json_object_get(meta, "labels"), "volcano.sh/preemptable", json_string("false"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    assert_false(g->preemptable);
    assert_null(g->preempted_by);
    json_object_set_new(json_object_get(meta, "labels"), "volcano.sh/preemptable", json_string("true"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    assert_true(g->preemptable);

    json_decref(rc);
    json_decref(q);
}

/*
 * What eviction (evict.h) reads: a pod's Ready and PodScheduled conditions, a
 * Queue's timeout annotations, a RayCluster's generation and eviction record;
 * and our own eviction standing until the watch brings a newer version.
 */
static void test_eviction_fields(void **state)
{
    struct cache_test *t = *state;
    json_t *fx = t->fx;
    struct cache *c = t->c;
    struct error err;
    json_t *pod = json_deep_copy(json_array_get(json_object_get(fx, "pods"), 1));
    json_object_set_new(pod, "status",
                        json_pack("{s:s,s:[{s:s,s:s,s:s,s:s},{s:s,s:s,s:s}]}", "phase", "Pending", "conditions", "type",
                                  "PodScheduled", "status", "False", "reason", "Unschedulable", "message",
                                  "0/4 nodes are available: persistentvolumeclaim \"data\" not found.", "type", "Ready", "status",
                                  "False", "lastTransitionTime", "2026-11-23T10:00:00Z"));
    assert_int_equal(cache_upsert_pod(c, pod, &err), 0);
    struct cache_pod *p = cache_pod_get(c, "default", "test-cluster-0-worker-worker-a");
    assert_string_equal(p->unschedulable, "0/4 nodes are available: persistentvolumeclaim \"data\" not found.");
    assert_true(p->refused); /* reason Unschedulable: kube-scheduler tried it (evict.h's partial placement timeout) */
    assert_false(p->ready);
    assert_int_equal(p->ready_changed, 1795428000);
    assert_int_equal(p->scheduled_at, 0);
    json_object_set_new(pod, "status",
                        json_pack("{s:s,s:[{s:s,s:s,s:s},{s:s,s:s,s:s}]}", "phase", "Running", "conditions", "type", "PodScheduled",
                                  "status", "True", "lastTransitionTime", "2026-11-23T10:01:00Z", "type", "Ready", "status", "True",
                                  "lastTransitionTime", "2026-11-23T10:02:00Z"));
    assert_int_equal(cache_upsert_pod(c, pod, &err), 0);
    p = cache_pod_get(c, "default", "test-cluster-0-worker-worker-a");
    assert_null(p->unschedulable);
    assert_false(p->refused);
    assert_true(p->ready);
    assert_int_equal(p->scheduled_at, 1795428060);
    assert_int_equal(p->ready_changed, 1795428120);
    json_decref(pod);

    json_t *rc = json_deep_copy(json_array_get(json_object_get(fx, "rayclusters"), 0));
    json_t *meta = json_object_get(rc, "metadata");
    json_object_set_new(meta, "generation", json_integer(4));
    json_object_set_new(meta, "resourceVersion", json_string("100"));
    json_object_set_new(meta, "annotations", json_pack("{s:s}", "raygate.io/admitted-at", "2026-11-23T10:00:00Z"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    struct cache_gang *g = cache_gang_get(c, "default", "test-cluster-0");
    assert_true(g->admitted);
    assert_int_equal(g->generation, 4);
    assert_int_equal(g->record.count, 0);

    /* Evicted by us: not admitted at once, and the stale version (rv 100) does not bring the admission back. */
    struct evict_record rec = {.count = 1, .requeue_at_ms = 1795428060000LL, .evicted_at_ms = 1795428000000LL, .generation = 4};
    cache_gang_mark_evicted(c, g, &rec);
    assert_false(g->admitted);
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    assert_false(g->admitted);
    assert_null(g->admitted_at);
    assert_int_equal(g->record.count, 1);
    /* The watch's new version carries the record itself. */
    json_object_set_new(meta, "resourceVersion", json_string("101"));
    json_object_set_new(meta, "annotations",
                        json_pack("{s:s,s:s,s:s,s:s,s:s}", "raygate.io/requeue-count", "1", "raygate.io/requeue-at",
                                  "2026-11-23T10:01:00Z", "raygate.io/evicted-at", "2026-11-23T10:00:00Z",
                                  "raygate.io/evicted-generation", "4", "raygate.io/evicted-reason", "PlacementTimeout"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    assert_false(g->admitted);
    assert_int_equal(g->record.count, 1);
    assert_int_equal(g->record.requeue_at_ms, 1795428060000LL);
    assert_int_equal(g->record.reason, EVICT_REASON_PLACEMENT_TIMEOUT);
    assert_null(g->record_error);
    /* A record edited by hand into nonsense reads as none, and says why. */
    json_object_set_new(json_object_get(meta, "annotations"), "raygate.io/requeue-count", json_string("many"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    assert_int_equal(g->record.count, 0);
    assert_non_null(strstr(g->record_error, "raygate.io/requeue-count"));

    json_decref(rc);
}

/* A Queue's eviction timeouts, as its annotations give them (parsed where they are used: evict.h). */
static void test_queue_timeouts(void **state)
{
    struct cache_test *t = *state;
    struct error err;
    json_t *q = json_deep_copy(json_array_get(json_object_get(t->fx, "queues"), 0));
    json_object_set_new(json_object_get(q, "metadata"), "annotations",
                        json_pack("{s:s,s:s}", "raygate.io/placement-timeout", "2m", "raygate.io/pods-ready-timeout", "soon"));
    assert_int_equal(cache_upsert_queue(t->c, q, &err), 0);
    struct cache_queue *cq = cache_queue_get(t->c, "kuberay-test-queue");
    assert_string_equal(cq->placement_timeout, "2m");
    assert_string_equal(cq->pods_ready_timeout, "soon");
    json_object_del(json_object_get(q, "metadata"), "annotations");
    assert_int_equal(cache_upsert_queue(t->c, q, &err), 0);
    assert_null(cq->placement_timeout);
    json_decref(q);
}

/* Pods of one group share their request and scheduling constraints; distinct constraints are distinct. */
static void test_interning(void **state)
{
    struct cache_test *t = *state;
    json_t *fx = t->fx;
    struct cache *c = t->c;
    struct error err;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(fx, "pods"), i, p)
    {
        assert_int_equal(cache_upsert_pod(c, p, &err), 0);
        json_t *twin = json_deep_copy(p);
        char name[128];
        snprintf(name, sizeof(name), "%s-twin", json_string_value(json_object_get(json_object_get(p, "metadata"), "name")));
        json_object_set_new(json_object_get(twin, "metadata"), "name", json_string(name));
        assert_int_equal(cache_upsert_pod(c, twin, &err), 0);
        json_decref(twin);
    }
    const struct cache_pod *a = cache_pod_get(c, "default", "tolerates-dedicated-head");
    const struct cache_pod *b = cache_pod_get(c, "default", "tolerates-dedicated-head-twin");
    const struct cache_pod *none = cache_pod_get(c, "default", "no-toleration-head");
    const struct cache_pod *all = cache_pod_get(c, "default", "tolerates-everything-head");
    assert_non_null(a->sched);
    assert_ptr_equal(a->sched, b->sched);
    assert_ptr_equal(a->request, none->request);
    assert_null(none->sched);
    assert_true(all->sched != a->sched);
    assert_int_equal(all->sched->ntolerations, 1);
    assert_null(all->sched->tolerations[0].key);
    assert_true(all->sched->tolerations[0].exists);
}

/* At most 1 KB per cached pod (heap growth over 10,000 KubeRay-shaped pods and their nodes). */
static void test_memory_per_pod(void **state)
{
    (void)state;
/* glibc's heap statistics; AddressSanitizer's allocator bypasses them. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33) && !defined(__SANITIZE_ADDRESS__)
    /* Under valgrind (or any allocator replacing glibc's) the statistics stay zero: nothing to measure. */
    if (mallinfo2().uordblks == 0)
        skip();
    json_t *fx = fixture_json("admit/queue-walkthrough.json");
    json_t *tmpl = json_array_get(json_object_get(fx, "pods"), 1);
    json_t *node = json_array_get(json_object_get(fx, "nodes"), 0);
    struct error err;
    const size_t npods = 10000;
    json_t **pods = calloc(npods, sizeof(*pods));
    for (size_t i = 0; i < npods; i++) {
        pods[i] = json_deep_copy(tmpl);
        json_t *meta = json_object_get(pods[i], "metadata");
        char buf[96];
        snprintf(buf, sizeof(buf), "raycluster-%05zu-worker-group-%05zu-abcde", i / 10, i);
        json_object_set_new(meta, "name", json_string(buf));
        snprintf(buf, sizeof(buf), "%08zx-1f3b-4c5d-9e8f-0123456789ab", i);
        json_object_set_new(meta, "uid", json_string(buf));
        snprintf(buf, sizeof(buf), "%zu", 1000000 + i);
        json_object_set_new(meta, "resourceVersion", json_string(buf));
        snprintf(buf, sizeof(buf), "raycluster-%05zu", i / 10);
        json_object_set_new(json_object_get(meta, "labels"), "ray.io/cluster", json_string(buf));
        snprintf(buf, sizeof(buf), "node-%04zu", i / 2);
        json_object_set_new(json_object_get(pods[i], "spec"), "nodeName", json_string(buf));
        json_object_del(json_object_get(pods[i], "spec"), "schedulingGates");
    }
    struct cache *c = cache_create();
    assert_int_equal(cache_upsert_node(c, node, &err), 0);
    struct mallinfo2 before = mallinfo2();
    for (size_t i = 0; i < npods; i++)
        assert_int_equal(cache_upsert_pod(c, pods[i], &err), 0);
    struct mallinfo2 after = mallinfo2();
    size_t per_pod = (after.uordblks - before.uordblks) / npods;
    if (per_pod > 1024)
        fail_msg("%zu bytes per cached pod", per_pod);
    assert_true(per_pod > 100); /* the measure measures something */
    cache_destroy(c);
    for (size_t i = 0; i < npods; i++)
        json_decref(pods[i]);
    free(pods);
    json_decref(fx);
#else
    skip();
#endif
}

/*
 * raygate.io/topology-placed (topoconfine.h) counts while its RayCluster is admitted: ours, marked with the
 * admission, stands until the watch brings a newer version; an eviction, or an annotation left on an object no
 * longer admitted, leaves none.
 */
static void test_topology_placed(void **state)
{
    struct cache_test *t = *state;
    struct cache *c = t->c;
    struct error err;
    json_t *rc = json_deep_copy(json_array_get(json_object_get(t->fx, "rayclusters"), 0));
    json_t *meta = json_object_get(rc, "metadata");
    json_object_set_new(meta, "resourceVersion", json_string("100"));
    json_object_set_new(meta, "annotations",
                        json_pack("{s:s,s:s}", "raygate.io/admitted-at", "2026-11-23T10:00:00Z", "raygate.io/topology-placed",
                                  "{\"gang\":\"r1\"}"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    struct cache_gang *g = cache_gang_get(c, "default", "test-cluster-0");
    assert_string_equal(g->topo_placed, "{\"gang\":\"r1\"}");
    struct evict_record rec = {.count = 1};
    cache_gang_mark_evicted(c, g, &rec);
    assert_null(g->topo_placed);
    json_object_set_new(meta, "resourceVersion", json_string("101"));
    json_object_del(json_object_get(meta, "annotations"), "raygate.io/admitted-at");
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0); /* the record left behind: not admitted, it does not count */
    assert_null(g->topo_placed);
    cache_gang_mark_admitted(c, g, "2026-11-23T11:00:00Z");
    cache_gang_mark_placed(g, "{\"gang\":\"r2\"}");
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0); /* rv 101, before our write: ours stands */
    assert_true(g->admitted);
    assert_string_equal(g->topo_placed, "{\"gang\":\"r2\"}");
    json_object_set_new(meta, "resourceVersion", json_string("102"));
    json_object_set_new(json_object_get(meta, "annotations"), "raygate.io/admitted-at", json_string("2026-11-23T11:00:00Z"));
    json_object_set_new(json_object_get(meta, "annotations"), "raygate.io/topology-placed", json_string("{\"gang\":\"r3\"}"));
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    assert_string_equal(g->topo_placed, "{\"gang\":\"r3\"}");
    json_decref(rc);
}

/* Every gang's nunbound and nunready against a count of its pods: live and unbound; live, bound and not Ready. */
static void check_unsettled(const struct cache *c)
{
    size_t gangs = 0;
    for (const struct cache_gang *g = c->all_gangs; g != NULL; g = g->all_next, gangs++) {
        size_t unbound = 0, unready = 0;
        const struct cache_pod *p;
        cache_gang_for_each_pod(p, g) {
            unbound += cache_pod_live(p) && p->node == NULL;
            unready += cache_pod_live(p) && p->node != NULL && !p->ready;
        }
        if (unbound != g->nunbound || unready != g->nunready)
            fail_msg("gang %s: nunbound %zu, nunready %zu; its pods say %zu, %zu", g->name, g->nunbound, g->nunready, unbound,
                     unready);
    }
    assert_true(gangs > 0);
}

/* Upserts fixture pod name (borrowed) with changes (JSON merged into it, NULL: none); checks every gang's count. */
static void upsert_changed(struct cache *c, json_t *fx, const char *name, const char *changes)
{
    struct error err;
    json_t *pod = json_deep_copy(fixture_pod(fx, name));
    if (changes != NULL) {
        json_error_t jerr;
        json_t *ch = json_loads(changes, 0, &jerr);
        if (ch == NULL)
            fail_msg("%s: %s", changes, jerr.text);
        const char *key;
        json_t *v;
        json_object_foreach(ch, key, v)
        {
            json_t *to = json_object_get(pod, key);
            if (json_is_object(to) && json_is_object(v))
                json_object_update(to, v);
            else
                json_object_set(pod, key, v);
        }
        json_decref(ch);
    }
    assert_int_equal(cache_upsert_pod(c, pod, &err), 0);
    json_decref(pod);
    check_unsettled(c);
}

static size_t unsettled(const struct cache *c, const char *gang)
{
    const struct cache_gang *g = cache_gang_get(c, "default", gang);
    assert_non_null(g);
    return g->nunbound + g->nunready;
}

/*
 * A gang's nunbound and nunready (what lets the eviction scan skip a running gang, evictscan.h) follows its pods through
 * binding, readiness, termination, a move to another gang and deletion, in any order of arrival.
 */
static void test_unsettled_count(void **state)
{
    struct cache_test *t = *state;
    struct cache *c = t->c;
    json_t *fx = t->fx;
    struct error err;
    static const char *const pods[] = {"stuck-w1", "healthy-head", "stuck-head", "healthy-w1", "stuck-w2", "healthy-w2"};
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) /* the pods before their RayClusters */
        upsert_changed(c, fx, pods[i], NULL);
    for (size_t i = 0; i < json_array_size(json_object_get(fx, "rayclusters")); i++)
        assert_int_equal(cache_upsert_raycluster(c, json_array_get(json_object_get(fx, "rayclusters"), i), &err), 0);
    check_unsettled(c);
    assert_int_equal(unsettled(c, "stuck"), 2);
    assert_int_equal(unsettled(c, "healthy"), 0);

    const char *not_ready = "{\"status\": {\"conditions\": [{\"type\": \"Ready\", \"status\": \"False\"}]}}";
    upsert_changed(c, fx, "healthy-w1", not_ready); /* bound, no longer Ready */
    assert_int_equal(unsettled(c, "healthy"), 1);
    assert_int_equal(cache_gang_get(c, "default", "healthy")->nunready, 1);
    upsert_changed(c, fx, "healthy-w1", NULL);
    assert_int_equal(unsettled(c, "healthy"), 0);
    upsert_changed(c, fx, "stuck-w1", "{\"spec\": {\"nodeName\": \"node-1\"}}"); /* bound, not Ready */
    assert_int_equal(unsettled(c, "stuck"), 2);
    assert_int_equal(cache_gang_get(c, "default", "stuck")->nunbound, 1);
    assert_int_equal(cache_gang_get(c, "default", "stuck")->nunready, 1);
    upsert_changed(c, fx, "stuck-w1",
                   "{\"spec\": {\"nodeName\": \"node-1\"}, \"status\": {\"conditions\": [{\"type\": "
                   "\"Ready\", \"status\": \"True\"}]}}");
    assert_int_equal(unsettled(c, "stuck"), 1);
    upsert_changed(c, fx, "stuck-w2", "{\"metadata\": {\"deletionTimestamp\": \"2026-11-23T10:00:00Z\"}}"); /* terminating */
    assert_int_equal(unsettled(c, "stuck"), 0);
    upsert_changed(c, fx, "healthy-w2", "{\"status\": {\"phase\": \"Failed\"}}"); /* ended: not a member */
    assert_int_equal(unsettled(c, "healthy"), 0);
    upsert_changed(c, fx, "healthy-w2", "{\"status\": {\"phase\": \"Pending\"}, \"spec\": {\"nodeName\": null}}");
    assert_int_equal(unsettled(c, "healthy"), 1);
    upsert_changed(c, fx, "healthy-w2",
                   "{\"status\": {\"phase\": \"Pending\"}, \"spec\": {\"nodeName\": null}, "
                   "\"metadata\": {\"labels\": {\"ray.io/cluster\": \"stuck\"}}}"); /* relabelled */
    assert_int_equal(unsettled(c, "healthy"), 0);
    assert_int_equal(unsettled(c, "stuck"), 1);
    cache_delete_pod(c, "default", "healthy-w2");
    check_unsettled(c);
    assert_int_equal(unsettled(c, "stuck"), 0);
    upsert_changed(c, fx, "healthy-head", not_ready);
    assert_int_equal(unsettled(c, "healthy"), 1);
    cache_delete_raycluster(c, "default", "healthy"); /* the gang outlives its RayCluster while it has pods */
    assert_int_equal(unsettled(c, "healthy"), 1);
    cache_delete_pod(c, "default", "healthy-head");
    check_unsettled(c);
    assert_int_equal(unsettled(c, "healthy"), 0);
}

/*
 * cache_destroy frees what the cache holds without replaying its removals: a
 * gang whose pod count is off (as a counting bug would leave it) does not keep
 * the cache from going, where replaying the removals waits for the count to
 * reach 0 forever. SIGALRM ends the test if cache_destroy does not return.
 */
static void test_destroy_frees_held(void **state)
{
    struct cache_test *t = *state;
    struct error err;
    const char *kinds[] = {"nodes", "queues", "rayclusters", "pods"};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        size_t i;
        json_t *obj;
        json_array_foreach(json_object_get(t->fx, kinds[k]), i, obj)
        {
            int rc = k == 0   ? cache_upsert_node(t->c, obj, &err)
                     : k == 1 ? cache_upsert_queue(t->c, obj, &err)
                     : k == 2 ? cache_upsert_raycluster(t->c, obj, &err)
                              : cache_upsert_pod(t->c, obj, &err);
            assert_int_equal(rc, 0);
        }
    }
    struct cache_gang *g = cache_gang_get(t->c, "default", "test-cluster-0");
    assert_non_null(g);
    assert_true(g->npods > 0);
    cache_gang_mark_preempted(t->c, g, "default/other");
    g->npods++; /* the counting bug */
    alarm(10);
    cache_destroy(t->c);
    alarm(0);
    t->c = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CACHE_TEST(test_node_usage, "admit/nodes-other-pods.json"),
        CACHE_TEST(test_lookups, "admit/queue-walkthrough.json"),
        CACHE_TEST(test_eviction_fields, "admit/queue-walkthrough.json"),
        CACHE_TEST(test_queue_timeouts, "admit/queue-walkthrough.json"),
        CACHE_TEST(test_preemption_fields, "admit/queue-walkthrough.json"),
        CACHE_TEST(test_topology_placed, "admit/queue-walkthrough.json"),
        CACHE_TEST(test_interning, "admit/nodes-taints.json"),
        CACHE_TEST(test_unsettled_count, "evictscan/placement.json"),
        CACHE_TEST(test_destroy_frees_held, "admit/queue-walkthrough.json"),
        cmocka_unit_test(test_memory_per_pod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
