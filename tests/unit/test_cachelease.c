/*
 * cachelease (the cache's dispatch leases whose sighting is to be recorded)
 * through cache_upsert_raycluster, as the gate's watch feeds it: a RayCluster
 * of admit/queue-walkthrough.json given a lease. The news come with a change
 * of the counter, not with other updates; a write that succeeded is not
 * wanted again (before or after the watch brings the record back), one that
 * failed is; a restarted gate (a new cache) reading the record wants nothing
 * and counts from it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cache.h"
#include "cachelease.h"
#include "dispatchlease.h"
#include "fixtures.h"
#include "names.h"

/* The fixture's first RayCluster (new) with the lease annotations (counter; seen NULL: no record). */
static json_t *leased(const json_t *fx, const char *counter, const char *seen)
{
    json_t *rc = json_deep_copy(json_array_get(json_object_get(fx, "rayclusters"), 0));
    json_t *ann = json_pack("{s:s, s:s}", NAMES_ANNOTATION_DISPATCH_LEASE, counter, NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS, "20");
    if (seen != NULL)
        json_object_set_new(ann, NAMES_ANNOTATION_DISPATCH_LEASE_SEEN, json_string(seen));
    json_object_set_new(json_object_get(rc, "metadata"), "annotations", ann);
    return rc;
}

/* Upserts rc (stolen) at now_ms. */
static struct cache_gang *upsert_new(struct cache *c, json_t *rc, int64_t now_ms)
{
    struct error err = {{0}};
    cache_set_clock(c, now_ms);
    assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
    json_decref(rc);
    return cache_gang_get(c, "default", "test-cluster-0");
}

/* The gangs cache_for_each_gang finds wanting a record. */
static size_t wanting(const struct cache *c)
{
    size_t n = 0;
    const struct cache_gang *g;
    cache_for_each_gang(g, c)
    {
        n += g->present && dispatchlease_record_wanted(g->lease);
    }
    return n;
}

static void test_news(void **state)
{
    (void)state;
    json_t *fx = fixture_json("admit/queue-walkthrough.json");
    struct cache *c = cache_create();
    assert_false(cachelease_take_news(c));

    struct cache_gang *g = upsert_new(c, leased(fx, "3", NULL), 1000);
    assert_true(cachelease_take_news(c));
    assert_false(cachelease_take_news(c)); /* taken */
    assert_int_equal(wanting(c), 1);
    uint64_t counter = 0;
    json_t *patch = dispatchlease_record_patch(g->lease, g->uid, &counter);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(patch, "metadata"), "annotations"),
                                                          NAMES_ANNOTATION_DISPATCH_LEASE_SEEN)),
                        "3@1970-01-01T00:00:01.000Z");
    assert_string_equal(json_string_value(json_object_get(json_object_get(patch, "metadata"), "uid")), g->uid);
    json_decref(patch);

    cachelease_written(c, g, counter, 0); /* failed: the news again */
    assert_true(cachelease_take_news(c));
    cachelease_written(c, g, counter, 1);
    assert_int_equal(wanting(c), 0);
    assert_false(cachelease_take_news(c));

    /* Another update before the watch brings the record back (KubeRay's status): nothing to write. */
    g = upsert_new(c, leased(fx, "3", NULL), 1500);
    assert_false(cachelease_take_news(c));
    g = upsert_new(c, leased(fx, "3", "3@1970-01-01T00:00:01.000Z"), 2000);
    assert_false(cachelease_take_news(c));
    assert_int_equal(g->lease->seen_ms, 1000);

    /* A renewal: a new sighting to record. */
    g = upsert_new(c, leased(fx, "4", "3@1970-01-01T00:00:01.000Z"), 6000);
    assert_true(cachelease_take_news(c));
    assert_int_equal(wanting(c), 1);
    cachelease_written(c, g, 3, 1); /* the write of an older counter does not stand for this one */
    assert_int_equal(wanting(c), 1);
    cachelease_written(c, g, 4, 1);
    assert_int_equal(wanting(c), 0);
    cachelease_keep_news(c);
    assert_true(cachelease_take_news(c));
    cache_destroy(c);

    /* A restarted gate: a new cache reading the record counts from it, wants nothing, and expires on time. */
    c = cache_create();
    g = upsert_new(c, leased(fx, "4", "4@1970-01-01T00:00:06.000Z"), 15000);
    assert_false(cachelease_take_news(c));
    assert_int_equal(wanting(c), 0);
    assert_int_equal(dispatchlease_check(g->lease, 26000, NULL), DISPATCHLEASE_NONE);
    assert_int_equal(dispatchlease_check(g->lease, 26001, NULL), DISPATCHLEASE_EXPIRED);
    cache_destroy(c);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_news),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
