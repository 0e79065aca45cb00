/*
 * cachefixture: a lib/sched/cache model built from a fixture's objects, for the
 * tests of the decision code (test_admit, test_podgroup). A fixture holds
 * arrays "queues", "nodes", "rayclusters" and "pods" of API objects, and
 * optionally "seen" (RFC 3339): the time the cache sees them at
 * (cache_set_clock: when dispatch leases were last seen to change).
 */
#ifndef RAYGATE_TEST_CACHEFIXTURE_H
#define RAYGATE_TEST_CACHEFIXTURE_H

#include <string.h>

#include <jansson.h>

#include "cache.h"

static const char *const cachefixture_kinds[] = {"queues", "nodes", "rayclusters", "pods"};

/* Puts obj (borrowed) of kind (one of cachefixture_kinds) into c; fails the test if the cache refuses it. */
static inline void cachefixture_upsert(struct cache *c, const char *kind, const json_t *obj)
{
    struct error err;
    int rc;
    if (strcmp(kind, "queues") == 0)
        rc = cache_upsert_queue(c, obj, &err);
    else if (strcmp(kind, "nodes") == 0)
        rc = cache_upsert_node(c, obj, &err);
    else if (strcmp(kind, "rayclusters") == 0)
        rc = cache_upsert_raycluster(c, obj, &err);
    else
        rc = cache_upsert_pod(c, obj, &err);
    if (rc != 0)
        fail_msg("upsert %s: %s", kind, err.message);
}

/*
 * A new cache (cache_destroy) holding fx's state. reverse loads pods first and
 * every list backwards: watch events come in any order.
 */
static inline struct cache *cachefixture_load(const json_t *fx, int reverse)
{
    struct cache *c = cache_create();
    const char *seen = json_string_value(json_object_get(fx, "seen"));
    int64_t seen_ms = 0;
    if (seen != NULL && evict_parse_time(seen, &seen_ms) != 0)
        fail_msg("fixture: \"seen\": %s is not RFC 3339", seen);
    cache_set_clock(c, seen_ms);
    for (size_t k = 0; k < 4; k++) {
        const char *kind = cachefixture_kinds[reverse ? 3 - k : k];
        const json_t *arr = json_object_get(fx, kind);
        size_t n = json_array_size(arr);
        for (size_t i = 0; i < n; i++)
            cachefixture_upsert(c, kind, json_array_get(arr, reverse ? n - 1 - i : i));
    }
    return c;
}

#endif
