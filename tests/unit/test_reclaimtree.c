/*
 * lib/sched/queues/reclaimtree.c: the tree's links (depth, common ancestors, a cycle
 * taken as the root's), share, and a sibling's guarantee and the root's room
 * and capability in fits. The reclaim
 * rules themselves are driven by tests/fixtures/preempt/reclaim-tree.json
 * (test_preempt).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "queuetree.h"
#include "qtree.h"
#include "reclaimtree.h"

/* r = {"cpu": cpu} (cpu in cores), or with memory (bytes) when memory >= 0. */
static struct resources *res(struct resources *r, int64_t cpu, int64_t memory)
{
    resources_init(r);
    struct quantity q = {cpu * 1000, QUANTITY_DECIMAL_SI};
    resources_set(r, "cpu", &q);
    if (memory >= 0) {
        q.value = memory;
        resources_set(r, "memory", &q);
    }
    return r;
}

static void test_links(void **state)
{
    (void)state;
    /* 0 eng, 1 ml (eng), 2 train (ml), 3 infer (ml), 4 web (eng), 5 research; 6 and 7 a cycle; 8 under it. */
    const size_t parents[] = {QUEUETREE_ROOT, 0, 1, 1, 0, QUEUETREE_ROOT, 7, 6, 6};
    struct reclaimtree_node nodes[9];
    memset(nodes, 0, sizeof(nodes));
    for (size_t i = 0; i < 9; i++)
        nodes[i].parent = parents[i];
    struct reclaimtree t;
    reclaimtree_init(&t, nodes, 9);
    assert_int_equal(reclaimtree_depth(&t, 2), 3);
    assert_int_equal(reclaimtree_lca(&t, 2, 3), 1);
    assert_int_equal(reclaimtree_lca(&t, 3, 4), 0);
    assert_int_equal(reclaimtree_lca(&t, 2, 5), QUEUETREE_ROOT);
    assert_int_equal(reclaimtree_lca(&t, 1, 3), 1);
    assert_true(reclaimtree_under(&t, 0, 3));
    assert_false(reclaimtree_under(&t, 3, 0));
    assert_false(reclaimtree_under(&t, 4, 3));
    /* The cycle's queues and the one under them are the root's children. */
    assert_int_equal(reclaimtree_depth(&t, 6), 1);
    assert_int_equal(reclaimtree_depth(&t, 7), 1);
    assert_int_equal(reclaimtree_depth(&t, 8), 1);
    reclaimtree_finish(&t);
}

static void test_share(void **state)
{
    (void)state;
    struct resources alloc, deserved, zero;
    res(&deserved, 4, 8 << 20);
    res(&alloc, 2, 6 << 20);
    assert_true(reclaimtree_share(&alloc, &deserved) == 0.75); /* memory dominates */
    res(&zero, 0, -1);
    assert_true(reclaimtree_share(&alloc, &zero) == QTREE_SHARE_MAX);
    resources_finish(&alloc);
    assert_true(reclaimtree_share(&alloc, &zero) == 0);
    assert_true(reclaimtree_share(NULL, NULL) == 0);
    resources_finish(&deserved);
    resources_finish(&zero);
}

/* Under eng (cpu 8): a (holding 4) and b (guaranteed 4, holding nothing). */
static void test_guarantee_not_lent(void **state)
{
    (void)state;
    struct resources cap, held, guarantee, request;
    struct reclaimtree_node nodes[3] = {
        {QUEUETREE_ROOT, res(&cap, 8, -1), NULL, NULL, res(&held, 4, -1)},
        {0, NULL, NULL, NULL, &held},
        {0, NULL, NULL, res(&guarantee, 4, -1), NULL},
    };
    struct reclaimtree t;
    reclaimtree_init(&t, nodes, 3);
    struct reclaimtree_block why = {0};
    resources_init(&why.have);
    struct error err = {{0}};
    assert_int_equal(reclaimtree_fits(&t, 1, res(&request, 2, -1), &why, &err), 0);
    assert_int_equal(why.level, 0);
    assert_null(why.limit);
    /* b's guarantee of 2 leaves room. */
    resources_finish(&guarantee);
    res(&guarantee, 2, -1);
    assert_int_equal(reclaimtree_fits(&t, 1, &request, &why, &err), 1);
    /* a's own gang of cpu 2 freed: 2 + 2 + 4 fits eng even with b's 4. */
    resources_finish(&guarantee);
    res(&guarantee, 4, -1);
    struct resources gang;
    assert_int_equal(reclaimtree_free(&t, 1, res(&gang, 2, -1), &err), 0);
    assert_int_equal(reclaimtree_fits(&t, 1, &request, &why, &err), 1);
    reclaimtree_clear(&t);
    assert_int_equal(reclaimtree_fits(&t, 1, &request, &why, &err), 0);
    reclaimtree_finish(&t);
    resources_finish(&why.have);
    resources_finish(&cap);
    resources_finish(&held);
    resources_finish(&guarantee);
    resources_finish(&request);
    resources_finish(&gang);
}

/* At the root: a (holding 4) and b (guaranteed 4) share a room of cpu 8; a Queue named root caps the sum. */
static void test_root(void **state)
{
    (void)state;
    struct resources held, guarantee, room, cap, request;
    struct reclaimtree_node nodes[2] = {
        {QUEUETREE_ROOT, NULL, NULL, NULL, res(&held, 4, -1)},
        {QUEUETREE_ROOT, NULL, NULL, res(&guarantee, 4, -1), NULL},
    };
    struct reclaimtree t;
    reclaimtree_init(&t, nodes, 2);
    struct error err = {{0}};
    res(&request, 2, -1);
    assert_int_equal(reclaimtree_fits(&t, 0, &request, NULL, &err), 1);
    t.root_room = res(&room, 8, -1);
    struct reclaimtree_block why = {0};
    resources_init(&why.have);
    assert_int_equal(reclaimtree_fits(&t, 0, &request, &why, &err), 0);
    assert_int_equal(why.level, QUEUETREE_ROOT);
    t.root_room = NULL;
    t.root_cap = res(&cap, 5, -1);
    assert_int_equal(reclaimtree_fits(&t, 0, &request, &why, &err), 0);
    assert_int_equal(why.level, QUEUETREE_ROOT);
    resources_finish(&cap);
    t.root_cap = res(&cap, 6, -1);
    assert_int_equal(reclaimtree_fits(&t, 0, &request, &why, &err), 1);
    reclaimtree_finish(&t);
    resources_finish(&why.have);
    resources_finish(&held);
    resources_finish(&guarantee);
    resources_finish(&room);
    resources_finish(&cap);
    resources_finish(&request);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_share),
        cmocka_unit_test(test_guarantee_not_lent),
        cmocka_unit_test(test_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
