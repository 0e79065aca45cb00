/*
 * gate/apply.c against the fake API server of fakeapi.h, on a cache loaded
 * from an admit fixture (queue-walkthrough: test-cluster-0 admitted,
 * test-cluster-1 waits): the plan tells the waiting gang's pods once; an
 * accepted record is followed by the gates and the cache learns both; a
 * refused record (409: the RayCluster changed) removes no gate and the cache
 * does not believe the admission; not leading, nothing is written.
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

#define RC0 "/apis/ray.io/v1/namespaces/default/rayclusters/test-cluster-0"

struct world {
    json_t *state;
    struct fake *f;
    struct kube_client *k;
    struct metrics_registry *reg;
    pthread_mutex_t mu;
    struct cache *cache;
    struct admit *admit;
    struct admit_result res;
    struct apply *apply;
    volatile sig_atomic_t stopping;
    int leading;
};

static int leading(void *arg)
{
    return ((struct world *)arg)->leading;
}

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    w->state = fake_cluster_state_new();
    w->f = fake_cluster_start(w->state, &w->k, NULL);
    w->reg = metrics_registry_create();
    pthread_mutex_init(&w->mu, NULL);
    json_t *fx = fixture_json("admit/queue-walkthrough.json");
    w->cache = cachefixture_load(fx, 0);
    json_decref(fx);
    w->admit = admit_create(w->cache);
    admit_result_init(&w->res);
    w->leading = 1;
    struct apply_config cfg = {w->k, w->reg, "test", leading, w, &w->stopping};
    w->apply = apply_create(&cfg);
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
    pthread_mutex_destroy(&w->mu);
    metrics_registry_destroy(w->reg);
    fake_cluster_stop(w->f, w->k, w->state);
    free(w);
    return 0;
}

/* One pass as the controller runs it: decided and planned under the lock, carried out without it. Returns its result. */
static int pass(struct world *w)
{
    struct apply_pass p;
    pthread_mutex_lock(&w->mu);
    admit_result_finish(&w->res);
    admit_result_init(&w->res);
    admit_pass(w->admit, ADMIT_PASS_FULL, &w->res);
    apply_plan(w->apply, &p, w->cache, &w->res, 0);
    pthread_mutex_unlock(&w->mu);
    return apply_carry_out(w->apply, &p, &w->mu, w->cache);
}

static int pod_ungated_mark(struct world *w, const char *name)
{
    const struct cache_pod *p = cache_pod_get(w->cache, "default", name);
    assert_non_null(p);
    return (p->flags & CACHE_POD_MARKED_UNGATED) != 0;
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
    /* The waiting gang's RayCluster and its 3 pods are told, and the admission on its RayCluster: 5 Events. */
    size_t events = fake_wait_requests(w->f, "POST", "/api/v1/namespaces/default/events", 0, 0);
    assert_int_equal(events, 5);
    /* Again: the admitted gang is done, the waiting one's pods were told already (its RayCluster again only on a change). */
    assert_int_equal(pass(w), 0);
    assert_int_equal(fake_wait_requests(w->f, "PATCH", RC0, 0, 0), 1);
    assert_int_equal(fake_wait_requests(w->f, "POST", "/api/v1/namespaces/default/events", 0, 0), events);
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
    struct apply_config cfg = {w->k, w->reg, "test", leading, w, &w->stopping};
    w->apply = apply_create(&cfg);
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
        cmocka_unit_test_setup_teardown(test_refused_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_record_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_leading, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
