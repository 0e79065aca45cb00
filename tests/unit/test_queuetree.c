/* Unit tests for lib/gang/queuetree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "queuetree.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* root -> eng -> {train, infer}; research; a "root" Queue; a queue named by a gang only. */
static void test_three_levels(void **state)
{
    (void)state;
    struct queuetree_in in[] = {
        {"train", "eng", 1}, {"eng", NULL, 1},   {"infer", "eng", 1},  {"research", "root", 1},
        {"root", "x", 1},    {"ghost", NULL, 0}, {"deep", "train", 1},
    };
    struct queuetree_node out[N(in)];
    size_t first;
    assert_int_equal(queuetree_build(in, N(in), out, &first), 0);
    assert_int_equal(out[0].parent, 1);
    assert_int_equal(out[0].depth, 2);
    assert_int_equal(out[6].depth, 3);
    assert_int_equal(out[1].parent, QUEUETREE_ROOT);
    assert_int_equal(out[1].depth, 1);
    assert_int_equal(out[1].nchildren, 2);
    assert_int_equal(out[1].first_child, 0); /* input order */
    assert_int_equal(out[0].next_sibling, 2);
    assert_int_equal(out[2].next_sibling, QUEUETREE_ROOT);
    assert_int_equal(out[0].nchildren, 1);
    assert_true(out[4].is_root);
    assert_int_equal(out[4].depth, 0);
    /* the root's children: eng, research (ghost is not present, root is the root) */
    assert_int_equal(first, 1);
    assert_int_equal(out[1].next_sibling, 3);
    assert_int_equal(out[3].next_sibling, QUEUETREE_ROOT);
    assert_int_equal(queuetree_find(in, N(in), "infer"), 2);
    assert_int_equal(queuetree_find(in, N(in), "nope"), QUEUETREE_ROOT);
}

static void test_bad_trees(void **state)
{
    (void)state;
    struct queuetree_in in[] = {
        {"a", "b", 1},          {"b", "c", 1},          {"c", "a", 1}, /* a cycle of three */
        {"under", "a", 1},      {"deeper", "under", 1},                /* hanging from it */
        {"self", "self", 1},                                           /* its own parent */
        {"orphan", "gone", 1},  {"kid", "orphan", 1},                  /* a missing parent */
        {"byname", "ghost", 1}, {"ghost", NULL, 0},                    /* a parent that is only named */
        {"fine", NULL, 1},
    };
    struct queuetree_node out[N(in)];
    size_t first;
    assert_int_equal(queuetree_build(in, N(in), out, &first), 9);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(out[i].state, QUEUETREE_CYCLE);
        assert_int_equal(out[i].bad, (size_t)i);
    }
    assert_int_equal(out[3].state, QUEUETREE_BAD_ANCESTOR);
    assert_int_equal(out[3].bad, 0);
    assert_int_equal(out[4].state, QUEUETREE_BAD_ANCESTOR);
    assert_int_equal(out[4].bad, 0);
    assert_int_equal(out[5].state, QUEUETREE_SELF_PARENT);
    assert_int_equal(out[6].state, QUEUETREE_MISSING_PARENT);
    assert_int_equal(out[7].state, QUEUETREE_BAD_ANCESTOR);
    assert_int_equal(out[7].bad, 6);
    assert_int_equal(out[8].state, QUEUETREE_MISSING_PARENT);
    assert_int_equal(out[10].state, QUEUETREE_OK);
    assert_int_equal(first, 10);
    assert_int_equal(out[10].next_sibling, QUEUETREE_ROOT);
    /* a cycle member has its cycle child and its hanging child */
    assert_int_equal(out[0].nchildren, 2);
    assert_string_equal(queuetree_state_text(out[2].state), "in a cycle");
}

/* The same cycle entered from any queue settles the same way. */
static void test_cycle_any_order(void **state)
{
    (void)state;
    struct queuetree_in in[] = {{"tail", "x", 1}, {"x", "y", 1}, {"y", "x", 1}, {"ok", "", 1}};
    struct queuetree_node out[N(in)];
    assert_int_equal(queuetree_build(in, N(in), out, NULL), 3);
    assert_int_equal(out[0].state, QUEUETREE_BAD_ANCESTOR);
    assert_int_equal(out[0].bad, 1);
    assert_int_equal(out[1].state, QUEUETREE_CYCLE);
    assert_int_equal(out[2].state, QUEUETREE_CYCLE);
    assert_int_equal(out[3].state, QUEUETREE_OK);
    assert_true(queuetree_parent_is_root(NULL));
    assert_true(queuetree_parent_is_root("root"));
    assert_false(queuetree_parent_is_root("eng"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_levels),
        cmocka_unit_test(test_bad_trees),
        cmocka_unit_test(test_cycle_any_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
