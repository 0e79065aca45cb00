/*
 * gate/lead/leaseseen.c against the fake API server of fakeapi.h: the sighting of
 * a dispatch lease recorded on its RayCluster once per change of the counter
 * (a merge PATCH with the uid as precondition), nothing written while not
 * leading (and written once leading), a failed write tried again by the next
 * sync, a RayCluster replaced (409) or gone (404) left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cache.h"
#include "fakeapi.h"
#include "fixtures.h"
#include "leaseseen.h"
#include "names.h"

#define RC_PATH "/apis/ray.io/v1/namespaces/default/rayclusters/test-cluster-0"

/* The fake's state (f->arg): {"patches": [bodies received], "script": [status codes of the next PATCHes]}. */
static int handler(struct fake *f, const struct fake_req *req)
{
    json_t *st = f->arg;
    pthread_mutex_lock(&f->lock);
    int code = 404;
    if (strcmp(req->method, "PATCH") == 0 && strcmp(req->target, RC_PATH) == 0) {
        json_t *script = json_object_get(st, "script");
        code = json_array_size(script) > 0 ? (int)json_integer_value(json_array_get(script, 0)) : 200;
        json_array_remove(script, 0);
        json_array_append_new(json_object_get(st, "patches"), json_loadb(req->body, req->body_len, 0, NULL));
    }
    pthread_mutex_unlock(&f->lock);
    if (code == 200)
        respond_json(req, 200, NULL, json_pack("{s:s}", "kind", "RayCluster"));
    else
        respond_status(req, code, code == 409 ? "Conflict" : "Failed", "scripted", NULL);
    return 0;
}

static int leading = 1;
static int may_write(void *arg)
{
    (void)arg;
    return leading;
}

/* The fixture's first RayCluster with a lease of counter, upserted at now_ms. */
static void upsert(struct cache *c, const json_t *fx, const char *counter, int64_t now_ms)
{
    json_t *rc = json_deep_copy(json_array_get(json_object_get(fx, "rayclusters"), 0));
    json_object_set_new(
        json_object_get(rc, "metadata"), "annotations",
        json_pack("{s:s, s:s}", NAMES_ANNOTATION_DISPATCH_LEASE, counter, NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS, "20"));
    struct error err = {{0}};
    cache_set_clock(c, now_ms);
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    json_decref(rc);
}

/* How many PATCHes the fake received; the last one's record and uid into *seen and *uid (borrowed until the next call). */
static size_t patches(struct fake *f, const char **seen, const char **uid)
{
    pthread_mutex_lock(&f->lock);
    const json_t *all = json_object_get(f->arg, "patches");
    const json_t *meta = json_object_get(json_array_get(all, json_array_size(all) - 1), "metadata");
    *seen = json_string_value(json_object_get(json_object_get(meta, "annotations"), NAMES_ANNOTATION_DISPATCH_LEASE_SEEN));
    *uid = json_string_value(json_object_get(meta, "uid"));
    size_t n = json_array_size(all);
    pthread_mutex_unlock(&f->lock);
    return n;
}

static void script(struct fake *f, int code, int times)
{
    pthread_mutex_lock(&f->lock);
    for (int i = 0; i < times; i++)
        json_array_append_new(json_object_get(f->arg, "script"), json_integer(code));
    pthread_mutex_unlock(&f->lock);
}

static void test_sync(void **state)
{
    (void)state;
    json_t *fx = fixture_json("admit/queue-walkthrough.json");
    json_t *st = json_pack("{s:[], s:[]}", "patches", "script");
    struct fake *f = fake_start(handler, st);
    struct kube_client_options o = {.backoff_base_ms = 10, .backoff_max_ms = 20};
    struct kube_client *k = client_for(f, "tok", NULL, &o);
    struct cacheguard *guard = cacheguard_create();
    struct cache *c = cache_create();
    struct leaseseen_config cfg = {.client = k, .guard = guard, .cache = c, .may_write = may_write};
    const char *seen, *uid;

    assert_int_equal(leaseseen_sync(&cfg), 0); /* nothing to record */
    upsert(c, fx, "3", 1000);
    leading = 0;
    assert_int_equal(leaseseen_sync(&cfg), 0);
    assert_int_equal(patches(f, &seen, &uid), 0); /* not leading: nothing written */
    leading = 1;
    assert_int_equal(leaseseen_sync(&cfg), 1); /* leading: written, with the uid as precondition */
    assert_int_equal(patches(f, &seen, &uid), 1);
    assert_string_equal(seen, "3@1970-01-01T00:00:01.000Z");
    assert_string_equal(uid, "00000000-0000-0000-0000-000000000001");
    assert_int_equal(leaseseen_sync(&cfg), 0); /* once per change */
    upsert(c, fx, "3", 2000);                  /* another update of the RayCluster, its record not back yet */
    assert_int_equal(leaseseen_sync(&cfg), 0);
    assert_int_equal(patches(f, &seen, &uid), 1);

    /* A renewal, a server that fails (all retries): -1, and the next sync writes it. */
    upsert(c, fx, "4", 6000);
    script(f, 500, 8);
    assert_int_equal(leaseseen_sync(&cfg), -1);
    size_t failed = patches(f, &seen, &uid);
    assert_true(failed >= 2);
    pthread_mutex_lock(&f->lock);
    json_array_clear(json_object_get(st, "script"));
    pthread_mutex_unlock(&f->lock);
    assert_int_equal(leaseseen_sync(&cfg), 1);
    assert_int_equal(patches(f, &seen, &uid), failed + 1);
    assert_string_equal(seen, "4@1970-01-01T00:00:06.000Z");

    /* Replaced by another RayCluster of that name (409): left alone, not tried again. */
    upsert(c, fx, "5", 11000);
    script(f, 409, 1);
    assert_int_equal(leaseseen_sync(&cfg), 0);
    assert_int_equal(leaseseen_sync(&cfg), 0);
    assert_int_equal(patches(f, &seen, &uid), failed + 2);

    cache_destroy(c);
    cacheguard_destroy(guard);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(st);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
