/*
 * lib/sched/place/topoplace.c (with topodomain.c and fit.c's topology part):
 * placing topology-constrained gangs, driven by tests/fixtures/topoplace/:
 * each fixture holds nodes, RayClusters (their topology annotations parsed by
 * the cache, topology.h) and pods; a case is one pass whose steps place a
 * gang's unbound members ("gang": the RayCluster; "rc": what topoplace_gang
 * returns; "record": the gang-wide set's domain, {"gang": domain or null when
 * spread, "spread": true}; "racks": the racks (label rack) of the nodes it
 * placed pods on; "why": the text when it does not fit) or "commit".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "cachefixture.h"
#include "fit.h"
#include "fixtures.h"
#include "topodomain.h"
#include "topoplace.h"

/* The unbound members of gang name, sorted larger first (n of them; caller frees). */
static struct cache_pod **unbound_members(struct cache *c, struct fit *f, const char *name, size_t *n)
{
    struct cache_gang *g = cache_gang_get(c, "default", name);
    if (g == NULL)
        fail_msg("gang %s not cached", name);
    struct cache_pod **live;
    size_t nm = admit_gang_members(g, &live);
    *n = 0;
    for (size_t i = 0; i < nm; i++) {
        if (live[i]->node == NULL)
            live[(*n)++] = live[i];
    }
    fit_sort_larger_first(f, live, *n);
    return live;
}

/* Checks "racks": the racks (label rack) of the nodes whose free room the placement changed, sorted. */
static void check_racks(const char *where, struct fit *f, const json_t *racks, const int64_t *before, uint32_t nres)
{
    struct cache_node *const *nodes;
    size_t nn = fit_nodes(f, &nodes);
    json_t *got = json_array();
    for (size_t i = 0; i < nn; i++) {
        if (memcmp(fit_node_free(f, i, NULL), before + i * nres, nres * sizeof(*before)) == 0)
            continue;
        for (uint32_t l = 0; l < nodes[i]->nlabels; l++) {
            const json_t *last = json_array_get(got, json_array_size(got) - 1);
            if (strcmp(nodes[i]->labels[l].key, "rack") == 0 &&
                (last == NULL || strcmp(json_string_value(last), nodes[i]->labels[l].value) != 0))
                json_array_append_new(got, json_string(nodes[i]->labels[l].value));
        }
    }
    if (!json_equal(got, racks)) {
        char *g = json_dumps(got, JSON_COMPACT), *w = json_dumps(racks, JSON_COMPACT);
        fail_msg("%s: placed in racks %s, expected %s", where, g, w);
    }
    json_decref(got);
}

static void check_record(const char *where, const struct topoplace_out *out, const json_t *record)
{
    const json_t *gang = json_object_get(record, "gang");
    if (gang != NULL) {
        const struct topoplace_set *s = NULL;
        for (size_t i = 0; i < out->nsets; i++) {
            if (out->sets[i].group == NULL)
                s = &out->sets[i];
        }
        if (s == NULL)
            fail_msg("%s: no gang-wide set", where);
        const char *want = json_string_value(gang), *got = s->domain != NULL ? s->domain->name : NULL;
        if ((want == NULL) != (got == NULL) || (want != NULL && strcmp(want, got) != 0))
            fail_msg("%s: gang in %s, expected %s", where, got != NULL ? got : "(spread)", want != NULL ? want : "(spread)");
    }
    if (json_is_true(json_object_get(record, "spread")) != (out->spread != 0))
        fail_msg("%s: spread %d", where, out->spread);
}

static void run_place(const char *where, struct cache *c, struct fit *f, struct topodomains *t, const json_t *step)
{
    size_t n;
    const char *name = json_string_value(json_object_get(step, "gang"));
    struct cache_pod **pods = unbound_members(c, f, name, &n);
    struct cache_gang *g = cache_gang_get(c, "default", name);
    if (g->topo == NULL)
        fail_msg("%s: gang %s has no topology request", where, name);
    uint32_t nres = fit_resources(f);
    struct cache_node *const *nodes;
    size_t nn = fit_nodes(f, &nodes);
    int64_t *before = calloc(nn * nres + 1, sizeof(*before));
    for (size_t i = 0; i < nn; i++)
        memcpy(before + i * nres, fit_node_free(f, i, NULL), nres * sizeof(*before));
    struct topoplace_out out;
    topoplace_out_init(&out);
    char *why = NULL;
    int rc = topoplace_gang(f, t, c, g->topo, pods, n, NULL, 0, &out, &why);
    if (rc != json_integer_value(json_object_get(step, "rc")))
        fail_msg("%s: rc %d (%s)", where, rc, why != NULL ? why : "");
    const char *want = json_string_value(json_object_get(step, "why"));
    if (rc != 1 && (want == NULL || strcmp(want, why) != 0))
        fail_msg("%s: why \"%s\", expected \"%s\"", where, why, want != NULL ? want : "(none)");
    if (rc == 1 && json_object_get(step, "record") != NULL)
        check_record(where, &out, json_object_get(step, "record"));
    if (rc == 1 && json_object_get(step, "racks") != NULL)
        check_racks(where, f, json_object_get(step, "racks"), before, nres);
    topoplace_out_finish(&out);
    free(why);
    free(before);
    free(pods);
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t nfiles, ncases = 0;
    char **files = fixture_list("topoplace", &nfiles);
    assert_true(nfiles >= 1);
    for (size_t i = 0; i < nfiles; i++) {
        json_t *fx = fixture_json(files[i]);
        struct cache *c = cachefixture_load(fx, 0);
        struct fit *f = fit_create(c);
        struct topodomains *t = topodomain_create();
        size_t k;
        const json_t *cs;
        json_array_foreach(json_object_get(fx, "cases"), k, cs)
        {
            char where[512];
            snprintf(where, sizeof(where), "%s: %s", files[i], json_string_value(json_object_get(cs, "comment")));
            fit_begin(f);
            topodomain_begin(t, f, c);
            size_t s;
            const json_t *step;
            json_array_foreach(json_object_get(cs, "steps"), s, step)
            {
                if (json_is_true(json_object_get(step, "commit")))
                    fit_commit(f);
                else
                    run_place(where, c, f, t, step);
            }
            fit_end(f);
            ncases++;
        }
        topodomain_destroy(t);
        fit_destroy(f);
        cache_destroy(c);
        json_decref(fx);
    }
    assert_true(ncases >= 8);
    fixture_list_free(files, nfiles);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
