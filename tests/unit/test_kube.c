/*
 * The Kubernetes client against the fake API server of fakeapi.h.
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
#include "log.h"
#include "version.h"

/* Failsafe for waits on the client: only reached when a test is failing. */
#define WAIT_LIMIT_S 20

/* --- pure helpers ------------------------------------------------------------------ */

static void test_backoff_and_retry_after(void **state)
{
    (void)state;
    for (uint64_t r = 0; r < 1000; r += 37) {
        long d0 = kube_backoff_ms(0, 500, 30000, r);
        assert_true(d0 >= 250 && d0 <= 500);
        long d3 = kube_backoff_ms(3, 500, 30000, r);
        assert_true(d3 >= 2000 && d3 <= 4000);
        long dmax = kube_backoff_ms(40, 500, 30000, r);
        assert_true(dmax >= 15000 && dmax <= 30000);
    }
    assert_int_equal(kube_backoff_ms(1000, 1, 1, 12345), 1);
    assert_int_equal(kube_retry_after_ms(" 1"), 1000);
    assert_int_equal(kube_retry_after_ms("0\r\n"), 0);
    assert_int_equal(kube_retry_after_ms("120"), 120000);
    assert_int_equal(kube_retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
    assert_int_equal(kube_retry_after_ms("1.5"), -1);
    assert_int_equal(kube_retry_after_ms(""), -1);
    assert_int_equal(kube_retry_after_ms("9999999999"), -1);
    assert_int_equal(kube_retry_after_ms(NULL), -1);
    assert_string_equal(kube_patch_content_type(KUBE_PATCH_MERGE), "application/merge-patch+json");
    assert_string_equal(kube_patch_content_type(KUBE_PATCH_JSON), "application/json-patch+json");
    assert_string_equal(kube_patch_content_type(KUBE_PATCH_STRATEGIC), "application/strategic-merge-patch+json");
}

/* --- requests and lists ------------------------------------------------------------ */

static int requests_handler(struct fake *f, const struct fake_req *req)
{
    (void)f;
    char cont[128];
    if (strcmp(req->method, "GET") == 0 && starts_with(req->target, "/api/v1/namespaces/ray/pods?")) {
        query_param(req->target, "continue", cont, sizeof(cont));
        if (cont[0] == '\0')
            respond_json(req, 200, NULL, pod_list("500", "c1", json_pack("[o,o]", pod("a", "1"), pod("b", "2"))));
        else if (strcmp(cont, "c1") == 0)
            respond_json(req, 200, NULL, pod_list("500", "c2", json_pack("[o,o]", pod("c", "3"), pod("d", "4"))));
        else if (strcmp(cont, "c2") == 0)
            respond_json(req, 200, NULL, pod_list("500", NULL, json_pack("[o]", pod("e", "5"))));
        else
            respond_status(req, 410, "Expired", "The provided continue parameter is too old", NULL);
    } else if (strcmp(req->method, "GET") == 0 && strcmp(req->target, "/api/v1/namespaces/ray/pods/missing") == 0) {
        respond_status(req, 404, "NotFound", "pods \"missing\" not found", NULL);
    } else if (strcmp(req->method, "GET") == 0 && strcmp(req->target, "/api/v1/namespaces/ray/pods/a") == 0) {
        respond_json(req, 200, NULL, pod("a", "1"));
    } else {
        /* Echo what was sent, so the test sees method, content type and body as the server did. */
        json_t *sent = json_loadb(req->body, req->body_len, 0, NULL);
        respond_json(req, strcmp(req->method, "POST") == 0 ? 201 : 200, NULL,
                     json_pack("{s:s,s:s,s:o*}", "method", req->method, "contentType", req->content_type, "body", sent));
    }
    return 0;
}

static void test_requests(void **state)
{
    (void)state;
    struct fake *f = fake_start(requests_handler, NULL);
    struct metrics_registry *reg = metrics_registry_create();
    struct kube_metrics m;
    assert_int_equal(kube_metrics_register(reg, &m), 0);
    assert_int_equal(kube_metrics_register(reg, &m), -1); /* once per registry */
    struct kube_client_options o = {.metrics = &m};
    struct kube_client *c = client_for(f, "tok", NULL, &o);
    struct kube_response r;
    kube_response_init(&r);

    /* Pagination: three pages in order, the list's resourceVersion, escaped selectors. */
    struct kube_list_result l;
    kube_list_result_init(&l);
    struct kube_list_options lo = {.label_selector = "app in (x,y)", .field_selector = "spec.nodeName=", .limit = 2};
    assert_int_equal(kube_list(c, "/api/v1/namespaces/ray/pods", &lo, &l, &r), 0);
    assert_int_equal(json_array_size(l.items), 5);
    const char *names = "abcde";
    for (size_t i = 0; i < 5; i++) {
        char want[2] = {names[i], '\0'};
        json_t *meta = json_object_get(json_array_get(l.items, i), "metadata");
        assert_string_equal(json_string_value(json_object_get(meta, "name")), want);
    }
    assert_string_equal(l.resource_version, "500");
    json_t *log = fake_log(f);
    assert_int_equal(json_array_size(log), 3);
    assert_string_equal(log_field(log, 0, "target"),
                        "/api/v1/namespaces/ray/pods?limit=2&labelSelector=app%20in%20%28x%2Cy%29&fieldSelector=spec.nodeName%3D");
    assert_string_equal(log_field(log, 1, "target"), "/api/v1/namespaces/ray/pods?limit=2&continue=c1"
                                                     "&labelSelector=app%20in%20%28x%2Cy%29&fieldSelector=spec.nodeName%3D");
    assert_string_equal(log_field(log, 2, "auth"), "Bearer tok");
    /* kube.h's promise: the project's version, as meson.build says it. */
    assert_string_equal(log_field(log, 0, "user_agent"), "raygate/" RAYGATE_VERSION);
    assert_non_null(strchr(RAYGATE_VERSION, '.'));
    json_decref(log);

    /* Errors carry the status and the Status message. */
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ray/pods/missing", &r), -1);
    assert_int_equal(r.status, 404);
    assert_string_equal(r.message, "GET /api/v1/namespaces/ray/pods/missing: 404 NotFound: pods \"missing\" not found");
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ray/pods/a", &r), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.body, "metadata"), "name")), "a");

    /* Each verb: its method, content type and body. */
    json_t *body = json_pack("{s:{s:s}}", "metadata", "name", "x");
    assert_int_equal(kube_create(c, "/api/v1/namespaces/ray/pods", body, &r), 0);
    assert_int_equal(r.status, 201);
    assert_string_equal(json_string_value(json_object_get(r.body, "method")), "POST");
    assert_string_equal(json_string_value(json_object_get(r.body, "contentType")), "application/json");
    assert_true(json_equal(json_object_get(r.body, "body"), body));
    assert_int_equal(kube_update(c, "/api/v1/namespaces/ray/pods/x", body, &r), 0);
    assert_string_equal(json_string_value(json_object_get(r.body, "method")), "PUT");
    static const enum kube_patch_type types[] = {KUBE_PATCH_MERGE, KUBE_PATCH_JSON, KUBE_PATCH_STRATEGIC};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(kube_patch(c, "/api/v1/namespaces/ray/pods/x", types[i], body, &r), 0);
        assert_string_equal(json_string_value(json_object_get(r.body, "method")), "PATCH");
        assert_string_equal(json_string_value(json_object_get(r.body, "contentType")), kube_patch_content_type(types[i]));
    }
    assert_int_equal(kube_delete(c, "/api/v1/namespaces/ray/pods/x", NULL, &r), 0);
    assert_string_equal(json_string_value(json_object_get(r.body, "method")), "DELETE");
    assert_null(json_object_get(r.body, "body"));
    json_decref(body);

    char *text = metrics_render(reg, NULL);
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"list\",code=\"200\"} 3\n"));
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"get\",code=\"404\"} 1\n"));
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"patch\",code=\"200\"} 3\n"));
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"create\",code=\"201\"} 1\n"));
    free(text);

    kube_response_finish(&r);
    kube_list_result_finish(&l);
    kube_client_destroy(c);
    metrics_registry_destroy(reg);
    fake_stop(f);
}

/* No answer at all: status 0 and the transport error. */
static void test_no_server(void **state)
{
    (void)state;
    struct fake *f = fake_start(requests_handler, NULL);
    struct kube_client *c = client_for(f, NULL, NULL, NULL);
    fake_stop(f); /* the port is closed now */
    struct kube_response r;
    kube_response_init(&r);
    assert_int_equal(kube_get(c, "/api/v1/nodes", &r), -1);
    assert_int_equal(r.status, 0);
    assert_null(r.body);
    assert_true(starts_with(r.message, "GET /api/v1/nodes: "));
    kube_response_finish(&r);
    kube_client_destroy(c);
}

/* --- retries ---------------------------------------------------------------------- */

static int retry_handler(struct fake *f, const struct fake_req *req)
{
    pthread_mutex_lock(&f->lock);
    int n = f->received;
    pthread_mutex_unlock(&f->lock);
    if (strcmp(req->target, "/throttled") == 0 && n == 1) {
        respond_status(req, 429, "TooManyRequests", "too many requests, please try again later", "Retry-After: 1\r\n");
    } else if (strcmp(req->target, "/unavailable") == 0 && n == 1) {
        respond_status(req, 503, "ServiceUnavailable", "storage is (re)initializing", "Retry-After: 0\r\n");
    } else if (strcmp(req->target, "/always-throttled") == 0) {
        respond_status(req, 429, "TooManyRequests", "slow down", "Retry-After: 0\r\n");
    } else if (strcmp(req->target, "/broken") == 0) {
        respond_status(req, 500, "InternalError", "boom", NULL);
    } else {
        respond(req, 200, NULL, "{\"ok\":true}");
    }
    return 0;
}

/*
 * 429 and 5xx+Retry-After are retried after Retry-After. The backoff is set to
 * ten minutes: a client that ignored Retry-After would hang the test instead
 * of retrying within a second.
 */
static void test_retry_after(void **state)
{
    (void)state;
    static const char *const paths[] = {"/throttled", "/unavailable"};
    struct kube_client_options o = {.backoff_base_ms = 600000, .backoff_max_ms = 600000, .max_retries = 2};
    struct kube_response r;
    kube_response_init(&r);
    for (size_t i = 0; i < 2; i++) {
        struct fake *f = fake_start(retry_handler, NULL);
        struct kube_client *c = client_for(f, NULL, NULL, &o);
        assert_int_equal(kube_get(c, paths[i], &r), 0);
        assert_int_equal(r.status, 200);
        json_t *log = fake_log(f);
        assert_int_equal(json_array_size(log), 2);
        json_decref(log);
        kube_client_destroy(c);
        fake_stop(f);
    }

    /* Retries stop at max_retries; a 500 without Retry-After is not retried. */
    struct fake *f = fake_start(retry_handler, NULL);
    struct kube_client *c = client_for(f, NULL, NULL, &o);
    assert_int_equal(kube_get(c, "/always-throttled", &r), -1);
    assert_int_equal(r.status, 429);
    assert_string_equal(r.message, "GET /always-throttled: 429 TooManyRequests: slow down");
    json_t *log = fake_log(f);
    assert_int_equal(json_array_size(log), 3);
    json_decref(log);
    assert_int_equal(kube_get(c, "/broken", &r), -1);
    assert_int_equal(r.status, 500);
    log = fake_log(f);
    assert_int_equal(json_array_size(log), 4);
    json_decref(log);
    kube_client_destroy(c);
    fake_stop(f);
    kube_response_finish(&r);
}

static int token_handler(struct fake *f, const struct fake_req *req)
{
    const char *want = f->arg;
    if (want != NULL && strcmp(req->auth, want) != 0)
        respond_status(req, 401, "Unauthorized", "Unauthorized", NULL);
    else
        respond(req, 200, NULL, "{}");
    return 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* A 401 re-reads the token file and retries once with the new token; an unchanged token is not retried. */
static void test_token_reread(void **state)
{
    (void)state;
    char dir[] = "/tmp/raygate-test-kube-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/token", dir);
    write_file(path, "old-token\n");
    struct fake *f = fake_start(token_handler, "Bearer new-token");
    struct kube_client *c = client_for(f, "kubeconfig-token", path, NULL);
    struct kube_response r;
    kube_response_init(&r);

    write_file(path, "new-token\n"); /* rotated after the client read it */
    assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), 0);
    json_t *log = fake_log(f);
    assert_int_equal(json_array_size(log), 2);
    assert_string_equal(log_field(log, 0, "auth"), "Bearer old-token");
    assert_string_equal(log_field(log, 1, "auth"), "Bearer new-token");
    json_decref(log);

    f->arg = "Bearer never";
    assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), -1);
    assert_int_equal(r.status, 401);
    log = fake_log(f);
    assert_int_equal(json_array_size(log), 3); /* the 401, one re-read, no retry */
    json_decref(log);
    kube_client_destroy(c);

    /* The file is also re-read periodically, without a 401 (token_reread_ms 1: on the next request once 1 ms passed). */
    f->arg = NULL;
    struct kube_client_options o = {.token_reread_ms = 1};
    c = client_for(f, NULL, path, &o);
    write_file(path, "third-token");
    int seen = 0;
    for (int i = 0; i < 10000 && !seen; i++) {
        assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), 0);
        log = fake_log(f);
        seen = strcmp(log_field(log, json_array_size(log) - 1, "auth"), "Bearer third-token") == 0;
        json_decref(log);
    }
    assert_true(seen);
    kube_client_destroy(c);

    /* A token file that cannot be read, with no token to fall back on, fails creation. */
    unlink(path);
    struct kubeconfig cfg;
    kubeconfig_init(&cfg);
    cfg.server = strdup("http://127.0.0.1:1");
    cfg.token_file = strdup(path);
    struct error err;
    assert_null(kube_client_create(&cfg, NULL, &err));
    assert_non_null(strstr(err.message, "cannot read token file"));
    kubeconfig_finish(&cfg);
    rmdir(dir);
    kube_response_finish(&r);
    fake_stop(f);
}

/*
 * No token reaches the log: everything the client logs at debug level while
 * tokens are refused, re-read, missing and retried is captured from stderr
 * and searched for the tokens' text.
 */
static void test_no_token_in_logs(void **state)
{
    (void)state;
    char dir[] = "/tmp/raygate-test-kube-XXXXXX", path[128], logpath[160];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/token", dir);
    snprintf(logpath, sizeof(logpath), "%s/stderr", dir);
    int saved = dup(STDERR_FILENO);
    FILE *capture = fopen(logpath, "w+");
    assert_non_null(capture);
    assert_true(dup2(fileno(capture), STDERR_FILENO) >= 0);
    log_set_level(LOG_LEVEL_DEBUG);

    struct fake *f = fake_start(token_handler, "Bearer s3cr3t-never-sent");
    /* The token file is missing: the client falls back on the kubeconfig's token, and says so. */
    struct kube_client *c = client_for(f, "s3cr3t-kubeconfig-token", path, NULL);
    struct kube_response r;
    kube_response_init(&r);
    assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), -1); /* 401; the re-read fails: logged */
    write_file(path, "s3cr3t-file-token\n");
    assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), -1); /* 401 with the file's token */
    struct kube_batch_item items[3];
    for (size_t i = 0; i < 3; i++)
        items[i] = (struct kube_batch_item){.method = "PATCH", .path = "/api/v1/namespaces/ray/pods/x",
                                            .content_type = kube_patch_content_type(KUBE_PATCH_MERGE)};
    kube_batch(c, items, 3, 2);
    for (size_t i = 0; i < 3; i++)
        kube_response_finish(&items[i].resp);
    kube_client_destroy(c);
    fake_stop(f);
    kube_response_finish(&r);

    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    log_set_level(LOG_LEVEL_INFO);
    size_t len;
    char *text = util_read_file(logpath, 1 << 20, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "using the kubeconfig's token")); /* the capture captured */
    if (strstr(text, "s3cr3t") != NULL)
        fail_msg("a token reached the log:\n%s", text);
    free(text);
    fclose(capture);
    unlink(logpath);
    unlink(path);
    rmdir(dir);
}

/* --- batches ---------------------------------------------------------------------- */

#define BATCH_N 200
#define BATCH_LIMIT 64

/*
 * Holds every patch until BATCH_LIMIT are in flight at once (or all have
 * arrived), so the test observes the concurrency the client really used.
 */
static int batch_handler(struct fake *f, const struct fake_req *req)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_LIMIT_S;
    pthread_mutex_lock(&f->lock);
    while (f->max_inflight < BATCH_LIMIT && f->received < BATCH_N && !f->stopping)
        if (pthread_cond_timedwait(&f->cond, &f->lock, &until) != 0)
            break;
    pthread_mutex_unlock(&f->lock);
    const char *name = strrchr(req->target, '/') + 1;
    int i = atoi(name + 2);
    if (strcmp(req->method, "PATCH") != 0 || strcmp(req->content_type, "application/merge-patch+json") != 0) {
        respond_status(req, 400, "BadRequest", "expected a merge patch", NULL);
    } else if (i % 50 == 7) {
        respond_status(req, 409, "Conflict", "the object has been modified; please apply your changes to the latest version", NULL);
    } else {
        json_t *patch = json_loadb(req->body, req->body_len, 0, NULL);
        json_t *meta = json_object_get(patch, "metadata");
        json_object_set_new(meta, "name", json_string(name));
        respond_json(req, 200, NULL, json_pack("{s:O}", "metadata", meta));
        json_decref(patch);
    }
    return 0;
}

static void test_batch(void **state)
{
    (void)state;
    struct fake *f = fake_start(batch_handler, NULL);
    struct metrics_registry *reg = metrics_registry_create();
    struct kube_metrics m;
    assert_int_equal(kube_metrics_register(reg, &m), 0);
    struct kube_client_options o = {.metrics = &m};
    struct kube_client *c = client_for(f, "tok", NULL, &o);
    struct kube_batch_item *items = calloc(BATCH_N, sizeof(*items));
    char (*paths)[64] = calloc(BATCH_N, 64);
    json_t *patch = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "42");
    for (size_t i = 0; i < BATCH_N; i++) {
        snprintf(paths[i], 64, "/api/v1/namespaces/ray/pods/p-%zu", i);
        items[i].method = "PATCH";
        items[i].path = paths[i];
        items[i].content_type = kube_patch_content_type(KUBE_PATCH_MERGE);
        items[i].body = patch;
    }
    assert_int_equal(kube_batch(c, items, BATCH_N, BATCH_LIMIT), 4);
    for (size_t i = 0; i < BATCH_N; i++) {
        if (i % 50 == 7) {
            assert_int_equal(items[i].rc, -1);
            assert_int_equal(items[i].resp.status, 409);
            assert_non_null(strstr(items[i].resp.message, "409 Conflict: the object has been modified"));
        } else {
            if (items[i].rc != 0)
                fail_msg("%s: %s", paths[i], items[i].resp.message);
            json_t *meta = json_object_get(items[i].resp.body, "metadata");
            assert_string_equal(json_string_value(json_object_get(meta, "name")), strrchr(paths[i], '/') + 1);
            assert_string_equal(json_string_value(json_object_get(meta, "resourceVersion")), "42");
        }
        kube_response_finish(&items[i].resp);
    }
    pthread_mutex_lock(&f->lock);
    assert_int_equal(f->received, BATCH_N);
    assert_int_equal(f->max_inflight, BATCH_LIMIT);
    pthread_mutex_unlock(&f->lock);
    char *text = metrics_render(reg, NULL);
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"patch\",code=\"200\"} 196\n"));
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"patch\",code=\"409\"} 4\n"));
    free(text);
    assert_int_equal(kube_batch(c, items, 0, 8), 0);
    json_decref(patch);
    free(paths);
    free(items);
    kube_client_destroy(c);
    metrics_registry_destroy(reg);
    fake_stop(f);
}

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
    assert_int_equal(kube_metrics_register(reg, &m), 0);
    /* Backoff of ten minutes: the 429's Retry-After: 0 must be what lets the list go on. */
    struct kube_client_options o = {.backoff_base_ms = 600000, .backoff_max_ms = 600000, .metrics = &m};
    struct kube_client *c = client_for(f, "tok", NULL, &o);
    struct events e;
    events_init(&e);
    struct error err;
    struct kube_watcher *w = kube_watcher_create(c, &err);
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
    kube_watcher_destroy(w);
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
    assert_int_equal(kube_metrics_register(reg, &m), 0);
    struct kube_client_options o = {.backoff_base_ms = 600000, .backoff_max_ms = 600000, .metrics = &m};
    struct kube_client *c = client_for(f, NULL, NULL, &o);
    struct events e;
    events_init(&e);
    struct error err;
    struct kube_watcher *w = kube_watcher_create(c, &err);
    assert_non_null(w);
    struct kube_watch_spec spec = {.name = "pods", .path = "/api/v1/pods", .fn = on_event, .arg = &e};
    assert_int_equal(kube_watch_start(w, &spec, &err), 0);

    static const char *const want[] = {"ADDED a 1", "ADDED b 2", "SYNCED", "ADDED c 6", "ADDED d 8",
                                       "DELETED b 2", "SYNCED",  "SYNCED"};
    json_t *got = wait_events(&e, 8);
    pthread_mutex_lock(&f->lock);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_LIMIT_S;
    while (f->received < 6)
        if (pthread_cond_timedwait(&f->cond, &f->lock, &until) != 0)
            break;
    pthread_mutex_unlock(&f->lock);
    kube_watcher_destroy(w);
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
    struct kube_watcher *w = kube_watcher_create(c, &err);
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
    kube_watcher_destroy(w);
    kube_watcher_destroy(NULL);
    events_finish(&e);
    kube_client_destroy(c);
    kube_client_destroy(NULL);
    fake_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_and_retry_after),
        cmocka_unit_test(test_requests),
        cmocka_unit_test(test_no_server),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_token_reread),
        cmocka_unit_test(test_no_token_in_logs),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_watch_gone_relists),
        cmocka_unit_test(test_watch_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
