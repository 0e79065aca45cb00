/*
 * lib/sched/place/hypernode.c: Volcano HyperNodes resolved into node domains.
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
    size_t n = hypernode_resolve(h, c, &d);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *nodes = json_array();
        for (size_t k = 0; k < d[i].nn; k++)
            json_array_append_new(nodes, json_string(d[i].nodes[k]->name));
        json_array_append_new(out, json_pack("{s:s, s:i, s:o}", "name", d[i].name, "tier", (int)d[i].tier, "nodes", nodes));
    }
    hypernode_domains_free(d, n);
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
    struct hypernodes *h = hypernode_create();
    const json_t *list = json_object_get(fx, "hypernodes");
    const json_t *invalid = json_object_get(json_object_get(fx, "want"), "invalid");
    size_t n = json_array_size(list);
    for (size_t i = 0; i < n; i++) {
        const json_t *obj = json_array_get(list, reverse ? n - 1 - i : i);
        const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        struct error err = {{0}};
        int rc = hypernode_upsert(h, obj, &err);
        if (reverse)
            continue;
        const char *want = json_string_value(json_object_get(invalid, name));
        if (want == NULL && rc != 0)
            fail_msg("%s: %s: unexpected error: %s", where, name, err.message);
        if (want != NULL && (rc == 0 || strncmp(err.message, want, strlen(want)) != 0))
            fail_msg("%s: %s: rc %d, message \"%s\", expected it to start \"%s\"", where, name, rc, err.message, want);
    }
    assert_int_equal(hypernode_count(h), n);
    return h;
}

/* One case: a fixture's nodes in a cache, its HyperNodes in a set. */
struct tcase {
    json_t *fx;
    struct cache *c;
    struct hypernodes *h;
};

/* Loads file's case (reverse: HyperNodes upserted backwards, results not checked). */
static void tcase_open(struct tcase *t, const char *file, int reverse)
{
    t->fx = fixture_json(file);
    t->c = nodes_cache(t->fx);
    t->h = load(file, t->fx, reverse);
}

static void tcase_close(struct tcase *t)
{
    hypernode_destroy(t->h);
    cache_destroy(t->c);
    json_decref(t->fx);
}

/* Fails unless t's set over its nodes resolves to want (stolen); where names the case. */
static void expect_domains(const char *where, const struct tcase *t, json_t *want)
{
    json_t *got = domains_json(t->h, t->c);
    fixture_check_json(where, "domains", got, want);
    json_decref(got);
    json_decref(want);
}

static json_t *want_domains(const struct tcase *t)
{
    return json_deep_copy(json_object_get(json_object_get(t->fx, "want"), "domains"));
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t count;
    char **files = fixture_list("hypernode", &count);
    assert_true(count >= 6);
    for (size_t f = 0; f < count; f++) {
        struct tcase t;
        tcase_open(&t, files[f], 0);
        expect_domains(files[f], &t, want_domains(&t));
        tcase_close(&t);
    }
    fixture_list_free(files, count);
}

/* Children before parents, parents before children: the same domains, in the same order (tier, then name). */
static void test_order_independent(void **state)
{
    (void)state;
    static const char *const cases[] = {"hypernode/nested.json", "hypernode/label.json", "hypernode/regex.json"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tcase t;
        tcase_open(&t, cases[i], 1);
        expect_domains(cases[i], &t, want_domains(&t));
        tcase_close(&t);
    }
}

/* A HyperNode (new) of one regexMatch Node member; tier < 0: none. */
static json_t *rack(const char *name, int tier, const char *pattern)
{
    json_t *o = json_pack("{s:{s:s}, s:{s:[{s:s, s:{s:{s:s}}}]}}", "metadata", "name", name, "spec", "members", "type", "Node",
                          "selector", "regexMatch", "pattern", pattern);
    if (tier >= 0)
        json_object_set_new(json_object_get(o, "spec"), "tier", json_integer(tier));
    return o;
}

/* Upserts obj (stolen) into t's set; returns the result, err filled. */
static int upsert_new(struct tcase *t, json_t *obj, struct error *err)
{
    int rc = hypernode_upsert(t->h, obj, err);
    json_decref(obj);
    return rc;
}

/* Every change bumps the generation; replacing keeps one HyperNode; deleting an absent one changes nothing. */
static void test_generation(void **state)
{
    (void)state;
    struct tcase t = {fixture_json("hypernode/exact.json"), NULL, hypernode_create()};
    t.c = nodes_cache(t.fx);
    struct error err = {{0}};
    uint64_t g0 = hypernode_generation(t.h);
    assert_int_equal(upsert_new(&t, rack("r1", 1, "^rack1-"), &err), 0);
    uint64_t g1 = hypernode_generation(t.h);
    assert_true(g1 > g0);

    /* Replaced by an invalid version: still one HyperNode, no domain. */
    assert_int_equal(upsert_new(&t, rack("r1", -1, "^rack1-"), &err), -1);
    assert_string_equal(err.message, "spec.tier: missing");
    assert_true(hypernode_generation(t.h) > g1);
    assert_int_equal(hypernode_count(t.h), 1);
    expect_domains("invalid", &t, json_array());

    /* Fixed, and its selector changed: the new one counts. */
    assert_int_equal(upsert_new(&t, rack("r1", 1, "^rack2-"), &err), 0);
    expect_domains("replaced", &t, json_pack("[{s:s, s:i, s:[s,s]}]", "name", "r1", "tier", 1, "nodes", "rack2-a", "rack2-b"));

    uint64_t g2 = hypernode_generation(t.h);
    hypernode_delete(t.h, "absent");
    assert_true(hypernode_generation(t.h) == g2);
    hypernode_delete(t.h, "r1");
    assert_true(hypernode_generation(t.h) > g2);
    assert_int_equal(hypernode_count(t.h), 0);
    expect_domains("deleted", &t, json_array());

    /* Without a name it cannot be kept. */
    assert_int_equal(upsert_new(&t, json_pack("{s:{s:i}}", "spec", "tier", 1), &err), -1);
    assert_string_equal(err.message, "metadata.name: missing");
    assert_int_equal(hypernode_count(t.h), 0);
    tcase_close(&t);
}

/* Breaking a cycle (deleting one of its HyperNodes) brings the other back. */
static void test_cycle_broken(void **state)
{
    (void)state;
    struct tcase t;
    tcase_open(&t, "hypernode/cycle.json", 0);
    hypernode_delete(t.h, "b");
    expect_domains("cycle broken", &t,
                   json_pack("[{s:s, s:i, s:[s]}, {s:s, s:i, s:[s,s]}]", "name", "a", "tier", 1, "nodes", "rack1-a", "name", "c",
                             "tier", 3, "nodes", "rack1-a", "rack3-a"));
    tcase_close(&t);
}

/* A node that leaves the cache leaves its domains; one that joins and matches enters them. */
static void test_follows_nodes(void **state)
{
    (void)state;
    struct tcase t;
    tcase_open(&t, "hypernode/nested.json", 0);
    cache_delete_node(t.c, "rack3-a");
    json_t *node = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "rack1-c", "labels", "rack", "r1");
    cachefixture_upsert(t.c, "nodes", node);
    json_decref(node);
    /* rack-3 and spine-b lost their only node; rack-1, spine-a and root gained rack1-c. */
    expect_domains("nodes changed", &t,
                   json_pack("[{s:s, s:i, s:[s,s,s]}, {s:s, s:i, s:[s,s]}, {s:s, s:i, s:[s,s,s,s,s]}, {s:s, s:i, s:[s,s,s,s,s,s]}]",
                             "name", "rack-1", "tier", 1, "nodes", "rack1-a", "rack1-b", "rack1-c", "name", "rack-2", "tier", 1,
                             "nodes", "rack2-a", "rack2-b", "name", "spine-a", "tier", 2, "nodes", "rack1-a", "rack1-b", "rack1-c",
                             "rack2-a", "rack2-b", "name", "root", "tier", 3, "nodes", "other", "rack1-a", "rack1-b", "rack1-c",
                             "rack2-a", "rack2-b"));
    tcase_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),     cmocka_unit_test(test_order_independent), cmocka_unit_test(test_generation),
        cmocka_unit_test(test_cycle_broken), cmocka_unit_test(test_follows_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
