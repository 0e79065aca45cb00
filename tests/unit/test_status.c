/*
 * gate/status/status.c against the fake API server of fakeapi.h, on a cache loaded
 * from an admit fixture (queue-walkthrough: one gang admitted, one waiting):
 * the first sync creates both PodGroups and writes the Queue's status; the
 * answers are recorded, so an unchanged state writes nothing more; a
 * PodGroup found gone under a patch tells the controller (changed, with no
 * status lock held) and is created again at the next sync; failed writes are
 * tried again only at a resync; the gauges follow the queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "admit.h"
#include "cachefixture.h"
#include "fakeapi.h"
#include "fixtures.h"
#include "podgroup.h"
#include "status.h"

#define PG_PATH STATUS_VOLCANO_API "/namespaces/default/podgroups"
#define QUEUE_PATH STATUS_VOLCANO_API "/queues/kuberay-test-queue"
#define ALL_CRDS (PODGROUP_CRD_PODGROUPS | PODGROUP_CRD_QUEUES | PODGROUP_CRD_QUEUES_STATUS)

struct world {
    json_t *state;
    struct fake *f;
    struct kube_client *k;
    struct metrics_registry *reg;
    struct cache *cache;
    struct admit *admit;
    struct admit_result res;
    struct status *s;
    pthread_mutex_t mu; /* what changed() takes, as the controller's lock */
    int changed;
};

static void on_changed(void *arg)
{
    struct world *w = arg;
    pthread_mutex_lock(&w->mu);
    w->changed++;
    pthread_mutex_unlock(&w->mu);
}

/* A world on fixture fx_name's cache; pass: after one admission pass (else the fixture's admissions only). */
static struct world *world_new(const char *fx_name, int pass)
{
    struct world *w = calloc(1, sizeof(*w));
    w->state = fake_cluster_state_new();
    w->f = fake_cluster_start(w->state, &w->k, NULL);
    w->reg = metrics_registry_create();
    json_t *fx = fixture_json(fx_name);
    w->cache = cachefixture_load(fx, 0);
    json_decref(fx);
    w->admit = admit_create(w->cache);
    admit_result_init(&w->res);
    if (pass)
        admit_pass(w->admit, ADMIT_PASS_FULL, &w->res);
    for (size_t i = 0; i < w->res.len; i++) /* what the controller keeps of each decision (apply_plan) */
        admit_reason_changed(w->cache, &w->res.items[i]);
    pthread_mutex_init(&w->mu, NULL);
    w->s = status_create(w->k, w->reg, NULL, on_changed, w);
    assert_non_null(w->s);
    return w;
}

static int setup(void **state)
{
    *state = world_new("admit/queue-walkthrough.json", 1);
    return 0;
}

/* podgroup/tree.json: a three-level queue tree, a cycle and a missing parent. */
static int setup_tree(void **state)
{
    *state = world_new("podgroup/tree.json", 0);
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    status_destroy(w->s);
    admit_result_finish(&w->res);
    admit_destroy(w->admit);
    cache_destroy(w->cache);
    metrics_registry_destroy(w->reg);
    fake_cluster_stop(w->f, w->k, w->state);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return 0;
}

/* As the controller calls it: under its lock. */
static void sync_locked(struct world *w, unsigned crds, int resync)
{
    pthread_mutex_lock(&w->mu);
    status_sync(w->s, w->cache, w->admit, &w->res, crds, resync);
    pthread_mutex_unlock(&w->mu);
}

static size_t writes(struct world *w)
{
    return fake_wait_requests(w->f, NULL, "/", (size_t)-1, 0);
}

/* Waits until the writer has answered every request the fake received, and a little for done. */
static void settle(struct world *w, size_t want)
{
    assert_int_equal(fake_wait_requests(w->f, NULL, "/", want, 5000), want);
    usleep(100 * 1000);
}

static void test_creates_then_quiet(void **state)
{
    struct world *w = *state;
    status_podgroups_synced(w->s);
    sync_locked(w, ALL_CRDS, 0);
    assert_int_equal(fake_wait_requests(w->f, "POST", PG_PATH, 2, 5000), 2);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", QUEUE_PATH "/status", 1, 5000), 1);
    settle(w, 3);
    json_t *log = fake_log(w->f);
    int saw0 = 0;
    for (size_t i = 0; i < json_array_size(log); i++) {
        json_t *body = json_loads(log_field(log, i, "body"), 0, NULL);
        const char *name = json_string_value(json_object_get(json_object_get(body, "metadata"), "name"));
        saw0 |= name != NULL && strcmp(name, "ray-test-cluster-0-pg") == 0;
        json_decref(body);
    }
    assert_true(saw0);
    json_decref(log);

    /* The answers are what the API shows: the same state writes nothing. */
    sync_locked(w, ALL_CRDS, 0);
    usleep(200 * 1000);
    assert_int_equal(writes(w), 3);

    /* The gauges follow the queue. */
    char *text = metrics_render(w->reg, NULL);
    assert_non_null(strstr(text, "raygate_gangs_pending{queue=\"kuberay-test-queue\",reason=\"queue_capability\"} 1\n"));
    free(text);
}

/* Without the CRDs (or before their watches synced): no PodGroup and no Queue status is written; the gauges are. */
static void test_without_crds(void **state)
{
    struct world *w = *state;
    status_podgroups_synced(w->s);
    sync_locked(w, 0, 0);
    usleep(200 * 1000);
    assert_int_equal(writes(w), 0);
    char *text = metrics_render(w->reg, NULL);
    assert_non_null(strstr(text, "raygate_gangs_pending{queue=\"kuberay-test-queue\""));
    free(text);
}

/* A PodGroup the watch showed, then gone under our patch: changed() is told, and the next sync creates it. */
static void test_gone_under_patch(void **state)
{
    struct world *w = *state;
    json_t *stale = json_pack("{s:{s:s,s:s,s:s,s:s},s:{s:i}}", "metadata", "name", "ray-test-cluster-0-pg", "namespace", "default",
                              "uid", "pg-uid", "resourceVersion", "3", "spec", "minMember", 1);
    status_record_podgroup(w->s, KUBE_WATCH_ADDED, stale);
    json_decref(stale);
    json_object_set_new(json_object_get(w->state, "script"), PG_PATH "/ray-test-cluster-0-pg", json_pack("[i]", 404));
    status_podgroups_synced(w->s);
    sync_locked(w, ALL_CRDS, 0);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", PG_PATH "/ray-test-cluster-0-pg", 1, 5000), 1);
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&w->mu);
        int n = w->changed;
        pthread_mutex_unlock(&w->mu);
        if (n > 0)
            break;
        usleep(10 * 1000);
    }
    assert_int_equal(w->changed, 1);
    size_t posts = fake_wait_requests(w->f, "POST", PG_PATH, 0, 0);
    sync_locked(w, ALL_CRDS, 0);
    assert_int_equal(fake_wait_requests(w->f, "POST", PG_PATH, posts + 1, 5000), posts + 1);
}

/* A failed write is not tried again at every pass, but at the next resync. */
static void test_failed_waits_for_resync(void **state)
{
    struct world *w = *state;
    json_t *script = json_pack("[i,i,i,i,i,i,i,i]", 422, 422, 422, 422, 422, 422, 422, 422);
    json_object_set_new(json_object_get(w->state, "script"), QUEUE_PATH "/status", script);
    status_podgroups_synced(w->s);
    sync_locked(w, ALL_CRDS, 0);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", QUEUE_PATH "/status", 1, 5000), 1);
    settle(w, 3);
    sync_locked(w, ALL_CRDS, 0);
    usleep(200 * 1000);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", QUEUE_PATH "/status", 0, 0), 1);
    sync_locked(w, ALL_CRDS, 1);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", QUEUE_PATH "/status", 2, 5000), 2);
}

static int deny(void *arg)
{
    struct world *w = arg;
    pthread_mutex_lock(&w->mu);
    w->changed += 100; /* asked, with the arg given to status_create */
    pthread_mutex_unlock(&w->mu);
    return 0;
}

/* Not leading: the writer asks may_write with the caller's arg (not its own), and nothing is written. */
static void test_not_leading(void **state)
{
    struct world *w = *state;
    status_destroy(w->s);
    w->s = status_create(w->k, w->reg, deny, on_changed, w);
    status_podgroups_synced(w->s);
    sync_locked(w, ALL_CRDS, 0);
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&w->mu);
        int n = w->changed;
        pthread_mutex_unlock(&w->mu);
        if (n >= 100)
            break;
        usleep(10 * 1000);
    }
    pthread_mutex_lock(&w->mu);
    assert_true(w->changed >= 100);
    pthread_mutex_unlock(&w->mu);
    usleep(100 * 1000);
    assert_int_equal(writes(w), 0);
}

/* The status body (new) of the last PATCH of queue name's status, or NULL. */
static json_t *last_queue_status(struct world *w, const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), STATUS_VOLCANO_API "/queues/%s/status", name);
    json_t *log = fake_log(w->f), *body = NULL;
    for (size_t i = 0; i < json_array_size(log); i++) {
        const char *method = log_field(log, i, "method"), *p = log_field(log, i, "target");
        if (method != NULL && strcmp(method, "PATCH") == 0 && p != NULL && strcmp(p, path) == 0) {
            json_decref(body);
            body = json_loads(log_field(log, i, "body"), 0, NULL);
        }
    }
    json_decref(log);
    json_t *status = json_incref(json_object_get(body, "status"));
    json_decref(body);
    return status;
}

static size_t queue_patches(struct world *w, const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), STATUS_VOLCANO_API "/queues/%s/status", name);
    return fake_wait_requests(w->f, "PATCH", path, 0, 0);
}

static void assert_status(struct world *w, const char *queue, const char *field, const char *json)
{
    json_t *st = last_queue_status(w, queue), *want = json_loads(json, JSON_DECODE_ANY, NULL);
    assert_non_null(want);
    fixture_check_json(queue, field, json_object_get(st, field), want);
    json_decref(want);
    json_decref(st);
}

/*
 * The queue tree in the Queues' status: a parent's allocated is its
 * subtree's, deserved is marked derived, a cycle's queues say so. When a
 * pass evaluated only a leaf, its ancestors' status follows it, and a queue
 * whose status did not change is not written again.
 */
static void test_tree(void **state)
{
    struct world *w = *state;
    status_podgroups_synced(w->s);
    sync_locked(w, ALL_CRDS, 0);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", STATUS_VOLCANO_API "/queues/", 10, 5000), 10);
    settle(w, 15); /* and the five PodGroups */
    assert_status(w, "eng", "allocated", "{\"cpu\": \"7\", \"memory\": \"10752Mi\"}");
    assert_status(w, "ml", "allocated", "{\"cpu\": \"6\", \"memory\": \"10Gi\"}");
    assert_status(w, "eng", "deservedDerived", "true");
    assert_status(w, "train", "deservedDerived", "false");
    assert_status(w, "infer", "share", "\"0.67\"");
    assert_status(w, "a", "treeError", "\"in a cycle of parents (a -> b -> a): treated as Closed\"");

    /* infer's waiting gang (3 cpu) is admitted: a pass evaluated infer alone. */
    pthread_mutex_lock(&w->mu);
    cache_gang_mark_admitted(w->cache, cache_gang_get(w->cache, "default", "i2"), "2024-05-01T10:05:00Z");
    cache_pod_mark_ungated(w->cache, cache_pod_get(w->cache, "default", "i2-head"));
    pthread_mutex_unlock(&w->mu);
    admit_result_finish(&w->res);
    admit_result_init(&w->res);
    admit_result_add_queue(&w->res, "infer");
    sync_locked(w, ALL_CRDS, 0);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", STATUS_VOLCANO_API "/queues/eng/status", 2, 5000), 2);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", STATUS_VOLCANO_API "/queues/ml/status", 2, 5000), 2);
    usleep(200 * 1000);
    assert_status(w, "eng", "allocated", "{\"cpu\": \"10\", \"memory\": \"11776Mi\"}");
    assert_status(w, "ml", "allocated", "{\"cpu\": \"9\", \"memory\": \"11Gi\"}");
    assert_status(w, "infer", "allocated", "{\"cpu\": \"5\", \"memory\": \"3Gi\"}");
    assert_int_equal(queue_patches(w, "research"), 1); /* its deserved and share did not change */
    assert_int_equal(queue_patches(w, "a"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_creates_then_quiet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_without_crds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_under_patch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_waits_for_resync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_leading, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree, setup_tree, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
