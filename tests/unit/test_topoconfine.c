/*
 * lib/sched/place/topoconfine.c: driven by tests/fixtures/topoconfine/: a fixture
 * holds nodes and pods (a cache), "cases" (a pod, the domain its set went to:
 * {"key", "name"} a label domain, {"nodes": [...]} a HyperNode's, null
 * spread; the confinement expected, null for none), "records" (the sets of a
 * placement, the annotation expected) and "recorded" (a request, a record, a
 * pod: the confinement from the pass's domains).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cachefixture.h"
#include "fit.h"
#include "fixtures.h"
#include "topoconfine.h"

/* The pass's index of node name; fails the test when it is none of the pass's. */
static uint32_t node_index(const struct fit *f, const char *name)
{
    struct cache_node *const *nodes;
    size_t nn = fit_nodes(f, &nodes);
    for (size_t i = 0; i < nn; i++) {
        if (strcmp(nodes[i]->name, name) == 0)
            return (uint32_t)i;
    }
    fail_msg("node %s is not one of the pass's", name);
    return 0;
}

/* Fails unless got (new, may be NULL) equals want (borrowed; JSON null: none). */
static void expect_json(const char *where, json_t *got, const json_t *want)
{
    if (json_is_null(want) ? got == NULL : json_equal(got, want)) {
        json_decref(got);
        return;
    }
    char *g = got != NULL ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS) : strdup("(none)");
    char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    fail_msg("%s:\n got %s\nwant %s", where, g, w);
}

static void run_case(const char *where, struct cache *c, struct fit *f, const json_t *cs)
{
    const struct cache_pod *pod = cache_pod_get(c, "default", json_string_value(json_object_get(cs, "pod")));
    assert_non_null(pod);
    const json_t *dom = json_object_get(cs, "domain");
    struct topo_domain d = {.name = json_string_value(json_object_get(dom, "name")),
                            .key = json_string_value(json_object_get(dom, "key"))};
    const json_t *nodes = json_object_get(dom, "nodes");
    uint32_t idx[16];
    d.nn = json_array_size(nodes);
    assert_true(d.nn <= 16);
    for (size_t i = 0; i < d.nn; i++)
        idx[i] = node_index(f, json_string_value(json_array_get(nodes, i)));
    d.nodes = idx;
    struct topo_constraint tc = {.mode = TOPO_MODE_HARD, .by = d.key != NULL ? TOPO_BY_LABEL : TOPO_BY_HYPERNODE};
    struct topoplace_set s = {.c = &tc, .domain = json_is_null(dom) ? NULL : &d};
    expect_json(where, topoconfine_pod(&s, pod, f), json_object_get(cs, "confine"));
}

static void test_confine(void **state)
{
    (void)state;
    json_t *fx = fixture_json("topoconfine/confine.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct fit *f = fit_create(c);
    fit_begin(f);
    size_t k;
    const json_t *cs;
    json_array_foreach(json_object_get(fx, "cases"), k, cs)
    {
        char where[256];
        snprintf(where, sizeof(where), "case %zu (%s)", k, json_string_value(json_object_get(cs, "comment")));
        run_case(where, c, f, cs);
    }
    assert_true(k >= 9);
    assert_null(topoconfine_pod(NULL, cache_pod_get(c, "default", "plain"), f)); /* in no set */
    fit_end(f);
    fit_destroy(f);
    cache_destroy(c);
    json_decref(fx);
}

static void test_record(void **state)
{
    (void)state;
    json_t *fx = fixture_json("topoconfine/confine.json");
    size_t k;
    const json_t *rec;
    json_array_foreach(json_object_get(fx, "records"), k, rec)
    {
        const json_t *sets = json_object_get(rec, "sets");
        size_t n = json_array_size(sets);
        struct topoplace_out out;
        memset(&out, 0, sizeof(out));
        out.sets = calloc(n + 1, sizeof(*out.sets));
        struct topo_domain *doms = calloc(n + 1, sizeof(*doms));
        for (size_t i = 0; i < n; i++) {
            const json_t *s = json_array_get(sets, i);
            doms[i].name = json_string_value(json_object_get(s, "domain"));
            out.sets[i].group = json_string_value(json_object_get(s, "group"));
            out.sets[i].replica = json_string_value(json_object_get(s, "replica"));
            out.sets[i].domain = doms[i].name != NULL ? &doms[i] : NULL;
        }
        out.nsets = out.cap = n;
        out.spread = json_is_true(json_object_get(rec, "spread"));
        char *got = topoconfine_record(&out);
        if (strcmp(got, json_string_value(json_object_get(rec, "record"))) != 0)
            fail_msg("record %zu (%s): got %s", k, json_string_value(json_object_get(rec, "comment")), got);
        free(got);
        free(doms);
        free(out.sets);
    }
    assert_true(k >= 3);
    json_decref(fx);
}

/* A constraint from {"mode": "hard" | "soft", "key": label key} (borrowed strings); absent: none. */
static struct topo_constraint constraint(const json_t *o)
{
    const char *mode = json_string_value(json_object_get(o, "mode"));
    struct topo_constraint c = {.mode = mode == NULL                ? TOPO_MODE_NONE
                                        : strcmp(mode, "hard") == 0 ? TOPO_MODE_HARD
                                                                    : TOPO_MODE_SOFT,
                                .by = TOPO_BY_LABEL,
                                .key = (char *)json_string_value(json_object_get(o, "key"))};
    return c;
}

static void test_recorded(void **state)
{
    (void)state;
    json_t *fx = fixture_json("topoconfine/confine.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct fit *f = fit_create(c);
    struct topodomains *t = topodomain_create();
    fit_begin(f);
    topodomain_begin(t, f, c);
    size_t k;
    const json_t *cs;
    json_array_foreach(json_object_get(fx, "recorded"), k, cs)
    {
        const json_t *rq = json_object_get(cs, "request");
        struct topo_group groups[4];
        struct topo_request r = {.gang = constraint(json_object_get(rq, "gang")),
                                 .include_head = json_is_true(json_object_get(rq, "include_head")),
                                 .groups = groups,
                                 .ngroups = json_array_size(json_object_get(rq, "groups"))};
        assert_true(r.ngroups <= 4);
        for (size_t i = 0; i < r.ngroups; i++) {
            const json_t *g = json_array_get(json_object_get(rq, "groups"), i);
            groups[i] = (struct topo_group){(char *)json_string_value(json_object_get(g, "name")),
                                            json_integer_value(json_object_get(g, "hosts")), constraint(g)};
        }
        char where[256];
        snprintf(where, sizeof(where), "recorded %zu (%s)", k, json_string_value(json_object_get(cs, "comment")));
        const struct cache_pod *pod = cache_pod_get(c, "default", json_string_value(json_object_get(cs, "pod")));
        assert_non_null(pod);
        const char *record = json_string_value(json_object_get(cs, "record"));
        expect_json(where, topoconfine_recorded(record, &r, pod, t, f), json_object_get(cs, "confine"));
    }
    assert_true(k >= 10);
    fit_end(f);
    topodomain_destroy(t);
    fit_destroy(f);
    cache_destroy(c);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_confine),
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
