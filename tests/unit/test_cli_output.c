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
#include "output.h"
#include "view.h"
#include "why.h"

/* A domains case's result (new): what the gangs ask for without key and hypernodes, else the domains. */
static json_t *domains_items(const json_t *c, const json_t *snap)
{
    struct domains_query q = clicase_domains_query(c);
    return json_pack("{s:o}", "items", q.key == NULL && !q.hypernodes ? domains_asked(snap) : domains_view(snap, &q));
}

/* The text a case prints: the command's rows (or why's result) in its format with its flags (new string). */
static char *render(const json_t *c)
{
    json_t *snap = clicase_snapshot(c), *v;
    const char *cmd = clicase_str(c, "command"), *format = clicase_str(c, "format");
    unsigned flags = 0;
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(c, "flags"), i, f)
    {
        flags |= strcmp(json_string_value(f), "wide") == 0 ? OUTPUT_WIDE : 0;
        flags |= strcmp(json_string_value(f), "colour") == 0 ? OUTPUT_COLOUR : 0;
    }
    struct view_filter filter = {.namespace_ = clicase_str(c, "namespace"), .queue = clicase_str(c, "queue")};
    if (strcmp(cmd, "queues") == 0)
        v = json_pack("{s:o}", "items", view_queues(snap, clicase_str(c, "queue")));
    else if (strcmp(cmd, "gangs") == 0)
        v = json_pack("{s:o}", "items", view_gangs(snap, clicase_now(c), &filter));
    else if (strcmp(cmd, "domains") == 0)
        v = domains_items(c, snap);
    else
        v = why_explain(snap, clicase_now(c), clicase_str(c, "namespace"), clicase_str(c, "name"));
    assert_non_null(v);
    struct util_buf b = {0};
    if (strcmp(format, "json") == 0)
        output_json(&b, v);
    else if (strcmp(format, "yaml") == 0)
        assert_int_equal(output_yaml(&b, v), 0);
    else if (strcmp(cmd, "queues") == 0)
        output_queues_table(&b, json_object_get(v, "items"), flags);
    else if (strcmp(cmd, "gangs") == 0)
        output_gangs_table(&b, json_object_get(v, "items"), flags);
    else if (strcmp(cmd, "domains") == 0 && (clicase_str(c, "key") != NULL || json_is_true(json_object_get(c, "hypernodes"))))
        output_domains_table(&b, json_object_get(v, "items"), flags);
    else if (strcmp(cmd, "domains") == 0)
        output_asked_table(&b, json_object_get(v, "items"), flags);
    else
        output_why(&b, v, flags);
    json_decref(v);
    json_decref(snap);
    return util_buf_take(&b);
}

/*
 * tests/fixtures/cli/output-cases.json: each case's text against its
 * expected file. RAYGATE_CLI_WRITE_EXPECTED=1 writes the files instead (then
 * read them before committing).
 */
static void test_cases(void **state)
{
    json_t *cases = fixture_json("cli/output-cases.json");
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        char rel[256];
        snprintf(rel, sizeof(rel), "cli/%s", clicase_str(c, "expect"));
        char *got = render(c);
        if (getenv("RAYGATE_CLI_WRITE_EXPECTED") != NULL) {
            char *p = fixture_path(rel);
            FILE *f = fopen(p, "w");
            assert_non_null(f);
            fputs(got, f);
            fclose(f);
            free(p);
        }
        size_t len;
        char *want = fixture_read(rel, &len);
        if (strcmp(got, want) != 0)
            fail_msg("%s: got\n%s\nexpected (%s)\n%s", clicase_str(c, "comment"), got, rel, want);
        free(want);
        free(got);
    }
    json_decref(cases);
}

/* Colour codes only with OUTPUT_COLOUR, and they do not shift the columns. */
static void test_colour(void **state)
{
    json_t *snap = fixture_json("cli/busy.json"), *rows = view_gangs(snap, 1714561200, NULL);
    struct util_buf plain = {0}, colour = {0};
    output_gangs_table(&plain, rows, 0);
    output_gangs_table(&colour, rows, OUTPUT_COLOUR);
    assert_null(strchr(plain.data, '\033'));
    assert_non_null(strstr(colour.data, "\033[35mBackoff\033[0m"));
    assert_non_null(strstr(colour.data, "\033[33mWaiting\033[0m"));
    assert_non_null(strstr(colour.data, "\033[32mRunning\033[0m"));
    /* Without the escapes, the same text. */
    struct util_buf stripped = {0};
    for (const char *p = colour.data; *p != '\0'; p++) {
        if (*p == '\033') {
            p = strchr(p, 'm');
            continue;
        }
        util_buf_append(&stripped, p, 1);
    }
    assert_string_equal(stripped.data, plain.data);
    util_buf_finish(&plain);
    util_buf_finish(&colour);
    util_buf_finish(&stripped);
    json_decref(rows);
    json_decref(snap);
}

/* A long reason is cut to OUTPUT_REASON_WIDTH characters ending in "…"; wide shows the full message. */
static void test_cut(void **state)
{
    char long_reason[200];
    memset(long_reason, 'x', sizeof(long_reason) - 1);
    long_reason[sizeof(long_reason) - 1] = '\0';
    json_t *rows =
        json_pack("[{s:s,s:s,s:s,s:s,s:s,s:{s:i,s:i},s:s,s:s}]", "namespace", "ns", "name", "g", "kind", "RayCluster", "queue", "q",
                  "state", "Waiting", "pods", "bound", 0, "min", 1, "waitingFor", long_reason, "message", "the full message");
    struct util_buf b = {0}, w = {0};
    output_gangs_table(&b, rows, 0);
    output_gangs_table(&w, rows, OUTPUT_WIDE);
    char want[OUTPUT_REASON_WIDTH + 8];
    memset(want, 'x', OUTPUT_REASON_WIDTH - 1);
    strcpy(want + OUTPUT_REASON_WIDTH - 1, "\u2026   ");
    assert_non_null(strstr(b.data, want));
    assert_null(strstr(b.data, long_reason));
    assert_non_null(strstr(w.data, "the full message\n"));
    util_buf_finish(&b);
    util_buf_finish(&w);
    json_decref(rows);
}

/* Strings that YAML would read as something else are quoted; plain ones are not. */
static void test_yaml_scalars(void **state)
{
    json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:b,s:n,s:s}", "a", "true", "b", "3", "c", "", "d", "null", "e", "Waiting", "f",
                          7, "g", 1, "h", "t", "2024-05-01T11:00:00Z");
    struct util_buf b = {0};
    assert_int_equal(output_yaml(&b, v), 0);
    const char *want[] = {"a: \"true\"\n", "b: \"3\"\n",   "c: \"\"\n",
                          "d: \"null\"\n", "e: Waiting\n", "f: 7\n",
                          "g: true\n",     "h: null\n",    "t: \"2024-05-01T11:00:00Z\"\n"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (strstr(b.data, want[i]) == NULL)
            fail_msg("no %s in\n%s", want[i], b.data);
    }
    util_buf_finish(&b);
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_colour),
        cmocka_unit_test(test_cut),
        cmocka_unit_test(test_yaml_scalars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
