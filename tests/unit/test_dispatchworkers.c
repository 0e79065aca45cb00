/*
 * dispatch/workers.c: a worker Secret read into a name and a kubeconfig
 * (fixtures: tests/fixtures/dispatchworkers/secrets.json), the registry kept
 * from the Secrets (a broken one is a worker that is down, never fatal), and
 * the state reported on the Secret, in Events and in raygate_worker_up,
 * against the fake API server of fakeapi.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "fixtures.h"
#include "metrics.h"
#include "names.h"
#include "workers.h"

#define SECRETS "/api/v1/namespaces/raygate-system/secrets"

static const struct dispatch_options opts = {.cluster_name = "manager", .namespace_ = "raygate-system"};

static void test_parse_cases(void **state)
{
    (void)state;
    json_t *cases = fixture_json("dispatchworkers/secrets.json");
    size_t i;
    json_t *c;
    assert_true(json_array_size(cases) >= 8);
    json_array_foreach(cases, i, c)
    {
        const char *what = json_string_value(json_object_get(c, "what"));
        const char *want_name = json_string_value(json_object_get(c, "name"));
        const char *want_err = json_string_value(json_object_get(c, "error"));
        struct kubeconfig cfg;
        kubeconfig_init(&cfg);
        char *name = NULL;
        struct error err = {{0}};
        int rc = dispatchworkers_parse_secret(json_object_get(c, "secret"), &name, &cfg, &err);
        if (want_err != NULL) {
            if (rc != -1 || strstr(err.message, want_err) == NULL)
                fail_msg("%s: rc %d, error \"%s\", want \"%s\"", what, rc, err.message, want_err);
        } else if (rc != 0 || strcmp(cfg.server, json_string_value(json_object_get(c, "server"))) != 0) {
            fail_msg("%s: rc %d (%s), server %s", what, rc, err.message, cfg.server != NULL ? cfg.server : "(none)");
        }
        if (want_name == NULL ? name != NULL : name == NULL || strcmp(name, want_name) != 0)
            fail_msg("%s: name %s, want %s", what, name != NULL ? name : "(none)", want_name != NULL ? want_name : "(none)");
        free(name);
        kubeconfig_finish(&cfg);
    }
    json_decref(cases);
}

/* The fixture Secret whose case is what (borrowed). */
static const json_t *fixture_secret(json_t *cases, const char *what)
{
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "what")), what) == 0)
            return json_object_get(c, "secret");
    }
    fail_msg("no fixture %s", what);
    return NULL;
}

#define GOOD "a whole kubeconfig, token inline"
#define EXEC "an exec plugin"

/* A new copy of the fixture Secret what, named name, with the label label (NULL: the fixture's). */
static json_t *secret_as(json_t *cases, const char *what, const char *name, const char *label)
{
    json_t *s = json_deep_copy(fixture_secret(cases, what));
    json_t *meta = json_object_get(s, "metadata");
    json_object_set_new(meta, "name", json_string(name));
    if (label != NULL)
        json_object_set_new(meta, "labels", json_pack("{s:s}", NAMES_LABEL_WORKER_CLUSTER, label));
    return s;
}

static void test_registry(void **state)
{
    (void)state;
    json_t *cases = fixture_json("dispatchworkers/secrets.json");
    struct dispatchworkers ws;
    dispatchworkers_init(&ws, &opts, NULL, NULL);
    json_t *good = secret_as(cases, GOOD, "worker-a", "a");
    struct dispatch_worker *w = dispatchworkers_apply_secret(&ws, good);
    assert_non_null(w);
    assert_non_null(w->client);
    assert_int_equal(w->up, 0);
    assert_ptr_equal(dispatchworkers_get(&ws, "a"), w);
    /* Listed again unchanged (our own annotation changed its resourceVersion): the same worker, its view kept. */
    json_object_set_new(json_object_get(good, "metadata"), "resourceVersion", json_string("8"));
    assert_ptr_equal(dispatchworkers_apply_secret(&ws, good), w);
    /* Another Secret claiming the name is ignored while the first holds it. */
    json_t *dup = secret_as(cases, GOOD, "worker-a2", "a");
    assert_null(dispatchworkers_apply_secret(&ws, dup));
    assert_ptr_equal(dispatchworkers_get(&ws, "a"), w);
    assert_string_equal(w->secret_name, "worker-a");
    /* Its kubeconfig broken: the worker is made again, down with the reason, without a client. */
    json_t *broken = secret_as(cases, EXEC, "worker-a", "a");
    w = dispatchworkers_apply_secret(&ws, broken);
    assert_non_null(w);
    assert_null(w->client);
    assert_int_equal(w->up, 0);
    assert_non_null(strstr(w->status, "data.kubeconfig: "));
    assert_int_equal(ws.len, 1);
    json_decref(broken);
    json_decref(dup);
    json_decref(good);
    dispatchworkers_finish(&ws);
    json_decref(cases);
}

/* A worker that stays down for the same reason keeps one status: libcurl's elapsed time is dropped. */
static void test_steady_status(void **state)
{
    (void)state;
    json_t *cases = fixture_json("dispatchworkers/secrets.json");
    struct dispatchworkers ws;
    dispatchworkers_init(&ws, &opts, NULL, NULL);
    json_t *good = secret_as(cases, GOOD, "worker-a", "a");
    struct dispatch_worker *w = dispatchworkers_apply_secret(&ws, good);
    dispatchworkers_set_state(&ws, w, 0, "GET /api/v1/nodes: Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect");
    char first[DISPATCHWORKERS_STATUS_MAX];
    snprintf(first, sizeof(first), "%s", w->status);
    dispatchworkers_set_state(&ws, w, 0,
                              "GET /api/v1/nodes: Failed to connect to 127.0.0.1 port 1 after 3001 ms: Couldn't connect");
    assert_string_equal(w->status, first);
    assert_string_equal(w->status, "GET /api/v1/nodes: Failed to connect to 127.0.0.1 port 1: Couldn't connect");
    dispatchworkers_set_state(&ws, w, 0, "it stopped after 3 tries");
    assert_string_equal(w->status, "it stopped after 3 tries");
    json_decref(good);
    dispatchworkers_finish(&ws);
    json_decref(cases);
}

/* Requests in the fake's log with method and exact target. */
static size_t count(struct fake *f, const char *method, const char *target)
{
    json_t *log = fake_log(f);
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(log); i++)
        if (strcmp(log_field(log, i, "method"), method) == 0 && strcmp(log_field(log, i, "target"), target) == 0)
            n++;
    json_decref(log);
    return n;
}

/* The body of the last request with method and target (new), or NULL. */
static json_t *last_body(struct fake *f, const char *method, const char *target)
{
    json_t *log = fake_log(f), *body = NULL;
    for (size_t i = 0; i < json_array_size(log); i++)
        if (strcmp(log_field(log, i, "method"), method) == 0 && strcmp(log_field(log, i, "target"), target) == 0) {
            json_decref(body);
            body = json_loads(log_field(log, i, "body"), 0, NULL);
        }
    json_decref(log);
    return body;
}

static const char *status_written(json_t *patch)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(patch, "metadata"), "annotations"), DISPATCHWORKERS_ANNOTATION_STATUS));
}

/* Two Secrets, one broken: sync, report once per change, the gauge; a Secret gone drops its worker. */
static void test_sync_report(void **state)
{
    (void)state;
    json_t *cases = fixture_json("dispatchworkers/secrets.json");
    json_t *st = fake_cluster_state_new();
    json_t *good = secret_as(cases, GOOD, "worker-a", "a"), *bad = secret_as(cases, EXEC, "worker-b", "b");
    fake_cluster_add(st, SECRETS, good);
    fake_cluster_add(st, SECRETS, bad);
    struct kube_client *k;
    struct fake *f = fake_cluster_start(st, &k, NULL);
    struct metrics_registry *reg = metrics_registry_create();
    struct dispatchworkers ws;
    dispatchworkers_init(&ws, &opts, k, reg);
    struct error err = {{0}};
    assert_int_equal(dispatchworkers_sync(&ws, &err), 0);
    assert_int_equal(ws.len, 2);
    struct dispatch_worker *a = dispatchworkers_get(&ws, "a");
    dispatchworkers_set_state(&ws, a, 1, NULL);
    dispatchworkers_report(&ws, "2026-11-26T06:00:00Z");
    json_t *pa = last_body(f, "PATCH", SECRETS "/worker-a"), *pb = last_body(f, "PATCH", SECRETS "/worker-b");
    assert_string_equal(status_written(pa), "up");
    assert_non_null(strstr(status_written(pb), "data.kubeconfig: "));
    assert_int_equal(count(f, "POST", "/api/v1/namespaces/raygate-system/events"), 2);
    /* Nothing changed: nothing written. Then a goes down: one more patch and Event. */
    dispatchworkers_report(&ws, "2026-11-26T06:00:02Z");
    assert_int_equal(count(f, "PATCH", SECRETS "/worker-a"), 1);
    dispatchworkers_set_state(&ws, a, 0, "connection refused");
    dispatchworkers_report(&ws, "2026-11-26T06:00:04Z");
    assert_int_equal(count(f, "PATCH", SECRETS "/worker-a"), 2);
    assert_int_equal(count(f, "POST", "/api/v1/namespaces/raygate-system/events"), 3);
    char *text = metrics_render(reg, NULL);
    assert_non_null(strstr(text, "raygate_worker_up{cluster=\"a\"} 0"));
    assert_non_null(strstr(text, "raygate_worker_up{cluster=\"b\"} 0"));
    free(text);
    /* worker-b's Secret deleted: b is dropped, and its series with it. */
    pthread_mutex_lock(&f->lock);
    json_array_remove(json_object_get(json_object_get(st, "lists"), SECRETS), 1);
    pthread_mutex_unlock(&f->lock);
    assert_int_equal(dispatchworkers_sync(&ws, &err), 0);
    assert_int_equal(ws.len, 1);
    assert_null(dispatchworkers_get(&ws, "b"));
    text = metrics_render(reg, NULL);
    assert_null(strstr(text, "cluster=\"b\""));
    free(text);
    json_decref(pa);
    json_decref(pb);
    dispatchworkers_finish(&ws);
    metrics_registry_destroy(reg);
    json_decref(good);
    json_decref(bad);
    fake_cluster_stop(f, k, st);
    json_decref(cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_cases),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_steady_status),
        cmocka_unit_test(test_sync_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
