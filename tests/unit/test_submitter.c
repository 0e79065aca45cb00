#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "names.h"
#include "submitter.h"

/* The submitter's request on a RayCluster, by fixture: what is read, and every way the annotation is refused. */
static void test_cluster_submitter(void **state)
{
    (void)state;
    json_t *c = fixture_json("rayjob/cluster-submitter.json");
    json_t *cases = json_object_get(c, "cases"), *k;
    size_t i, errors = 0;
    assert_true(json_array_size(cases) >= 7);
    json_array_foreach(cases, i, k)
    {
        struct resources r;
        struct error err = {{0}};
        const char *what = json_string_value(json_object_get(k, "comment"));
        resources_init(&r);
        int rc = submitter_of_cluster(json_object_get(k, "object"), &r, &err);
        const char *want_error = json_string_value(json_object_get(k, "error"));
        if (want_error != NULL) {
            if (rc != -1 || strcmp(err.message, want_error) != 0)
                fail_msg("%s: rc %d \"%s\", expected \"%s\"", what, rc, err.message, want_error);
            assert_int_equal(r.len, 0);
            errors++;
        } else {
            if (rc != 0)
                fail_msg("%s: %s", what, err.message);
            json_t *got = resources_to_json(&r);
            fixture_check_json(what, NULL, got, json_object_get(k, "expected"));
            json_decref(got);
        }
        resources_finish(&r);
    }
    assert_int_equal(errors, 3);
    json_decref(c);
}

/* A RayJob's RayCluster counts its submitter in minResources (not minMember); another kind's does not. */
static void test_cluster_gang(void **state)
{
    (void)state;
    json_t *cluster =
        json_pack("{s:s, s:s, s:{s:s, s:{s:s}, s:{s:s}}, s:{s:{s:{s:{s:[{s:s, s:{s:{s:s, s:s}}}]}}}}}", "apiVersion", "ray.io/v1",
                  "kind", "RayCluster", "metadata", "name", "c", "labels", NAMES_LABEL_ORIGIN_CRD, "RayJob", "annotations",
                  NAMES_ANNOTATION_SUBMITTER, "{\"cpu\":\"500m\",\"memory\":\"200Mi\"}", "spec", "headGroupSpec", "template",
                  "spec", "containers", "name", "head", "resources", "requests", "cpu", "1", "memory", "1Gi");
    assert_non_null(cluster);
    struct gang_spec gang;
    struct error err = {{0}};
    gang_spec_init(&gang);
    assert_int_equal(submitter_cluster_gang(cluster, &gang, &err), 0);
    assert_int_equal(gang.min_member, 1);
    char *size = resources_to_string(&gang.min_resources);
    assert_string_equal(size, "{\"cpu\":\"1500m\",\"memory\":\"1224Mi\"}");
    free(size);
    gang_spec_finish(&gang);
    json_object_set_new(json_object_get(json_object_get(cluster, "metadata"), "annotations"), NAMES_ANNOTATION_SUBMITTER,
                        json_string("[1]"));
    assert_int_equal(submitter_cluster_gang(cluster, &gang, &err), -1);
    assert_string_equal(err.message, "metadata.annotations[raygate.io/submitter-resources]: must be a JSON object of quantities");
    gang_spec_finish(&gang);
    json_decref(cluster);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_submitter),
        cmocka_unit_test(test_cluster_gang),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
