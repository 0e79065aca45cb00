/*
 * The watcher (kubewatch.c) against the fake API server of fakeapi.h: list,
 * watch, bookmarks, relists after 410, many watches on one thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi.h"
#include "fixtures.h"
#include "kube.h"

/* Failsafe for waits on the client: only reached when a test is failing. */
#define WAIT_LIMIT_S 20

/* --- watches ---------------------------------------------------------------------- */

/* What the watch callback saw: ["ADDED a 1", "SYNCED", ...]. */
struct events {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    json_t *seen;
    json_t *deleted; /* the objects of DELETED events */
};

static void events_init(struct events *e)
{
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    e->seen = json_array();
    e->deleted = json_array();
}

static void events_finish(struct events *e)
{
    json_decref(e->seen);
    json_decref(e->deleted);
    pthread_cond_destroy(&e->cond);
    pthread_mutex_destroy(&e->lock);
}

static void on_event(void *arg, enum kube_watch_event ev, json_t *obj)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "SYNCED"};
    struct events *e = arg;
    char line[128];
    if (ev == KUBE_WATCH_SYNCED) {
        snprintf(line, sizeof(line), "SYNCED");
    } else {
        json_t *meta = json_object_get(obj, "metadata");
        snprintf(line, sizeof(line), "%s %s %s", names[ev], json_string_value(json_object_get(meta, "name")),
                 json_string_value(json_object_get(meta, "resourceVersion")));
    }
    pthread_mutex_lock(&e->lock);
    json_array_append_new(e->seen, json_string(line));
    if (ev == KUBE_WATCH_DELETED)
        json_array_append(e->deleted, obj);
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

/* Waits until n events were seen (failing after WAIT_LIMIT_S); returns a copy of them. */
static json_t *wait_events(struct events *e, size_t n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_LIMIT_S;
    pthread_mutex_lock(&e->lock);
    while (json_array_size(e->seen) < n)
        if (pthread_cond_timedwait(&e->cond, &e->lock, &until) != 0)
            break;
    json_t *copy = json_deep_copy(e->seen);
    pthread_mutex_unlock(&e->lock);
    if (json_array_size(copy) < n) {
        char *s = fixture_dump(copy);
        fail_msg("saw %zu events, expected %zu: %s", json_array_size(copy), n, s);
    }
    return copy;
}

static void assert_events(json_t *got, const char *const *want, size_t n)
{
    json_t *w = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(w, json_string(want[i]));
    if (!json_equal(got, w)) {
        char *g = fixture_dump(got), *ws = fixture_dump(w);
        fail_msg("events %s, expected %s", g, ws);
    }
    json_decref(w);
}

static void send_event(const struct fake_req *req, const char *type, json_t *obj, size_t split)
{
    json_t *ev = json_pack("{s:s,s:o}", "type", type, "object", obj);
    char *s = json_dumps(ev, JSON_COMPACT);
    size_t n = strlen(s);
    s = realloc(s, n + 2);
    s[n++] = '\n';
    /* split > 0: the event leaves in pieces of split bytes, each its own chunk. */
    for (size_t off = 0; off < n; off += split != 0 ? split : n)
        stream_chunk(req, s + off, split != 0 && n - off > split ? split : n - off);
    free(s);
    json_decref(ev);
}

/* Script: list (a 429 first), then one watch delivering events split across chunks, then held open. */
static int watch_handler(struct fake *f, const struct fake_req *req)
{
    pthread_mutex_lock(&f->lock);
    int n = f->received;
    pthread_mutex_unlock(&f->lock);
    char watch[8];
    query_param(req->target, "watch", watch, sizeof(watch));
    if (!starts_with(req->target, "/api/v1/pods?")) {
        respond_status(req, 404, "NotFound", "no such path", NULL);
    } else if (watch[0] == '\0') {
        if (n == 1)
            respond_status(req, 429, "TooManyRequests", "slow down", "Retry-After: 0\r\n");
        else
            respond_json(req, 200, NULL, pod_list("10", NULL, json_pack("[o]", pod("p1", "9"))));
    } else if (n == 3) {
        stream_begin(req);
        send_event(req, "ADDED", pod("p2", "11"), 7);
        send_event(req, "MODIFIED", pod("p1", "12"), 1000);
        send_event(req, "BOOKMARK", json_pack("{s:s,s:{s:s}}", "kind", "Pod", "metadata", "resourceVersion", "15"), 0);
        send_event(req, "DELETED", pod("p2", "16"), 3);
        stream_end(req); /* the server's timeout: the client resumes from resourceVersion 16 */
    } else {
        stream_begin(req);
        stream_hold(f, req);
        return -1;
    }
    return 0;
}

static void test_watch(void **state)
{
    (void)state;
    struct fake *f = fake_start(watch_handler, NULL);
    struct metrics_registry *reg = metrics_registry_create();
    struct kube_metrics m;
    assert_int_equal(kube_client_metrics_register(reg, &m), 0);
    /* Backoff of ten minutes: the 429's Retry-After: 0 must be what lets the list go on. */
    struct kube_client_options o = {.backoff_base_ms = 600000, .backoff_max_ms = 600000, .metrics = &m};
    struct kube_client *c = client_for(f, "tok", NULL, &o);
    struct events e;
    events_init(&e);
    struct error err;
    struct kube_watcher *w = kube_watch_create(c, &err);
    assert_non_null(w);
    struct kube_watch_spec bad = {.name = "pods", .path = "/api/v1/pods?watch=1", .fn = on_event};
    assert_int_equal(kube_watch_start(w, &bad, &err), -1);
    struct kube_watch_spec spec = {.name = "pods", .path = "/api/v1/pods", .fn = on_event, .arg = &e};
    assert_int_equal(kube_watch_start(w, &spec, &err), 0);

    static const char *const want[] = {"ADDED p1 9", "SYNCED", "ADDED p2 11", "MODIFIED p1 12", "DELETED p2 16"};
    json_t *got = wait_events(&e, 5);
    /* The 4th request is the resumed watch: wait for it before destroying. */
    pthread_mutex_lock(&f->lock);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_LIMIT_S;
    while (f->received < 4)
        if (pthread_cond_timedwait(&f->cond, &f->lock, &until) != 0)
            break;
    pthread_mutex_unlock(&f->lock);
    kube_watch_destroy(w);
    assert_events(got, want, 5);
    json_decref(got);

    json_t *log = fake_log(f);
    assert_int_equal(json_array_size(log), 4);
    char v[64];
    const char *t = log_field(log, 2, "target");
    assert_string_equal(query_param(t, "watch", v, sizeof(v)), "1");
    assert_string_equal(query_param(t, "allowWatchBookmarks", v, sizeof(v)), "true");
    assert_string_equal(query_param(t, "resourceVersion", v, sizeof(v)), "10");
    long timeout = atol(query_param(t, "timeoutSeconds", v, sizeof(v)));
    assert_true(timeout >= 300 && timeout <= 600);
    assert_string_equal(query_param(log_field(log, 3, "target"), "resourceVersion", v, sizeof(v)), "16");
    assert_string_equal(log_field(log, 3, "auth"), "Bearer tok");
    json_decref(log);

    char *text = metrics_render(reg, NULL);
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"list\",code=\"429\"} 1\n"));
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"list\",code=\"200\"} 1\n"));
    assert_non_null(strstr(text, "raygate_kube_watch_restarts_total{watch=\"pods\",reason=\"timeout\"} 1\n"));
    free(text);

    events_finish(&e);
    kube_client_destroy(c);
    metrics_registry_destroy(reg);
    fake_stop(f);
}

/*
 * Script for 410: list {a, b} at 5; watch adds c then sends ERROR 410; relist
 * {a, c, d} at 9 (b is gone); watch from 9 answers HTTP 410; relist the same
 * {a, c, d}; watch held open.
 */
static int gone_handler(struct fake *f, const struct fake_req *req)
{
    pthread_mutex_lock(&f->lock);
    int n = f->received;
    pthread_mutex_unlock(&f->lock);
    switch (n) {
    case 1:
        respond_json(req, 200, NULL, pod_list("5", NULL, json_pack("[o,o]", pod("a", "1"), pod("b", "2"))));
        return 0;
    case 2:
        stream_begin(req);
        send_event(req, "ADDED", pod("c", "6"), 0);
        send_event(req, "ERROR",
                   json_pack("{s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "status", "Failure", "message",
                             "too old resource version: 5 (7)", "reason", "Expired", "code", 410),
                   5);
        stream_end(req);
        return 0;
    case 3:
    case 5:
        respond_json(req, 200, NULL, pod_list("9", NULL, json_pack("[o,o,o]", pod("a", "1"), pod("c", "6"), pod("d", "8"))));
        return 0;
    case 4:
        respond_status(req, 410, "Expired", "too old resource version: 9 (12)", NULL);
        return 0;
    default:
        stream_begin(req);
        stream_hold(f, req);
        return -1;
    }
}

static void test_watch_gone_relists(void **state)
{
    (void)state;
    struct fake *f = fake_start(gone_handler, NULL);
    struct metrics_registry *reg = metrics_registry_create();
    struct kube_metrics m;
    assert_int_equal(kube_client_metrics_register(reg, &m), 0);
    struct kube_client_options o = {.backoff_base_ms = 600000, .backoff_max_ms = 600000, .metrics = &m};
    struct kube_client *c = client_for(f, NULL, NULL, &o);
    struct events e;
    events_init(&e);
    struct error err;
    struct kube_watcher *w = kube_watch_create(c, &err);
    assert_non_null(w);
    struct kube_watch_spec spec = {.name = "pods", .path = "/api/v1/pods", .fn = on_event, .arg = &e};
    assert_int_equal(kube_watch_start(w, &spec, &err), 0);

    static const char *const want[] = {"ADDED a 1", "ADDED b 2",   "SYNCED", "ADDED c 6",
                                       "ADDED d 8", "DELETED b 2", "SYNCED", "SYNCED"};
    json_t *got = wait_events(&e, 8);
    pthread_mutex_lock(&f->lock);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_LIMIT_S;
    while (f->received < 6)
        if (pthread_cond_timedwait(&f->cond, &f->lock, &until) != 0)
            break;
    pthread_mutex_unlock(&f->lock);
    kube_watch_destroy(w);
    assert_events(got, want, 8);
    json_decref(got);

    /* The deletion found by the relist names the object the caller knew. */
    json_t *meta = json_object_get(json_array_get(e.deleted, 0), "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "namespace")), "ray");
    assert_string_equal(json_string_value(json_object_get(meta, "uid")), "uid-b");

    json_t *log = fake_log(f);
    assert_int_equal(json_array_size(log), 6);
    char v[64];
    assert_string_equal(query_param(log_field(log, 1, "target"), "resourceVersion", v, sizeof(v)), "5");
    assert_string_equal(query_param(log_field(log, 2, "target"), "watch", v, sizeof(v)), "");
    assert_string_equal(query_param(log_field(log, 3, "target"), "resourceVersion", v, sizeof(v)), "9");
    assert_string_equal(query_param(log_field(log, 5, "target"), "resourceVersion", v, sizeof(v)), "9");
    json_decref(log);

    char *text = metrics_render(reg, NULL);
    assert_non_null(strstr(text, "raygate_kube_watch_restarts_total{watch=\"pods\",reason=\"expired\"} 2\n"));
    free(text);

    events_finish(&e);
    kube_client_destroy(c);
    metrics_registry_destroy(reg);
    fake_stop(f);
}

/*
 * Script for trouble: list answers 500; list {a} at 3; watch sends ERROR 500
 * (a failed stream); relist {a, b} at 5; watch sends ERROR 410; relist {b} at
 * 7; watch held open.
 */
static int trouble_handler(struct fake *f, const struct fake_req *req)
{
    pthread_mutex_lock(&f->lock);
    int n = f->received;
    pthread_mutex_unlock(&f->lock);
    int code = n == 3 ? 500 : 410;
    switch (n) {
    case 1:
        respond_status(req, 500, "InternalError", "etcd is down", NULL);
        return 0;
    case 2:
        respond_json(req, 200, NULL, pod_list("3", NULL, json_pack("[o]", pod("a", "1"))));
        return 0;
    case 3:
    case 5:
        stream_begin(req);
        send_event(req, "ERROR",
                   json_pack("{s:s,s:s,s:s,s:i}", "kind", "Status", "status", "Failure", "message", "it broke", "code", code), 0);
        stream_end(req);
        return 0;
    case 4:
        respond_json(req, 200, NULL, pod_list("5", NULL, json_pack("[o,o]", pod("a", "1"), pod("b", "4"))));
        return 0;
    case 6:
        respond_json(req, 200, NULL, pod_list("7", NULL, json_pack("[o]", pod("b", "4"))));
        return 0;
    default:
        stream_begin(req);
        stream_hold(f, req);
        return -1;
    }
}

/* kube_watch_trouble_fn: recorded among the events; 1 ms to the next attempt (the client's backoff is 10 minutes). */
static long on_trouble(void *arg, enum kube_watch_trouble t, long status, const char *message)
{
    struct events *e = arg;
    char line[128];
    snprintf(line, sizeof(line), "%s %ld", t == KUBE_WATCH_FAILED ? "FAILED" : "RELISTING", status);
    assert_non_null(message);
    pthread_mutex_lock(&e->lock);
    json_array_append_new(e->seen, json_string(line));
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return 1;
}

/* The caller hears of each failure and relist, its delay wins over the backoff, and a failed stream relists. */
static void test_watch_trouble(void **state)
{
    (void)state;
    struct fake *f = fake_start(trouble_handler, NULL);
    struct kube_client_options o = {.backoff_base_ms = 600000, .backoff_max_ms = 600000};
    struct kube_client *c = client_for(f, NULL, NULL, &o);
    struct events e;
    events_init(&e);
    struct error err;
    struct kube_watcher *w = kube_watch_create(c, &err);
    assert_non_null(w);
    struct kube_watch_spec spec = {
        .name = "pods", .path = "/api/v1/pods", .fn = on_event, .arg = &e, .trouble = on_trouble, .relist_on_error = 1};
    assert_int_equal(kube_watch_start(w, &spec, &err), 0);
    static const char *const want[] = {"FAILED 500", "ADDED a 1",     "SYNCED",      "FAILED 500", "ADDED b 4",
                                       "SYNCED",     "RELISTING 410", "DELETED a 1", "SYNCED"};
    json_t *got = wait_events(&e, 9);
    kube_watch_destroy(w);
    assert_events(got, want, 9);
    json_decref(got);
    json_t *log = fake_log(f);
    char v[64];
    for (size_t i = 0; i < 6; i++) /* lists at 0, 1, 3 and 5; watches between */
        assert_string_equal(query_param(log_field(log, i, "target"), "watch", v, sizeof(v)), i == 2 || i == 4 ? "1" : "");
    json_decref(log);
    events_finish(&e);
    kube_client_destroy(c);
    fake_stop(f);
}

/* Several watches on one watcher thread, added while it runs; destroy closes held streams. */
static int multi_handler(struct fake *f, const struct fake_req *req)
{
    char watch[8];
    query_param(req->target, "watch", watch, sizeof(watch));
    if (watch[0] == '\0') {
        const char *name = strrchr(req->target, '/') + 1; /* "nodes?limit=..." */
        char item[32];
        snprintf(item, sizeof(item), "%.*s-1", (int)strcspn(name, "?"), name);
        respond_json(req, 200, NULL, pod_list("3", NULL, json_pack("[o]", pod(item, "2"))));
        return 0;
    }
    stream_begin(req);
    stream_hold(f, req);
    return -1;
}

static void test_watch_many(void **state)
{
    (void)state;
    struct fake *f = fake_start(multi_handler, NULL);
    struct kube_client *c = client_for(f, NULL, NULL, NULL);
    struct events e;
    events_init(&e);
    struct error err;
    struct kube_watcher *w = kube_watch_create(c, &err);
    static const char *const paths[] = {"/api/v1/pods", "/api/v1/nodes", "/apis/ray.io/v1/rayclusters",
                                        "/apis/scheduling.volcano.sh/v1beta1/queues"};
    for (size_t i = 0; i < 4; i++) {
        struct kube_watch_spec spec = {.name = paths[i], .path = paths[i], .fn = on_event, .arg = &e};
        assert_int_equal(kube_watch_start(w, &spec, &err), 0);
    }
    json_t *got = wait_events(&e, 8);
    size_t synced = 0;
    for (size_t i = 0; i < json_array_size(got); i++)
        synced += strcmp(json_string_value(json_array_get(got, i)), "SYNCED") == 0;
    assert_int_equal(synced, 4);
    for (size_t i = 0; i < 4; i++) {
        char want[64];
        const char *last = strrchr(paths[i], '/') + 1;
        snprintf(want, sizeof(want), "ADDED %s-1 2", last);
        int found = 0;
        for (size_t k = 0; k < json_array_size(got); k++)
            found |= strcmp(json_string_value(json_array_get(got, k)), want) == 0;
        if (!found)
            fail_msg("no \"%s\"", want);
    }
    json_decref(got);
    kube_watch_destroy(w);
    kube_watch_destroy(NULL);
    events_finish(&e);
    kube_client_destroy(c);
    kube_client_destroy(NULL);
    fake_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_watch_gone_relists),
        cmocka_unit_test(test_watch_trouble),
        cmocka_unit_test(test_watch_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
