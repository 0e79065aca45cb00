/*
 * Unit tests of cli/domains.c: the rows of `kubectl raygate domains` from
 * snapshot fixtures (tests/fixtures/cli/domains-cases.json).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clicases.h"
#include "domains.h"
#include "fixtures.h"

/* The rows a case asks for: "asked" true, else the domains of its key / hypernodes / tier (new). */
static json_t *rows_of_case(const json_t *c, const json_t *snap)
{
    if (json_is_true(json_object_get(c, "asked")))
        return domains_asked(snap);
    struct domains_query q = clicase_domains_query(c);
    return domains_view(snap, &q);
}

/* Each case's rows: as many as expected, and every key each expected row gives equal to the row's. */
static void test_cases(void **state)
{
    (void)state;
    json_t *cases = fixture_json("cli/domains-cases.json");
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *where = clicase_str(c, "comment");
        json_t *snap = clicase_snapshot(c), *rows = rows_of_case(c, snap);
        const json_t *want = json_object_get(c, "rows");
        if (json_array_size(rows) != json_array_size(want)) {
            char *d = fixture_dump(rows);
            fail_msg("%s: %zu rows, expected %zu: %s", where, json_array_size(rows), json_array_size(want), d);
        }
        for (size_t r = 0; r < json_array_size(want); r++) {
            const char *key;
            json_t *v;
            json_object_foreach(json_array_get(want, r), key, v)
            {
                char what[128];
                snprintf(what, sizeof(what), "row %zu %s", r, key);
                const json_t *got = json_object_get(json_array_get(rows, r), key);
                fixture_check_json(where, what, got != NULL ? got : json_null(), v);
            }
        }
        json_decref(rows);
        json_decref(snap);
    }
    json_decref(cases);
}

/* The snapshot is only read: the same rows twice, and the fixture unchanged. */
static void test_snapshot_unchanged(void **state)
{
    (void)state;
    json_t *snap = fixture_json("cli/domains.json"), *copy = json_deep_copy(snap);
    struct domains_query q = {.hypernodes = 1};
    json_t *a = domains_view(snap, &q), *b = domains_view(snap, &q);
    assert_true(json_equal(a, b));
    assert_true(json_equal(snap, copy));
    json_decref(a);
    json_decref(b);
    json_decref(copy);
    json_decref(snap);
}

/* No nodes, no HyperNode CRD (no "hyperNodes"), arrays of the wrong type: no rows, no crash. */
static void test_empty(void **state)
{
    (void)state;
    json_t *snaps[] = {json_object(), json_pack("{s:s,s:i,s:{}}", "nodes", "x", "hyperNodes", 3, "owners")};
    for (size_t i = 0; i < 2; i++) {
        struct domains_query label = {.key = "rack"}, hyper = {.hypernodes = 1, .tier = 2};
        json_t *a = domains_view(snaps[i], &label), *b = domains_view(snaps[i], &hyper), *c = domains_asked(snaps[i]);
        assert_int_equal(json_array_size(a) + json_array_size(b) + json_array_size(c), 0);
        json_decref(a);
        json_decref(b);
        json_decref(c);
        json_decref(snaps[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_snapshot_unchanged),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
