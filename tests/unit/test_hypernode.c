/*
 * lib/sched/hypernode.c: Volcano HyperNodes resolved into node domains.
 *
 * Data-driven: every JSON file of tests/fixtures/hypernode holds "nodes" (cached
 * first), "hypernodes" (upserted in order) and "want": "domains" (name, tier
 * and node names, in the resolved order: tier, then name) and "invalid" (the
 * HyperNodes whose upsert fails, each with the start of its message; every
 * other upsert must succeed). Then the set's bookkeeping: generations,
 * replace, delete, and order independence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cachefixture.h"
#include "fixtures.h"
#include "hypernode.h"

/* The resolved domains of h over c as fixture JSON (new). */
static json_t *domains_json(const struct hypernodes *h, const struct cache *c)
{
    struct hypernode_domain *d = NULL;
    size_t n = hypernodes_resolve(h, c, &d);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *nodes = json_array();
        for (size_t k = 0; k < d[i].nn; k++)
            json_array_append_new(nodes, json_string(d[i].nodes[k]->name));
        json_array_append_new(out, json_pack("{s:s, s:i, s:o}", "name", d[i].name, "tier", (int)d[i].tier, "nodes", nodes));
    }
    hypernodes_domains_free(d, n);
    return out;
}

static struct cache *nodes_cache(const json_t *fx)
{
    struct cache *c = cache_create();
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(fx, "nodes"), i, n) cachefixture_upsert(c, "nodes", n);
    return c;
}

/* Upserts fx's HyperNodes in order (reverse: backwards), checking each result against want.invalid unless reverse. */
static struct hypernodes *load(const char *where, const json_t *fx, int reverse)
{
    struct hypernodes *h = hypernodes_create();
    const json_t *list = json_object_get(fx, "hypernodes");
    const json_t *invalid = json_object_get(json_object_get(fx, "want"), "invalid");
    size_t n = json_array_size(list);
    for (size_t i = 0; i < n; i++) {
        const json_t *obj = json_array_get(list, reverse ? n - 1 - i : i);
        const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        struct error err = {{0}};
        int rc = hypernodes_upsert(h, obj, &err);
        if (reverse)
            continue;
        const char *want = json_string_value(json_object_get(invalid, name));
        if (want == NULL && rc != 0)
            fail_msg("%s: %s: unexpected error: %s", where, name, err.message);
        if (want != NULL && (rc == 0 || strncmp(err.message, want, strlen(want)) != 0))
            fail_msg("%s: %s: rc %d, message \"%s\", expected it to start \"%s\"", where, name, rc, err.message, want);
    }
    assert_int_equal(hypernodes_count(h), n);
    return h;
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t count;
    char **files = fixture_list("hypernode", &count);
    assert_true(count >= 6);
    for (size_t f = 0; f < count; f++) {
        json_t *fx = fixture_json(files[f]);
        struct cache *c = nodes_cache(fx);
        struct hypernodes *h = load(files[f], fx, 0);
        json_t *got = domains_json(h, c);
        fixture_check_json(files[f], "domains", got, json_object_get(json_object_get(fx, "want"), "domains"));
        json_decref(got);
        hypernodes_destroy(h);
        cache_destroy(c);
        json_decref(fx);
    }
    fixture_list_free(files, count);
}

/* Children before parents, parents before children: the same domains, in the same order (tier, then name). */
static void test_order_independent(void **state)
{
    (void)state;
    static const char *const cases[] = {"hypernode/nested.json", "hypernode/label.json", "hypernode/regex.json"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *fx = fixture_json(cases[i]);
        struct cache *c = nodes_cache(fx);
        struct hypernodes *h = load(cases[i], fx, 1);
        json_t *got = domains_json(h, c);
        fixture_check_json(cases[i], "domains loaded backwards", got, json_object_get(json_object_get(fx, "want"), "domains"));
        json_decref(got);
        hypernodes_destroy(h);
        cache_destroy(c);
        json_decref(fx);
    }
}

static json_t *rack(const char *name, const char *tier_or_null, const char *pattern)
{
    json_t *o = json_pack("{s:{s:s}, s:{s:[{s:s, s:{s:{s:s}}}]}}", "metadata", "name", name, "spec", "members", "type", "Node",
                          "selector", "regexMatch", "pattern", pattern);
    if (tier_or_null != NULL)
        json_object_set_new(json_object_get(o, "spec"), "tier", json_integer(atoi(tier_or_null)));
    return o;
}

/* Every change bumps the generation; replacing keeps one HyperNode; deleting an absent one changes nothing. */
static void test_generation(void **state)
{
    (void)state;
    json_t *fx = fixture_json("hypernode/exact.json");
    struct cache *c = nodes_cache(fx);
    struct hypernodes *h = hypernodes_create();
    struct error err = {{0}};
    uint64_t g0 = hypernodes_generation(h);

    json_t *r1 = rack("r1", "1", "^rack1-");
    assert_int_equal(hypernodes_upsert(h, r1, &err), 0);
    uint64_t g1 = hypernodes_generation(h);
    assert_true(g1 > g0);

    /* Replaced by an invalid version: still one HyperNode, no domain. */
    json_t *bad = rack("r1", NULL, "^rack1-");
    assert_int_equal(hypernodes_upsert(h, bad, &err), -1);
    assert_string_equal(err.message, "spec.tier: missing");
    assert_true(hypernodes_generation(h) > g1);
    assert_int_equal(hypernodes_count(h), 1);
    json_t *got = domains_json(h, c);
    assert_int_equal(json_array_size(got), 0);
    json_decref(got);

    /* Fixed, and its selector changed: the new one counts. */
    json_t *r1b = rack("r1", "1", "^rack2-");
    assert_int_equal(hypernodes_upsert(h, r1b, &err), 0);
    got = domains_json(h, c);
    json_t *want = json_pack("[{s:s, s:i, s:[s,s]}]", "name", "r1", "tier", 1, "nodes", "rack2-a", "rack2-b");
    fixture_check_json("replace", "domains", got, want);
    json_decref(got);
    json_decref(want);

    uint64_t g2 = hypernodes_generation(h);
    hypernodes_delete(h, "absent");
    assert_true(hypernodes_generation(h) == g2);
    hypernodes_delete(h, "r1");
    assert_true(hypernodes_generation(h) > g2);
    assert_int_equal(hypernodes_count(h), 0);
    got = domains_json(h, c);
    assert_int_equal(json_array_size(got), 0);
    json_decref(got);

    /* Without a name it cannot be kept. */
    json_t *anon = json_pack("{s:{s:i}}", "spec", "tier", 1);
    assert_int_equal(hypernodes_upsert(h, anon, &err), -1);
    assert_string_equal(err.message, "metadata.name: missing");
    assert_int_equal(hypernodes_count(h), 0);

    json_decref(anon);
    json_decref(r1);
    json_decref(bad);
    json_decref(r1b);
    hypernodes_destroy(h);
    cache_destroy(c);
    json_decref(fx);
}

/* Breaking a cycle (deleting one of its HyperNodes) brings the other back. */
static void test_cycle_broken(void **state)
{
    (void)state;
    json_t *fx = fixture_json("hypernode/cycle.json");
    struct cache *c = nodes_cache(fx);
    struct hypernodes *h = load("cycle", fx, 0);
    hypernodes_delete(h, "b");
    json_t *got = domains_json(h, c);
    json_t *want = json_pack("[{s:s, s:i, s:[s]}, {s:s, s:i, s:[s,s]}]", "name", "a", "tier", 1, "nodes", "rack1-a", "name", "c",
                             "tier", 3, "nodes", "rack1-a", "rack3-a");
    fixture_check_json("cycle broken", "domains", got, want);
    json_decref(got);
    json_decref(want);
    hypernodes_destroy(h);
    cache_destroy(c);
    json_decref(fx);
}

/* A node that leaves the cache leaves its domains; one that joins and matches enters them. */
static void test_follows_nodes(void **state)
{
    (void)state;
    json_t *fx = fixture_json("hypernode/nested.json");
    struct cache *c = nodes_cache(fx);
    struct hypernodes *h = load("nested", fx, 0);
    cache_delete_node(c, "rack3-a");
    json_t *node = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "rack1-c", "labels", "rack", "r1");
    cachefixture_upsert(c, "nodes", node);
    json_t *got = domains_json(h, c);
    /* rack-3 and spine-b lost their only node; rack-1, spine-a and root gained rack1-c. */
    json_t *want =
        json_pack("[{s:s, s:i, s:[s,s,s]}, {s:s, s:i, s:[s,s]}, {s:s, s:i, s:[s,s,s,s,s]}, {s:s, s:i, s:[s,s,s,s,s,s]}]", "name",
                  "rack-1", "tier", 1, "nodes", "rack1-a", "rack1-b", "rack1-c", "name", "rack-2", "tier", 1, "nodes", "rack2-a",
                  "rack2-b", "name", "spine-a", "tier", 2, "nodes", "rack1-a", "rack1-b", "rack1-c", "rack2-a", "rack2-b", "name",
                  "root", "tier", 3, "nodes", "other", "rack1-a", "rack1-b", "rack1-c", "rack2-a", "rack2-b");
    fixture_check_json("nodes changed", "domains", got, want);
    json_decref(got);
    json_decref(want);
    json_decref(node);
    hypernodes_destroy(h);
    cache_destroy(c);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),     cmocka_unit_test(test_order_independent), cmocka_unit_test(test_generation),
        cmocka_unit_test(test_cycle_broken), cmocka_unit_test(test_follows_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
