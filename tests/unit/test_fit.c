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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
