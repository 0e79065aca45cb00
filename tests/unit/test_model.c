#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "legacy.h"
#include "model.h"
#include "names.h"
#include "poolfixture.h"

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    if (v == NULL)
        fail_msg("%s", jerr.text);
    return v;
}

static const char *const NODE =
    "{\"metadata\": {\"name\": \"n1\", \"labels\": {\"zone\": \"a\", \"arch\": \"x86\", \"bad\": 1}},"
    " \"spec\": {\"unschedulable\": true, \"taints\": [{\"key\": \"gpu\", \"effect\": \"NoSchedule\"},"
    " {\"key\": \"soft\", \"effect\": \"PreferNoSchedule\"}, {\"key\": \"x\", \"value\": \"y\", \"effect\": \"NoExecute\"}]},"
    " \"status\": {\"allocatable\": {\"cpu\": \"4\", \"pods\": \"110\"},"
    " \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}";

/* A Node: labels sorted (string values only), taints that keep pods off, allocatable without "pods", Ready. */
static void test_node(void **state)
{
    struct shape_pool *p = *state;
    json_t *obj = parse(NODE);
    struct cache_node a, b;
    model_node_parse(p, &a, obj);
    assert_int_equal(a.nlabels, 2);
    assert_string_equal(a.labels[0].key, "arch");
    assert_string_equal(a.labels[1].key, "zone");
    assert_int_equal(a.ntaints, 2);
    assert_string_equal(a.taints[1].value, "y");
    assert_int_equal(a.taints[1].effect, SHAPE_EFFECT_NO_EXECUTE);
    assert_true(a.unschedulable);
    assert_true(a.ready);
    assert_int_equal(a.alloc_pods, 110);
    assert_int_equal(a.allocatable->len, 1);
    model_node_parse(p, &b, obj);
    assert_true(model_node_same(&a, &b));
    b.ready = 0;
    assert_false(model_node_same(&a, &b));
    model_node_account(&a, a.allocatable, 1, 0);
    model_node_account(&a, a.allocatable, 1, 1);
    model_node_account(&a, NULL, 1, 0);
    assert_int_equal(a.used[a.allocatable->items[0].id], 8000);
    assert_int_equal(a.foreign[a.allocatable->items[0].id], 4000);
    assert_int_equal(a.used_pods, 3);
    free(a.used);
    free(a.foreign);
    model_node_clear(p, &a);
    model_node_clear(p, &b);
    assert_null(a.labels);
    assert_int_equal(a.alloc_pods, INT64_MAX);
    json_decref(obj);
}

/* A pod's metadata: our labels, else the legacy operator's; deletion and the flags kept. */
static void test_pod_meta(void **state)
{
    struct shape_pool *p = *state;
    struct cache_pod pod;
    memset(&pod, 0, sizeof(pod));
    json_t *meta =
        json_pack("{s:{s:s, s:s, s:s}, s:s, s:s}", "labels", LEGACY_LABEL_CLUSTER, "old", LEGACY_LABEL_NODE_KIND, "head",
                  NAMES_LABEL_QUEUE, "q", "creationTimestamp", "2024-01-02T03:04:05Z", "deletionTimestamp", "2024-01-02T03:05:00Z");
    model_pod_parse_meta(p, &pod, "ns", meta, CACHE_POD_TOLD);
    assert_string_equal(pod.cluster, "old");
    assert_string_equal(pod.node_type, "head");
    assert_null(pod.group);
    assert_string_equal(pod.queue, "q");
    assert_int_equal(pod.created, 1704164645);
    assert_int_equal(pod.flags, CACHE_POD_DELETING | CACHE_POD_TOLD);
    model_pod_release(p, &pod);
    assert_null(pod.cluster);
    json_decref(meta);
}

/* A pod's spec and status: our gate apart from others, priority held to 32 bits, phase, conditions, request. */
static void test_pod_spec(void **state)
{
    struct shape_pool *p = *state;
    struct cache_pod pod;
    memset(&pod, 0, sizeof(pod));
    json_t *obj =
        parse("{\"spec\": {\"priority\": 99999999999, \"schedulingGates\": [{\"name\": \"raygate.io/gang\"},"
              " {\"name\": \"other\"}], \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\": {\"cpu\": \"1\"}}}]},"
              " \"status\": {\"phase\": \"Running\", \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\","
              " \"lastTransitionTime\": \"1970-01-01T00:01:00Z\"}, {\"type\": \"PodScheduled\", \"status\": \"False\","
              " \"message\": \"0/3 nodes\"}]}}");
    model_pod_parse_spec(p, &pod, obj);
    assert_true(pod.flags & CACHE_POD_GATED);
    assert_int_equal(pod.nforeign_gates, 1);
    assert_string_equal(pod.foreign_gates[0], "other");
    assert_int_equal(pod.priority, INT32_MAX);
    assert_int_equal(pod.phase, CACHE_PHASE_RUNNING);
    assert_true(pod.ready);
    assert_int_equal(pod.ready_changed, 60);
    assert_string_equal(pod.unschedulable, "0/3 nodes");
    assert_non_null(pod.request);
    assert_int_equal(pod.request->items[0].value, 1000);
    assert_null(pod.sched);
    model_pod_release(p, &pod);
    json_decref(obj);
    memset(&pod, 0, sizeof(pod));
    obj = parse("{\"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": {\"requests\": {\"cpu\": \"x\"}}}]}}");
    model_pod_parse_spec(p, &pod, obj);
    assert_int_equal(pod.flags, CACHE_POD_BAD_REQUEST);
    assert_null(pod.request);
    assert_int_equal(pod.phase, CACHE_PHASE_PENDING);
    model_pod_release(p, &pod);
    json_decref(obj);
}

/* A gang's pods in creation order, then by name, whatever order they come in. */
static void test_gang_insert_pod(void **state)
{
    struct shape_pool *p = *state;
    struct cache_gang g;
    struct cache_pod pods[4];
    memset(&g, 0, sizeof(g));
    memset(pods, 0, sizeof(pods));
    const char *names[] = {"b", "a", "c", "z"};
    const char *created[] = {"1970-01-01T00:00:10Z", "1970-01-01T00:00:10Z", "1970-01-01T00:00:05Z", "1970-01-01T00:00:20Z"};
    for (int i = 0; i < 4; i++) {
        json_t *meta = json_pack("{s:s}", "creationTimestamp", created[i]);
        model_pod_parse_meta(p, &pods[i], "ns", meta, 0);
        json_decref(meta);
        pods[i].name = names[i];
        model_gang_insert_pod(&g, &pods[i]);
    }
    const char *want[] = {"c", "a", "b", "z"};
    int i = 0;
    for (struct cache_pod *pod = g.pods; pod != NULL; pod = pod->gang_next)
        assert_string_equal(pod->name, want[i++]);
    assert_int_equal(i, 4);
    assert_string_equal(g.pods_tail->name, "z");
    assert_ptr_equal(g.pods_tail->gang_prev, &pods[0]);
    for (int k = 0; k < 4; k++)
        model_pod_release(p, &pods[k]);
}

/* A RayCluster's gang arithmetic, and the reason kept when it fails. */
static void test_gang_spec(void **state)
{
    struct shape_pool *p = *state;
    struct cache_gang g;
    memset(&g, 0, sizeof(g));
    resources_init(&g.min_resources);
    json_t *obj = parse("{\"apiVersion\": \"ray.io/v1\", \"kind\": \"RayCluster\", \"metadata\": {\"name\": \"c\"},"
                        " \"spec\": {\"headGroupSpec\": {\"template\": {\"spec\": {\"containers\": [{\"name\": \"h\","
                        " \"resources\": {\"requests\": {\"cpu\": \"1\"}}}]}}}, \"workerGroupSpecs\": [{\"groupName\": \"w\","
                        " \"replicas\": 2, \"minReplicas\": 2, \"template\": {\"spec\": {\"containers\": [{\"name\": \"w\","
                        " \"resources\": {\"requests\": {\"cpu\": \"2\"}}}]}}}]}}");
    model_gang_parse_spec(p, &g, obj);
    assert_true(g.spec_ok);
    assert_int_equal(g.min_member, 3);
    assert_int_equal(g.ngroups, 1);
    assert_string_equal(g.groups[0].name, "w");
    assert_int_equal(g.groups[0].pods, 2);
    assert_int_equal(g.min_rl->items[0].value, 5000);
    json_object_set_new(json_array_get(json_object_get(json_object_get(obj, "spec"), "workerGroupSpecs"), 0), "replicas",
                        json_integer(-1));
    model_gang_parse_spec(p, &g, obj);
    assert_false(g.spec_ok);
    assert_null(g.min_rl);
    assert_non_null(g.spec_error);
    assert_non_null(strstr(g.spec_error, "replicas"));
    free(g.spec_error);
    model_gang_clear_groups(p, &g);
    resources_finish(&g.min_resources);
    json_decref(obj);
}

/* raygate.io/topology-placed counts while the RayCluster is admitted (test_cache: while ours is marked). */
static void test_gang_admitted(void **state)
{
    (void)state;
    struct cache_gang g;
    memset(&g, 0, sizeof(g));
    json_t *meta = parse("{\"resourceVersion\": \"5\", \"annotations\": {\"raygate.io/admitted-at\": \"2024-05-01T10:00:00Z\","
                         " \"raygate.io/topology-placed\": \"{\\\"gang\\\":\\\"r1\\\"}\"}}");
    model_gang_parse_admitted(&g, meta);
    assert_string_equal(g.admitted_at, "2024-05-01T10:00:00Z");
    assert_string_equal(g.topo_placed, "{\"gang\":\"r1\"}");
    json_object_del(json_object_get(meta, "annotations"), NAMES_ANNOTATION_ADMITTED);
    model_gang_parse_admitted(&g, meta); /* evicted, the record left on the object: it no longer counts */
    assert_null(g.admitted_at);
    assert_null(g.topo_placed);
    json_object_set_new(meta, "resourceVersion", json_string("6"));
    json_object_set_new(json_object_get(meta, "annotations"), NAMES_ANNOTATION_ADMITTED, json_string("2024-05-01T11:00:00Z"));
    json_object_set_new(json_object_get(meta, "annotations"), TOPOLOGY_PLACED, json_string(""));
    model_gang_parse_admitted(&g, meta); /* admitted again, an empty record: none */
    assert_non_null(g.admitted_at);
    assert_null(g.topo_placed);
    model_gang_clear_admitted(&g);
    assert_null(g.admitted_at);
    json_decref(meta);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_node, poolfixture_setup, poolfixture_teardown),
        cmocka_unit_test_setup_teardown(test_pod_meta, poolfixture_setup, poolfixture_teardown),
        cmocka_unit_test_setup_teardown(test_pod_spec, poolfixture_setup, poolfixture_teardown),
        cmocka_unit_test_setup_teardown(test_gang_insert_pod, poolfixture_setup, poolfixture_teardown),
        cmocka_unit_test_setup_teardown(test_gang_spec, poolfixture_setup, poolfixture_teardown),
        cmocka_unit_test(test_gang_admitted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
