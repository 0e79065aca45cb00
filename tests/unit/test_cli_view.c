#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clicases.h"
#include "fixtures.h"
#include "view.h"

/* Every key of want must equal got's. */
static void check_row(const char *where, size_t i, const json_t *got, const json_t *want)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)want, key, v)
    {
        char what[128];
        snprintf(what, sizeof(what), "row %zu %s", i, key);
        const json_t *g = json_object_get(got, key);
        fixture_check_json(where, what, g != NULL ? g : json_null(), v);
    }
}

/* tests/fixtures/cli/view-cases.json: the rows of gangs and queues, field by field. */
static void test_cases(void **state)
{
    json_t *cases = fixture_json("cli/view-cases.json");
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *where = clicase_str(c, "comment");
        json_t *snap = clicase_snapshot(c), *rows;
        if (strcmp(clicase_str(c, "command"), "queues") == 0) {
            rows = view_queues(snap, clicase_str(c, "queue"));
        } else {
            struct view_filter f = {.namespace_ = clicase_str(c, "namespace"), .queue = clicase_str(c, "queue")};
            rows = view_gangs(snap, clicase_now(c), &f);
        }
        const json_t *want = json_object_get(c, "rows");
        if (json_array_size(rows) != json_array_size(want)) {
            char *d = fixture_dump(rows);
            fail_msg("%s: %zu rows, expected %zu: %s", where, json_array_size(rows), json_array_size(want), d);
        }
        for (size_t r = 0; r < json_array_size(want); r++)
            check_row(where, r, json_array_get(rows, r), json_array_get(want, r));
        json_decref(rows);
        json_decref(snap);
    }
    json_decref(cases);
}

/* The snapshot is only read: the same rows twice, and the fixture unchanged. */
static void test_snapshot_unchanged(void **state)
{
    json_t *snap = fixture_json("cli/busy.json"), *copy = json_deep_copy(snap);
    json_t *a = view_gangs(snap, 1714561200, NULL), *b = view_gangs(snap, 1714561200, NULL);
    assert_true(json_equal(a, b));
    assert_true(json_equal(snap, copy));
    json_decref(a);
    json_decref(b);
    json_decref(copy);
    json_decref(snap);
}

/* An empty snapshot, and one whose arrays are missing or of the wrong type, give no rows. */
/* The row of name in rows (borrowed), or NULL. */
static const json_t *row_named(const json_t *rows, const char *name)
{
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "name")), name) == 0)
            return row;
    }
    return NULL;
}

/*
 * tests/fixtures/cli/reasons-cases.json: WAITING FOR comes from the reason
 * code, the same when every message says something else ("{message}" where
 * it quotes the message: no code, or evicted).
 */
static void check_reason(const json_t *c, json_t *snap, const char *where, void *ctx)
{
    (void)ctx;
    json_t *rows = view_gangs(snap, clicase_now(c), NULL);
    const json_t *row = row_named(rows, clicase_str(c, "name"));
    if (row == NULL)
        fail_msg("%s: no row", where);
    json_t *want = json_pack("[O]", json_object_get(c, "waitingFor"));
    json_t *want_msg = clicase_with_message(want, json_string_value(json_object_get(row, "message")));
    fixture_check_json(where, "waitingFor", json_object_get(row, "waitingFor"), json_array_get(want_msg, 0));
    json_decref(want_msg);
    json_decref(want);
    json_decref(rows);
}

static void test_reason_codes(void **state)
{
    clicase_each_reason(check_reason, NULL);
}

static void test_empty(void **state)
{
    json_t *empty = json_object(), *odd = json_pack("{s:s,s:i,s:n}", "podGroups", "x", "queues", 3, "owners");
    json_t *rows;
    rows = view_gangs(empty, 0, NULL);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    rows = view_gangs(odd, 0, NULL);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    rows = view_queues(odd, NULL);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    json_decref(empty);
    json_decref(odd);
}

static void test_parse_time(void **state)
{
    assert_int_equal(view_parse_time("1970-01-01T00:00:00Z"), 0);
    assert_int_equal(view_parse_time("2024-05-01T11:00:00Z"), 1714561200);
    assert_int_equal(view_parse_time("2024-05-01T11:00:00.123456Z"), 1714561200);
    assert_int_equal(view_parse_time("2024-05-01T11:00:00+02:00"), -1);
    assert_int_equal(view_parse_time("2024-05-01 11:00:00Z"), -1);
    assert_int_equal(view_parse_time("2024-13-01T11:00:00Z"), -1);
    assert_int_equal(view_parse_time("yesterday"), -1);
    assert_int_equal(view_parse_time(""), -1);
    assert_int_equal(view_parse_time(NULL), -1);
}

static void test_age(void **state)
{
    static const struct {
        long long s;
        const char *want;
    } cases[] = {{-5, "0s"},      {0, "0s"},        {119, "119s"},     {120, "2m0s"},    {599, "9m59s"},
                 {600, "10m"},    {10799, "179m"},  {10800, "3h0m"},   {28799, "7h59m"}, {28800, "8h"},
                 {172799, "47h"}, {172800, "2d0h"}, {691199, "7d23h"}, {691200, "8d"},   {40000000, "462d"}};
    char buf[16];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(view_age(cases[i].s, buf, sizeof(buf)), cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases), cmocka_unit_test(test_snapshot_unchanged),
        cmocka_unit_test(test_empty), cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_age),   cmocka_unit_test(test_reason_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
