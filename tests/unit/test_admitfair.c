/*
 * Fair sharing across queues in the admission pass (tests/fixtures/admit-fair/):
 * by weight, down the tree, a queue of weight 0, and the sums of a queue no
 * pass evaluates kept in its memo (treepass.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admitfixture.h"

/* How many gangs of queue the decisions [from, r->len) admit. */
static size_t admitted_of(const struct admit_result *r, size_t from, const char *queue)
{
    size_t n = 0;
    for (size_t i = from; i < r->len; i++)
        n += r->items[i].action == ADMIT_ACTION_ADMIT && strcmp(r->items[i].queue, queue) == 0;
    return n;
}

/*
 * Fair sharing across leaves (admit-fair/weights.json): light (weight 1) and
 * heavy (weight 2), 10 equal gangs each, created alternately, 12 cpu of nodes.
 * Taken by share, not by age across queues: 4 and 8, full and incremental.
 */
/* A copy of the fixture's object kind/name renamed to name (its uid too), its queue label set to queue when given. */
static json_t *renamed(const json_t *fx, const char *kind, const char *from, const char *name, const char *queue)
{
    json_t *o = json_deep_copy(find_object(fx, kind, from));
    json_t *meta = json_object_get(o, "metadata"), *labels = json_object_get(meta, "labels");
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "uid", json_sprintf("uid-%s", name));
    if (queue != NULL)
        json_object_set_new(labels, "volcano.sh/queue-name", json_string(queue));
    if (json_object_get(labels, "ray.io/cluster") != NULL)
        json_object_set_new(labels, "ray.io/cluster", json_string("i-00"));
    return o;
}

/*
 * What a queue no pass evaluates holds and asks for is kept from pass to pass (treepass.h, the queue's memo): a third
 * queue, idle, gets a gang that waits (the nodes are full); then light and heavy are weighed twice (a pod of each
 * updated) and idle is not: its sums are computed the first time and read from its memo the second, where they are what
 * a fresh sum says (nothing held, its gang's cpu 1 asked for).
 */
static void fair_weights_memo(struct admit_test *fix)
{
    struct error err;
    json_t *q = renamed(fix->fx, "queues", "light", "idle", NULL), *rc = renamed(fix->fx, "rayclusters", "a-09", "i-00", "idle"),
           *pod = renamed(fix->fx, "pods", "a-09-head", "i-00-head", "idle");
    assert_int_equal(cache_upsert_queue(fix->c, q, &err), 0);
    assert_int_equal(cache_upsert_raycluster(fix->c, rc, &err), 0);
    assert_int_equal(cache_upsert_pod(fix->c, pod, &err), 0);
    json_decref(q), json_decref(rc), json_decref(pod);
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(fix->a, 0, &r); /* the queues the last binds made dirty, and idle */
    admit_result_finish(&r);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 2; i++) {
            json_t *p = json_deep_copy(find_object(fix->fx, "pods", i == 0 ? "a-09-head" : "b-09-head"));
            json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_sprintf("9%d", k));
            assert_int_equal(cache_upsert_pod(fix->c, p, &err), 0);
            json_decref(p);
        }
        admit_result_init(&r);
        admit_pass(fix->a, 0, &r);
        assert_int_equal(r.queues_evaluated, 2);
        assert_int_equal(admitted_of(&r, 0, "light") + admitted_of(&r, 0, "heavy"), 0);
        admit_result_finish(&r);
    }
    int valid;
    const struct cache_queue_memo *mm = model_queue_memo(cache_queue_get(fix->c, "idle"), fix->c->shapes.nresources, &valid);
    assert_true(valid);
    uint32_t cpu = shape_resource_id(&fix->c->shapes, "cpu");
    assert_int_equal(mm->alloc[cpu], 0);
    assert_int_equal(mm->demand[cpu], 1000);
}

static void test_fair_weights(void **state)
{
    struct admit_test *fix = *state;
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(fix->a, 0, &r);
    assert_int_equal(r.len, 20);
    assert_int_equal(admitted_of(&r, 0, "light"), 4);
    assert_int_equal(admitted_of(&r, 0, "heavy"), 8);
    size_t from = r.len;
    admit_pass(fix->a, ADMIT_PASS_FULL, &r);
    assert_int_equal(admitted_of(&r, from, "light"), 4);
    assert_int_equal(admitted_of(&r, from, "heavy"), 8);
    /* Carried out: the nodes are full, both queues at their deserved (4 and 8); nothing more is admitted. */
    apply(fix->c, &r, from);
    from = r.len;
    admit_pass(fix->a, ADMIT_PASS_FULL, &r);
    assert_int_equal(admitted_of(&r, from, "light") + admitted_of(&r, from, "heavy"), 0);
    admit_result_finish(&r);
    fair_weights_memo(fix);
}

/*
 * Fair sharing down the tree (admit-fair/tree.json): eng and research share 8
 * cpu 4 and 4, eng's 4 go 1:3 to train and infer, and the pick from the root
 * down admits exactly that, although the gangs were created in turn.
 */
static void test_fair_tree(void **state)
{
    struct admit_test *fix = *state;
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(fix->a, 0, &r);
    assert_int_equal(r.len, 24);
    assert_int_equal(admitted_of(&r, 0, "research"), 4);
    assert_int_equal(admitted_of(&r, 0, "train"), 1);
    assert_int_equal(admitted_of(&r, 0, "infer"), 3);
    admit_result_finish(&r);
}

/* A queue of weight 0 deserves nothing: its gangs, older, come after those of a queue that deserves the room. */
static void test_fair_weight_zero(void **state)
{
    struct admit_test *fix = *state;
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(fix->a, 0, &r);
    assert_int_equal(r.len, 8);
    assert_int_equal(admitted_of(&r, 0, "one"), 4);
    assert_int_equal(admitted_of(&r, 0, "zero"), 0);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(r.items[i].queue, "one");
    admit_result_finish(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ADMIT_TEST(test_fair_weights, "admit-fair/weights.json"),
        ADMIT_TEST(test_fair_tree, "admit-fair/tree.json"),
        ADMIT_TEST(test_fair_weight_zero, "admit-fair/weight-zero.json"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
