/*
 * lib/sched/place/fit.c: placement on the nodes' free room, driven by tests/fixtures/fit/:
 * each fixture holds nodes, pods and cases; a case is one pass (fit_begin to
 * fit_end) whose steps place pods tentatively ("place": the pods, "placed":
 * what fit_place returns, "why": its text when one does not fit), "commit",
 * "reserve" a pod as an admitted one (fithold.h; "held": what fithold_reserve
 * returns), "sort" pods larger first ("order"), "mark" the tentative
 * changes, "release" a bound pod's room ("released": what fit_release
 * returns) and "undo" back to the mark. "delete_nodes" are
 * deleted from the cache before the case's pass.
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
#include "fithold.h"
#include "fixtures.h"

/* The cached pods named by names (a JSON array of strings), into pods (n of them). */
static struct cache_pod **pods_named(const struct cache *c, const json_t *names, size_t *n)
{
    *n = json_array_size(names);
    struct cache_pod **pods = calloc(*n + 1, sizeof(*pods));
    for (size_t i = 0; i < *n; i++) {
        const char *name = json_string_value(json_array_get(names, i));
        pods[i] = cache_pod_get(c, "default", name);
        if (pods[i] == NULL)
            fail_msg("pod %s not cached", name);
    }
    return pods;
}

static void run_step(const char *where, struct cache *c, struct fit *f, const json_t *step)
{
    static size_t mark;
    size_t n;
    if (json_object_get(step, "place") != NULL) {
        struct cache_pod **pods = pods_named(c, json_object_get(step, "place"), &n);
        char *why = NULL;
        size_t placed = fit_place(f, pods, n, &why);
        if ((json_int_t)placed != json_integer_value(json_object_get(step, "placed")))
            fail_msg("%s: placed %zu, expected %lld (%s)", where, placed,
                     (long long)json_integer_value(json_object_get(step, "placed")), why != NULL ? why : "");
        const char *want = json_string_value(json_object_get(step, "why"));
        if (placed == n) {
            assert_null(want);
            assert_null(why);
        } else if (want == NULL || why == NULL || strcmp(want, why) != 0) {
            fail_msg("%s: why \"%s\", expected \"%s\"", where, why != NULL ? why : "(none)", want != NULL ? want : "(none)");
        }
        free(why);
        free(pods);
    } else if (json_is_true(json_object_get(step, "commit"))) {
        fit_commit(f);
    } else if (json_is_true(json_object_get(step, "mark"))) {
        mark = fit_mark(f);
    } else if (json_object_get(step, "release") != NULL) {
        int released = fit_release(f, cache_pod_get(c, "default", json_string_value(json_object_get(step, "release"))));
        assert_int_equal(released, json_integer_value(json_object_get(step, "released")));
    } else if (json_is_true(json_object_get(step, "undo"))) {
        fit_undo(f, mark);
    } else if (json_object_get(step, "reserve") != NULL) {
        int held = fithold_reserve(f, cache_pod_get(c, "default", json_string_value(json_object_get(step, "reserve"))));
        if (json_object_get(step, "held") != NULL)
            assert_int_equal(held, json_integer_value(json_object_get(step, "held")));
    } else if (json_object_get(step, "sort") != NULL) {
        struct cache_pod **pods = pods_named(c, json_object_get(step, "sort"), &n);
        fit_sort_larger_first(f, pods, n);
        const json_t *order = json_object_get(step, "order");
        assert_int_equal(json_array_size(order), n);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(pods[i]->name, json_string_value(json_array_get(order, i))) != 0)
                fail_msg("%s: position %zu is %s, expected %s", where, i, pods[i]->name,
                         json_string_value(json_array_get(order, i)));
        }
        free(pods);
    } else {
        fail_msg("%s: unknown step", where);
    }
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t nfiles, ncases = 0;
    char **files = fixture_list("fit", &nfiles);
    assert_true(nfiles >= 1);
    for (size_t i = 0; i < nfiles; i++) {
        json_t *fx = fixture_json(files[i]);
        struct cache *c = cachefixture_load(fx, 0);
        struct fit *f = fit_create(c); /* one for every pass, as the decision state keeps it */
        size_t k;
        const json_t *cs;
        json_array_foreach(json_object_get(fx, "cases"), k, cs)
        {
            char where[512];
            snprintf(where, sizeof(where), "%s: %s", files[i], json_string_value(json_object_get(cs, "comment")));
            size_t d;
            const json_t *name;
            json_array_foreach(json_object_get(cs, "delete_nodes"), d, name)
            {
                cache_delete_node(c, json_string_value(name));
                fit_nodes_changed(f);
            }
            fit_begin(f);
            size_t s;
            const json_t *step;
            json_array_foreach(json_object_get(cs, "steps"), s, step) run_step(where, c, f, step);
            fit_end(f);
            ncases++;
        }
        fit_destroy(f);
        cache_destroy(c);
        json_decref(fx);
    }
    assert_true(ncases >= 10);
    fixture_list_free(files, nfiles);
}

/* ---- a fit kept across passes (restore) against one built anew, while pods come, go and are placed ---- */

static json_t *node_json(int i, int cpu)
{
    char name[16], cpus[16];
    snprintf(name, sizeof(name), "n-%02d", i);
    snprintf(cpus, sizeof(cpus), "%d", cpu);
    json_t *spec = i == 3 ? json_pack("{s:[{s:s,s:s}]}", "taints", "key", "x", "effect", "NoSchedule") : json_object();
    return json_pack("{s:s,s:s,s:{s:s},s:o,s:{s:{s:s,s:s,s:s},s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind", "Node", "metadata",
                     "name", name, "spec", spec, "status", "allocatable", "cpu", cpus, "memory", "32Gi", "pods", "6", "conditions",
                     "type", "Ready", "status", "True");
}

/* Pod p of the test (its size from its number), bound to node (or not: -1). */
static json_t *pod_json(int p, int node)
{
    char name[16], uid[40], cpu[16], mem[16], on[16];
    snprintf(name, sizeof(name), "p-%03d", p);
    snprintf(uid, sizeof(uid), "00000000-0000-0000-0000-%012d", p);
    snprintf(cpu, sizeof(cpu), "%d", 1 + p % 4);
    snprintf(mem, sizeof(mem), "%dGi", 1 + p % 7);
    snprintf(on, sizeof(on), "n-%02d", node);
    json_t *spec = json_pack("{s:[{s:s,s:s,s:{s:{s:s,s:s}}}]}", "containers", "name", "main", "image", "x", "resources", "requests",
                             "cpu", cpu, "memory", mem);
    if (node >= 0)
        json_object_set_new(spec, "nodeName", json_string(on));
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s},s:o,s:{s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
                     "namespace", "default", "uid", uid, "resourceVersion", "1", "creationTimestamp", "2024-05-01T10:00:00Z",
                     "spec", spec, "status", "phase", node >= 0 ? "Running" : "Pending");
}

/* The two fits see the same room: every node's row, and the same outcome for the same pods placed. */
static void assert_same_room(int round, struct fit *kept, struct fit *fresh, struct cache_pod **probe, size_t nprobe)
{
    struct cache_node *const *nodes;
    size_t nn = fit_nodes(kept, &nodes);
    assert_int_equal(nn, fit_nodes(fresh, &nodes));
    for (size_t i = 0; i < nn; i++) {
        int64_t pa, pb;
        const int64_t *a = fit_node_free(kept, i, &pa), *b = fit_node_free(fresh, i, &pb);
        if (pa != pb || memcmp(a, b, fit_resources(kept) * sizeof(*a)) != 0)
            fail_msg("round %d: node %zu's room differs (pods %lld, %lld; cpu %lld, %lld)", round, i, (long long)pa, (long long)pb,
                     (long long)a[0], (long long)b[0]);
    }
    char *wa = NULL, *wb = NULL;
    size_t ra = fit_place(kept, probe, nprobe, &wa), rb = fit_place(fresh, probe, nprobe, &wb);
    if (ra != rb || (wa != NULL) != (wb != NULL) || (wa != NULL && strcmp(wa, wb) != 0))
        fail_msg("round %d: placed %zu (%s) kept, %zu (%s) fresh", round, ra, wa ? wa : "", rb, wb ? wb : "");
    free(wa);
    free(wb);
    fit_undo(kept, 0);
    fit_undo(fresh, 0);
}

static void test_restore_as_rebuild(void **state)
{
    (void)state;
    enum { NODES = 96, PODS = 300 };
    struct cache *c = cache_create();
    for (int i = 0; i < NODES; i++) {
        json_t *n = node_json(i, 8);
        cachefixture_upsert(c, "nodes", n);
        json_decref(n);
    }
    int where[PODS]; /* -2 absent, -1 pending, else its node */
    for (int p = 0; p < PODS; p++)
        where[p] = -2;
    struct fit *kept = fit_create(c);
    unsigned seed = 37;
    for (int round = 0; round < 300; round++) {
        int changes = round % 10 == 9 ? 40 : 3; /* mostly few (the rows caught up), sometimes many (rebuilt) */
        for (int k = 0; k < changes; k++) {     /* pods come, go, are bound */
            int p = rand_r(&seed) % PODS, to = where[p] == -2 ? (int)(rand_r(&seed) % (NODES + 1)) - 1 : -2;
            if (to == -2) {
                char name[16];
                snprintf(name, sizeof(name), "p-%03d", p);
                cache_delete_pod(c, "default", name);
            } else {
                json_t *j = pod_json(p, to);
                cachefixture_upsert(c, "pods", j);
                json_decref(j);
            }
            where[p] = to;
        }
        if (round % 50 == 49) { /* a node's allocatable changes: the nodes are looked at again */
            json_t *n = node_json(rand_r(&seed) % NODES, 4 + round % 8);
            cachefixture_upsert(c, "nodes", n);
            json_decref(n);
            fit_nodes_changed(kept);
        }
        struct fit *fresh = fit_create(c);
        fit_begin(kept);
        fit_begin(fresh);
        struct cache_pod *pending[PODS];
        size_t np = 0;
        for (int p = 0; p < PODS; p++) {
            char name[16];
            snprintf(name, sizeof(name), "p-%03d", p);
            if (where[p] == -1)
                pending[np++] = cache_pod_get(c, "default", name);
        }
        fit_sort_larger_first(kept, pending, np);
        assert_same_room(round, kept, fresh, pending, np < 5 ? np : 5);
        /* The kept fit's pass: some placed and committed, some placed and undone, bound pods released and undone. */
        for (size_t i = 0; i < np && (round % 10 == 9 || i < 2); i++) {
            char *why = NULL;
            size_t mark = fit_mark(kept);
            if (fit_place(kept, &pending[i], 1, &why) == 1 && rand_r(&seed) % 3 == 0)
                fit_undo(kept, mark);
            else
                fit_commit(kept);
            free(why);
        }
        size_t mark = fit_mark(kept);
        for (int p = 0; p < PODS; p++) {
            char name[16];
            snprintf(name, sizeof(name), "p-%03d", p);
            if (where[p] >= 0 && rand_r(&seed) % 100 == 0)
                fit_release(kept, cache_pod_get(c, "default", name));
        }
        fit_undo(kept, mark);
        fit_end(kept);
        fit_end(fresh);
        fit_destroy(fresh);
    }
    fit_destroy(kept);
    cache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_restore_as_rebuild),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
