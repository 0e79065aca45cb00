/*
 * gate/status/heldnudge.c against the fake API server of fakeapi.h
 * (heldnudge/resumed.json: two held RayClusters admitted and resumed, no pod
 * yet): one merge patch of raygate.io/held-resumed per RayCluster and
 * admission; never twice for the same held generation, however often the
 * RayCluster is seen again, until it is forgotten; a new admission nudged
 * again; none while a real pod exists; nothing written while not leading; a
 * write that failed not tried again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cache.h"
#include "cacheguard.h"
#include "fakeapi.h"
#include "fixtures.h"
#include "heldnudge.h"
#include "names.h"

#define RC_PREFIX "/apis/ray.io/v1/namespaces/"

/* The fake's state (f->arg): {"patches": [{path, content_type, body}], "script": [status codes of the next PATCHes]}. */
static int handler(struct fake *f, const struct fake_req *req)
{
    json_t *st = f->arg;
    pthread_mutex_lock(&f->lock);
    int code = 404;
    if (strcmp(req->method, "PATCH") == 0 && starts_with(req->target, RC_PREFIX)) {
        json_t *script = json_object_get(st, "script");
        code = json_array_size(script) > 0 ? (int)json_integer_value(json_array_get(script, 0)) : 200;
        json_array_remove(script, 0);
        json_array_append_new(json_object_get(st, "patches"),
                              json_pack("{s:s, s:s, s:o*}", "path", req->target, "content_type", req->content_type, "body",
                                        json_loadb(req->body, req->body_len, 0, NULL)));
    }
    pthread_mutex_unlock(&f->lock);
    if (code == 200)
        respond_json(req, 200, NULL, json_pack("{s:s}", "kind", "RayCluster"));
    else
        respond_status(req, code, "Failed", "scripted", NULL);
    return 0;
}

static int leading;
static int may_write(void *arg)
{
    (void)arg;
    return leading;
}

struct world {
    json_t *fx;
    json_t *st;
    struct fake *f;
    struct kube_client *k;
    struct cache *cache;
    struct cacheguard *guard;
    struct heldnudge *n;
};

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    w->fx = fixture_json("heldnudge/resumed.json");
    w->st = json_pack("{s:[], s:[]}", "patches", "script");
    w->f = fake_start(handler, w->st);
    w->k = client_for(w->f, "tok", NULL, NULL);
    w->cache = cache_create();
    w->guard = cacheguard_create();
    w->n = heldnudge_create();
    leading = 1;
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    heldnudge_destroy(w->n);
    cacheguard_destroy(w->guard);
    cache_destroy(w->cache);
    kube_client_destroy(w->k);
    fake_stop(w->f);
    json_decref(w->st);
    json_decref(w->fx);
    free(w);
    return 0;
}

/* The fixture's RayCluster i (new reference), at generation gen, admitted at gen (its held generation). */
static json_t *cluster_at(struct world *w, size_t i, int64_t gen)
{
    json_t *rc = json_deep_copy(json_array_get(json_object_get(w->fx, "rayclusters"), i));
    json_t *meta = json_object_get(rc, "metadata");
    json_object_set_new(meta, "generation", json_integer(gen));
    json_object_set_new(json_object_get(meta, "annotations"), NAMES_ANNOTATION_HELD_GENERATION,
                        json_sprintf("%lld", (long long)gen));
    return rc;
}

/* As the watch does: RayCluster rc (borrowed) put in the cache, then observed, under the guard. */
static void observe(struct world *w, const json_t *rc)
{
    struct error err = {{0}};
    cacheguard_lock(w->guard);
    assert_int_equal(cache_upsert_raycluster(w->cache, rc, &err), 0);
    heldnudge_observe(w->n, w->cache, rc);
    cacheguard_unlock(w->guard);
}

static void observe_at(struct world *w, size_t i, int64_t gen)
{
    json_t *rc = cluster_at(w, i, gen);
    observe(w, rc);
    json_decref(rc);
}

static size_t send_all(struct world *w)
{
    return heldnudge_send(w->n, w->k, w->guard, may_write, NULL);
}

static size_t npatches(struct world *w)
{
    pthread_mutex_lock(&w->f->lock);
    size_t n = json_array_size(json_object_get(w->st, "patches"));
    pthread_mutex_unlock(&w->f->lock);
    return n;
}

/*
 * PATCH i (a copy, new reference, taken under the fake's lock so that a failed
 * assertion does not leave it held): its path, asserted a merge patch of the
 * one annotation; the held generation it nudges at into *resumed (borrowed
 * from *copy).
 */
static const char *patch_at(struct world *w, size_t i, json_t **copy, const char **resumed)
{
    pthread_mutex_lock(&w->f->lock);
    *copy = json_deep_copy(json_array_get(json_object_get(w->st, "patches"), i));
    pthread_mutex_unlock(&w->f->lock);
    assert_non_null(*copy);
    assert_string_equal(json_string_value(json_object_get(*copy, "content_type")), kube_patch_content_type(KUBE_PATCH_MERGE));
    const json_t *body = json_object_get(*copy, "body");
    assert_int_equal(json_object_size(body), 1);
    const json_t *ann = json_object_get(json_object_get(body, "metadata"), "annotations");
    assert_int_equal(json_object_size(ann), 1);
    *resumed = json_string_value(json_object_get(ann, NAMES_ANNOTATION_HELD_RESUMED));
    return json_string_value(json_object_get(*copy, "path"));
}

static void script(struct world *w, int code)
{
    pthread_mutex_lock(&w->f->lock);
    json_array_append_new(json_object_get(w->st, "script"), json_integer(code));
    pthread_mutex_unlock(&w->f->lock);
}

/* Each RayCluster nudged once per admission, however often it is seen before the watch shows the nudge. */
static void test_once_per_cluster_and_admission(void **state)
{
    struct world *w = *state;
    const char *resumed;
    json_t *pa, *pb, *pc;
    assert_int_equal(send_all(w), 0); /* nothing recorded */
    observe_at(w, 0, 2);
    observe_at(w, 0, 2); /* a status update of KubeRay's before the nudge shows */
    observe_at(w, 1, 2);
    assert_int_equal(send_all(w), 2);
    assert_int_equal(npatches(w), 2);
    const char *a = patch_at(w, 0, &pa, &resumed);
    assert_string_equal(resumed, "2");
    const char *b = patch_at(w, 1, &pb, &resumed);
    assert_string_equal(resumed, "2");
    assert_true((strcmp(a, RC_PREFIX "default/rayclusters/held-0") == 0 && strcmp(b, RC_PREFIX "team-b/rayclusters/held-1") == 0) ||
                (strcmp(b, RC_PREFIX "default/rayclusters/held-0") == 0 && strcmp(a, RC_PREFIX "team-b/rayclusters/held-1") == 0));

    /* Sent: not again, neither by another send nor by seeing the same held generation again. */
    assert_int_equal(send_all(w), 0);
    observe_at(w, 0, 2);
    observe_at(w, 1, 2);
    assert_int_equal(send_all(w), 0);
    assert_int_equal(npatches(w), 2);

    /* Its next admission (evicted, its spec changed, admitted again at generation 3): nudged again, at 3. */
    observe_at(w, 0, 3);
    assert_int_equal(send_all(w), 1);
    assert_int_equal(npatches(w), 3);
    assert_string_equal(patch_at(w, 2, &pc, &resumed), RC_PREFIX "default/rayclusters/held-0");
    assert_string_equal(resumed, "3");
    json_decref(pa);
    json_decref(pb);
    json_decref(pc);
}

/* The record goes with the RayCluster: one deleted and made again under its name is nudged at its own admission. */
static void test_forget(void **state)
{
    struct world *w = *state;
    observe_at(w, 0, 2);
    assert_int_equal(send_all(w), 1);
    cacheguard_lock(w->guard);
    heldnudge_forget(w->n, "default", "held-0");
    cacheguard_unlock(w->guard);
    observe_at(w, 0, 2);
    assert_int_equal(send_all(w), 1);
    assert_int_equal(npatches(w), 2);

    /* Forgotten before it was sent: nothing written. */
    observe_at(w, 1, 2);
    cacheguard_lock(w->guard);
    heldnudge_forget(w->n, "team-b", "held-1");
    cacheguard_unlock(w->guard);
    assert_int_equal(send_all(w), 0);
    assert_int_equal(npatches(w), 2);
}

/* KubeRay made a real pod already (it took the resume in at once): no nudge. */
static void test_real_pod_not_nudged(void **state)
{
    struct world *w = *state;
    struct error err = {{0}};
    assert_int_equal(cache_upsert_pod(w->cache, json_object_get(w->fx, "head_pod"), &err), 0);
    observe_at(w, 0, 2);
    observe_at(w, 1, 2); /* held-1 has none */
    assert_int_equal(send_all(w), 1);
    const char *resumed;
    json_t *p;
    assert_string_equal(patch_at(w, 0, &p, &resumed), RC_PREFIX "team-b/rayclusters/held-1");
    assert_string_equal(resumed, "2");
    json_decref(p);
}

/* Not leading: nothing written. */
static void test_not_leading(void **state)
{
    struct world *w = *state;
    observe_at(w, 0, 2);
    leading = 0;
    assert_int_equal(send_all(w), 0);
    assert_int_equal(npatches(w), 0);
}

/* A write that fails is not tried again (KubeRay's requeue comes anyway), nor asked again by the same generation. */
static void test_failed_not_retried(void **state)
{
    struct world *w = *state;
    script(w, 500);
    observe_at(w, 0, 2);
    assert_int_equal(send_all(w), 0);
    assert_int_equal(npatches(w), 1);
    assert_int_equal(send_all(w), 0);
    observe_at(w, 0, 2);
    assert_int_equal(send_all(w), 0);
    assert_int_equal(npatches(w), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_once_per_cluster_and_admission, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_pod_not_nudged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_leading, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_not_retried, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
