#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "fixtures.h"
#include "mutatefixture.h"
#include "rayjob.h"
#include "rayjobmutate.h"
#include "submitter.h"

static const char *mode_name(enum rayjob_mode mode)
{
    static const char *const names[] = {"K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode"};
    return names[mode];
}

/* rayjob_mutate() without options, for the fixture runner. */
static int mutate_plain(const json_t *rayjob, struct mutate_result *out, struct error *err)
{
    return rayjob_mutate(rayjob, NULL, out, err);
}

/* Every file of rayjob/mutate: the webhook's decision, patch applied and fed back in (see mutatefixture.h). */
static void test_mutate_fixtures(void **state)
{
    (void)state;
    size_t n, patched = 0, denied = 0;
    char **files = fixture_list("rayjob/mutate", &n);
    assert_true(n >= 14);
    for (size_t i = 0; i < n; i++)
        run_fixture(files[i], mutate_plain, &patched, &denied);
    assert_true(patched >= 7);
    assert_true(denied >= 5);
    fixture_list_free(files, n);
}

/* Every file of rayjob/gang: "object" in, "expected" gang or "error" message out. */
static void test_gang_fixtures(void **state)
{
    (void)state;
    size_t n, errors = 0;
    char **files = fixture_list("rayjob/gang", &n);
    assert_true(n >= 12);
    for (size_t i = 0; i < n; i++) {
        json_t *c = fixture_json(files[i]);
        struct rayjob_gang g;
        struct error err = {{0}};
        rayjob_gang_init(&g);
        int rc = rayjob_gang_from(json_object_get(c, "object"), &g, &err);
        const char *want_error = json_string_value(json_object_get(c, "error"));
        if (want_error != NULL) {
            if (rc != -1)
                fail_msg("%s: sized, expected \"%s\"", files[i], want_error);
            if (strcmp(err.message, want_error) != 0)
                fail_msg("%s: \"%s\", expected \"%s\"", files[i], err.message, want_error);
            assert_int_equal(g.min_member, 0);
            errors++;
        } else {
            if (rc != 0)
                fail_msg("%s: %s", files[i], err.message);
            json_t *got = json_pack("{s:s, s:b, s:b, s:I, s:o, s:o}", "mode", mode_name(g.mode), "selector", g.selector,
                                    "suspended", g.suspended, "minMember", (json_int_t)g.min_member, "minResources",
                                    resources_to_json(&g.min_resources), "submitter", resources_to_json(&g.submitter));
            fixture_check_json(files[i], "gang", got, json_object_get(c, "expected"));
            /* The submitter is counted in minResources only, never in minMember. */
            assert_int_equal(g.min_member, g.cluster.min_member);
            assert_int_equal(g.has_submitter, g.submitter.len > 0);
            json_decref(got);
        }
        rayjob_gang_finish(&g);
        json_decref(c);
    }
    assert_true(errors >= 6);
    fixture_list_free(files, n);
}

static void test_submitter_of(void **state)
{
    (void)state;
    json_t *c = fixture_json("rayjob/submitter-of.json");
    json_t *cases = json_object_get(c, "cases"), *k;
    size_t i, found = 0;
    assert_true(json_array_size(cases) >= 5);
    json_array_foreach(cases, i, k)
    {
        const char *got = rayjob_submitter_of(json_object_get(k, "pod"));
        const char *want = json_string_value(json_object_get(k, "expected"));
        const char *what = json_string_value(json_object_get(k, "comment"));
        if (want == NULL && got != NULL)
            fail_msg("%s: \"%s\", expected none", what, got);
        if (want != NULL && (got == NULL || strcmp(got, want) != 0))
            fail_msg("%s: \"%s\", expected \"%s\"", what, got != NULL ? got : "(none)", want);
        found += got != NULL;
    }
    assert_int_equal(found, 1);
    json_decref(c);
}

static void test_owner_of(void **state)
{
    (void)state;
    json_t *c = fixture_json("rayjob/owner-of.json");
    json_t *cases = json_object_get(c, "cases"), *k;
    size_t i, found = 0;
    assert_true(json_array_size(cases) >= 9);
    json_array_foreach(cases, i, k)
    {
        const char *name = "x", *uid = "x";
        const char *what = json_string_value(json_object_get(k, "comment"));
        int got = rayjob_owner_of(json_object_get(k, "object"), &name, &uid);
        json_t *want = json_object_get(k, "expected");
        if (json_is_null(want)) {
            if (got != 0 || name != NULL || uid != NULL)
                fail_msg("%s: %d %s %s, expected none", what, got, name, uid);
            continue;
        }
        if (got != 1 || name == NULL || uid == NULL || strcmp(name, json_string_value(json_object_get(want, "name"))) != 0 ||
            strcmp(uid, json_string_value(json_object_get(want, "uid"))) != 0)
            fail_msg("%s: %d %s %s", what, got, name != NULL ? name : "-", uid != NULL ? uid : "-");
        found++;
    }
    assert_int_equal(found, 2);
    json_decref(c);
}

/*
 * The gate controller's cache of a RayJob's RayCluster: the gang is named after
 * the RayJob (its PodGroup ray-<rayjob>-pg) and holds the submitter's share.
 */
static void test_cache_gang(void **state)
{
    (void)state;
    json_t *c = fixture_json("mutate/raycluster/rayjob-origin-submitter.json");
    json_t *cluster = json_object_get(c, "expected");
    struct cache *cache = cache_create();
    struct error err;
    assert_int_equal(cache_upsert_raycluster(cache, cluster, &err), 0);
    struct cache_gang *g = cache_gang_get(cache, "default", "rayjob-sample-x7k2p");
    assert_non_null(g);
    assert_string_equal(cache_gang_group(g), "rayjob-sample");
    assert_string_equal(g->owner_uid, "9d1c");
    assert_int_equal(g->min_member, 2);
    char *size = resources_to_string(&g->min_resources);
    assert_string_equal(size, "{\"cpu\":\"2500m\",\"memory\":\"3272Mi\"}");
    free(size);
    /* The same cluster without its RayJob's controller reference is a gang of its own. */
    json_object_del(json_object_get(cluster, "metadata"), "ownerReferences");
    json_object_set_new(json_object_get(cluster, "metadata"), "resourceVersion", json_string("2"));
    assert_int_equal(cache_upsert_raycluster(cache, cluster, &err), 0);
    g = cache_gang_get(cache, "default", "rayjob-sample-x7k2p");
    assert_string_equal(cache_gang_group(g), "rayjob-sample-x7k2p");
    assert_null(g->owner_uid);
    cache_destroy(cache);
    json_decref(c);
}

static void test_rerun(void **state)
{
    (void)state;
    json_t *c = fixture_json("rayjob/rerun.json"), *k;
    size_t i, yes = 0, resumed = 0;
    json_array_foreach(json_object_get(c, "canRerun"), i, k)
    {
        struct error why = {{0}};
        const char *what = json_string_value(json_object_get(k, "comment"));
        int got = rayjob_can_rerun(json_object_get(k, "object"), &why);
        json_t *want = json_object_get(k, "expected");
        if (json_is_true(want) ? got != 1 : got != 0 || strcmp(why.message, json_string_value(want)) != 0)
            fail_msg("%s: %d \"%s\"", what, got, why.message);
        yes += got;
    }
    assert_int_equal(yes, 2);
    json_array_foreach(json_object_get(c, "rerunPatch"), i, k)
    {
        json_t *got = rayjob_rerun_patch(json_object_get(k, "object"), json_string_value(json_object_get(k, "stamp")),
                                         json_object_get(k, "record"));
        fixture_check_json(json_string_value(json_object_get(k, "comment")), NULL, got, json_object_get(k, "expected"));
        json_decref(got);
    }
    json_array_foreach(json_object_get(c, "resume"), i, k)
    {
        const char *what = json_string_value(json_object_get(k, "comment"));
        json_t *object = json_object_get(k, "object"), *want = json_object_get(k, "expected");
        json_t *got = rayjob_resume_patch(object);
        if (json_is_null(want)) {
            if (got != NULL)
                fixture_check_json(what, "patch", got, json_null());
            continue;
        }
        fixture_check_json(what, "patch", got, want);
        struct error perr;
        json_t *applied = jsonpatch_apply(object, got, &perr);
        if (applied == NULL)
            fail_msg("%s: does not apply: %s", what, perr.message);
        fixture_check_json(what, "applied", applied, json_object_get(k, "applied"));
        json_decref(applied);
        /* Against a RayJob suspended again since (another rerun): the test fails, nothing changes. */
        const json_t *stale = json_object_get(k, "staleObject");
        if (stale != NULL)
            assert_null(jsonpatch_apply(stale, got, &perr));
        json_decref(got);
        resumed++;
    }
    assert_int_equal(resumed, 2);
    json_decref(c);
}

/*
 * The RayCluster KubeRay makes of a mutated RayJob (its labels, annotations and
 * spec.rayClusterSpec) needs from mutate_raycluster only its own group: the
 * queue label and priority class are there, and its sizes are the RayJob's,
 * submitter included (raygate.io/submitter-resources came with the annotations).
 */
static void test_cluster_of_mutated_rayjob(void **state)
{
    (void)state;
    json_t *c = fixture_json("rayjob/mutate/k8sjob-template-priority.json");
    json_t *job = json_object_get(c, "expected");
    json_t *meta = json_object_get(job, "metadata");
    json_t *labels = json_deep_copy(json_object_get(meta, "labels"));
    json_object_set_new(labels, NAMES_LABEL_ORIGIN_CRD, json_string("RayJob"));
    json_object_set_new(labels, RAYJOB_LABEL_ORIGIN_NAME, json_string("rayjob-sample"));
    json_t *cluster =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:O}, s:O}", "apiVersion", "ray.io/v1", "kind", "RayCluster", "metadata", "name",
                  "rayjob-sample-x7k2p", "namespace", "default", "labels", labels, "annotations",
                  json_object_get(meta, "annotations"), "spec", json_object_get(json_object_get(job, "spec"), "rayClusterSpec"));
    struct mutate_result r;
    struct error err;
    mutate_result_init(&r);
    assert_int_equal(mutate_raycluster(cluster, NULL, &r, &err), 0);
    assert_null(r.warnings);
    /* The group of each of its three objects, and nothing else. */
    json_t *want = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}]", "op", "replace", "path",
                             "/metadata/annotations/scheduling.k8s.io~1group-name", "value", "ray-rayjob-sample-x7k2p-pg", "op",
                             "replace", "path", "/spec/headGroupSpec/template/metadata/annotations/scheduling.k8s.io~1group-name",
                             "value", "ray-rayjob-sample-x7k2p-pg", "op", "replace", "path",
                             "/spec/workerGroupSpecs/0/template/metadata/annotations/scheduling.k8s.io~1group-name", "value",
                             "ray-rayjob-sample-x7k2p-pg");
    fixture_check_json("cluster of a mutated RayJob", "patch", r.patch, want);
    /* The gate controller's gang of the cluster: the RayJob's minMember and minResources. */
    struct gang_spec gang;
    struct error gerr;
    gang_spec_init(&gang);
    assert_int_equal(submitter_cluster_gang(cluster, &gang, &gerr), 0);
    assert_int_equal(gang.min_member, 3);
    char *size = resources_to_string(&gang.min_resources);
    assert_string_equal(size, "{\"cpu\":\"5\",\"memory\":\"5Gi\"}");
    free(size);
    gang_spec_finish(&gang);
    json_object_set_new(json_object_get(json_object_get(cluster, "metadata"), "labels"), NAMES_LABEL_ORIGIN_CRD,
                        json_string("RayService"));
    assert_int_equal(submitter_cluster_gang(cluster, &gang, &gerr), 0);
    size = resources_to_string(&gang.min_resources);
    assert_string_equal(size, "{\"cpu\":\"3\",\"memory\":\"4Gi\"}");
    free(size);
    gang_spec_finish(&gang);
    json_object_set_new(json_object_get(json_object_get(cluster, "metadata"), "labels"), NAMES_LABEL_ORIGIN_CRD,
                        json_string("RayJob"));
    /* The submitter's share itself. */
    struct resources sub;
    struct error serr;
    resources_init(&sub);
    assert_int_equal(submitter_of_cluster(cluster, &sub, &serr), 0);
    char *text = resources_to_string(&sub);
    assert_string_equal(text, "{\"cpu\":\"2\",\"memory\":\"1Gi\"}");
    free(text);
    resources_finish(&sub);
    json_decref(want);
    json_decref(cluster);
    mutate_result_finish(&r);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutate_fixtures), cmocka_unit_test(test_gang_fixtures),
        cmocka_unit_test(test_submitter_of),    cmocka_unit_test(test_cluster_of_mutated_rayjob),
        cmocka_unit_test(test_owner_of),        cmocka_unit_test(test_cache_gang),
        cmocka_unit_test(test_rerun),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
