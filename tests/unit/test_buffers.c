/*
 * lib/sched/scan/buffers.c: a gang's request to a node autoscaler (chunks by
 * distinct member spec), its PodTemplates and CapacityBuffers, a buffer's
 * status as Karpenter v1.14.1 writes it (docs/nodes.md), and which waits ask.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "buffers.h"

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (v == NULL)
        fail_msg("%s: %s", e.text, text);
    return v;
}

/* A head of 1 cpu, group gpu (2 of 2 cpu on gpu nodes), groups a and b alike (1 and 2 of 1 cpu, b autoscaling from 1). */
static const char *const cluster_text =
    "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"metadata\":{\"name\":\"rc\",\"namespace\":\"ns\",\"uid\":\"u1\"},"
    "\"spec\":{\"headGroupSpec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"ray-head\",\"image\":\"ray:2\","
    "\"env\":[{\"name\":\"X\",\"value\":\"1\"}],\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},\"workerGroupSpecs\":["
    "{\"groupName\":\"gpu\",\"replicas\":2,\"minReplicas\":2,\"maxReplicas\":2,\"template\":{\"spec\":{\"nodeSelector\":{\"gpu\":"
    "\"yes\"},\"containers\":[{\"name\":\"w\",\"image\":\"ray:2\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}},"
    "{\"groupName\":\"a\",\"replicas\":1,\"minReplicas\":1,\"maxReplicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
    "\"w\",\"image\":\"ray:2\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},"
    "{\"groupName\":\"b\",\"replicas\":2,\"minReplicas\":2,\"maxReplicas\":2,\"template\":{\"metadata\":{\"labels\":{\"x\":\"y\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"w\",\"image\":\"ray:2\",\"args\":[\"--other\"],\"resources\":{\"requests\":{\"cpu\":"
    "\"1\"}}}]}}}]}}";

static void test_request(void **state)
{
    (void)state;
    json_t *c = load(cluster_text);
    struct buffers_request r;
    struct error err = {{0}};
    buffers_request_init(&r);
    assert_int_equal(buffers_from_cluster(c, &r, &err), 0);
    /* the head; gpu's 2; a's and b's 3 alike (their labels and args choose no node) */
    assert_int_equal(r.n, 3);
    assert_int_equal(r.pods, 6);
    assert_int_equal(r.chunks[0].count, 1);
    assert_int_equal(r.chunks[1].count, 2);
    assert_int_equal(r.chunks[2].count, 3);
    assert_null(json_object_get(json_array_get(json_object_get(r.chunks[0].spec, "containers"), 0), "env"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.chunks[1].spec, "nodeSelector"), "gpu")), "yes");
    /* KubeRay's init container on every worker, with a placeholder image where it names none */
    const json_t *init = json_array_get(json_object_get(r.chunks[2].spec, "initContainers"), 0);
    assert_non_null(init);
    assert_non_null(json_string_value(json_object_get(init, "image")));
    assert_null(json_object_get(r.chunks[0].spec, "initContainers"));

    json_t *tpl = buffers_pod_template(c, &r, 1), *buf = buffers_capacity_buffer(c, &r, 1);
    char *t = json_dumps(tpl, JSON_COMPACT | JSON_SORT_KEYS), *b = json_dumps(buf, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(strstr(t, "\"kind\":\"PodTemplate\""));
    assert_non_null(
        strstr(t, "\"name\":\"rc-rg-1\",\"namespace\":\"ns\",\"ownerReferences\":[{\"apiVersion\":\"ray.io/v1\","
                  "\"blockOwnerDeletion\":false,\"controller\":true,\"kind\":\"RayCluster\",\"name\":\"rc\",\"uid\":\"u1\"}]"));
    assert_non_null(strstr(t, "\"labels\":{\"raygate.io/gang\":\"rc\"}"));
    assert_string_equal(
        b, "{\"apiVersion\":\"autoscaling.x-k8s.io/v1beta1\",\"kind\":\"CapacityBuffer\",\"metadata\":{\"labels\":"
           "{\"raygate.io/gang\":\"rc\"},\"name\":\"rc-rg-1\",\"namespace\":\"ns\",\"ownerReferences\":[{\"apiVersion\":"
           "\"ray.io/v1\",\"blockOwnerDeletion\":false,\"controller\":true,\"kind\":\"RayCluster\",\"name\":\"rc\",\"uid\":"
           "\"u1\"}]},\"spec\":{\"podTemplateRef\":{\"name\":\"rc-rg-1\"},\"provisioningStrategy\":"
           "\"buffer.x-k8s.io/active-capacity\",\"replicas\":2}}");
    free(t);
    free(b);
    json_decref(tpl);
    json_decref(buf);
    assert_null(buffers_pod_template(c, &r, 3));
    assert_null(buffers_capacity_buffer(c, &r, 3));

    /* A bad quantity: the field named, nothing asked. */
    json_object_set_new(
        json_object_get(
            json_object_get(
                json_array_get(
                    json_object_get(
                        json_object_get(json_object_get(json_object_get(json_object_get(c, "spec"), "headGroupSpec"), "template"),
                                        "spec"),
                        "containers"),
                    0),
                "resources"),
            "requests"),
        "cpu", json_string("lots"));
    assert_int_equal(buffers_from_cluster(c, &r, &err), -1);
    assert_int_equal(r.n, 0);
    assert_non_null(strstr(err.message, "cpu"));
    buffers_request_finish(&r);
    json_decref(c);
}

static void test_name(void **state)
{
    (void)state;
    char *n = buffers_name("rc", 12);
    assert_string_equal(n, "rc-rg-12");
    free(n);
    char longname[80];
    memset(longname, 'x', 70);
    longname[70] = '\0';
    n = buffers_name(longname, 3);
    assert_int_equal(strlen(n), 63);
    assert_string_equal(n + 58, "-rg-3");
    free(n);
}

/* Conditions as Karpenter v1.14.1 writes them (docs/nodes.md). */
static enum buffers_state state_of(const char *conditions, int generation, char *msg)
{
    char text[1024];
    snprintf(text, sizeof(text), "{\"metadata\":{\"generation\":%d},\"status\":{\"conditions\":[%s]}}", generation, conditions);
    json_t *b = load(text);
    enum buffers_state s = buffers_state_of(b, msg, 128);
    json_decref(b);
    return s;
}

static void test_state(void **state)
{
    (void)state;
    char msg[128];
    const char *ready = "{\"type\":\"ReadyForProvisioning\",\"status\":\"True\",\"reason\":\"Resolved\",\"observedGeneration\":1}";
    char text[512];
    assert_int_equal(state_of("", 1, msg), BUFFERS_WAITING);
    assert_string_equal(msg, "");
    snprintf(text, sizeof(text),
             "%s,{\"type\":\"Provisioning\",\"status\":\"True\",\"reason\":\"FitsExistingCapacity\",\"message\":"
             "\"All 3 virtual pods fit on existing capacity\",\"observedGeneration\":1}",
             ready);
    assert_int_equal(state_of(text, 1, msg), BUFFERS_FITS);
    assert_string_equal(msg, "All 3 virtual pods fit on existing capacity");
    assert_int_equal(state_of(text, 2, msg), BUFFERS_WAITING); /* about the spec before */
    snprintf(text, sizeof(text),
             "%s,{\"type\":\"Provisioning\",\"status\":\"False\",\"reason\":\"RequiresNewCapacity\",\"message\":"
             "\"2/3 virtual pods required new capacity, 0 failed\",\"observedGeneration\":1}",
             ready);
    assert_int_equal(state_of(text, 1, msg), BUFFERS_PROVISIONING);
    snprintf(text, sizeof(text),
             "%s,{\"type\":\"Provisioning\",\"status\":\"False\",\"reason\":\"RequiresNewCapacity\",\"message\":"
             "\"0/30 virtual pods required new capacity, 4 failed\",\"observedGeneration\":1}",
             ready);
    assert_int_equal(state_of(text, 1, msg), BUFFERS_LIMITED);
    assert_string_equal(msg, "0/30 virtual pods required new capacity, 4 failed");
    assert_int_equal(
        state_of("{\"type\":\"ReadyForProvisioning\",\"status\":\"False\",\"reason\":\"PodTemplateNotFound\",\"message\":"
                 "\"no template\",\"observedGeneration\":1}",
                 1, msg),
        BUFFERS_REFUSED);
    assert_string_equal(msg, "no template");
    assert_int_equal(state_of("{\"type\":\"LimitedByQuotas\",\"status\":\"True\",\"message\":\"quota q\"}", 1, msg),
                     BUFFERS_LIMITED);
    assert_int_equal(state_of("{\"type\":\"Provisioning\",\"status\":\"False\",\"reason\":\"BufferEmpty\"}", 1, msg),
                     BUFFERS_WAITING);
    assert_string_equal(buffers_state_name(BUFFERS_PROVISIONING), "provisioning");
    assert_string_equal(buffers_state_name((enum buffers_state)42), "waiting");
}

static void test_select(void **state)
{
    (void)state;
    struct admit_decision items[] = {
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_NODES, .queue = "a"},
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_QUEUE_CAPACITY, .queue = "a"},
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_NODES, .queue = "a"},
        {.action = ADMIT_ACTION_ADMIT, .reason = ADMIT_REASON_NONE, .queue = "b"},
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_NODES, .queue = "b"},
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_NODES, .queue = "a"},
    };
    struct admit_result res = {.items = items, .len = sizeof(items) / sizeof(items[0])};
    size_t out[6];
    assert_int_equal(buffers_select(&res, 1, out), 2);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 4);
    assert_int_equal(buffers_select(&res, 2, out), 3);
    assert_int_equal(out[2], 4);
    assert_int_equal(buffers_select(&res, 0, out), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_name),
        cmocka_unit_test(test_state),
        cmocka_unit_test(test_select),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
