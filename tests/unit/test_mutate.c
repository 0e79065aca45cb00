#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "mutate.h"
#include "mutatefixture.h"

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
    struct error err;
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
