/*
 * dispatch/loop.c and object.c: whole passes of the dispatcher against two
 * fake API servers (fakeapi.h), a manager and worker a
 * (tests/fixtures/dispatchloop): one nomination (the copy created once on the
 * worker, the manager object annotated, an Event, the manager-side PodGroup
 * with condition Dispatched), its renewal at the next pass, the copy deleted
 * (once) when its manager object is gone; a worker that does not answer, and
 * one without the Queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "events.h"
#include "fakeapi.h"
#include "fixtures.h"
#include "loop.h"
#include "names.h"
#include "util.h"

#define SECRETS "/api/v1/namespaces/raygate-system/secrets"
#define RAYCLUSTERS "/apis/ray.io/v1/rayclusters"
#define RAYJOBS "/apis/ray.io/v1/rayjobs"
#define QUEUES "/apis/scheduling.volcano.sh/v1beta1/queues"
#define RC1 "/apis/ray.io/v1/namespaces/ray/rayclusters/rc1"
#define NOW_MS INT64_C(1795680000000) /* 2026-11-26T06:40:00Z */

static const struct dispatch_options opts = {
    .cluster_name = "manager",
    .namespace_ = "raygate-system",
    .timeout_ms = 60000,
    .lease_ms = 120000,
    .margin_ms = 30000,
    .resync_ms = 2000,
};

/* The Secret registering worker a at the fake f (new). */
static json_t *worker_secret(const struct fake *f)
{
    char *cfg = util_strdupf("apiVersion: v1\nkind: Config\ncurrent-context: a\n"
                             "clusters:\n- name: a\n  cluster:\n    server: http://127.0.0.1:%d\n"
                             "users:\n- name: d\n  user:\n    token: t\n"
                             "contexts:\n- name: a\n  context: {cluster: a, user: d}\n",
                             f->port);
    char *b64 = util_base64_encode(cfg, strlen(cfg));
    json_t *s = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s}},s:{s:s}}", "apiVersion", "v1", "kind", "Secret", "metadata", "name",
                          "worker-a", "namespace", "raygate-system", "uid", "uid-secret-a", "labels", NAMES_LABEL_WORKER_CLUSTER,
                          "a", "data", NAMES_SECRET_KUBECONFIG_KEY, b64);
    free(b64);
    free(cfg);
    return s;
}

struct world {
    json_t *mstate, *wstate;
    struct fake *manager, *worker;
    struct kube_client *mk, *wk;
    struct dispatch_loop *loop;
};

static void world_start(struct world *w)
{
    json_t *mfx = fixture_json("dispatchloop/manager.json"), *wfx = fixture_json("dispatchloop/worker.json");
    w->wstate = fake_cluster_state_new();
    fake_cluster_serve(w->wstate, wfx);
    json_object_set_new(json_object_get(w->wstate, "lists"), RAYJOBS, json_array());
    w->worker = fake_cluster_start(w->wstate, &w->wk, NULL);
    w->mstate = fake_cluster_state_new();
    json_t *lists = json_object_get(w->mstate, "lists");
    json_object_set_new(lists, SECRETS, json_pack("[o]", worker_secret(w->worker)));
    json_object_set(lists, QUEUES, json_object_get(mfx, "queues"));
    json_object_set(lists, RAYCLUSTERS, json_object_get(mfx, "rayclusters"));
    json_object_set_new(lists, RAYJOBS, json_array());
    w->manager = fake_cluster_start(w->mstate, &w->mk, NULL);
    w->loop = dispatchloop_create(&opts, w->mk, NULL);
    json_decref(mfx);
    json_decref(wfx);
}

static void world_stop(struct world *w)
{
    dispatchloop_destroy(w->loop);
    fake_cluster_stop(w->manager, w->mk, w->mstate);
    if (w->worker != NULL)
        fake_cluster_stop(w->worker, w->wk, w->wstate);
}

/* The bodies (new array) of the requests to f with method and exact target. */
static json_t *bodies(struct fake *f, const char *method, const char *target)
{
    json_t *log = fake_log(f), *out = json_array();
    for (size_t i = 0; i < json_array_size(log); i++)
        if (strcmp(log_field(log, i, "method"), method) == 0 && strcmp(log_field(log, i, "target"), target) == 0)
            json_array_append_new(out, json_loads(log_field(log, i, "body"), JSON_DECODE_ANY, NULL));
    json_decref(log);
    return out;
}

static const char *ann(const json_t *obj, const char *name)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), name));
}

/* Replaces the list at path in a fake's state (under its lock) with items (stolen). */
static void set_list(struct fake *f, json_t *state, const char *path, json_t *items)
{
    pthread_mutex_lock(&f->lock);
    json_object_set_new(json_object_get(state, "lists"), path, items);
    pthread_mutex_unlock(&f->lock);
}

/* The watches the dispatcher holds on a worker's fake: nodes, pods, Queues, RayClusters, RayJobs (its DRA answers 404). */
#define WORKER_WATCHES 5

/*
 * Replaces the list at path on the worker's fake with items (stolen), each
 * with a new resourceVersion, and expires the dispatcher's watches there:
 * its view lists again, and its next pass waits for that (view.h).
 */
static void set_worker_list(struct world *w, const char *path, json_t *items)
{
    static int rv = 100;
    size_t i;
    json_t *obj;
    json_array_foreach(items, i, obj)
    {
        char v[16];
        snprintf(v, sizeof(v), "%d", ++rv);
        json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(v));
    }
    char prefix[256];
    snprintf(prefix, sizeof(prefix), "%s?limit=", path);
    size_t lists = fake_wait_requests(w->worker, "GET", prefix, 0, 0);
    set_list(w->worker, w->wstate, path, items);
    fake_expire(w->worker, WORKER_WATCHES);
    /* The relist of path has begun: the view knows it is under way. */
    fake_wait_requests(w->worker, "GET", prefix, lists + 1, 5000);
}

/* The copy the worker received, and the manager's annotations patch: both once. */
static void check_nominated(struct world *w, char *at)
{
    json_t *posts = bodies(w->worker, "POST", "/apis/ray.io/v1/namespaces/ray/rayclusters");
    assert_int_equal(json_array_size(posts), 1);
    json_t *copy = json_array_get(posts, 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(copy, "metadata"), "labels"),
                                                          NAMES_LABEL_DISPATCHED_FROM)),
                        "manager");
    assert_string_equal(ann(copy, NAMES_ANNOTATION_DISPATCH_ORIGIN_UID), "uid-rc1");
    assert_string_equal(ann(copy, NAMES_ANNOTATION_DISPATCH_LEASE), "1");
    assert_null(json_object_get(copy, "status"));
    json_t *patches = bodies(w->manager, "PATCH", RC1);
    assert_int_equal(json_array_size(patches), 1);
    assert_string_equal(ann(json_array_get(patches, 0), NAMES_ANNOTATION_DISPATCHED_TO), "a");
    assert_string_equal(ann(json_array_get(patches, 0), NAMES_ANNOTATION_DISPATCHED_AT), at);
    json_t *events = bodies(w->manager, "POST", "/api/v1/namespaces/ray/events");
    assert_int_equal(json_array_size(events), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(events, 0), "reason")), "Dispatched");
    json_t *pg = bodies(w->manager, "PATCH", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ray/podgroups/ray-rc1-pg");
    assert_int_equal(json_array_size(pg), 1);
    json_t *cond = json_array_get(json_object_get(json_object_get(json_array_get(pg, 0), "status"), "conditions"), 0);
    assert_string_equal(json_string_value(json_object_get(cond, "type")), "Dispatched");
    assert_string_equal(json_string_value(json_object_get(cond, "status")), "True");
    json_decref(pg);
    json_decref(events);
    json_decref(patches);
    json_decref(posts);
}

static void test_nominate_renew_sweep(void **state)
{
    (void)state;
    struct world w;
    world_start(&w);
    char at[32];
    events_timestamp(NOW_MS / 1000, at, sizeof(at));
    dispatchloop_pass(w.loop, NOW_MS);
    check_nominated(&w, at);

    /* The next pass sees the copy on the worker and the annotations on the manager: no second copy, a renewal. */
    json_t *first = bodies(w.worker, "POST", "/apis/ray.io/v1/namespaces/ray/rayclusters");
    json_t *copy = json_deep_copy(json_array_get(first, 0));
    json_decref(first);
    json_object_set_new(json_object_get(copy, "metadata"), "uid", json_string("uid-copy"));
    set_worker_list(&w, RAYCLUSTERS, json_pack("[O]", copy));
    json_t *mobj = json_deep_copy(json_array_get(json_object_get(json_object_get(w.mstate, "lists"), RAYCLUSTERS), 0));
    json_object_set_new(json_object_get(mobj, "metadata"), "annotations",
                        json_pack("{s:s,s:s}", NAMES_ANNOTATION_DISPATCHED_TO, "a", NAMES_ANNOTATION_DISPATCHED_AT, at));
    set_list(w.manager, w.mstate, RAYCLUSTERS, json_pack("[O]", mobj));
    dispatchloop_pass(w.loop, NOW_MS + 1000);
    json_t *posts = bodies(w.worker, "POST", "/apis/ray.io/v1/namespaces/ray/rayclusters");
    assert_int_equal(json_array_size(posts), 1);
    json_t *renew = bodies(w.worker, "PATCH", RC1);
    assert_int_equal(json_array_size(renew), 1);
    assert_string_equal(ann(json_array_get(renew, 0), NAMES_ANNOTATION_DISPATCH_LEASE), "2");
    json_t *mpatch = bodies(w.manager, "PATCH", RC1);
    assert_int_equal(json_array_size(mpatch), 2);
    assert_non_null(ann(json_array_get(mpatch, 1), NAMES_ANNOTATION_DISPATCH_RENEWED));

    /* The manager object gone (deleted without the finalizer): its copy is deleted on the worker, by uid. */
    set_list(w.manager, w.mstate, RAYCLUSTERS, json_array());
    dispatchloop_pass(w.loop, NOW_MS + 2000);
    json_t *deletes = bodies(w.worker, "DELETE", RC1);
    assert_int_equal(json_array_size(deletes), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(deletes, 0), "preconditions"), "uid")),
                        "uid-copy");
    assert_string_equal(json_string_value(json_object_get(json_array_get(deletes, 0), "propagationPolicy")), "Foreground");
    /* Being deleted there (Foreground: until its pods are gone): not deleted again. */
    json_object_set_new(json_object_get(copy, "metadata"), "deletionTimestamp", json_string("2026-11-26T06:40:02Z"));
    set_worker_list(&w, RAYCLUSTERS, json_pack("[O]", copy));
    dispatchloop_pass(w.loop, NOW_MS + 4000);
    json_t *deletes2 = bodies(w.worker, "DELETE", RC1);
    assert_int_equal(json_array_size(deletes2), 1);
    json_decref(deletes2);
    json_decref(deletes);
    json_decref(mpatch);
    json_decref(renew);
    json_decref(posts);
    json_decref(mobj);
    json_decref(copy);
    world_stop(&w);
}

/*
 * Two RayClusters, worker a with room for one (its Queue q: 8 cpu; rc1 asks 3,
 * rc2 7): rc1 is dispatched there, and rc2 is not, in the same pass nor in the
 * next, though no watch event has brought rc1's copy (the fake keeps no
 * object it is sent): the copy just created counts at its full demand.
 */
static void test_created_copy_fills(void **state)
{
    (void)state;
    struct world w;
    world_start(&w);
    json_t *rc1 = json_deep_copy(json_array_get(json_object_get(json_object_get(w.mstate, "lists"), RAYCLUSTERS), 0));
    json_t *rc2 = json_deep_copy(rc1);
    json_t *meta2 = json_object_get(rc2, "metadata");
    json_object_set_new(meta2, "name", json_string("rc2"));
    json_object_set_new(meta2, "uid", json_string("uid-rc2"));
    json_object_set_new(meta2, "creationTimestamp", json_string("2026-11-26T06:01:00Z"));
    json_t *group = json_array_get(json_object_get(json_object_get(rc2, "spec"), "workerGroupSpecs"), 0);
    json_object_set_new(group, "replicas", json_integer(3));
    json_object_set_new(group, "minReplicas", json_integer(3));
    json_t *res = json_object_get(
        json_object_get(
            json_array_get(json_object_get(json_object_get(json_object_get(group, "template"), "spec"), "containers"), 0),
            "resources"),
        "requests");
    json_object_set_new(res, "cpu", json_string("2"));
    set_list(w.manager, w.mstate, RAYCLUSTERS, json_pack("[O,O]", rc1, rc2));
    char at[32];
    events_timestamp(NOW_MS / 1000, at, sizeof(at));
    dispatchloop_pass(w.loop, NOW_MS);
    json_t *posts = bodies(w.worker, "POST", "/apis/ray.io/v1/namespaces/ray/rayclusters");
    assert_int_equal(json_array_size(posts), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(posts, 0), "metadata"), "name")), "rc1");
    json_t *p2 = bodies(w.manager, "PATCH", "/apis/ray.io/v1/namespaces/ray/rayclusters/rc2");
    assert_int_equal(json_array_size(p2), 1);
    assert_null(ann(json_array_get(p2, 0), NAMES_ANNOTATION_DISPATCHED_TO));
    const char *reasons = ann(json_array_get(p2, 0), NAMES_ANNOTATION_DISPATCH_REASONS);
    assert_non_null(reasons);
    assert_non_null(strstr(reasons, "does not fit queue q"));
    /* The next pass: rc1 shown dispatched on the manager, its copy still in no list of a. */
    json_object_set_new(json_object_get(rc1, "metadata"), "annotations",
                        json_pack("{s:s,s:s}", NAMES_ANNOTATION_DISPATCHED_TO, "a", NAMES_ANNOTATION_DISPATCHED_AT, at));
    set_list(w.manager, w.mstate, RAYCLUSTERS, json_pack("[O,O]", rc1, rc2));
    dispatchloop_pass(w.loop, NOW_MS + 1000);
    json_t *posts2 = bodies(w.worker, "POST", "/apis/ray.io/v1/namespaces/ray/rayclusters");
    assert_int_equal(json_array_size(posts2), 1);
    json_decref(posts2);
    json_decref(p2);
    json_decref(posts);
    json_decref(rc1);
    json_decref(rc2);
    world_stop(&w);
}

/* Worker a unreachable (its Secret points at a closed port): it is down on its Secret, and nothing is nominated. */
static void test_unreachable(void **state)
{
    (void)state;
    struct world w;
    world_start(&w);
    fake_cluster_stop(w.worker, w.wk, w.wstate); /* the Secret still names its port */
    w.worker = NULL;
    dispatchloop_pass(w.loop, NOW_MS);
    json_t *patches = bodies(w.manager, "PATCH", SECRETS "/worker-a");
    assert_int_equal(json_array_size(patches), 1);
    const char *status = ann(json_array_get(patches, 0), "raygate.io/worker-status");
    assert_non_null(status);
    assert_string_not_equal(status, "up");
    json_t *mp = bodies(w.manager, "PATCH", RC1);
    assert_int_equal(json_array_size(mp), 1);
    const char *reasons = ann(json_array_get(mp, 0), NAMES_ANNOTATION_DISPATCH_REASONS);
    assert_non_null(reasons);
    assert_non_null(strstr(reasons, "\"b\""));
    assert_null(ann(json_array_get(mp, 0), NAMES_ANNOTATION_DISPATCHED_TO));
    json_decref(mp);
    json_decref(patches);
    world_stop(&w);
}

/* Worker a reachable but without Queue q, which the manager dispatches to it: said on its Secret; nothing nominated. */
static void test_worker_without_queue(void **state)
{
    (void)state;
    struct world w;
    world_start(&w);
    set_list(w.worker, w.wstate, QUEUES, json_array());
    dispatchloop_pass(w.loop, NOW_MS);
    json_t *patches = bodies(w.manager, "PATCH", SECRETS "/worker-a");
    assert_int_equal(json_array_size(patches), 1);
    assert_string_equal(ann(json_array_get(patches, 0), "raygate.io/worker-status"), "up; no Queue q");
    json_t *posts = bodies(w.worker, "POST", "/apis/ray.io/v1/namespaces/ray/rayclusters");
    assert_int_equal(json_array_size(posts), 0);
    /* The Queue made there: the worker is plainly up again, and the gang is dispatched. */
    json_t *wfx = fixture_json("dispatchloop/worker.json");
    set_worker_list(&w, QUEUES, json_deep_copy(json_object_get(wfx, "queues")));
    dispatchloop_pass(w.loop, NOW_MS + 2000);
    json_t *again = bodies(w.manager, "PATCH", SECRETS "/worker-a");
    assert_int_equal(json_array_size(again), 2);
    assert_string_equal(ann(json_array_get(again, 1), "raygate.io/worker-status"), "up");
    json_t *posts2 = bodies(w.worker, "POST", "/apis/ray.io/v1/namespaces/ray/rayclusters");
    assert_int_equal(json_array_size(posts2), 1);
    json_decref(posts2);
    json_decref(again);
    json_decref(wfx);
    json_decref(posts);
    json_decref(patches);
    world_stop(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nominate_renew_sweep),
        cmocka_unit_test(test_created_copy_fills),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_worker_without_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
