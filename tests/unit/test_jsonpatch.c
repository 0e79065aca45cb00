#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "jsonpatch.h"

static void test_apply_cases(void **state)
{
    (void)state;
    json_t *cases = fixture_json("jsonpatch/apply.json");
    size_t i;
    json_t *c;
    assert_true(json_array_size(cases) >= 25);
    json_array_foreach(cases, i, c)
    {
        const char *comment = json_string_value(json_object_get(c, "comment"));
        json_t *doc = json_object_get(c, "doc");
        char *before = fixture_dump(doc);
        struct error err = {{0}};
        json_t *got = jsonpatch_apply(doc, json_object_get(c, "patch"), &err);
        const char *want_error = json_string_value(json_object_get(c, "error"));
        if (want_error != NULL) {
            if (got != NULL)
                fail_msg("%s: applied, expected an error", comment);
            if (strstr(err.message, want_error) == NULL)
                fail_msg("%s: message \"%s\", expected \"%s\"", comment, err.message, want_error);
        } else {
            if (got == NULL)
                fail_msg("%s: %s", comment, err.message);
            fixture_check_json(comment, NULL, got, json_object_get(c, "expected"));
        }
        /* The input is never modified. */
        char *after = fixture_dump(doc);
        assert_string_equal(before, after);
        free(before);
        free(after);
        json_decref(got);
    }
    json_decref(cases);
}

static void test_diff_cases(void **state)
{
    (void)state;
    json_t *cases = fixture_json("jsonpatch/diff.json");
    size_t i;
    json_t *c;
    assert_true(json_array_size(cases) >= 8);
    json_array_foreach(cases, i, c)
    {
        const char *comment = json_string_value(json_object_get(c, "comment"));
        json_t *from = json_object_get(c, "from"), *to = json_object_get(c, "to");
        json_t *patch = jsonpatch_diff(from, to);
        fixture_check_json(comment, NULL, patch, json_object_get(c, "patch"));
        struct error err;
        json_t *applied = jsonpatch_apply(from, patch, &err);
        if (applied == NULL)
            fail_msg("%s: diff does not apply: %s", comment, err.message);
        fixture_check_json(comment, NULL, applied, to);
        json_decref(applied);
        json_decref(patch);
    }
    json_decref(cases);
}

/* RFC 7386: the diff is the expected merge patch, and applying it to from gives to. */
static void test_merge_cases(void **state)
{
    (void)state;
    json_t *cases = fixture_json("jsonpatch/merge.json");
    size_t i;
    json_t *c;
    assert_true(json_array_size(cases) >= 8);
    json_array_foreach(cases, i, c)
    {
        const char *comment = json_string_value(json_object_get(c, "comment"));
        json_t *from = json_object_get(c, "from"), *to = json_object_get(c, "to");
        json_t *patch = jsonpatch_merge_diff(from, to);
        fixture_check_json(comment, NULL, patch, json_object_get(c, "patch"));
        json_t *applied = jsonpatch_merge_apply(from, patch);
        fixture_check_json(comment, NULL, applied, to);
        json_decref(applied);
        json_decref(patch);
    }
    json_decref(cases);
}

/* RFC 7386's own example, applied. */
static void test_merge_apply_rfc(void **state)
{
    (void)state;
    json_t *doc = json_loads("{\"title\":\"Goodbye!\",\"author\":{\"givenName\":\"John\",\"familyName\":\"Doe\"},"
                             "\"tags\":[\"example\",\"sample\"],\"content\":\"This will be unchanged\"}",
                             0, NULL);
    json_t *patch = json_loads("{\"title\":\"Hello!\",\"phoneNumber\":\"+01-123-456-7890\",\"author\":{\"familyName\":null},"
                               "\"tags\":[\"example\"]}",
                               0, NULL);
    json_t *want = json_loads("{\"title\":\"Hello!\",\"author\":{\"givenName\":\"John\"},\"tags\":[\"example\"],"
                              "\"content\":\"This will be unchanged\",\"phoneNumber\":\"+01-123-456-7890\"}",
                              0, NULL);
    json_t *got = jsonpatch_merge_apply(doc, patch);
    assert_true(json_equal(got, want));
    /* The input is left alone. */
    assert_string_equal(json_string_value(json_object_get(doc, "title")), "Goodbye!");
    json_decref(got);
    json_decref(doc);
    json_decref(patch);
    json_decref(want);
}

static void test_pointer_join(void **state)
{
    (void)state;
    char *path = fixture_path("jsonpatch/pointer.txt");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int rows = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#')
            continue;
        char *base = line, *token = strchr(base, '|');
        assert_non_null(token);
        *token++ = '\0';
        char *want = strchr(token, '|');
        assert_non_null(want);
        *want++ = '\0';
        char *got = jsonpatch_pointer_join(base, token);
        assert_string_equal(got, want);
        /* And the pointer finds the member it was built for. */
        json_t *doc = json_object();
        json_t *leaf = json_object();
        json_object_set_new(leaf, token, json_string("here"));
        json_object_set_new(doc, "x", leaf);
        if (strcmp(base, "/x") == 0)
            assert_string_equal(json_string_value(jsonpatch_get(doc, got)), "here");
        json_decref(doc);
        free(got);
        rows++;
    }
    fclose(f);
    free(path);
    assert_true(rows >= 6);

    char *p = jsonpatch_pointer_index("/spec/workerGroupSpecs", 12);
    assert_string_equal(p, "/spec/workerGroupSpecs/12");
    free(p);
}

static void test_get(void **state)
{
    (void)state;
    json_t *doc = json_pack("{s:[i,{s:s}]}", "a", 1, "b", "c");
    assert_ptr_equal(jsonpatch_get(doc, ""), doc);
    assert_int_equal(json_integer_value(jsonpatch_get(doc, "/a/0")), 1);
    assert_string_equal(json_string_value(jsonpatch_get(doc, "/a/1/b")), "c");
    assert_null(jsonpatch_get(doc, "/a/2"));
    assert_null(jsonpatch_get(doc, "/a/-"));
    assert_null(jsonpatch_get(doc, "/a/00"));
    assert_null(jsonpatch_get(doc, "a"));
    assert_null(jsonpatch_get(doc, "/a/0/x"));
    json_decref(doc);
}

/*
 * A message quoting a long name is cut at a character boundary: it stays valid
 * UTF-8 (jansson refuses the rest, and it ends up in JSON). The name is "x"
 * and 200 three-byte characters, so a cut at 319 bytes splits one.
 */
static void test_message_cut_keeps_utf8(void **state)
{
    (void)state;
    char name[1 + 200 * 3 + 1] = "x";
    for (size_t i = 0; i < 200; i++)
        memcpy(name + 1 + 3 * i, "\xe2\x82\xac", 3); /* U+20AC EURO SIGN */
    name[sizeof(name) - 1] = '\0';
    json_t *doc = json_object();
    json_t *patch = json_pack("[{s:s, s:s}]", "op", name, "path", "/a");
    struct error err = {{0}};
    assert_null(jsonpatch_apply(doc, patch, &err));
    /* "operation 0: unknown op \"x" is 26 bytes; 97 whole characters fit before byte 319. */
    assert_int_equal(strlen(err.message), 26 + 97 * 3);
    json_t *as_json = json_string(err.message);
    assert_non_null(as_json);
    json_decref(as_json);
    json_decref(patch);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_cases),
        cmocka_unit_test(test_diff_cases),
        cmocka_unit_test(test_merge_cases),
        cmocka_unit_test(test_merge_apply_rfc),
        cmocka_unit_test(test_pointer_join),
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_message_cut_keeps_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
