#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "jsonpatch.h"
#include "mutate.h"

typedef int (*mutate_fn)(const json_t *, struct mutate_result *, struct mutate_error *);

/*
 * One fixture: "object" in; then "deny" (the message), "noPatch", or "expected"
 * (the object the patch must produce), optionally the exact "patch" and "warnings".
 * Every patched result is fed back in and must need no further patch.
 */
static void run_fixture(const char *file, mutate_fn fn, size_t *patched, size_t *denied)
{
    json_t *c = fixture_json(file);
    json_t *object = json_object_get(c, "object");
    struct mutate_result r;
    struct mutate_error err = {{0}};
    mutate_result_init(&r);
    int rc = fn(object, &r, &err);
    const char *deny = json_string_value(json_object_get(c, "deny"));
    json_t *want_warnings = json_object_get(c, "warnings");

    if (deny != NULL) {
        if (rc != -1)
            fail_msg("%s: allowed, expected denial \"%s\"", file, deny);
        if (strcmp(err.message, deny) != 0)
            fail_msg("%s: denied with \"%s\", expected \"%s\"", file, err.message, deny);
        assert_null(r.patch);
        (*denied)++;
        goto done;
    }
    if (rc != 0)
        fail_msg("%s: denied: %s", file, err.message);
    if (want_warnings != NULL)
        fixture_check_json(file, "warnings", r.warnings, want_warnings);
    else if (r.warnings != NULL)
        fixture_check_json(file, "warnings", r.warnings, json_null());
    if (json_is_true(json_object_get(c, "noPatch"))) {
        if (r.patch != NULL)
            fixture_check_json(file, "patch", r.patch, json_null());
        goto done;
    }

    json_t *expected = json_object_get(c, "expected");
    assert_non_null(expected);
    if (r.patch == NULL)
        fail_msg("%s: no patch, expected one", file);
    assert_true(json_array_size(r.patch) > 0);
    if (json_object_get(c, "patch") != NULL)
        fixture_check_json(file, "patch", r.patch, json_object_get(c, "patch"));
    struct jsonpatch_error perr;
    json_t *applied = jsonpatch_apply(object, r.patch, &perr);
    if (applied == NULL)
        fail_msg("%s: patch does not apply: %s", file, perr.message);
    fixture_check_json(file, "patched object", applied, expected);

    /* Idempotent: the patched object needs nothing more, and raises no warning. */
    struct mutate_result again;
    mutate_result_init(&again);
    assert_int_equal(fn(applied, &again, &err), 0);
    if (again.patch != NULL)
        fixture_check_json(file, "second patch", again.patch, json_null());
    assert_null(again.warnings);
    mutate_result_finish(&again);
    json_decref(applied);
    (*patched)++;

done:
    mutate_result_finish(&r);
    json_decref(c);
}

static void test_raycluster_fixtures(void **state)
{
    (void)state;
    size_t n, patched = 0, denied = 0;
    char **files = fixture_list("mutate/raycluster", &n);
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++)
        run_fixture(files[i], mutate_raycluster, &patched, &denied);
    assert_true(patched >= 6);
    assert_true(denied >= 2);
    fixture_list_free(files, n);
}

static void test_pod_fixtures(void **state)
{
    (void)state;
    size_t n, patched = 0, denied = 0;
    char **files = fixture_list("mutate/pod", &n);
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++)
        run_fixture(files[i], mutate_pod, &patched, &denied);
    assert_true(patched >= 4);
    assert_true(denied >= 1);
    fixture_list_free(files, n);
}

/* A pod's patch does not depend on metadata.name: with or without it, the same operations. */
static void test_pod_name_irrelevant(void **state)
{
    (void)state;
    json_t *c = fixture_json("mutate/pod/basic-generate-name.json");
    json_t *pod = json_object_get(c, "object");
    struct mutate_result a, b;
    struct mutate_error err;
    mutate_result_init(&a);
    mutate_result_init(&b);
    assert_int_equal(mutate_pod(pod, &a, &err), 0);
    json_object_set_new(json_object_get(pod, "metadata"), "name", json_string("something-else"));
    assert_int_equal(mutate_pod(pod, &b, &err), 0);
    assert_non_null(a.patch);
    assert_true(json_equal(a.patch, b.patch));
    mutate_result_finish(&a);
    mutate_result_finish(&b);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raycluster_fixtures),
        cmocka_unit_test(test_pod_fixtures),
        cmocka_unit_test(test_pod_name_irrelevant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
