/*
 * gate/controller.c against the fake API server of fakeapi.h, the whole
 * controller on a small cluster (admit/queue-walkthrough: two gangs, room for
 * one): the admitted gang's admitted-at PATCH precedes its gate removals, the
 * other waits and is told so; a replica that does not lead writes nothing;
 * a create that fails returns NULL and destroys only what it initialised;
 * the eviction jitter's seed is defined however long the host has been up.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "controller.h"
#include "hyperwatch.h"
#include "fakeapi.h"
#include "fixtures.h"
#include "podgroup.h"
#include "status.h"

/* ---- every mutex destroyed was initialised: pthread_mutex_init/destroy interposed while tracking ---- */

#define MAX_TRACKED 256
static atomic_int tracking;
static atomic_flag track_lock = ATOMIC_FLAG_INIT;
static void *inited[MAX_TRACKED];
static int ninited, bad_destroys;

static void *real_fn(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    int (*real)(pthread_mutex_t *, const pthread_mutexattr_t *);
    void *p = real_fn("pthread_mutex_init");
    memcpy(&real, &p, sizeof(real));
    if (atomic_load(&tracking)) {
        while (atomic_flag_test_and_set(&track_lock))
            ;
        if (ninited < MAX_TRACKED)
            inited[ninited++] = m;
        atomic_flag_clear(&track_lock);
    }
    return real(m, a);
}

int pthread_mutex_destroy(pthread_mutex_t *m)
{
    int (*real)(pthread_mutex_t *);
    void *p = real_fn("pthread_mutex_destroy");
    memcpy(&real, &p, sizeof(real));
    if (atomic_load(&tracking)) {
        while (atomic_flag_test_and_set(&track_lock))
            ;
        int known = 0;
        for (int i = 0; i < ninited && !known; i++)
            known = inited[i] == m;
        bad_destroys += !known;
        atomic_flag_clear(&track_lock);
    }
    return real(m);
}

/* ---- the world: a fake cluster, a client, a registry ---- */

#define RC_PATH "/apis/ray.io/v1/namespaces/default/rayclusters/"
#define POD_PATH "/api/v1/namespaces/default/pods/"

struct world {
    json_t *state;
    struct fake *f;
    struct kube_client *k;
    struct metrics_registry *reg;
    struct controller *c;
    pthread_t runner;
};

static void serve(json_t *state)
{
    json_t *fx = fixture_json("admit/queue-walkthrough.json");
    fake_cluster_serve(state, fx);
    json_decref(fx);
    json_object_set_new(json_object_get(state, "get"), STATUS_VOLCANO_API,
                        json_pack("{s:[{s:s},{s:s}]}", "resources", "name", "queues", "name", "queues/status"));
}

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    w->state = fake_cluster_state_new();
    serve(w->state);
    w->f = fake_cluster_start(w->state, &w->k, NULL);
    w->reg = metrics_registry_create();
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    metrics_registry_destroy(w->reg);
    fake_cluster_stop(w->f, w->k, w->state);
    free(w);
    return 0;
}

static void *run_main(void *arg)
{
    controller_run(arg);
    return NULL;
}

static void start(struct world *w, struct leader *leader)
{
    struct controller_options o = {
        .resync_ms = 60000,
        .debounce_ms = 1,
        .fault_exit_after_ungates = -1,
        .fault_exit_after_evict_deletes = -1,
        .preemption = 1,
        .instance = "test",
        .leader = leader,
    };
    evict_config_default(&o.evict);
    w->c = controller_create(w->k, w->reg, &o);
    assert_non_null(w->c);
    struct error err = {{0}};
    assert_int_equal(controller_start(w->c, &err), 0);
    assert_int_equal(pthread_create(&w->runner, NULL, run_main, w->c), 0);
}

static void stop(struct world *w)
{
    controller_stop(w->c);
    pthread_join(w->runner, NULL);
    controller_destroy(w->c);
    w->c = NULL;
}

/* The index in log of the first request with method and target, or -1. */
static long find(json_t *log, const char *method, const char *target)
{
    for (size_t i = 0; i < json_array_size(log); i++) {
        if (strcmp(log_field(log, i, "method"), method) == 0 && strcmp(log_field(log, i, "target"), target) == 0)
            return (long)i;
    }
    return -1;
}

/* Whether an Event with reason about name was posted. */
static int event_posted(json_t *log, const char *reason, const char *name)
{
    for (size_t i = 0; i < json_array_size(log); i++) {
        if (strcmp(log_field(log, i, "target"), "/api/v1/namespaces/default/events") != 0)
            continue;
        json_t *ev = json_loads(log_field(log, i, "body"), 0, NULL);
        int match = strcmp(json_string_value(json_object_get(ev, "reason")), reason) == 0 &&
                    strcmp(json_string_value(json_object_get(json_object_get(ev, "involvedObject"), "name")), name) == 0;
        json_decref(ev);
        if (match)
            return 1;
    }
    return 0;
}

static void test_admits_gang_record_first(void **state)
{
    struct world *w = *state;
    start(w, NULL);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", POD_PATH "test-cluster-0-", 3, 10000), 3);
    assert_true(fake_wait_requests(w->f, "POST", "/api/v1/namespaces/default/events", 2, 5000) >= 2);
    stop(w);

    json_t *log = fake_log(w->f);
    long record = find(log, "PATCH", RC_PATH "test-cluster-0");
    assert_true(record >= 0);
    json_t *body = json_loads(log_field(log, (size_t)record, "body"), 0, NULL);
    json_t *ann = json_object_get(json_object_get(body, "metadata"), "annotations");
    assert_non_null(json_object_get(ann, "raygate.io/admitted-at"));
    json_decref(body);
    static const char *const pods[] = {"test-cluster-0-head", "test-cluster-0-worker-worker-a", "test-cluster-0-worker-worker-b"};
    for (size_t i = 0; i < 3; i++) {
        char target[256];
        snprintf(target, sizeof(target), POD_PATH "%s", pods[i]);
        long at = find(log, "PATCH", target);
        assert_true(at > record);
    }
    /* The other gang does not fit: no record, no gate removed, and it is told why. */
    assert_int_equal(find(log, "PATCH", RC_PATH "test-cluster-1"), -1);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", POD_PATH "test-cluster-1-", 0, 0), 0);
    assert_true(event_posted(log, "GangAdmitted", "test-cluster-0"));
    assert_true(event_posted(log, "GangWaiting", "test-cluster-1"));
    json_decref(log);
    char *text = metrics_render(w->reg, NULL);
    assert_non_null(strstr(text, "raygate_gangs_admitted_total{queue=\"kuberay-test-queue\"} 1\n"));
    free(text);
}

/* An invalid HyperNode: a Warning Event on it, in namespace default, naming the field; admission goes on. */
static void test_invalid_hypernode_event(void **state)
{
    struct world *w = *state;
    pthread_mutex_lock(&w->f->lock);
    json_object_set_new(json_object_get(w->state, "get"), HYPERWATCH_API,
                        json_pack("{s:[{s:s}]}", "resources", "name", "hypernodes"));
    json_object_set_new(json_object_get(w->state, "lists"), HYPERWATCH_API "/hypernodes",
                        json_pack("[{s:{s:s, s:s}, s:{s:i, s:[{s:s, s:{s:{s:s}}}]}}]", "metadata", "name", "bad", "uid", "u-1",
                                  "spec", "tier", 1, "members", "type", "Node", "selector", "regexMatch", "pattern", "node-(["));
    pthread_mutex_unlock(&w->f->lock);
    start(w, NULL);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", POD_PATH "test-cluster-0-", 3, 10000), 3);
    assert_true(fake_wait_requests(w->f, "POST", "/api/v1/namespaces/default/events", 3, 5000) >= 3);
    stop(w);
    json_t *log = fake_log(w->f);
    assert_true(event_posted(log, "InvalidHyperNode", "bad"));
    int named = 0;
    for (size_t i = 0; i < json_array_size(log); i++) {
        const char *body = log_field(log, i, "body");
        named |= body != NULL && strstr(body, "InvalidHyperNode") != NULL &&
                 strstr(body, "spec.members[0].selector.regexMatch.pattern") != NULL;
    }
    assert_true(named);
    json_decref(log);
}

/* A replica that does not lead keeps its caches warm and writes nothing. */
static void test_not_leading_writes_nothing(void **state)
{
    struct world *w = *state;
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", w->f->port);
    struct kubeconfig cfg;
    kubeconfig_init(&cfg);
    cfg.server = strdup(server);
    cfg.token = strdup("t");
    struct leader_options lo = {.namespace_ = "raygate-system", .name = "raygate-gate", .identity = "test"};
    struct error err = {{0}};
    struct leader *l = leader_create(&cfg, &lo, &err); /* never started: never leads */
    kubeconfig_finish(&cfg);
    assert_non_null(l);
    start(w, l);
    for (int i = 0; i < 500 && !controller_synced(w->c); i++)
        usleep(10 * 1000);
    assert_true(controller_synced(w->c));
    usleep(300 * 1000); /* a leader would have admitted by now (the test above: well under this) */
    stop(w);
    leader_destroy(l);
    assert_int_equal(fake_wait_requests(w->f, NULL, "/", 0, 0), 0);
    char *text = metrics_render(w->reg, NULL);
    assert_non_null(strstr(text, "raygate_leader 0\n"));
    free(text);
}

/*
 * controller_create failing (no file descriptor left for its eventfd) returns
 * NULL, and its unwinding destroys only what it initialised: it used to
 * destroy its mutex before initialising it.
 */
static void test_create_fails_cleanly(void **state)
{
    struct world *w = *state;
    struct controller_options o = {.fault_exit_after_ungates = -1, .fault_exit_after_evict_deletes = -1};
    evict_config_default(&o.evict);
    struct rlimit was;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    int lowest = dup(0); /* the next descriptor the process gets */
    assert_true(lowest >= 0);
    close(lowest);
    struct rlimit none = {.rlim_cur = (rlim_t)lowest, .rlim_max = was.rlim_max};
    atomic_store(&tracking, 1);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
    struct controller *c = controller_create(w->k, w->reg, &o);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    atomic_store(&tracking, 0);
    assert_null(c);
    assert_int_equal(bad_destroys, 0);
}

/*
 * The eviction jitter's seed after 50 days of uptime and at the monotonic
 * clock's last ms: the hash wraps as unsigned arithmetic does, where the
 * signed product it was overflowed after about 40 days (undefined: the
 * sanitizer build with clang aborts on it; GCC narrows the product to 32
 * bits before its check, and sees nothing).
 */
static void test_jitter_seed_long_uptime(void **state)
{
    (void)state;
    const long long day_ms = 86400000LL;
    assert_int_equal(controller_jitter_seed(0, 0), 0);
    assert_int_equal(controller_jitter_seed(0, 50 * day_ms), 3662706688u);             /* 4320000000 * 2654435761 mod 2^32 */
    assert_int_equal(controller_jitter_seed(1767225600000, 50 * day_ms), 2894778368u); /* xor the wall's low 32 bits */
    assert_int_equal(controller_jitter_seed(0, LLONG_MAX), 1640531535u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_admits_gang_record_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_hypernode_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_leading_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_fails_cleanly, setup, teardown),
        cmocka_unit_test(test_jitter_seed_long_uptime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
