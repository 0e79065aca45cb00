/*
 * gate/apply/evictor.c against the fake API server of fakeapi.h: the eviction
 * record's preconditions (uid, resourceVersion), the DisruptionTarget
 * condition before each deletion, deletions retried through failures until
 * every pod is gone, and pods replaced under the same name left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "evict.h"
#include "evictor.h"
#include "fakeapi.h"
#include "util.h"

#define PODS_PATH "/api/v1/namespaces/ray/pods/"
#define RC_PATH "/apis/ray.io/v1/namespaces/ray/rayclusters/"

/*
 * The fake's state (f->arg): {"pods": name -> {"uid", "script": [...], "deleted": bool,
 * "condition": {...} or absent, "order": [...]}, "rc": {"name", "uid", "rv", "annotations"},
 * "rc_script": [...]}. A script entry is a status code, "cut", or "replace" (the pod is
 * replaced by another of the same name first) for the pod's next DELETE.
 */
static void pod_add(json_t *st, const char *name, json_t *script_new)
{
    json_object_set_new(json_object_get(st, "pods"), name,
                        json_pack("{s:s+,s:o,s:b,s:[]}", "uid", "uid-", name, "script", script_new, "deleted", 0, "order"));
}

static json_t *state_new(void)
{
    return json_pack("{s:{},s:{s:s,s:s,s:s,s:{s:s}},s:[]}", "pods", "rc", "name", "x", "uid", "uid-x", "rv", "7", "annotations",
                     "raygate.io/admitted-at", "2026-11-23T10:00:00Z", "rc_script");
}

static int rc_handler(struct fake *f, const struct fake_req *req, json_t *st)
{
    json_t *rc = json_object_get(st, "rc");
    json_t *script = json_object_get(st, "rc_script");
    json_t *step = json_incref(json_array_get(script, 0));
    json_array_remove(script, 0);
    json_t *patch = json_loadb(req->body, req->body_len, 0, NULL);
    json_t *meta = json_object_get(patch, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    int code = json_is_integer(step) ? (int)json_integer_value(step) : 200;
    if (strcmp(req->target + strlen(RC_PATH), json_string_value(json_object_get(rc, "name"))) != 0)
        code = 404;
    else if (code == 200 && (uid == NULL || strcmp(uid, json_string_value(json_object_get(rc, "uid"))) != 0))
        code = 409;
    else if (code == 200 && rv != NULL && strcmp(rv, json_string_value(json_object_get(rc, "rv"))) != 0)
        code = 409;
    if (code == 200) {
        json_t *ann = json_object_get(rc, "annotations");
        const char *key;
        json_t *v;
        json_object_foreach(json_object_get(meta, "annotations"), key, v)
        {
            if (json_is_null(v))
                json_object_del(ann, key);
            else
                json_object_set(ann, key, v);
        }
    }
    pthread_mutex_unlock(&f->lock);
    if (code == 200)
        respond_json(req, 200, NULL, json_pack("{s:s}", "kind", "RayCluster"));
    else
        respond_status(req, code, "Failed", "scripted or precondition", NULL);
    json_decref(patch);
    json_decref(step);
    return 0;
}

static int pod_request(struct fake *f, const struct fake_req *req, json_t *st)
{
    char name[256];
    util_format(name, sizeof(name), "%s", req->target + strlen(PODS_PATH));
    char *slash = strchr(name, '/');
    int status_sub = slash != NULL && strcmp(slash, "/status") == 0;
    if (slash != NULL)
        *slash = '\0';
    json_t *p = json_object_get(json_object_get(st, "pods"), name);
    if (p == NULL || json_is_true(json_object_get(p, "deleted"))) {
        pthread_mutex_unlock(&f->lock);
        respond_status(req, 404, "NotFound", "pods not found", NULL);
        return 0;
    }
    json_t *body = json_loadb(req->body, req->body_len, 0, NULL);
    const char *want_uid =
        json_string_value(json_object_get(json_object_get(body, status_sub ? "metadata" : "preconditions"), "uid"));
    int uid_ok = want_uid == NULL || strcmp(want_uid, json_string_value(json_object_get(p, "uid"))) == 0;
    int keep = 0, code = 200;
    if (status_sub && strcmp(req->method, "PATCH") == 0) {
        json_array_append_new(json_object_get(p, "order"), json_string("status"));
        if (!uid_ok || strcmp(req->content_type, "application/strategic-merge-patch+json") != 0)
            code = !uid_ok ? 409 : 415;
        else
            json_object_set(p, "condition", json_array_get(json_object_get(json_object_get(body, "status"), "conditions"), 0));
    } else if (strcmp(req->method, "DELETE") == 0) {
        json_array_append_new(json_object_get(p, "order"), json_string("delete"));
        json_t *script = json_object_get(p, "script");
        json_t *step = json_incref(json_array_get(script, 0));
        json_array_remove(script, 0);
        if (json_is_string(step) && strcmp(json_string_value(step), "replace") == 0) {
            /* The pod was deleted and created again under its name since it was marked. */
            json_object_set_new(p, "uid", json_string("uid-new"));
            uid_ok = want_uid == NULL;
            json_decref(step);
            step = NULL;
        }
        if (json_is_integer(step))
            code = (int)json_integer_value(step);
        else if (step != NULL)
            keep = -1; /* "cut" */
        else if (!uid_ok)
            code = 409;
        else
            json_object_set_new(p, "deleted", json_true());
        json_decref(step);
    } else {
        code = 405;
    }
    pthread_mutex_unlock(&f->lock);
    if (keep == 0 && code == 200)
        respond_json(req, 200, NULL, json_pack("{s:s}", "kind", "Pod"));
    else if (keep == 0)
        respond_status(req, code, code == 429 ? "TooManyRequests" : "Failed", "scripted or precondition",
                       code == 429 ? "Retry-After: 0\r\n" : NULL);
    json_decref(body);
    return keep;
}

static int handler(struct fake *f, const struct fake_req *req)
{
    json_t *st = f->arg;
    pthread_mutex_lock(&f->lock);
    if (strncmp(req->target, RC_PATH, strlen(RC_PATH)) == 0 && strcmp(req->method, "PATCH") == 0)
        return rc_handler(f, req, st);
    if (strncmp(req->target, PODS_PATH, strlen(PODS_PATH)) == 0)
        return pod_request(f, req, st);
    pthread_mutex_unlock(&f->lock);
    respond_status(req, 404, "NotFound", "no such path", NULL);
    return 0;
}

static struct kube_client *client(struct fake *f)
{
    struct kube_client_options o = {.backoff_base_ms = 10, .backoff_max_ms = 20};
    return client_for(f, "tok", NULL, &o);
}

static json_t *fake_pod(struct fake *f, const char *name)
{
    pthread_mutex_lock(&f->lock);
    json_t *p = json_deep_copy(json_object_get(json_object_get(f->arg, "pods"), name));
    pthread_mutex_unlock(&f->lock);
    return p;
}

static json_t *record_patch(const char *rv)
{
    struct evict_record rec = {.count = 1,
                               .requeue_at_ms = 1795428060000LL,
                               .evicted_at_ms = 1795428000000LL,
                               .generation = 2,
                               .reason = EVICT_REASON_PLACEMENT_TIMEOUT};
    return evict_record_patch(&rec, "raygate.io/admitted-at", rv);
}

static void test_record(void **state)
{
    (void)state;
    json_t *st = state_new();
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client(f);
    char why[320] = "";

    /* Changed since the decision (another resourceVersion), another RayCluster of that name, or gone: decided again. */
    json_t *stale = record_patch("6"), *fresh = record_patch("7");
    assert_int_equal(evictor_record(k, "ray", "x", "uid-x", stale, why, sizeof(why)), 1);
    assert_int_equal(evictor_record(k, "ray", "x", "uid-old", fresh, why, sizeof(why)), 1);
    assert_int_equal(evictor_record(k, "ray", "y", "uid-x", fresh, why, sizeof(why)), 1);
    pthread_mutex_lock(&f->lock);
    assert_non_null(json_object_get(json_object_get(json_object_get(st, "rc"), "annotations"), "raygate.io/admitted-at"));
    /* A server error is a failure, with its message. */
    json_array_append_new(json_object_get(st, "rc_script"), json_integer(500));
    json_array_append_new(json_object_get(st, "rc_script"), json_integer(500));
    json_array_append_new(json_object_get(st, "rc_script"), json_integer(500));
    json_array_append_new(json_object_get(st, "rc_script"), json_integer(500));
    pthread_mutex_unlock(&f->lock);
    assert_int_equal(evictor_record(k, "ray", "x", "uid-x", fresh, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "500"));

    /* Written: the admission withdrawn and the record there, in one write. */
    pthread_mutex_lock(&f->lock);
    json_array_clear(json_object_get(st, "rc_script"));
    pthread_mutex_unlock(&f->lock);
    assert_int_equal(evictor_record(k, "ray", "x", "uid-x", fresh, why, sizeof(why)), 0);
    json_t *ann = json_object_get(json_object_get(st, "rc"), "annotations");
    assert_null(json_object_get(ann, "raygate.io/admitted-at"));
    assert_string_equal(json_string_value(json_object_get(ann, "raygate.io/requeue-count")), "1");
    assert_string_equal(json_string_value(json_object_get(ann, "raygate.io/requeue-at")), "2026-11-23T10:01:00Z");
    assert_string_equal(json_string_value(json_object_get(ann, "raygate.io/evicted-generation")), "2");
    /* The caller's patch is not changed (it may be sent again). */
    assert_null(json_object_get(json_object_get(fresh, "metadata"), "uid"));

    json_decref(stale);
    json_decref(fresh);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(st);
}

static void test_delete_through_failures(void **state)
{
    (void)state;
    json_t *st = state_new();
    pod_add(st, "p0", json_array());
    pod_add(st, "p1", json_pack("[i,i]", 500, 503));
    pod_add(st, "p2", json_pack("[s,s]", "cut", "cut"));
    pod_add(st, "p3", json_pack("[i,i,i,i,i,i]", 429, 429, 429, 429, 429, 429));
    pod_add(st, "p4", json_array());                /* replaced: a new pod of the same name, another uid */
    pod_add(st, "p5", json_pack("[s]", "replace")); /* replaced between its condition and its deletion */
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client(f);
    struct evictor_pod pods[7] = {
        {"ray", "p0", "uid-p0", 0},  {"ray", "p1", "uid-p1", 0},     {"ray", "p2", "uid-p2", 0}, {"ray", "p3", "uid-p3", 0},
        {"ray", "p4", "uid-old", 0}, {"ray", "gone", "uid-gone", 0}, {"ray", "p5", "uid-p5", 0},
    };
    struct evictor_options o = {.message = "gang ray-x-pg evicted", .now = "2026-11-23T10:05:00Z", .stop_after_deletes = -1};
    assert_int_equal(evictor_delete_pods(k, pods, 7, &o), 0);
    for (int i = 0; i < 7; i++)
        assert_int_equal(pods[i].done, 1);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        json_t *p = fake_pod(f, name);
        assert_true(json_is_true(json_object_get(p, "deleted")));
        /* The condition first, then the deletion. */
        assert_string_equal(json_string_value(json_array_get(json_object_get(p, "order"), 0)), "status");
        assert_string_equal(json_string_value(json_array_get(json_object_get(p, "order"), 1)), "delete");
        json_t *cond = json_object_get(p, "condition");
        assert_string_equal(json_string_value(json_object_get(cond, "type")), "DisruptionTarget");
        assert_string_equal(json_string_value(json_object_get(cond, "status")), "True");
        assert_string_equal(json_string_value(json_object_get(cond, "reason")), "EvictionByRaygate");
        assert_string_equal(json_string_value(json_object_get(cond, "message")), "gang ray-x-pg evicted");
        json_decref(p);
    }
    /* The replacement is not ours: neither marked nor deleted. */
    json_t *p4 = fake_pod(f, "p4");
    assert_false(json_is_true(json_object_get(p4, "deleted")));
    assert_null(json_object_get(p4, "condition"));
    json_decref(p4);
    json_t *p5 = fake_pod(f, "p5");
    assert_false(json_is_true(json_object_get(p5, "deleted")));
    json_decref(p5);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(st);
}

static int no(void *arg)
{
    (void)arg;
    return 0;
}

/* A pod that cannot be deleted is reported after the time limit; without leadership nothing is sent. */
static void test_limits(void **state)
{
    (void)state;
    json_t *st = state_new();
    json_t *down = json_array();
    for (int i = 0; i < 1000; i++)
        json_array_append_new(down, json_integer(503));
    pod_add(st, "p0", down);
    pod_add(st, "p1", json_pack("[i,i,i,i,i,i]", 403, 403, 403, 403, 403, 403));
    pod_add(st, "p2", json_array());
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client(f);
    struct evictor_pod pods[3] = {{"ray", "p0", "uid-p0", 0}, {"ray", "p1", "uid-p1", 0}, {"ray", "p2", "uid-p2", 0}};
    struct evictor_options o = {.message = "m", .now = "2026-11-23T10:05:00Z", .persist_ms = 300, .stop_after_deletes = -1};
    assert_int_equal(evictor_delete_pods(k, pods, 3, &o), 2);
    assert_false(pods[0].done);
    assert_false(pods[1].done);
    assert_true(pods[2].done);
    json_t *p1 = fake_pod(f, "p1");
    assert_int_equal(json_array_size(json_object_get(p1, "order")), 1 + EVICTOR_HOPELESS_TRIES);
    json_decref(p1);

    pthread_mutex_lock(&f->lock);
    pod_add(st, "p3", json_array());
    pthread_mutex_unlock(&f->lock);
    struct evictor_pod p3 = {"ray", "p3", "uid-p3", 0};
    o.may_write = no;
    assert_int_equal(evictor_delete_pods(k, &p3, 1, &o), 1);
    json_t *p = fake_pod(f, "p3");
    assert_int_equal(json_array_size(json_object_get(p, "order")), 0);
    json_decref(p);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(st);
}

/* The crash drill's fault point: with a limit, only that many pods are deleted (each after its condition), the rest stay. */
static void test_stop_after(void **state)
{
    (void)state;
    json_t *st = state_new();
    pod_add(st, "p0", json_array());
    pod_add(st, "p1", json_array());
    pod_add(st, "p2", json_array());
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client(f);
    struct evictor_pod pods[3] = {{"ray", "p0", "uid-p0", 0}, {"ray", "p1", "uid-p1", 0}, {"ray", "p2", "uid-p2", 0}};
    struct evictor_options o = {.message = "m", .now = "2026-11-23T10:05:00Z", .stop_after_deletes = 1};
    assert_int_equal(evictor_delete_pods(k, pods, 3, &o), 2);
    int deleted = 0;
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        json_t *p = fake_pod(f, name);
        deleted += json_is_true(json_object_get(p, "deleted"));
        assert_non_null(json_object_get(p, "condition"));
        json_decref(p);
    }
    assert_int_equal(deleted, 1);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_delete_through_failures),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_stop_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
