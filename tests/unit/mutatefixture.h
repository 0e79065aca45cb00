/*
 * mutatefixture: the runner of mutation fixtures (tests/fixtures/mutate/,
 * tests/fixtures/rayjob/mutate/), shared by test_mutate and test_rayjob.
 * Include cmocka.h and fixtures.h first.
 */
#ifndef RAYGATE_TEST_MUTATEFIXTURE_H
#define RAYGATE_TEST_MUTATEFIXTURE_H

#include "jsonpatch.h"
#include "mutate.h"

typedef int (*mutate_fn)(const json_t *, struct mutate_result *, struct error *);

/*
 * One fixture: "object" in; then "deny" (the message), "noPatch", or "expected"
 * (the object the patch must produce), optionally the exact "patch" and "warnings".
 * Every patched result is fed back in and must need no further patch.
 */
static inline void run_fixture(const char *file, mutate_fn fn, size_t *patched, size_t *denied)
{
    json_t *c = fixture_json(file);
    json_t *object = json_object_get(c, "object");
    struct mutate_result r;
    struct error err = {{0}};
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
    struct error perr;
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

#endif
