/*
 * lib/sched/preempt/preemptdomain.c: victims that free one domain for a
 * topology-constrained preemptor, through preempt_select() on the fixtures of
 * tests/fixtures/preemptdomain/ (the format: preemptfixture.h), and the held
 * room of such a preemptor (preemptdomain_hold) on
 * tests/fixtures/preemptdomain/hold/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "preemptdomain.h"
#include "preemptfixture.h"

static void test_fixtures(void **state)
{
    (void)state;
    preemptfixture_run_dir("preemptdomain", 2, 12);
}

static void test_constraint(void **state)
{
    (void)state;
    assert_null(preemptdomain_constraint(NULL));
    struct topo_group groups[2] = {{.name = "cpu", .hosts = 1}, {.name = "gpu", .hosts = 1}};
    groups[1].c = (struct topo_constraint){.mode = TOPO_MODE_HARD, .by = TOPO_BY_LABEL, .key = "nvidia.com/gpu.clique"};
    struct topo_request r = {.groups = groups, .ngroups = 2};
    assert_ptr_equal(preemptdomain_constraint(&r), &groups[1].c); /* no gang-wide one: the first group's own */
    r.gang = (struct topo_constraint){.mode = TOPO_MODE_SOFT, .by = TOPO_BY_LABEL, .key = "rack"};
    assert_ptr_equal(preemptdomain_constraint(&r), &r.gang);
    r.gang.mode = TOPO_MODE_NONE;
    r.ngroups = 1;
    assert_null(preemptdomain_constraint(&r));
}

static void test_better(void **state)
{
    (void)state;
    struct preemptdomain_score a = {.nvictims = 1, .priorities = 100, .left = 50, .order = 3};
    struct preemptdomain_score b = {.nvictims = 2, .priorities = 0, .left = 0, .order = 0};
    assert_true(preemptdomain_better(&a, &b)); /* fewer gangs, whatever their priority */
    assert_false(preemptdomain_better(&b, &a));
    b.nvictims = 1;
    assert_true(preemptdomain_better(&b, &a)); /* then the lower priorities */
    b.priorities = 100;
    assert_true(preemptdomain_better(&b, &a)); /* then the best fit */
    b.left = 50;
    assert_true(preemptdomain_better(&b, &a)); /* then the domains' order */
    assert_false(preemptdomain_better(&a, &b));
    assert_false(preemptdomain_better(&a, &a));
}

static int64_t free_cpu(const struct fit *f, const struct cache *c, const char *node)
{
    size_t i = fit_node_index(f, cache_node_get(c, node));
    assert_true(i != SIZE_MAX);
    int64_t pods;
    const int64_t *room = fit_node_free(f, i, &pods);
    for (uint32_t k = 0; k < fit_resources(f); k++) {
        if (strcmp(cache_resource_name(c, k), "cpu") == 0)
            return room[k];
    }
    fail_msg("no cpu");
    return 0;
}

/* The held room goes in the domain the preemptor lands in once its victims are gone, not on the first node with room. */
static void test_hold(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptdomain/hold/layout.json");
    struct cache *c = load_cache(fx);
    struct fit *f = fit_create(c);
    struct topodomains *t = topodomain_create();
    fit_begin(f);
    topodomain_begin(t, f, c);
    struct topo_request r = {.gang = {.mode = TOPO_MODE_HARD, .by = TOPO_BY_LABEL, .key = "rack"}};
    struct cache_pod *pods[2] = {cache_pod_get(c, "default", "p-0"), cache_pod_get(c, "default", "p-1")};
    struct cache_gang *v = cache_gang_get(c, "default", "v");
    assert_non_null(pods[0]);
    assert_non_null(v);
    assert_int_equal(free_cpu(f, c, "a1"), 2000);

    /* Without victims no rack holds it: nothing held. */
    assert_null(preemptdomain_hold(f, t, c, &r, pods, 2, NULL, 0));
    assert_int_equal(free_cpu(f, c, "a1"), 2000);
    assert_int_equal(free_cpu(f, c, "b2"), 2000);

    const struct topo_domain *d = preemptdomain_hold(f, t, c, &r, pods, 2, &v, 1);
    assert_non_null(d);
    assert_string_equal(d->name, "b");
    assert_int_equal(free_cpu(f, c, "a1"), 2000); /* first fit would have taken a1 */
    assert_int_equal(free_cpu(f, c, "b2"), 0);    /* what is free in rack b now is held; the rest as v's pod goes */
    assert_int_equal(free_cpu(f, c, "b1"), 0);    /* v's pod still counts: only released in the simulation */

    fit_end(f);
    topodomain_destroy(t);
    fit_destroy(f);
    cache_destroy(c);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_constraint),
        cmocka_unit_test(test_better),
        cmocka_unit_test(test_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
