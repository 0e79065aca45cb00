#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hold.h"
#include "schedfixture.h"

static int setup(void **state)
{
    struct cache *c = cache_create();
    schedfixture_cluster(c, 1); /* minResources cpu 3 */
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    cache_destroy(*state);
    return 0;
}

static int64_t cpu(struct cache *c, const int64_t *v)
{
    return v[shape_resource_id(&c->shapes, "cpu")];
}

/* Nothing while no pod is ungated; then the larger of minResources and the requests, plus the tail's. */
static void test_gang(void **state)
{
    struct cache *c = *state;
    struct cache_pod *head = schedfixture_pod(c, "head", 1, "head", 1, "1");
    struct cache_pod *w0 = schedfixture_pod(c, "w0", 2, "worker", 1, "2");
    struct cache_pod *w1 = schedfixture_pod(c, "w1", 3, "worker", 1, "4");
    struct cache_gang *g = cache_gang_get(c, "ns", "c");
    uint32_t nres = c->shapes.nresources;
    int64_t *out = calloc(nres, sizeof(*out)), *tail = calloc(nres, sizeof(*tail));
    size_t slots = marks_slots(8);
    const void **keys = calloc(slots, sizeof(*keys));
    uint8_t *bits = calloc(slots, 1);
    struct marks m;
    marks_init(&m, keys, bits, slots);
    hold_gang(&m, nres, g, NULL, out, tail);
    assert_int_equal(cpu(c, out), 0);
    /* Admitted, its pods all gated still (a gate removal refused): it holds minResources (3) already. */
    cache_gang_mark_admitted(c, g, "2024-05-01T10:00:00Z");
    hold_gang(&m, nres, g, NULL, out, tail);
    assert_int_equal(cpu(c, out), 3000);
    hold_gang(&m, nres, g, head, out, tail); /* the head alone (1) holds minResources (3) */
    assert_int_equal(cpu(c, out), 3000);
    marks_set(&m, head, MARKS_ADMITTED);
    marks_set(&m, w0, MARKS_ADMITTED);
    marks_set(&m, g, MARKS_ADMITTED);
    hold_ungated(&m, nres, g, out);
    assert_int_equal(cpu(c, out), 3000);
    marks_set(&m, w1, MARKS_TAIL);
    marks_set(&m, g, MARKS_TAIL);
    hold_gang(&m, nres, g, w1, out, tail); /* members 3, tail 4 on top */
    assert_int_equal(cpu(c, out), 7000);
    free(bits);
    free(keys);
    free(tail);
    free(out);
}

/*
 * The sums are kept per gang while it stands, and computed again after any change of it or its pods: a pod ungated,
 * one deleted, one that finished, the admission taken back.
 */
static void test_memo(void **state)
{
    struct cache *c = *state;
    schedfixture_pod(c, "head", 1, "head", 0, "1");
    struct cache_pod *w0 = schedfixture_pod(c, "w0", 2, "worker", 1, "2");
    schedfixture_pod(c, "w1", 3, "worker", 1, "4");
    struct cache_gang *g = cache_gang_get(c, "ns", "c");
    uint32_t nres = c->shapes.nresources;
    int64_t *out = calloc(nres, sizeof(*out)), *tail = calloc(nres, sizeof(*tail));
    size_t slots = marks_slots(8);
    const void **keys = calloc(slots, sizeof(*keys));
    uint8_t *bits = calloc(slots, 1);
    struct marks m;
    marks_init(&m, keys, bits, slots);
    hold_ungated(&m, nres, g, out);
    assert_int_equal(cpu(c, out), 1000); /* the head */
    hold_ungated(&m, nres, g, out);      /* kept */
    assert_int_equal(cpu(c, out), 1000);
    cache_pod_mark_ungated(c, w0);
    hold_ungated(&m, nres, g, out);
    assert_int_equal(cpu(c, out), 3000);
    cache_gang_mark_admitted(c, g, "2024-05-01T10:00:00Z");
    hold_gang(&m, nres, g, NULL, out, tail);
    assert_int_equal(cpu(c, out), 3000);            /* minResources 3 */
    schedfixture_pod(c, "w1", 3, "worker", 0, "4"); /* a new version, ungated */
    hold_gang(&m, nres, g, NULL, out, tail);
    assert_int_equal(cpu(c, out), 7000);
    cache_delete_pod(c, "ns", "w1");
    hold_gang(&m, nres, g, NULL, out, tail);
    assert_int_equal(cpu(c, out), 3000);
    free(bits);
    free(keys);
    free(tail);
    free(out);
}

/* Outside a pass: the ungated pods' requests, at least minResources, in their formats; empty once none is ungated. */
static void test_resources(void **state)
{
    struct cache *c = *state;
    struct resources r;
    struct error err;
    resources_init(&r);
    schedfixture_pod(c, "head", 1, "head", 1, "1");
    assert_int_equal(hold_resources(c, cache_gang_get(c, "ns", "c"), &r, &err), 0);
    assert_int_equal(r.len, 0);
    schedfixture_pod(c, "w0", 2, "worker", 0, "5");
    schedfixture_pod(c, "w1", 3, "worker", 0, "500m");
    assert_int_equal(hold_resources(c, cache_gang_get(c, "ns", "c"), &r, &err), 0);
    char *text = resources_to_string(&r);
    assert_string_equal(text, "{\"cpu\":\"5500m\"}");
    free(text);
    resources_finish(&r);
}

/* What does not fit says what each resource needs and has free; what fits says nothing. */
static void test_fits(void **state)
{
    struct cache *c = *state;
    json_t *q =
        json_pack("{s:{s:s}, s:{s:{s:s, s:s}}}", "metadata", "name", "q", "spec", "capability", "cpu", "4", "memory", "1Gi");
    struct error err;
    assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    json_decref(q);
    struct cache_queue *queue = cache_queue_get(c, "q");
    uint32_t nres = c->shapes.nresources;
    int64_t *held = calloc(nres, sizeof(*held)), *need = calloc(nres, sizeof(*need));
    uint32_t id = shape_resource_id(&c->shapes, "cpu");
    held[id] = 1000;
    need[id] = 3000;
    char *why = NULL;
    assert_int_equal(hold_fits(c, queue, held, need, NULL, &why), 1);
    assert_null(why);
    need[id] = 3500;
    assert_int_equal(hold_fits(c, queue, held, need, NULL, &why), 0);
    assert_string_equal(why, "cpu needs 3500m, 3 of 4 free");
    free(why);
    free(need);
    free(held);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gang, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
