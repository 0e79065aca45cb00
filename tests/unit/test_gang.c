#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "gang.h"

static void check_resources(const char *file, const struct resources *got, const json_t *want)
{
    json_t *g = resources_to_json(got);
    fixture_check_json(file, NULL, g, want);
    json_decref(g);
}

/* The gang's shape: want is [[groupName or null, pods], ...] in spec order (NULL: not checked). */
static void check_groups(const char *file, const struct gang_spec *spec, const json_t *want)
{
    if (want == NULL)
        return;
    json_t *got = json_array();
    for (size_t i = 0; i < spec->ngroups; i++)
        json_array_append_new(got, json_pack("[s?I]", spec->groups[i].name, (json_int_t)spec->groups[i].pods));
    fixture_check_json(file, NULL, got, want);
    json_decref(got);
}

/*
 * Who names the native PodGroup: want_count the gang's native_count, want_all
 * [0 or 1, ...] each group's all_members in spec order (NULL: not checked).
 */
static int check_native(const char *file, const struct gang_spec *spec, const json_t *want_count, const json_t *want_all)
{
    if (want_count == NULL)
        return 0;
    if (spec->native_count != json_integer_value(want_count))
        fail_msg("%s: nativeCount %lld, expected %lld", file, (long long)spec->native_count,
                 (long long)json_integer_value(want_count));
    json_t *got = json_array();
    for (size_t i = 0; i < spec->ngroups; i++)
        json_array_append_new(got, json_integer(spec->groups[i].all_members));
    fixture_check_json(file, "allMembers", got, want_all);
    json_decref(got);
    return 1;
}

static void check_error(const char *file, int rc, const char *message, const char *want)
{
    if (rc != -1)
        fail_msg("%s: succeeded, expected error \"%s\"", file, want);
    if (strstr(message, want) == NULL)
        fail_msg("%s: message \"%s\", expected \"%s\"", file, message, want);
}

/* Every fixture in gang/: a RayCluster with its minMember and minResources, or a pod spec with its request. */
static void test_fixtures(void **state)
{
    (void)state;
    size_t n, clusters = 0, pods = 0, errors = 0, groups = 0, natives = 0;
    char **files = fixture_list("gang", &n);
    assert_true(n >= 20);
    for (size_t i = 0; i < n; i++) {
        json_t *c = fixture_json(files[i]);
        const json_t *rc_obj = json_object_get(c, "raycluster");
        const char *want_error = json_string_value(json_object_get(c, "error"));
        struct error err = {{0}};
        int rc;
        if (rc_obj != NULL) {
            struct gang_spec spec;
            gang_spec_init(&spec);
            rc = gang_from_raycluster(rc_obj, &spec, &err);
            if (want_error != NULL) {
                check_error(files[i], rc, err.message, want_error);
                assert_int_equal(spec.min_resources.len, 0);
                errors++;
            } else {
                if (rc != 0)
                    fail_msg("%s: %s", files[i], err.message);
                json_int_t want_member = json_integer_value(json_object_get(c, "minMember"));
                if (spec.min_member != want_member)
                    fail_msg("%s: minMember %lld, expected %lld", files[i], (long long)spec.min_member, (long long)want_member);
                check_resources(files[i], &spec.min_resources, json_object_get(c, "minResources"));
                check_groups(files[i], &spec, json_object_get(c, "groups"));
                groups += json_object_get(c, "groups") != NULL;
                natives += check_native(files[i], &spec, json_object_get(c, "nativeCount"), json_object_get(c, "allMembers"));
            }
            gang_spec_finish(&spec);
            clusters++;
        } else {
            struct resources req;
            resources_init(&req);
            rc = gang_pod_request(json_object_get(c, "podSpec"), &req, &err);
            if (want_error != NULL) {
                check_error(files[i], rc, err.message, want_error);
                errors++;
            } else {
                if (rc != 0)
                    fail_msg("%s: %s", files[i], err.message);
                check_resources(files[i], &req, json_object_get(c, "request"));
            }
            resources_finish(&req);
            pods++;
        }
        json_decref(c);
    }
    assert_true(clusters >= 10);
    assert_true(pods >= 5);
    assert_true(errors >= 8);
    assert_true(groups >= 4);
    assert_true(natives >= 2);
    fixture_list_free(files, n);
}

/* The head's request is computed from its template alone: the cluster's name, labels and status play no part. */
static void test_metadata_irrelevant(void **state)
{
    (void)state;
    json_t *c = fixture_json("gang/basic.json");
    json_t *rc = json_object_get(c, "raycluster");
    struct gang_spec a, b;
    struct error err;
    gang_spec_init(&a);
    gang_spec_init(&b);
    assert_int_equal(gang_from_raycluster(rc, &a, &err), 0);
    json_object_set_new(rc, "metadata", json_pack("{s:s}", "generateName", "x-"));
    json_object_set_new(rc, "status", json_pack("{s:s}", "state", "ready"));
    assert_int_equal(gang_from_raycluster(rc, &b, &err), 0);
    assert_int_equal(a.min_member, b.min_member);
    char *sa = resources_to_string(&a.min_resources), *sb = resources_to_string(&b.min_resources);
    assert_string_equal(sa, sb);
    assert_string_equal(sa, "{\"cpu\":\"3\",\"memory\":\"4Gi\"}");
    free(sa);
    free(sb);
    gang_spec_finish(&a);
    gang_spec_finish(&b);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_metadata_irrelevant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
