/*
 * gate/watches.c against the fake API server of fakeapi.h: the lists of
 * pods, nodes, RayClusters and (when discovery finds Volcano's Queue CRD)
 * Queues land in the cache under the controller's lock, *changed is set and
 * the controller woken; without the Queue CRD its watch is never started and
 * counts as synced; PodGroups go to the status mirror, not the cache; the
 * legacy operator's CRD starts its watch once it is served; HyperNodes
 * (when their CRD is served) go to the hyperwatch, an invalid one told once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "fixtures.h"
#include "hyperwatch.h"
#include "podgroup.h"
#include "watches.h"

struct world {
    json_t *state;
    struct fake *f;
    struct kube_client *k;
    struct metrics_registry *reg;
    struct cacheguard *guard;
    struct cache *cache;
    struct status *status;
    struct watches *w;
    struct hyperwatch *hyper;
    int changed; /* under guard */
    int wakes;   /* under guard */
};

static void on_wake(void *arg)
{
    struct world *x = arg;
    cacheguard_lock(x->guard);
    x->wakes++;
    cacheguard_unlock(x->guard);
}

/* The fixture's objects as lists; discovery: queues (with their status subresource) when with_queues. */
static void serve(json_t *state, int with_queues)
{
    json_t *fx = fixture_json("admit/queue-walkthrough.json");
    fake_cluster_serve(state, fx);
    json_decref(fx);
    if (with_queues)
        json_object_set_new(json_object_get(state, "get"), STATUS_VOLCANO_API,
                            json_pack("{s:[{s:s},{s:s}]}", "resources", "name", "queues", "name", "queues/status"));
}

static struct world *world_new(int with_queues)
{
    struct world *x = calloc(1, sizeof(*x));
    x->state = fake_cluster_state_new();
    serve(x->state, with_queues);
    x->f = fake_cluster_start(x->state, &x->k, NULL);
    x->reg = metrics_registry_create();
    x->guard = cacheguard_create();
    x->cache = cache_create();
    x->status = status_create(x->k, x->reg, NULL, NULL, NULL);
    x->hyper = hyperwatch_create();
    struct watches_config cfg = {
        .client = x->k,
        .guard = x->guard,
        .cache = x->cache,
        .status = x->status,
        .changed = &x->changed,
        .wake = on_wake,
        .arg = x,
        .hyper = x->hyper,
        .native = NULL,
    };
    x->w = watches_create(&cfg);
    return x;
}

static void world_free(struct world *x)
{
    watches_destroy(x->w);
    hyperwatch_destroy(x->hyper);
    status_destroy(x->status);
    cache_destroy(x->cache);
    metrics_registry_destroy(x->reg);
    fake_cluster_stop(x->f, x->k, x->state);
    cacheguard_destroy(x->guard);
    free(x);
}

static int wait_synced(struct world *x)
{
    for (int i = 0; i < 500; i++) {
        cacheguard_lock(x->guard);
        int s = watches_synced(x->w);
        cacheguard_unlock(x->guard);
        if (s)
            return 1;
        usleep(10 * 1000);
    }
    return 0;
}

/* A world whose watches started and synced. */
static struct world *world_started(int with_queues)
{
    struct world *x = world_new(with_queues);
    struct error err = {{0}};
    assert_int_equal(watches_start(x->w, &err), 0);
    assert_true(wait_synced(x));
    return x;
}

static void test_lists_into_cache(void **state)
{
    (void)state;
    struct world *x = world_started(1);
    cacheguard_lock(x->guard);
    assert_non_null(cache_pod_get(x->cache, "default", "test-cluster-0-head"));
    assert_non_null(cache_pod_get(x->cache, "default", "test-cluster-1-worker-worker-b"));
    assert_non_null(cache_gang_get(x->cache, "default", "test-cluster-1"));
    struct cache_queue *q = cache_queue_get(x->cache, "kuberay-test-queue");
    assert_non_null(q);
    assert_true(q->present);
    assert_int_equal(x->changed, 1);
    /* Queue status may be written (its watch synced, its subresource found); PodGroups may not (no CRD). */
    unsigned crds = watches_status_crds(x->w);
    cacheguard_unlock(x->guard);
    assert_true(crds & PODGROUP_CRD_QUEUES);
    assert_true(crds & PODGROUP_CRD_QUEUES_STATUS);
    assert_false(crds & PODGROUP_CRD_PODGROUPS);
    assert_true(x->wakes > 0);
    assert_true(watches_discovery_wanted(x->w)); /* the PodGroup and legacy CRDs are looked for again */
    assert_int_equal(fake_wait_requests(x->f, "GET", STATUS_VOLCANO_API "/podgroups", 0, 0), 0);
    world_free(x);
}

/* Without the Queue CRD: no queue exists, its watch never starts, and decisions are not held up for it. */
static void test_no_queue_crd(void **state)
{
    (void)state;
    struct world *x = world_started(0);
    cacheguard_lock(x->guard);
    const struct cache_queue *q = cache_queue_get(x->cache, "kuberay-test-queue");
    assert_true(q == NULL || !q->present); /* only named by its gangs */
    assert_int_equal(watches_status_crds(x->w), 0);
    cacheguard_unlock(x->guard);
    assert_int_equal(fake_wait_requests(x->f, "GET", STATUS_VOLCANO_API "/queues", 0, 0), 0);
    world_free(x);
}

/* The legacy CRD served later: found at the next discovery, and its RayClusters watched. */
static void test_legacy_found_later(void **state)
{
    (void)state;
    struct world *x = world_started(1);
    assert_int_equal(fake_wait_requests(x->f, "GET", "/apis/cluster.ray.io/v1/rayclusters", 0, 0), 0);
    pthread_mutex_lock(&x->f->lock);
    json_object_set_new(json_object_get(x->state, "get"), "/apis/cluster.ray.io/v1",
                        json_pack("{s:[{s:s}]}", "resources", "name", "rayclusters"));
    json_object_set_new(json_object_get(x->state, "lists"), "/apis/cluster.ray.io/v1/rayclusters", json_array());
    pthread_mutex_unlock(&x->f->lock);
    struct error err = {{0}};
    assert_int_equal(watches_discover(x->w, &err), 0);
    assert_true(fake_wait_requests(x->f, "GET", "/apis/cluster.ray.io/v1/rayclusters", 1, 5000) >= 1);
    world_free(x);
}

/* Serves the HyperNode CRD and, as its list, the hypernode fixture's valid tree plus one invalid HyperNode. */
static void serve_hypernodes(json_t *state)
{
    json_t *fx = fixture_json("hypernode/nested.json");
    json_object_set_new(json_object_get(state, "get"), HYPERWATCH_API,
                        json_pack("{s:[{s:s},{s:s}]}", "resources", "name", "hypernodes", "name", "hypernodes/status"));
    json_t *list = json_deep_copy(json_object_get(fx, "hypernodes"));
    json_array_append_new(list, json_pack("{s:{s:s, s:s, s:s, s:i}, s:{s:i, s:[{s:s, s:{s:{s:s}}}]}}", "metadata", "name", "bad",
                                          "uid", "u-bad", "resourceVersion", "7", "generation", 1, "spec", "tier", 1, "members",
                                          "type", "Node", "selector", "regexMatch", "pattern", "rack(1"));
    json_object_set_new(json_object_get(state, "lists"), HYPERWATCH_API "/hypernodes", list);
    json_decref(fx);
}

/* HyperNodes listed into the hyperwatch before decisions start; the invalid one told once, as a Warning Event on it. */
static void test_hypernodes(void **state)
{
    (void)state;
    struct world *x = world_new(1);
    pthread_mutex_lock(&x->f->lock);
    serve_hypernodes(x->state);
    pthread_mutex_unlock(&x->f->lock);
    struct error err = {{0}};
    assert_int_equal(watches_start(x->w, &err), 0);
    assert_true(wait_synced(x));
    struct eventpost_list l;
    eventpost_list_init(&l);
    cacheguard_lock(x->guard);
    assert_int_equal(hypernode_count(hyperwatch_set(x->hyper)), 7);
    assert_int_equal(hyperwatch_take_events(x->hyper, &l, "2026-11-25T00:00:00Z", "test"), 1);
    assert_int_equal(hyperwatch_take_events(x->hyper, &l, "2026-11-25T00:00:00Z", "test"), 0);
    /* The same version again (a relist): not told twice. */
    json_t *again =
        json_deep_copy(json_array_get(json_object_get(json_object_get(x->state, "lists"), HYPERWATCH_API "/hypernodes"), 6));
    hyperwatch_record(x->hyper, KUBE_WATCH_MODIFIED, again);
    assert_int_equal(hyperwatch_take_events(x->hyper, &l, "2026-11-25T00:00:00Z", "test"), 0);
    /* An annotation changes the resourceVersion, not the generation: not told again. */
    json_object_set_new(json_object_get(again, "metadata"), "resourceVersion", json_string("8"));
    hyperwatch_record(x->hyper, KUBE_WATCH_MODIFIED, again);
    assert_int_equal(hyperwatch_take_events(x->hyper, &l, "2026-11-25T00:00:00Z", "test"), 0);
    /* A new spec, still invalid: told again. */
    json_object_set_new(json_object_get(again, "metadata"), "generation", json_integer(2));
    hyperwatch_record(x->hyper, KUBE_WATCH_MODIFIED, again);
    assert_int_equal(hyperwatch_take_events(x->hyper, &l, "2026-11-25T00:00:00Z", "test"), 1);
    cacheguard_unlock(x->guard);
    assert_int_equal(l.len, 2);
    const json_t *ev = l.items[0].event;
    assert_string_equal(l.items[0].ns, "default");
    assert_string_equal(json_string_value(json_object_get(ev, "reason")), "InvalidHyperNode");
    assert_string_equal(json_string_value(json_object_get(ev, "type")), "Warning");
    const json_t *inv = json_object_get(ev, "involvedObject");
    assert_string_equal(json_string_value(json_object_get(inv, "kind")), "HyperNode");
    assert_string_equal(json_string_value(json_object_get(inv, "apiVersion")), "topology.volcano.sh/v1alpha1");
    assert_string_equal(json_string_value(json_object_get(inv, "name")), "bad");
    assert_string_equal(json_string_value(json_object_get(inv, "namespace")), "");
    assert_string_equal(json_string_value(json_object_get(inv, "uid")), "u-bad");
    const char *msg = json_string_value(json_object_get(ev, "message"));
    assert_non_null(strstr(msg, "spec.members[0].selector.regexMatch.pattern"));
    eventpost_list_finish(&l);
    json_decref(again);
    world_free(x);
}

/* Without the HyperNode CRD: no HyperNode, decisions not held up, its list never asked for. */
static void test_no_hypernode_crd(void **state)
{
    (void)state;
    struct world *x = world_started(1);
    cacheguard_lock(x->guard);
    assert_int_equal(hypernode_count(hyperwatch_set(x->hyper)), 0);
    cacheguard_unlock(x->guard);
    assert_true(watches_discovery_wanted(x->w));
    assert_int_equal(fake_wait_requests(x->f, "GET", HYPERWATCH_API "/hypernodes", 0, 0), 0);
    assert_true(fake_wait_requests(x->f, "GET", HYPERWATCH_API, 1, 0) >= 1);
    world_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists_into_cache), cmocka_unit_test(test_no_queue_crd),     cmocka_unit_test(test_legacy_found_later),
        cmocka_unit_test(test_hypernodes),       cmocka_unit_test(test_no_hypernode_crd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
