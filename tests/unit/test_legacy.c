#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "legacy.h"

static void check_groups(const char *file, const struct gang_spec *spec, const json_t *want)
{
    if (want == NULL)
        return;
    json_t *got = json_array();
    for (size_t i = 0; i < spec->ngroups; i++)
        json_array_append_new(got, json_pack("[s?I]", spec->groups[i].name, (json_int_t)spec->groups[i].pods));
    fixture_check_json(file, "groups", got, want);
    json_decref(got);
}

/* Every fixture in legacy/: a legacy RayCluster with its minMember, minResources and groups, or the error naming the field. */
static void test_fixtures(void **state)
{
    size_t n, ok = 0, errors = 0, natives = 0;
    char **files = fixture_list("legacy", &n);
    assert_true(n >= 15);
    for (size_t i = 0; i < n; i++) {
        json_t *c = fixture_json(files[i]);
        const json_t *obj = json_object_get(c, "raycluster");
        const char *want_error = json_string_value(json_object_get(c, "error"));
        struct error err = {{0}};
        struct gang_spec spec;
        gang_spec_init(&spec);
        assert_true(legacy_is_raycluster(obj));
        int rc = legacy_gang_from_raycluster(obj, &spec, &err);
        if (want_error != NULL) {
            if (rc != -1 || strstr(err.message, want_error) == NULL)
                fail_msg("%s: rc %d, message \"%s\", expected \"%s\"", files[i], rc, err.message, want_error);
            assert_int_equal(spec.min_member, 0);
            assert_int_equal(spec.ngroups, 0);
            errors++;
        } else {
            if (rc != 0)
                fail_msg("%s: %s", files[i], err.message);
            json_int_t want = json_integer_value(json_object_get(c, "minMember"));
            if (spec.min_member != want)
                fail_msg("%s: minMember %lld, expected %lld", files[i], (long long)spec.min_member, (long long)want);
            json_t *res = resources_to_json(&spec.min_resources);
            fixture_check_json(files[i], "minResources", res, json_object_get(c, "minResources"));
            json_decref(res);
            check_groups(files[i], &spec, json_object_get(c, "groups"));
            const json_t *native = json_object_get(c, "nativeCount");
            if (native != NULL && spec.native_count != json_integer_value(native))
                fail_msg("%s: nativeCount %lld, expected %lld", files[i], (long long)spec.native_count,
                         (long long)json_integer_value(native));
            natives += native != NULL;
            ok++;
        }
        gang_spec_finish(&spec);
        json_decref(c);
    }
    assert_true(ok >= 7);
    assert_true(errors >= 8);
    assert_true(natives >= 1);
    fixture_list_free(files, n);
}

static void test_is_raycluster(void **state)
{
    static const struct {
        const char *json;
        int want;
    } cases[] = {
        {"{\"apiVersion\":\"cluster.ray.io/v1\",\"kind\":\"RayCluster\"}", 1},
        {"{\"apiVersion\":\"cluster.ray.io/v1beta1\",\"kind\":\"RayCluster\"}", 1},
        {"{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\"}", 0},
        {"{\"apiVersion\":\"cluster.ray.iox/v1\",\"kind\":\"RayCluster\"}", 0},
        {"{\"apiVersion\":\"cluster.ray.io\",\"kind\":\"RayCluster\"}", 0},
        {"{\"apiVersion\":\"cluster.ray.io/v1\",\"kind\":\"RayJob\"}", 0},
        {"{\"kind\":\"RayCluster\"}", 0},
        {"[]", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = json_loads(cases[i].json, 0, NULL);
        assert_non_null(j);
        if (legacy_is_raycluster(j) != cases[i].want)
            fail_msg("%s: expected %d", cases[i].json, cases[i].want);
        json_decref(j);
    }
}

/* A pod as the node provider labels it names its cluster, kind and type; a KubeRay pod names none. */
static void test_pod_labels(void **state)
{
    json_t *legacy = json_pack("{s:s,s:s,s:s,s:s}", "ray-cluster-name", "example-cluster", "ray-node-type", "worker",
                               "ray-user-node-type", "worker-nodes", "ray-node-uuid", "u");
    json_t *kuberay = json_pack("{s:s,s:s}", "ray.io/cluster", "c", "ray.io/node-type", "worker");
    json_t *empty = json_pack("{s:s}", "ray-cluster-name", "");
    const char *c, *k, *t;
    assert_int_equal(legacy_pod_labels(legacy, &c, &k, &t), 1);
    assert_string_equal(c, "example-cluster");
    assert_string_equal(k, "worker");
    assert_string_equal(t, "worker-nodes");
    assert_int_equal(legacy_pod_labels(kuberay, &c, &k, &t), 0);
    assert_null(c);
    assert_int_equal(legacy_pod_labels(empty, &c, &k, &t), 0);
    assert_int_equal(legacy_pod_labels(NULL, &c, &k, &t), 0);
    json_decref(legacy);
    json_decref(kuberay);
    json_decref(empty);
}

/* The pod types' podConfigs, in order; a podConfig that is not an object is NULL. */
static void test_pod_configs(void **state)
{
    json_t *c = fixture_json("legacy/example-cluster.json"), *bad = fixture_json("legacy/error-podconfig.json");
    const json_t *rc = json_object_get(c, "raycluster");
    assert_int_equal(legacy_pod_type_count(rc), 2);
    assert_string_equal(json_string_value(json_object_get(json_object_get(legacy_pod_config(rc, 0), "metadata"), "generateName")),
                        "ray-head-");
    assert_non_null(legacy_pod_config(rc, 1));
    assert_null(legacy_pod_config(rc, 2));
    assert_null(legacy_pod_config(json_object_get(bad, "raycluster"), 1));
    json_decref(c);
    json_decref(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_is_raycluster),
        cmocka_unit_test(test_pod_labels),
        cmocka_unit_test(test_pod_configs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
