#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "members.h"
#include "schedfixture.h"

static int setup(void **state)
{
    struct cache *c = cache_create();
    schedfixture_cluster(c, 2);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    cache_destroy(*state);
    return 0;
}

/* A worker named before the head and created with it does not take the head's place; the third worker is the tail. */
static void test_members_first(void **state)
{
    struct cache *c = *state;
    struct cache_pod *w0 = schedfixture_pod(c, "a-worker", 1, "worker", 1, "2");
    struct cache_pod *w1 = schedfixture_pod(c, "b-worker", 1, "worker", 1, "2");
    struct cache_pod *w2 = schedfixture_pod(c, "c-worker", 1, "worker", 1, "2");
    struct cache_pod *head = schedfixture_pod(c, "z-head", 1, "head", 1, "1");
    struct cache_gang *g = cache_gang_get(c, "ns", "c");
    assert_int_equal(members_role(g, head), 0);
    assert_int_equal(members_role(g, w0), 1);
    struct cache_pod **live;
    size_t n = members_of(g, &live);
    assert_int_equal(n, 3);
    assert_ptr_equal(live[0], w0);
    assert_ptr_equal(live[1], w1);
    assert_ptr_equal(live[2], head);
    assert_ptr_equal(live[3], w2);
    free(live);
}

/* Ungated pods are members first: an admitted gang keeps the members it has. Unplaced pods fill what is left. */
static void test_ungated_first(void **state)
{
    struct cache *c = *state;
    struct cache_pod *head = schedfixture_pod(c, "head", 1, "head", 0, "1");
    struct cache_pod *w0 = schedfixture_pod(c, "w0", 2, "worker", 1, "2");
    struct cache_pod *w1 = schedfixture_pod(c, "w1", 3, "worker", 0, "2");
    struct cache_pod *w2 = schedfixture_pod(c, "w2", 4, "worker", 0, "2");
    struct cache_pod *odd = schedfixture_pod(c, "odd", 5, "sidecar", 1, "1");
    struct cache_gang *g = cache_gang_get(c, "ns", "c");
    assert_int_equal(members_role(g, odd), MEMBERS_ROLE_UNKNOWN);
    /* Two worker slots: the ungated w1 and w2 keep theirs, the older but gated w0 is the tail. */
    struct cache_pod *live[5] = {head, w0, w1, w2, odd};
    assert_int_equal(members_order(g, live, 5), 3);
    assert_ptr_equal(live[0], head);
    assert_ptr_equal(live[1], w1);
    assert_ptr_equal(live[2], w2);
    assert_ptr_equal(live[3], w0);
    assert_ptr_equal(live[4], odd);
    /* With only one worker created, the pod the labels do not place takes the slot left. */
    struct cache_pod *few[3] = {head, w1, odd};
    assert_int_equal(members_order(g, few, 3), 3);
    assert_ptr_equal(few[2], odd);
    assert_int_equal(members_order(g, few, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_members_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ungated_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
