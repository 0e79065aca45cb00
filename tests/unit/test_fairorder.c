/* Unit tests for lib/sched/fairorder: the order a pass weighs gangs in across the leaves of the queue tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache.h"
#include "cachefixture.h"
#include "fairorder.h"
#include "fixtures.h"
#include "qtree.h"

/* The tree of fixture file's cache, filled (qtree_fill), and items for the named gangs in the given order. */
struct fx {
    json_t *json;
    struct cache *c;
    struct qtree t;
    size_t leaf[8];
    size_t n;
};

static void fx_load(struct fx *f, const char *file, const char *const *gangs, size_t n)
{
    f->json = fixture_json(file);
    f->c = cachefixture_load(f->json, 0);
    qtree_init(&f->t);
    qtree_fill(&f->t, f->c);
    f->n = n;
    for (size_t i = 0; i < n; i++) {
        const struct cache_gang *g = cache_gang_get(f->c, "default", gangs[i]);
        assert_non_null(g);
        f->leaf[i] = qtree_index(&f->t, g->queue);
    }
}

static void fx_finish(struct fx *f)
{
    qtree_finish(&f->t);
    cache_destroy(f->c);
    json_decref(f->json);
}

/*
 * Equal shares (nothing held): the turn goes to the queue whose next gang
 * comes first in the caller's order, not to the lower name; once a queue
 * holds something, the lowest share goes first.
 */
static void test_ties_by_order(void **state)
{
    (void)state;
    static const char *const gangs[] = {"team-b", "team-a", "team-c"}; /* by age */
    struct fx f;
    fx_load(&f, "admit/order-queues-share-nodes.json", gangs, 3);
    struct fairorder fo;
    fairorder_init(&fo, &f.t, f.leaf, f.n);
    assert_int_equal(fairorder_next(&fo), 0);
    int64_t cpu[8] = {0};
    cpu[0] = 1000000; /* queue-b now holds more than it deserves in the first resource */
    cpu[1] = 1000000;
    qtree_add_alloc(&f.t, f.leaf[0], cpu, 1);
    assert_int_equal(fairorder_next(&fo), 1);
    assert_int_equal(fairorder_next(&fo), 2);
    assert_int_equal(fairorder_next(&fo), FAIRORDER_END);
    fairorder_finish(&fo);
    fx_finish(&f);
}

/* Gangs of queues that cannot hold gangs (a parent) come first, in the caller's order; then the leaves. */
static void test_unusable_first(void **state)
{
    (void)state;
    static const char *const gangs[] = {"train-a", "eng-run", "eng-new"};
    struct fx f;
    fx_load(&f, "admit/tree-not-leaf.json", gangs, 3);
    assert_false(qtree_leaf_usable(&f.t, f.leaf[1]));
    struct fairorder fo;
    fairorder_init(&fo, &f.t, f.leaf, f.n);
    assert_int_equal(fairorder_next(&fo), 1);
    assert_int_equal(fairorder_next(&fo), 2);
    assert_int_equal(fairorder_next(&fo), 0);
    assert_int_equal(fairorder_next(&fo), FAIRORDER_END);
    fairorder_finish(&fo);
    fx_finish(&f);
}

/* A tree of three levels: root children r1 (a1..a4), r2 (b1, b2 (c1, c2), b3) and r3; weights 1 to 4. */
static json_t *deep_tree(void)
{
    static const char *const queues[][2] = {{"r1", NULL}, {"r2", NULL}, {"r3", NULL}, {"a1", "r1"}, {"a2", "r1"}, {"a3", "r1"},
                                            {"a4", "r1"}, {"b1", "r2"}, {"b2", "r2"}, {"b3", "r2"}, {"c1", "b2"}, {"c2", "b2"}};
    json_t *qs = json_array();
    for (size_t i = 0; i < sizeof(queues) / sizeof(queues[0]); i++) {
        json_t *spec = json_pack("{s:i}", "weight", (int)(1 + i % 4));
        if (queues[i][1] != NULL)
            json_object_set_new(spec, "parent", json_string(queues[i][1]));
        json_array_append_new(qs, json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "scheduling.volcano.sh/v1beta1", "kind",
                                            "Queue", "metadata", "name", queues[i][0], "spec", spec));
    }
    return json_pack("{s:o, s:[{s:s, s:s, s:{s:s}, s:{}, s:{s:{s:s, s:s}, s:[{s:s, s:s}]}}]}", "queues", qs, "nodes", "apiVersion",
                     "v1", "kind", "Node", "metadata", "name", "node-a", "spec", "status", "allocatable", "cpu", "1000", "memory",
                     "1000Gi", "conditions", "type", "Ready", "status", "True");
}

/* Whether every item fairorder_next() has yet to check for an unusable queue is of a usable one. */
static int unusable_done(const struct fairorder *fo)
{
    for (size_t k = fo->unusable; k < fo->n; k++) {
        if (fo->leaf[k] == QUEUETREE_ROOT || !qtree_leaf_usable(fo->t, fo->leaf[k]))
            return 0;
    }
    return 1;
}

/* What qtree_pick_ranked() over fo's heads says comes next (fairorder_next() before its tournaments). */
static size_t reference_next(const struct fairorder *fo)
{
    size_t l = qtree_pick_ranked(fo->t, fo->head);
    if (l == QUEUETREE_ROOT || fo->first[l] == FAIRORDER_END) {
        for (l = 0; l < fo->t->n && fo->first[l] == FAIRORDER_END; l++)
            ;
        if (l == fo->t->n)
            return FAIRORDER_END;
    }
    return fo->first[l];
}

/*
 * The kept tournaments pick as qtree_pick_ranked() does, while shares move
 * between picks: the picked queue's and others' (as reclaim and preemption
 * move them), up and down, over seeded random trees of items.
 */
static void test_tournament_as_walk(void **state)
{
    (void)state;
    json_t *fx = deep_tree();
    for (unsigned seed = 1; seed <= 40; seed++) {
        srand(seed);
        struct cache *c = cachefixture_load(fx, 0);
        struct qtree t;
        qtree_init(&t);
        qtree_fill(&t, c);
        int64_t v[8] = {0};
        for (size_t q = 0; q < t.n; q++) { /* every leaf asks for room: the shares are the room held of the deserved */
            v[0] = (int64_t)(1 + rand() % 50) * 1000;
            if (qtree_leaf_usable(&t, q))
                qtree_add_demand(&t, q, v, 1);
        }
        qtree_derive(&t);
        size_t leaf[64], n = 1 + (size_t)rand() % 64;
        for (size_t k = 0; k < n; k++)
            leaf[k] = rand() % 10 == 0 ? QUEUETREE_ROOT : (size_t)rand() % t.n;
        int64_t added[16] = {0};
        struct fairorder fo;
        fairorder_init(&fo, &t, leaf, n);
        for (size_t got = 0; got != FAIRORDER_END;) {
            for (int moves = rand() % 3; moves > 0; moves--) {
                size_t q = (size_t)rand() % t.n;
                v[0] = rand() % 2 && added[q] > 0 ? -added[q] : (int64_t)(1 + rand() % 4) * 1000;
                added[q] += v[0];
                qtree_add_alloc(&t, q, v, 1);
            }
            size_t want = unusable_done(&fo) ? reference_next(&fo) : FAIRORDER_END - 1;
            got = fairorder_next(&fo);
            if (want != FAIRORDER_END - 1)
                assert_int_equal(got, want);
        }
        fairorder_finish(&fo);
        assert_null(t.keylog);
        qtree_finish(&t);
        cache_destroy(c);
    }
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ties_by_order),
        cmocka_unit_test(test_unusable_first),
        cmocka_unit_test(test_tournament_as_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
