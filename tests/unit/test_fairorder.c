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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ties_by_order),
        cmocka_unit_test(test_unusable_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
