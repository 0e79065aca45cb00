/*
 * gate/apply/apply.c against the fake API server of fakeapi.h, on a cache loaded
 * from an admit fixture (queue-walkthrough: test-cluster-0 admitted,
 * test-cluster-1 waits): the plan tells the waiting gang's pods once; an
 * accepted record is followed by the gates and the cache learns both; a
 * refused record (409: the RayCluster changed) removes no gate and the cache
 * does not believe the admission; not leading, nothing is written. An
 * admission's record carries where a topology-constrained gang was placed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "apply.h"
#include "cachefixture.h"
#include "fakeapi.h"
#include "fixtures.h"
#include "names.h"
#include "topology.h"
#include "util.h"

#define RC0 "/apis/ray.io/v1/namespaces/default/rayclusters/test-cluster-0"

struct world {
    json_t *state;
    struct fake *f;
    struct kube_client *k;
    struct metrics_registry *reg;
    struct cacheguard *guard;
    struct cache *cache;
    struct admit *admit;
    struct admit_result res;
    struct apply *apply;
    atomic_bool stopping;
    int leading;
};

static int leading(void *arg)
{
    return ((struct world *)arg)->leading;
}

/* An apply on w's client and registry, leading as w says, its Warnings after settle_ms (0: at once). */
static struct apply *apply_for(struct world *w, long long settle_ms)
{
    struct apply_config cfg = {
        .client = w->k,
        .reg = w->reg,
        .instance = "test",
        .may_write = leading,
        .arg = w,
        .stopping = &w->stopping,
        .settle_ms = settle_ms,
    };
    return apply_create(&cfg);
}

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    w->state = fake_cluster_state_new();
    w->f = fake_cluster_start(w->state, &w->k, NULL);
    w->reg = metrics_registry_create();
    w->guard = cacheguard_create();
    json_t *fx = fixture_json("admit/queue-walkthrough.json");
    w->cache = cachefixture_load(fx, 0);
    json_decref(fx);
    w->admit = admit_create(w->cache);
    admit_result_init(&w->res);
    w->leading = 1;
    w->apply = apply_for(w, 0); /* Warnings at once */
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    apply_destroy(w->apply);
    admit_result_finish(&w->res);
    admit_destroy(w->admit);
    cache_destroy(w->cache);
    cacheguard_destroy(w->guard);
    metrics_registry_destroy(w->reg);
    fake_cluster_stop(w->f, w->k, w->state);
    free(w);
    return 0;
}

/*
 * One pass as the controller runs it: decided and planned under the lock, carried out without it, its ADMITs given
 * topology (NULL: none) as the record of where they were placed (topoconfine_record). Returns its result.
 */
static int pass_placed(struct world *w, const char *topology)
{
    struct apply_pass p;
    cacheguard_lock(w->guard);
    admit_result_finish(&w->res);
    admit_result_init(&w->res);
    admit_pass(w->admit, ADMIT_PASS_FULL, &w->res);
    for (size_t i = 0; i < w->res.len && topology != NULL; i++) {
        if (w->res.items[i].action == ADMIT_ACTION_ADMIT)
            w->res.items[i].topology = util_strdup(topology);
    }
    apply_plan(w->apply, &p, w->cache, &w->res, 0);
    cacheguard_unlock(w->guard);
    return apply_carry_out(w->apply, &p, w->guard, w->cache);
}

static int pass(struct world *w)
{
    return pass_placed(w, NULL);
}

/* The annotations of the one PATCH of test-cluster-0 (new reference); fails unless there is exactly one. */
static json_t *rc0_annotations(struct world *w)
{
    json_t *log = fake_log(w->f), *annotations = NULL;
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(log); i++) {
        if (strcmp(log_field(log, i, "method"), "PATCH") != 0 || strcmp(log_field(log, i, "target"), RC0) != 0)
            continue;
        json_t *body = json_loads(log_field(log, i, "body"), 0, NULL);
        annotations = json_incref(json_object_get(json_object_get(body, "metadata"), "annotations"));
        json_decref(body);
        n++;
    }
    json_decref(log);
    assert_int_equal(n, 1);
    return annotations;
}

static int pod_ungated_mark(struct world *w, const char *name)
{
    const struct cache_pod *p = cache_pod_get(w->cache, "default", name);
    assert_non_null(p);
    return (p->flags & CACHE_POD_MARKED_UNGATED) != 0;
}

/* How many GangWaiting Events were posted about object name ("x-": any whose name starts so; "": any). */
static size_t gang_waiting_on(struct world *w, const char *prefix)
{
    json_t *log = fake_log(w->f);
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(log); i++) {
        if (strcmp(log_field(log, i, "method"), "POST") != 0 ||
            !starts_with(log_field(log, i, "target"), "/api/v1/namespaces/default/events"))
            continue;
        json_t *ev = json_loads(log_field(log, i, "body"), 0, NULL);
        const char *name = json_string_value(json_object_get(json_object_get(ev, "involvedObject"), "name"));
        size_t len = strlen(prefix);
        int match = len == 0 || (prefix[len - 1] == '-' ? starts_with(name, prefix) : strcmp(name, prefix) == 0);
        if (strcmp(json_string_value(json_object_get(ev, "reason")), "GangWaiting") == 0 && match)
            n++;
        json_decref(ev);
    }
    json_decref(log);
    return n;
}

/* An apply whose Warnings settle for settle_ms, in place of setup's. */
static void settle(struct world *w, long long settle_ms)
{
    apply_destroy(w->apply);
    metrics_registry_destroy(w->reg);
    w->reg = metrics_registry_create();
    w->apply = apply_for(w, settle_ms);
}

/*
 * A wait is told once it has lasted the settle time: not at the pass that
 * first reported it (carry_out asks for a pass later), but at a pass after it,
 * once, on the RayCluster and the head.
 */
static void test_wait_told_once_settled(void **state)
{
    struct world *w = *state;
    settle(w, 300);
    assert_int_equal(pass(w), -1); /* test-cluster-1 waits, not told yet: a pass is wanted */
    assert_int_equal(gang_waiting_on(w, "test-cluster-1"), 0);
    usleep(350 * 1000);
    assert_int_equal(pass(w), 0);
    assert_int_equal(gang_waiting_on(w, "test-cluster-1"), 1);
    assert_int_equal(gang_waiting_on(w, "test-cluster-1-head"), 1);
    assert_int_equal(gang_waiting_on(w, ""), 2);
    assert_int_equal(pass(w), 0);
    assert_int_equal(gang_waiting_on(w, ""), 2);
}

/* A gang admitted before its wait settled gets no Warning. */
static void test_admitted_before_settled_not_told(void **state)
{
    struct world *w = *state;
    settle(w, 60000);
    assert_int_equal(pass(w), -1);
    cacheguard_lock(w->guard);
    cache_delete_raycluster(w->cache, "default", "test-cluster-0");
    const char *pods[] = {"test-cluster-0-head", "test-cluster-0-worker-worker-a", "test-cluster-0-worker-worker-b"};
    for (size_t i = 0; i < 3; i++)
        cache_delete_pod(w->cache, "default", pods[i]);
    cacheguard_unlock(w->guard);
    assert_int_equal(pass(w), 0); /* test-cluster-1 admitted: nothing left to tell */
    assert_true(cache_gang_get(w->cache, "default", "test-cluster-1")->admitted);
    assert_int_equal(gang_waiting_on(w, ""), 0);
}

static void test_record_then_gates_then_cache(void **state)
{
    struct world *w = *state;
    assert_int_equal(pass(w), 0);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", RC0, 0, 0), 1);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", "/api/v1/namespaces/default/pods/test-cluster-0-", 0, 0), 3);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", "/api/v1/namespaces/default/pods/test-cluster-1-", 0, 0), 0);
    assert_true(cache_gang_get(w->cache, "default", "test-cluster-0")->admitted);
    assert_false(cache_gang_get(w->cache, "default", "test-cluster-1")->admitted);
    assert_true(pod_ungated_mark(w, "test-cluster-0-head"));
    assert_false(pod_ungated_mark(w, "test-cluster-1-head"));
    json_t *ann = rc0_annotations(w); /* no topology: an older admission's record is cleared */
    assert_true(json_is_string(json_object_get(ann, NAMES_ANNOTATION_ADMITTED)));
    assert_true(json_is_null(json_object_get(ann, TOPOLOGY_PLACED)));
    json_decref(ann);
    assert_null(cache_gang_get(w->cache, "default", "test-cluster-0")->topo_placed);
    /* The waiting gang's RayCluster and its head pod are told (not its workers), and the admission on its RayCluster:
       3 Events. */
    size_t events = fake_wait_requests(w->f, "POST", "/api/v1/namespaces/default/events", 0, 0);
    assert_int_equal(events, 3);
    assert_int_equal(gang_waiting_on(w, "test-cluster-1"), 1);
    assert_int_equal(gang_waiting_on(w, "test-cluster-1-head"), 1);
    assert_int_equal(gang_waiting_on(w, "test-cluster-1-worker-"), 0);
    /* Again: the admitted gang is done, the waiting one was told already (again only on a change). */
    assert_int_equal(pass(w), 0);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", RC0, 0, 0), 1);
    assert_int_equal(fake_wait_requests(w->f, "POST", "/api/v1/namespaces/default/events", 0, 0), events);
}

/* A topology-constrained gang: where it was placed is recorded in the admission's own patch, and the cache learns it. */
static void test_record_topology(void **state)
{
    struct world *w = *state;
    const char *placed = "{\"gang\":\"rack-a\",\"slice/tpu-x\":\"rack-b\"}";
    assert_int_equal(pass_placed(w, placed), 0);
    json_t *ann = rc0_annotations(w);
    assert_true(json_is_string(json_object_get(ann, NAMES_ANNOTATION_ADMITTED)));
    assert_string_equal(json_string_value(json_object_get(ann, TOPOLOGY_PLACED)), placed);
    json_decref(ann);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", "/api/v1/namespaces/default/pods/test-cluster-0-", 0, 0), 3);
    const struct cache_gang *g = cache_gang_get(w->cache, "default", "test-cluster-0");
    assert_true(g->admitted);
    assert_string_equal(g->topo_placed, placed);
}

/* The RayCluster changed since the decision (409): no gate goes, and the cache still sees a waiting gang. */
static void test_refused_record(void **state)
{
    struct world *w = *state;
    json_object_set_new(json_object_get(w->state, "script"), RC0, json_pack("[i]", 409));
    assert_int_equal(pass(w), 0); /* decided again at the next pass, from what the watch brings */
    assert_int_equal(fake_wait_requests(w->f, "PATCH", RC0, 0, 0), 1);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", "/api/v1/namespaces/default/pods/", 0, 0), 0);
    assert_false(cache_gang_get(w->cache, "default", "test-cluster-0")->admitted);
    assert_false(pod_ungated_mark(w, "test-cluster-0-head"));
}

/* A failed record (500s) is retried soon: carry_out says so. */
static void test_failed_record_retries(void **state)
{
    struct world *w = *state;
    kube_client_destroy(w->k);
    struct kube_client_options o = {.backoff_base_ms = 1, .backoff_max_ms = 1};
    w->k = client_for(w->f, "t", NULL, &o);
    apply_destroy(w->apply);
    metrics_registry_destroy(w->reg);
    w->reg = metrics_registry_create();
    w->apply = apply_for(w, 0); /* Warnings at once */
    json_object_set_new(json_object_get(w->state, "script"), RC0,
                        json_pack("[i,i,i,i,i,i,i,i]", 500, 500, 500, 500, 500, 500, 500, 500));
    assert_int_equal(pass(w), -1);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", "/api/v1/namespaces/default/pods/", 0, 0), 0);
    assert_false(cache_gang_get(w->cache, "default", "test-cluster-0")->admitted);
}

static void test_not_leading(void **state)
{
    struct world *w = *state;
    w->leading = 0;
    assert_int_equal(pass(w), 0);
    assert_int_equal(fake_wait_requests(w->f, NULL, "/", 0, 0), 0);
    assert_false(cache_gang_get(w->cache, "default", "test-cluster-0")->admitted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_record_then_gates_then_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_topology, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_told_once_settled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admitted_before_settled_not_told, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_record_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_leading, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
