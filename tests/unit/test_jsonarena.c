#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "fixtures.h"
#include "jsonarena.h"

/* Installed once for the whole test binary, before any value: what the webhook's main does. */
static int setup(void **state)
{
    (void)state;
    jsonarena_install();
    return 0;
}

/* A new scope's first value lands at at: the arena is back at its start. */
static void assert_scope_starts_at(uintptr_t at)
{
    jsonarena_begin();
    json_t *v = json_string("first");
    assert_int_equal((uintptr_t)v, at);
    json_decref(v);
    jsonarena_end();
}

/* A scope's values come from its arena, and the next scope reuses the memory from its start. */
static void test_scope_reuses_its_memory(void **state)
{
    (void)state;
    jsonarena_begin();
    json_t *a = json_string("first");
    uintptr_t first = (uintptr_t)a;
    json_decref(a);
    json_t *again = json_string("first"); /* malloc would hand a's memory back: the arena takes it back only at the end */
    assert_int_not_equal((uintptr_t)again, first);
    json_decref(again);
    jsonarena_end();
    assert_scope_starts_at(first);
    /* Outside a scope, malloc: a value then lives on after a scope ends (AddressSanitizer would see a bad free). */
    json_t *kept = json_pack("{s:[i,s]}", "k", 1, "v");
    jsonarena_begin();
    json_t *inner = json_pack("{s:s}", "scoped", "yes");
    json_decref(inner);
    jsonarena_end();
    assert_string_equal(json_string_value(json_array_get(json_object_get(kept, "k"), 1)), "v");
    json_decref(kept);
}

/* A scope of many values takes several chunks (each twice the last), and gives them all back but the first. */
static void test_many_chunks(void **state)
{
    (void)state;
    jsonarena_begin();
    json_t *first = json_string("first");
    uintptr_t at = (uintptr_t)first;
    json_t *big = json_array();
    for (int i = 0; i < 200000; i++)
        json_array_append_new(big, json_pack("{s:i}", "i", i));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(big, 199999), "i")), 199999);
    json_decref(big);
    json_decref(first);
    jsonarena_end();
    assert_scope_starts_at(at);
}

/* A value made before a scope is freed by libc in it (LeakSanitizer would report it otherwise), and nested scopes
   end the arena at the outermost. */
static void test_outside_values_and_nesting(void **state)
{
    (void)state;
    json_t *before = json_pack("{s:s,s:[s,s]}", "a", "long enough to be its own allocation", "b", "x", "y");
    jsonarena_begin();
    json_decref(before);
    jsonarena_begin();
    json_t *v = json_pack("{s:i}", "n", 7);
    jsonarena_end(); /* inner: v stays usable */
    assert_int_equal(json_integer_value(json_object_get(v, "n")), 7);
    json_decref(v);
    jsonarena_end();
    jsonarena_end(); /* unbalanced: nothing */
}

/* jsonarena_dumps is json_dumps' text in libc memory, inside a scope or out of it. */
static void test_dumps(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:s,s:[i,i],s:{s:b}}", "z", "\"quoted\"", "a", 1, 2, "m", "t", 1);
    char *want = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    size_t len = 0;
    jsonarena_begin();
    char *got = jsonarena_dumps(v, JSON_COMPACT | JSON_SORT_KEYS, &len);
    jsonarena_end();
    assert_string_equal(got, want);
    assert_int_equal(len, strlen(want));
    free(got); /* libc memory: the scope is over */
    free(want);
    json_decref(v);
    assert_null(jsonarena_dumps(NULL, 0, NULL));
}

/* One review's answer in a scope, byte for byte the answer out of it, whichever path decides it. */
static void answer_both_ways(const char *rel)
{
    size_t len;
    char *body = fixture_read(rel, &len);
    char *text[2] = {NULL, NULL};
    size_t text_len[2] = {0, 0};
    int rc[2];
    for (int scoped = 0; scoped < 2; scoped++) {
        struct admission_info info = {0};
        struct error err = {{0}};
        if (scoped)
            jsonarena_begin();
        rc[scoped] = admission_respond(body, len, NULL, NULL, &text[scoped], &text_len[scoped], &info, &err);
        if (scoped)
            jsonarena_end();
    }
    if (rc[0] != rc[1] || text_len[0] != text_len[1] || (text_len[0] > 0 && memcmp(text[0], text[1], text_len[0]) != 0))
        fail_msg("%s: answered %d \"%.*s\" out of the arena, %d \"%.*s\" in it", rel, rc[0], (int)text_len[0],
                 text[0] ? text[0] : "", rc[1], (int)text_len[1], text[1] ? text[1] : "");
    free(text[0]);
    free(text[1]); /* libc memory either way */
    free(body);
}

static void test_admission_in_arena(void **state)
{
    (void)state;
    char *dir = fixture_path("admission");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char rel[300];
        snprintf(rel, sizeof(rel), "admission/%s", e->d_name);
        answer_both_ways(rel);
        n++;
    }
    closedir(d);
    free(dir);
    answer_both_ways("bench/raycluster-large-review.json");
    answer_both_ways("bench/pod-review.json");
    assert_true(n >= 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_reuses_its_memory),
        cmocka_unit_test(test_outside_values_and_nesting),
        cmocka_unit_test(test_many_chunks),
        cmocka_unit_test(test_dumps),
        cmocka_unit_test(test_admission_in_arena),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
