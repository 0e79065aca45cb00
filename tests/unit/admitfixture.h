/*
 * admitfixture: what the tests of lib/sched/admit start from (a fixture, the
 * cache loaded from it, an admit over that cache) and do with decisions.
 * Included after cmocka.h.
 */
#ifndef RAYGATE_TEST_ADMITFIXTURE_H
#define RAYGATE_TEST_ADMITFIXTURE_H

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "admit.h"
#include "cache.h"
#include "cachefixture.h"
#include "fixtures.h"

/* What a test starts from: a fixture (its path the test's initial state), the cache loaded from it, an admit over that cache. */
struct admit_test {
    json_t *fx;
    struct cache *c;
    struct admit *a;
};

static inline struct admit_test *admit_test_load(struct admit_test *t)
{
    t->c = cachefixture_load(t->fx, 0);
    t->a = admit_create(t->c);
    return t;
}

static inline int admit_test_setup(void **state)
{
    struct admit_test *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    t->fx = fixture_json(*state);
    *state = admit_test_load(t);
    return 0;
}

static inline int admit_test_teardown(void **state)
{
    struct admit_test *t = *state;
    admit_destroy(t->a);
    cache_destroy(t->c);
    json_decref(t->fx);
    free(t);
    return 0;
}

/* admit_test_setup with a foreign gate added to the head pod (the fixture's first) before the cache is loaded. */
static inline int admit_test_setup_foreign_gate(void **state)
{
    struct admit_test *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    t->fx = fixture_json(*state);
    json_t *head = json_array_get(json_object_get(t->fx, "pods"), 0);
    json_array_append_new(json_object_get(json_object_get(head, "spec"), "schedulingGates"),
                          json_pack("{s:s}", "name", "example.com/quota"));
    *state = admit_test_load(t);
    return 0;
}

/* A test of admit over the cache loaded from FIXTURE. */
#define ADMIT_TEST(f, fixture) cmocka_unit_test_prestate_setup_teardown(f, admit_test_setup, admit_test_teardown, fixture)

/* What the controller does with a decision it applied: record it in the cache. */
static inline void apply(struct cache *c, const struct admit_result *r, size_t from)
{
    for (size_t i = from; i < r->len; i++) {
        const struct admit_decision *d = &r->items[i];
        if (d->action == ADMIT_ACTION_WAIT || d->action == ADMIT_ACTION_TAIL_WAIT)
            continue;
        if (d->action == ADMIT_ACTION_ADMIT)
            cache_gang_mark_admitted(c, cache_gang_get(c, d->namespace_, d->cluster), "2024-05-01T11:00:00Z");
        for (size_t k = 0; k < d->npods; k++)
            cache_pod_mark_ungated(c, cache_pod_get(c, d->namespace_, d->pods[k].name));
    }
}

static inline const json_t *find_object(const json_t *fx, const char *kind, const char *name)
{
    size_t i;
    const json_t *obj;
    json_array_foreach(json_object_get(fx, kind), i, obj)
    {
        if (strcmp(json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")), name) == 0)
            return obj;
    }
    fail_msg("%s %s not in fixture", kind, name);
    return NULL;
}

#endif
