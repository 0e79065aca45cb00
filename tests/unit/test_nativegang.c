#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "nativegang.h"

static json_t *cases;

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Fails, showing both, unless got (stolen) equals want (borrowed). */
static void assert_json(const char *what, json_t *got, const json_t *want)
{
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT), *w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
        fail_msg("%s:\n got  %s\n want %s", what, g, w);
    }
    json_decref(got);
}

static void test_objects(void **state)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(cases, "specs"), i, c)
    {
        const json_t *j = json_object_get(c, "spec");
        struct nativegang_spec s = {
            .namespace_ = str(j, "namespace"),
            .name = str(j, "name"),
            .min_count = json_integer_value(json_object_get(j, "minCount")),
            .priority_class = str(j, "priorityClass"),
            .owner_api_version = str(j, "ownerApiVersion"),
            .owner_kind = str(j, "ownerKind"),
            .owner_name = str(j, "ownerName"),
            .owner_uid = str(j, "ownerUid"),
        };
        assert_json("workload", nativegang_workload(&s), json_object_get(c, "workload"));
        assert_json("podgroup", nativegang_podgroup(&s), json_object_get(c, "podgroup"));
    }
    json_t *want = json_pack("{s:{s:{s:{s:i}}}}", "spec", "schedulingPolicy", "gang", "minCount", 5);
    assert_json("min count patch", nativegang_min_count_patch(5), want);
    json_decref(want);
}

static enum nativegang_op op_named(const char *s)
{
    return strcmp(s, "NONE") == 0 ? NATIVEGANG_NONE : strcmp(s, "PATCH") == 0 ? NATIVEGANG_PATCH : NATIVEGANG_CREATE;
}

static void test_seen(void **state)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(cases, "seen"), i, c)
    {
        struct nativegang_seen seen;
        nativegang_seen_parse(json_object_get(c, "podgroup"), &seen);
        assert_int_equal(seen.min_count, json_integer_value(json_object_get(c, "minCount")));
        assert_int_equal(seen.scheduled, json_integer_value(json_object_get(c, "scheduled")));
        assert_int_equal(nativegang_op(&seen, json_integer_value(json_object_get(c, "want"))), op_named(str(c, "op")));
        char *d = nativegang_describe(&seen, json_integer_value(json_object_get(c, "bound")));
        assert_string_equal(d, str(c, "describe"));
        free(d);
    }
    assert_int_equal(nativegang_op(NULL, 3), NATIVEGANG_CREATE);
}

int main(void)
{
    cases = fixture_json("nativegang/cases.json");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_seen),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    json_decref(cases);
    return rc;
}
