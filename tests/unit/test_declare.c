/*
 * lib/sched/admit/declare.c: a held RayCluster's gang weighed from its
 * declaration: its declared pods made, admitted by a pass, ungated
 * with it, replaced one by one by the real pods, made again by an eviction
 * (gated), dropped when it is no longer held; and that eviction never lists
 * a declared pod but lists a real pod born ungated while the gang is not
 * admitted (evictscan.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "admit.h"
#include "cache.h"
#include "declare.h"
#include "evictscan.h"
#include "names.h"
#include "util.h"

static const char *const cluster_text =
    "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"metadata\":{\"name\":\"rc\",\"namespace\":\"ns\",\"uid\":\"u1\","
    "\"resourceVersion\":\"1\",\"creationTimestamp\":\"2026-11-28T10:00:00Z\",\"labels\":{\"volcano.sh/queue-name\":\"q\"},"
    "\"annotations\":{\"raygate.io/held-suspended\":\"true\",\"raygate.io/min-member\":\"3\"}},"
    "\"spec\":{\"suspend\":true,\"headGroupSpec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"ray-head\","
    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},\"workerGroupSpecs\":[{\"groupName\":\"gpu\",\"replicas\":2,"
    "\"minReplicas\":2,\"maxReplicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"w\",\"resources\":{\"requests\":"
    "{\"cpu\":\"2\"}}}]}}}]}}";

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    assert_non_null(v);
    return v;
}

static struct cache *setup_cache(void)
{
    struct cache *c = cache_create();
    struct error err = {{0}};
    json_t *q = load("{\"metadata\":{\"name\":\"q\"},\"spec\":{\"capability\":{\"cpu\":\"100\"}}}");
    json_t *n =
        load("{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"16\",\"memory\":\"64Gi\",\"pods\":\"110\"},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    assert_int_equal(cache_upsert_node(c, n, &err), 0);
    json_decref(q);
    json_decref(n);
    return c;
}

/* Upserts cluster and syncs its declared pods. */
static void sync(struct cache *c, json_t *cluster)
{
    struct error err = {{0}};
    assert_int_equal(cache_upsert_raycluster(c, cluster, &err), 0);
    assert_int_equal(declare_sync_cluster(c, cluster, &err), 0);
}

/* How many pods of the gang are declared, and of those gated. */
static size_t count_declared(const struct cache *c, size_t *gated)
{
    const struct cache_gang *g = cache_gang_get(c, "ns", "rc");
    size_t n = 0;
    *gated = 0;
    const struct cache_pod *p;
    for (p = g != NULL ? g->pods : NULL; p != NULL; p = p->gang_next) {
        if (declare_pod_is(p)) {
            n++;
            *gated += (size_t)cache_pod_gated(p);
        }
    }
    return n;
}

/* A real pod of the cluster, ungated (born so), of role type/group. */
static void real_pod(struct cache *c, const char *name, const char *type, const char *group)
{
    char *text = util_strdupf(
        "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"real-%s\",\"creationTimestamp\":\"2026-11-28T10:00:05Z\","
        "\"labels\":{\"ray.io/cluster\":\"rc\",\"ray.io/node-type\":\"%s\",\"ray.io/group\":\"%s\",\"volcano.sh/"
        "queue-name\":\"q\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":"
        "\"Pending\"}}",
        name, name, type, group);
    json_t *pod = load(text);
    struct error err = {{0}};
    assert_int_equal(cache_upsert_pod(c, pod, &err), 0);
    declare_sync_gang(c, "ns", "rc");
    json_decref(pod);
    free(text);
}

static char last_message[256]; /* the first decision's message in the last pass_once() */

/* The first decision of one pass on c. */
static enum admit_action pass_once(struct cache *c, size_t *npods, int *all_declared)
{
    struct admit *a = admit_create(c);
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(a, ADMIT_PASS_FULL, &r);
    assert_true(r.len >= 1);
    enum admit_action act = r.items[0].action;
    snprintf(last_message, sizeof(last_message), "%s", r.items[0].message != NULL ? r.items[0].message : "");
    *npods = r.items[0].npods;
    *all_declared = 1;
    for (size_t i = 0; i < r.items[0].npods; i++)
        *all_declared &= declare_uid_is(r.items[0].pods[i].uid);
    admit_result_finish(&r);
    admit_destroy(a);
    return act;
}

/* Admitted as the gate's record makes it: admitted-at set, suspend cleared (a new resourceVersion). */
static void admit_record(json_t *cluster, const char *rv)
{
    json_t *meta = json_object_get(cluster, "metadata");
    json_object_set_new(json_object_get(meta, "annotations"), NAMES_ANNOTATION_ADMITTED, json_string("2026-11-28T10:00:01Z"));
    json_object_set_new(meta, "resourceVersion", json_string(rv));
    json_object_set_new(json_object_get(cluster, "spec"), "suspend", json_false());
}

static void test_lifecycle(void **state)
{
    (void)state;
    struct cache *c = setup_cache();
    json_t *cluster = load(cluster_text);
    size_t gated, npods;
    int all_declared;

    sync(c, cluster);
    assert_int_equal(count_declared(c, &gated), 3);
    assert_int_equal(gated, 3);
    assert_true(cache_gang_get(c, "ns", "rc")->held);
    assert_non_null(cache_pod_get(c, "ns", "rc-head-declared"));
    assert_non_null(cache_pod_get(c, "ns", "rc-gpu-worker-declared-1"));
    /* A worker as KubeRay makes it: with its wait-gcs-ready init container (memory 256Mi, which its template asks none of). */
    const struct shape_rl *req = cache_pod_get(c, "ns", "rc-gpu-worker-declared-1")->request;
    int64_t memory = 0;
    for (uint32_t k = 0; req != NULL && k < req->len; k++)
        if (req->items[k].id == shape_resource_id(&c->shapes, "memory"))
            memory = req->items[k].value;
    assert_int_equal(memory, (int64_t)256 << 20);
    sync(c, cluster); /* again: nothing new */
    assert_int_equal(count_declared(c, &gated), 3);

    /* Weighed from its declaration: admitted with the declared pods, which the gate then marks ungated. */
    assert_int_equal(pass_once(c, &npods, &all_declared), ADMIT_ACTION_ADMIT);
    assert_int_equal(npods, 3);
    assert_true(all_declared);
    /* Not "scheduling gates removed": no pod of it exists yet, and KubeRay makes them ungated. */
    assert_string_equal(strstr(last_message, "; "), "; RayCluster resumed: 3 pods to be created without the scheduling gate");
    struct cache_gang *g = cache_gang_get(c, "ns", "rc");
    cache_gang_mark_admitted(c, g, "2026-11-28T10:00:01Z");
    const char *names[] = {"rc-head-declared", "rc-gpu-worker-declared-0", "rc-gpu-worker-declared-1"};
    for (size_t i = 0; i < 3; i++)
        cache_pod_mark_ungated(c, cache_pod_get(c, "ns", names[i]));
    admit_record(cluster, "2");
    sync(c, cluster);
    assert_int_equal(count_declared(c, &gated), 3);
    assert_int_equal(gated, 0);

    /* The real pods take their places, the highest index first. */
    real_pod(c, "rc-head-x", "head", "headgroup");
    assert_null(cache_pod_get(c, "ns", "rc-head-declared"));
    real_pod(c, "rc-gpu-worker-a", "worker", "gpu");
    assert_null(cache_pod_get(c, "ns", "rc-gpu-worker-declared-1"));
    assert_non_null(cache_pod_get(c, "ns", "rc-gpu-worker-declared-0"));
    real_pod(c, "rc-gpu-worker-b", "worker", "gpu");
    assert_int_equal(count_declared(c, &gated), 0);

    /* Evicted: suspended again, not admitted: the whole declaration again, gated, beside the real pods going. */
    json_t *meta = json_object_get(cluster, "metadata");
    json_object_del(json_object_get(meta, "annotations"), NAMES_ANNOTATION_ADMITTED);
    json_object_set_new(meta, "resourceVersion", json_string("3"));
    json_object_set_new(json_object_get(cluster, "spec"), "suspend", json_true());
    sync(c, cluster);
    assert_int_equal(count_declared(c, &gated), 3);
    assert_int_equal(gated, 3);

    /* The real pods, ungated while the gang is not admitted, are leftovers to delete; the declared ones never. */
    struct evictscan_result r;
    evictscan_result_init(&r);
    struct evict_config cfg;
    evict_config_default(&cfg);
    evictscan_run(c, &cfg, 1795860000000, 0, 1, &r);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].npods, 3);
    for (size_t i = 0; i < r.items[0].npods; i++)
        assert_false(declare_uid_is(r.items[0].pods[i].uid));
    assert_true(r.items[0].held);
    evictscan_result_finish(&r);

    /* Its suspend cleared by hand before any admission: it is not weighed from its declaration any more. */
    json_object_set_new(json_object_get(cluster, "spec"), "suspend", json_false());
    json_object_set_new(meta, "resourceVersion", json_string("4"));
    sync(c, cluster);
    assert_int_equal(count_declared(c, &gated), 0);

    json_decref(cluster);
    cache_destroy(c);
}

/* A RayCluster not held gets none; a held one's are dropped with it. */
static void test_not_held_and_drop(void **state)
{
    (void)state;
    struct cache *c = setup_cache();
    json_t *cluster = load(cluster_text);
    size_t gated;
    json_object_del(json_object_get(json_object_get(cluster, "metadata"), "annotations"), NAMES_ANNOTATION_HELD);
    sync(c, cluster);
    assert_int_equal(count_declared(c, &gated), 0);
    json_decref(cluster);
    cluster = load(cluster_text);
    sync(c, cluster);
    assert_int_equal(count_declared(c, &gated), 3);
    declare_drop(c, "ns", "rc");
    assert_int_equal(count_declared(c, &gated), 0);
    json_decref(cluster);
    cache_destroy(c);
}

/* --hold-gangs decide: a held gang that must wait is released, but not through its eviction's backoff; once released, a gated gang.
 */
static void test_release_wanted(void **state)
{
    (void)state;
    struct cache *c = cache_create();
    struct error err = {{0}};
    json_t *q = load("{\"metadata\":{\"name\":\"q\"},\"spec\":{\"capability\":{\"cpu\":\"2\"}}}");
    json_t *n =
        load("{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"16\",\"memory\":\"64Gi\",\"pods\":\"110\"},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    assert_int_equal(cache_upsert_node(c, n, &err), 0);
    json_t *cluster = load(cluster_text);
    json_t *annotations = json_object_get(json_object_get(cluster, "metadata"), "annotations");
    sync(c, cluster);
    struct cache_gang *g = cache_gang_get(c, "ns", "rc");
    struct admit_decision d = {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_QUEUE_CAPACITY};
    assert_false(declare_release_wanted(g, &d)); /* held until admitted (--hold-gangs wait) */

    json_object_set_new(annotations, NAMES_ANNOTATION_HELD_RELEASE, json_string(NAMES_HELD_RELEASE_ON_WAIT));
    sync(c, cluster);
    g = cache_gang_get(c, "ns", "rc");
    /* The pass's own verdict: 5 cpu do not fit queue q's 2. */
    struct admit *a = admit_create(c);
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(a, ADMIT_PASS_FULL, &r);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.items[0].action, ADMIT_ACTION_WAIT);
    assert_true(declare_release_wanted(g, &r.items[0]));
    admit_result_finish(&r);
    admit_destroy(a);
    static const enum admit_reason kept[] = {ADMIT_REASON_EVICTED, ADMIT_REASON_DEACTIVATED, ADMIT_REASON_INVALID};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        d.reason = kept[i];
        assert_false(declare_release_wanted(g, &d));
    }
    d.reason = ADMIT_REASON_NODES;
    assert_true(declare_release_wanted(g, &d));
    d.action = ADMIT_ACTION_ADMIT;
    assert_false(declare_release_wanted(g, &d));
    d.action = ADMIT_ACTION_WAIT;
    assert_false(declare_release_wanted(NULL, &d));

    /* Released: not held any more, no declared pod, never released again. */
    json_object_set_new(annotations, NAMES_ANNOTATION_HELD_RELEASE, json_string(NAMES_HELD_RELEASE_DONE));
    json_object_set_new(json_object_get(cluster, "spec"), "suspend", json_false());
    json_object_set_new(json_object_get(cluster, "metadata"), "resourceVersion", json_string("2"));
    sync(c, cluster);
    g = cache_gang_get(c, "ns", "rc");
    assert_false(g->held);
    assert_false(declare_release_wanted(g, &d));
    size_t gated;
    assert_int_equal(count_declared(c, &gated), 0);

    json_decref(q);
    json_decref(n);
    json_decref(cluster);
    cache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lifecycle),
        cmocka_unit_test(test_not_held_and_drop),
        cmocka_unit_test(test_release_wanted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
