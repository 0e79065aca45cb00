/* lib/gang/hold/heldresume.c: when the gate nudges KubeRay to make a resumed held RayCluster's pods now. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heldresume.h"
#include "names.h"

/* A RayCluster at generation 2: held, admitted at generation 2 unless annotations say otherwise. */
static json_t *cluster(const char *annotations, const char *spec, const char *conditions)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"rc\",\"namespace\":\"ns\",\"generation\":2,\"annotations\":{%s}},"
             "\"spec\":{%s},\"status\":{\"conditions\":[%s]}}",
             annotations, spec, conditions);
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    assert_non_null(v);
    return v;
}

#define HELD "\"raygate.io/held-suspended\":\"true\",\"raygate.io/admitted-at\":\"2026-11-29T06:26:47Z\""
#define AT2 ",\"raygate.io/held-generation\":\"2\""
#define RESUMED "{\"type\":\"RayClusterSuspended\",\"status\":\"False\",\"reason\":\"RayClusterSuspended\"}"
#define SUSPENDED "{\"type\":\"RayClusterSuspended\",\"status\":\"True\",\"reason\":\"RayClusterSuspended\"}"

static void test_due(void **state)
{
    (void)state;
    static const struct {
        const char *annotations, *spec, *conditions;
        size_t pods;
        int due;
        const char *why;
    } cases[] = {
        {HELD AT2, "\"suspend\":false", RESUMED, 0, 1, "KubeRay took the resume in, no pod yet"},
        {HELD AT2, "", "{\"type\":\"HeadPodReady\",\"status\":\"False\"}," RESUMED, 0, 1, "suspend unset, other conditions"},
        {HELD AT2, "\"suspend\":false", RESUMED, 3, 0, "KubeRay is making the pods"},
        {HELD AT2, "\"suspend\":false", SUSPENDED, 0, 0, "KubeRay has not taken it in"},
        {HELD AT2, "\"suspend\":false", "", 0, 0, "no condition: KubeRay never marked it"},
        {HELD AT2, "\"suspend\":true", RESUMED, 0, 0, "suspended again (an eviction)"},
        {HELD ",\"raygate.io/held-generation\":\"1\"", "\"suspend\":false", RESUMED, 0, 0, "its spec changed since"},
        {HELD AT2 ",\"raygate.io/held-resumed\":\"2\"", "\"suspend\":false", RESUMED, 0, 0, "nudged already"},
        {HELD AT2 ",\"raygate.io/held-resumed\":\"1\"", "\"suspend\":false", RESUMED, 0, 1, "nudged at an earlier admission"},
        {"\"raygate.io/admitted-at\":\"x\"" AT2, "\"suspend\":false", RESUMED, 0, 0, "not held"},
        {"\"raygate.io/held-suspended\":\"true\"" AT2, "\"suspend\":false", RESUMED, 0, 0, "not admitted"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *c = cluster(cases[i].annotations, cases[i].spec, cases[i].conditions);
        int64_t gen = -1;
        int due = heldresume_due(c, cases[i].pods, &gen);
        if (due != cases[i].due)
            fail_msg("case %zu (%s): due %d, want %d", i, cases[i].why, due, cases[i].due);
        if (due)
            assert_int_equal(gen, 2);
        json_decref(c);
    }
}

/* The nudge is the annotation at the held generation, and what it writes makes the cluster not due any more. */
static void test_patch(void **state)
{
    (void)state;
    json_t *patch = heldresume_patch(7);
    char *text = json_dumps(patch, JSON_COMPACT);
    assert_string_equal(text, "{\"metadata\":{\"annotations\":{\"raygate.io/held-resumed\":\"7\"}}}");
    free(text);
    json_t *c = cluster(HELD ",\"raygate.io/held-generation\":\"7\"", "", RESUMED);
    json_object_set_new(json_object_get(c, "metadata"), "generation", json_integer(7));
    int64_t gen;
    assert_true(heldresume_due(c, 0, &gen));
    json_object_update_recursive(c, patch);
    assert_false(heldresume_due(c, 0, &gen));
    json_decref(c);
    json_decref(patch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_due),
        cmocka_unit_test(test_patch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
