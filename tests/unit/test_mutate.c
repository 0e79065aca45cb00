#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draset.h"
#include "fixtures.h"
#include "mutate.h"
#include "rayjob.h"
#include "rayjobmutate.h"
#include "mutatefixture.h"

/* mutate_raycluster as the webhook calls it without the DRA objects (no options). */
static int raycluster_default(const json_t *raycluster, struct mutate_result *out, struct error *err)
{
    return mutate_raycluster(raycluster, NULL, out, err);
}

static void test_raycluster_fixtures(void **state)
{
    (void)state;
    size_t n, patched = 0, denied = 0;
    char **files = fixture_list("mutate/raycluster", &n);
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++)
        run_fixture(files[i], raycluster_default, &patched, &denied);
    assert_true(patched >= 6);
    assert_true(denied >= 2);
    fixture_list_free(files, n);
}

static const struct mutate_options native_off = {.native_gang = 0}, native_on = {.native_gang = 1};

/* mutate_pod as the webhook calls it with --native-gang off (no options, as the tests and fuzzers pass), or on. */
static int pod_default(const json_t *pod, struct mutate_result *out, struct error *err)
{
    return mutate_pod(pod, NULL, out, err);
}

static int pod_native(const json_t *pod, struct mutate_result *out, struct error *err)
{
    return mutate_pod(pod, &native_on, out, err);
}

static void test_pod_fixtures(void **state)
{
    (void)state;
    size_t n, patched = 0, denied = 0;
    char **files = fixture_list("mutate/pod", &n);
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++)
        run_fixture(files[i], pod_default, &patched, &denied);
    assert_true(patched >= 4);
    assert_true(denied >= 1);
    fixture_list_free(files, n);
}

/* Kubernetes' gang scheduling on (mutate.h): the pods of mutate/pod-native/, each with its exact patch. */
static void test_pod_native_fixtures(void **state)
{
    (void)state;
    size_t n, patched = 0, denied = 0;
    char **files = fixture_list("mutate/pod-native", &n);
    assert_true(n >= 15);
    for (size_t i = 0; i < n; i++)
        run_fixture(files[i], pod_native, &patched, &denied);
    assert_true(patched >= 10);
    assert_true(denied >= 1);
    fixture_list_free(files, n);
}

/* The patch of pod (borrowed) with opts, as compact text (new; NULL: no patch); fails on a denial. */
static char *pod_patch_text(const char *file, const json_t *pod, const struct mutate_options *opts)
{
    struct mutate_result r;
    struct error err = {{0}};
    mutate_result_init(&r);
    if (mutate_pod(pod, opts, &r, &err) != 0) {
        mutate_result_finish(&r);
        return NULL;
    }
    char *text = r.patch != NULL ? json_dumps(r.patch, JSON_COMPACT) : NULL;
    if (r.patch != NULL && text == NULL)
        fail_msg("%s: the patch does not encode", file);
    mutate_result_finish(&r);
    return text;
}

/*
 * Every pod of both folders: with the step off (NULL or zeroed options) the
 * patch is the same text; on, it is that patch with at most one operation
 * more, the last, which adds /spec/schedulingGroup (only to a pod marked a
 * gang member: mutate/pod/ has no such pod).
 */
static void test_pod_native_adds_one_op(void **state)
{
    (void)state;
    static const char *const dirs[] = {"mutate/pod", "mutate/pod-native"};
    size_t added = 0, same = 0;
    for (size_t d = 0; d < 2; d++) {
        size_t n;
        char **files = fixture_list(dirs[d], &n);
        for (size_t i = 0; i < n; i++) {
            json_t *c = fixture_json(files[i]);
            const json_t *pod = json_object_get(c, "object");
            char *none = pod_patch_text(files[i], pod, NULL), *off = pod_patch_text(files[i], pod, &native_off);
            char *on = pod_patch_text(files[i], pod, &native_on);
            if ((none == NULL) != (off == NULL) || (none != NULL && strcmp(none, off) != 0))
                fail_msg("%s: NULL options and native_gang 0 differ: %s / %s", files[i], none, off);
            json_t *on_ops = on != NULL ? json_loads(on, 0, NULL) : json_array();
            json_t *off_ops = off != NULL ? json_loads(off, 0, NULL) : json_array();
            size_t k = json_array_size(off_ops);
            if (json_array_size(on_ops) == k + 1) {
                const json_t *last = json_array_get(on_ops, k);
                assert_string_equal(json_string_value(json_object_get(last, "path")), "/spec/schedulingGroup");
                assert_string_equal(json_string_value(json_object_get(last, "op")), "add");
                json_array_remove(on_ops, k);
                added++;
            } else {
                same++;
            }
            if (!json_equal(on_ops, off_ops))
                fail_msg("%s: on, the patch changes more than one added operation: %s / %s", files[i], on, off);
            json_decref(on_ops);
            json_decref(off_ops);
            free(none);
            free(off);
            free(on);
            json_decref(c);
        }
        fixture_list_free(files, n);
    }
    /* Added: the pods marked raygate.io/gang-member "true" that need a group (6 in mutate/pod-native). */
    assert_true(added >= 6);
    assert_true(same >= 10);
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
    assert_int_equal(mutate_pod(pod, &native_on, &a, &err), 0);
    json_object_set_new(json_object_get(pod, "metadata"), "name", json_string("something-else"));
    assert_int_equal(mutate_pod(pod, &native_on, &b, &err), 0);
    assert_non_null(a.patch);
    assert_true(json_equal(a.patch, b.patch));
    mutate_result_finish(&a);
    mutate_result_finish(&b);
    json_decref(c);
}

/* ---- devices: a RayCluster's claims in its minResources (mutate_options.dra) ---- */

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (j == NULL)
        fail_msg("fixture JSON: %s: %s", e.text, text);
    return j;
}

/* A set with class gpu (counted as example.com/gpu) and, in ml, template one-gpu (1 device). */
static struct draset *dra_world(void)
{
    static const char *const objects[] = {
        "{\"metadata\":{\"name\":\"gpu\",\"annotations\":{\"raygate.io/quota-resource\":\"example.com/gpu\"}},\"spec\":{}}",
        "{\"metadata\":{\"name\":\"one-gpu\",\"namespace\":\"ml\"},\"spec\":{\"spec\":{\"devices\":{"
        "\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\",\"count\":1}}]}}}}",
    };
    static const enum draset_kind kinds[] = {DRASET_CLASS, DRASET_TEMPLATE};
    struct draset *s = draset_create();
    for (size_t i = 0; i < 2; i++) {
        json_t *obj = parse(objects[i]);
        struct error err;
        draset_record(s, kinds[i], 0, obj, &err);
        assert_string_equal(err.message, "");
        json_decref(obj);
    }
    return s;
}

/* A queued RayCluster in ml: a head without claims, 3 workers of one claim each from template tmpl. */
static json_t *dra_cluster(const char *tmpl)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"metadata\":{\"name\":\"r\",\"namespace\":\"ml\","
             "\"labels\":{\"volcano.sh/queue-name\":\"q\"}},\"spec\":{\"headGroupSpec\":{\"template\":{\"spec\":{"
             "\"containers\":[{\"name\":\"h\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},\"workerGroupSpecs\":[{"
             "\"groupName\":\"w\",\"replicas\":3,\"minReplicas\":3,\"template\":{\"spec\":{\"resourceClaims\":[{\"name\":\"gpu\","
             "\"resourceClaimTemplateName\":\"%s\"}],\"containers\":[{\"name\":\"w\",\"resources\":{\"requests\":{\"cpu\":\"1\"},"
             "\"claims\":[{\"name\":\"gpu\"}]}}]}}}]}}",
             tmpl);
    return parse(text);
}

/* The cluster's raygate.io/min-resources after the mutation with opts (new string), and its warnings (new, or NULL). */
static char *dra_min_resources(const json_t *cluster, const struct mutate_options *opts, json_t **warnings)
{
    struct mutate_result r;
    struct error err = {{0}};
    mutate_result_init(&r);
    assert_int_equal(mutate_raycluster(cluster, opts, &r, &err), 0);
    assert_non_null(r.patch);
    json_t *patched = jsonpatch_apply(cluster, r.patch, &err);
    assert_non_null(patched);
    const json_t *annotations = json_object_get(json_object_get(patched, "metadata"), "annotations");
    char *text = strdup(json_string_value(json_object_get(annotations, "raygate.io/min-resources")));
    struct mutate_result again; /* idempotent: the patched cluster needs nothing more */
    mutate_result_init(&again);
    assert_int_equal(mutate_raycluster(patched, opts, &again, &err), 0);
    assert_null(again.patch);
    mutate_result_finish(&again);
    *warnings = json_incref(r.warnings);
    json_decref(patched);
    mutate_result_finish(&r);
    return text;
}

/* Workers that use a template: their devices in minResources with the set; without it, none. */
static void test_raycluster_devices(void **state)
{
    (void)state;
    struct draset *s = dra_world();
    const struct mutate_options with = {.dra = s};
    json_t *cluster = dra_cluster("one-gpu"), *warnings;

    char *text = dra_min_resources(cluster, &with, &warnings);
    assert_string_equal(text, "{\"cpu\":\"4\",\"example.com/gpu\":\"3\"}");
    assert_null(warnings);
    free(text);

    text = dra_min_resources(cluster, NULL, &warnings); /* no set: resource.k8s.io/v1 not served, or not listed yet */
    assert_string_equal(text, "{\"cpu\":\"4\"}");
    assert_null(warnings);
    free(text);

    json_decref(cluster);
    draset_destroy(s);
}

/* A template not seen: minResources without its devices, and a warning that names it. */
static void test_raycluster_devices_missing(void **state)
{
    (void)state;
    struct draset *s = dra_world();
    const struct mutate_options with = {.dra = s};
    json_t *cluster = dra_cluster("two-gpu"), *warnings;
    char *text = dra_min_resources(cluster, &with, &warnings);
    assert_string_equal(text, "{\"cpu\":\"4\"}");
    assert_int_equal(json_array_size(warnings), 1);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)), "resourceclaimtemplate two-gpu not found in ml"));
    free(text);
    json_decref(warnings);
    json_decref(cluster);
    draset_destroy(s);
}

/* A RayJob's raygate.io/min-resources counts its cluster's devices as a RayCluster's do; a missing template warns. */
static void test_rayjob_devices(void **state)
{
    (void)state;
    struct draset *s = dra_world();
    const struct mutate_options with = {.dra = s};
    for (int missing = 0; missing <= 1; missing++) {
        json_t *cluster = dra_cluster(missing ? "two-gpu" : "one-gpu");
        json_t *job = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s, s:O}}", "apiVersion", "ray.io/v1", "kind", "RayJob",
                                "metadata", "name", "j", "namespace", "ml", "labels", "volcano.sh/queue-name", "q", "spec",
                                "submissionMode", "HTTPMode", "rayClusterSpec", json_object_get(cluster, "spec"));
        struct mutate_result r;
        struct error err = {{0}};
        mutate_result_init(&r);
        assert_int_equal(rayjob_mutate(job, &with, &r, &err), 0);
        json_t *patched = jsonpatch_apply(job, r.patch, &err);
        assert_non_null(patched);
        const char *min = json_string_value(
            json_object_get(json_object_get(json_object_get(patched, "metadata"), "annotations"), "raygate.io/min-resources"));
        assert_string_equal(min, missing ? "{\"cpu\":\"4\"}" : "{\"cpu\":\"4\",\"example.com/gpu\":\"3\"}");
        assert_int_equal(json_array_size(r.warnings), (size_t)missing);
        json_decref(patched);
        mutate_result_finish(&r);
        json_decref(job);
        json_decref(cluster);
    }
    draset_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raycluster_fixtures),        cmocka_unit_test(test_pod_fixtures),
        cmocka_unit_test(test_pod_native_fixtures),        cmocka_unit_test(test_pod_native_adds_one_op),
        cmocka_unit_test(test_pod_name_irrelevant),        cmocka_unit_test(test_raycluster_devices),
        cmocka_unit_test(test_raycluster_devices_missing), cmocka_unit_test(test_rayjob_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
