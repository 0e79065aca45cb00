/*
 * Requests, lists and batches (kube.c) against the fake API server of
 * fakeapi.h.
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
#include "version.h"

/* Failsafe for waits on the client: only reached when a test is failing. */
#define WAIT_LIMIT_S 20

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

/* Each verb: its method, content type and body (the fake echoes them): 1 create, 1 update, 3 patches, 1 delete. */
static void check_verbs(struct kube_client *c, struct kube_response *r)
{
    json_t *body = json_pack("{s:{s:s}}", "metadata", "name", "x");
    assert_int_equal(kube_create(c, "/api/v1/namespaces/ray/pods", body, r), 0);
    assert_int_equal(r->status, 201);
    assert_string_equal(json_string_value(json_object_get(r->body, "method")), "POST");
    assert_string_equal(json_string_value(json_object_get(r->body, "contentType")), "application/json");
    assert_true(json_equal(json_object_get(r->body, "body"), body));
    assert_int_equal(kube_update(c, "/api/v1/namespaces/ray/pods/x", body, r), 0);
    assert_string_equal(json_string_value(json_object_get(r->body, "method")), "PUT");
    static const enum kube_patch_type types[] = {KUBE_PATCH_MERGE, KUBE_PATCH_JSON, KUBE_PATCH_STRATEGIC};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(kube_patch(c, "/api/v1/namespaces/ray/pods/x", types[i], body, r), 0);
        assert_string_equal(json_string_value(json_object_get(r->body, "method")), "PATCH");
        assert_string_equal(json_string_value(json_object_get(r->body, "contentType")), kube_patch_content_type(types[i]));
    }
    assert_int_equal(kube_delete(c, "/api/v1/namespaces/ray/pods/x", NULL, r), 0);
    assert_string_equal(json_string_value(json_object_get(r->body, "method")), "DELETE");
    assert_null(json_object_get(r->body, "body"));
    json_decref(body);
}

static void test_requests(void **state)
{
    (void)state;
    struct fake *f = fake_start(requests_handler, NULL);
    struct metrics_registry *reg = metrics_registry_create();
    struct kube_metrics m;
    assert_int_equal(kube_client_metrics_register(reg, &m), 0);
    assert_int_equal(kube_client_metrics_register(reg, &m), -1); /* once per registry */
    static const char *const client_label[] = {"worker"};
    struct kube_client_options o = {
        .metrics = &m,
        .client_requests = metrics_counter_create(reg, "test_client_requests_total", "one client's share", 1, client_label),
        .client_name = "wa",
    };
    struct kube_client *c = client_for(f, "tok", NULL, &o);
    struct kube_response r;
    kube_client_response_init(&r);

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

    check_verbs(c, &r);

    char *text = metrics_render(reg, NULL);
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"list\",code=\"200\"} 3\n"));
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"get\",code=\"404\"} 1\n"));
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"patch\",code=\"200\"} 3\n"));
    assert_non_null(strstr(text, "raygate_kube_requests_total{verb=\"create\",code=\"201\"} 1\n"));
    /* The client's own share: every answer above (3 pages, 2 gets, create, update, 3 patches, delete). */
    assert_non_null(strstr(text, "test_client_requests_total{worker=\"wa\"} 11\n"));
    free(text);

    kube_client_response_finish(&r);
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
    kube_client_response_init(&r);
    assert_int_equal(kube_get(c, "/api/v1/nodes", &r), -1);
    assert_int_equal(r.status, 0);
    assert_null(r.body);
    assert_true(starts_with(r.message, "GET /api/v1/nodes: "));
    kube_client_response_finish(&r);
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
    kube_client_response_init(&r);
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
    kube_client_response_finish(&r);
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
    assert_int_equal(kube_client_metrics_register(reg, &m), 0);
    struct kube_client_options o = {.metrics = &m};
    struct kube_client *c = client_for(f, "tok", NULL, &o);
    struct kube_batch_item *items = calloc(BATCH_N, sizeof(*items));
    char(*paths)[64] = calloc(BATCH_N, 64);
    json_t *patch = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "42");
    for (size_t i = 0; i < BATCH_N; i++) {
        snprintf(paths[i], 64, "/api/v1/namespaces/ray/pods/p-%zu", i);
        items[i].method = "PATCH";
        items[i].path = paths[i];
        items[i].content_type = kube_patch_content_type(KUBE_PATCH_MERGE);
        items[i].body = patch;
        items[i].status_only = i % 2; /* odd items: a 2xx answer's body is not kept, a failure's still is */
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
            if (items[i].status_only) {
                assert_int_equal(items[i].resp.status, 200);
                assert_null(items[i].resp.body);
                kube_client_response_finish(&items[i].resp);
                continue;
            }
            json_t *meta = json_object_get(items[i].resp.body, "metadata");
            assert_string_equal(json_string_value(json_object_get(meta, "name")), strrchr(paths[i], '/') + 1);
            assert_string_equal(json_string_value(json_object_get(meta, "resourceVersion")), "42");
        }
        kube_client_response_finish(&items[i].resp);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests),
        cmocka_unit_test(test_no_server),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
