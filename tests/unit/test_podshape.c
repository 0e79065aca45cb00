/*
 * lib/sched/cache/podshape.c through the watch stream (watchstream_set_shape):
 * a pod event is built without what the cache never reads (managedFields,
 * volumes, containers' env and image, containers' statuses) and with what it
 * reads, and the cache models the shaped pod as it models the whole one. A
 * line the scan declines (a raw non-ASCII byte) is built whole by jansson.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "podshape.h"
#include "watchfixture.h"

static const char pod_event[] =
    "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
    "\"uid\":\"u\",\"resourceVersion\":\"7\",\"creationTimestamp\":\"2026-11-28T10:00:00Z\",\"labels\":{\"ray.io/cluster\":\"rc\","
    "\"volcano.sh/queue-name\":\"q\"},\"managedFields\":[{\"manager\":\"kwok\",\"fieldsV1\":{\"f:status\":{}}}]},\"spec\":"
    "{\"nodeName\":\"n1\",\"volumes\":[{\"name\":\"v\"}],\"containers\":[{\"name\":\"c\",\"image\":\"ray\",\"env\":[{\"name\":"
    "\"A\","
    "\"value\":\"B\"}],\"resources\":{\"requests\":{\"cpu\":\"2\"}}}],\"initContainers\":[{\"name\":\"i\",\"image\":\"x\","
    "\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],\"tolerations\":[{\"key\":\"k\",\"operator\":"
    "\"Exists\"}]},\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
    "\"containerStatuses\":[{\"name\":\"c\",\"ready\":true}]}}}\n";

static json_t *feed(const char *text, int shaped)
{
    return watchfixture_one(text, PODSHAPE_EVENT, shaped ? podshape_fn : NULL);
}

static const json_t *at(const json_t *v, const char *a, const char *b)
{
    return json_object_get(json_object_get(v, a), b);
}

static void test_shaped(void **state)
{
    (void)state;
    json_t *pod = feed(pod_event, 1);
    assert_null(at(pod, "metadata", "managedFields"));
    assert_null(at(pod, "spec", "volumes"));
    assert_null(at(pod, "status", "containerStatuses"));
    const json_t *c = json_array_get(at(pod, "spec", "containers"), 0);
    assert_null(json_object_get(c, "env"));
    assert_null(json_object_get(c, "image"));
    assert_string_equal(json_string_value(json_object_get(at(c, "resources", "requests"), "cpu")), "2");
    const json_t *ic = json_array_get(at(pod, "spec", "initContainers"), 0);
    assert_string_equal(json_string_value(json_object_get(ic, "restartPolicy")), "Always");
    assert_non_null(at(pod, "spec", "tolerations"));
    assert_string_equal(json_string_value(json_object_get(at(pod, "metadata", "labels"), "ray.io/cluster")), "rc");
    assert_string_equal(json_string_value(at(pod, "status", "phase")), "Running");

    /* The cache models it as the whole pod. */
    json_t *whole = feed(pod_event, 0);
    assert_non_null(at(whole, "metadata", "managedFields"));
    struct cache *a = cache_create(), *b = cache_create();
    struct error err = {{0}};
    assert_int_equal(cache_upsert_pod(a, pod, &err), 0);
    assert_int_equal(cache_upsert_pod(b, whole, &err), 0);
    const struct cache_pod *pa = cache_pod_get(a, "ns", "p"), *pb = cache_pod_get(b, "ns", "p");
    assert_non_null(pa);
    assert_non_null(pb);
    assert_int_equal(pa->flags, pb->flags);
    assert_int_equal(pa->phase, pb->phase);
    assert_int_equal(pa->ready, pb->ready);
    assert_true((pa->request == NULL) == (pb->request == NULL));
    assert_true((pa->sched == NULL) == (pb->sched == NULL));
    cache_destroy(a);
    cache_destroy(b);
    json_decref(whole);
    json_decref(pod);
}

/* A \u escape (the API server writes & so) is decoded in the shaped event; a raw non-ASCII byte is left to jansson. */
static void test_escapes(void **state)
{
    (void)state;
    const char *text = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\",\"annotations\":{\"a\":\"x \\u0026\\u0026 "
                       "y\"},\"managedFields\":[]}}}\n";
    json_t *pod = feed(text, 1);
    assert_null(at(pod, "metadata", "managedFields"));
    assert_string_equal(json_string_value(json_object_get(at(pod, "metadata", "annotations"), "a")), "x && y");
    json_decref(pod);
    text = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\xc3\xa9\",\"managedFields\":[]}}}\n";
    pod = feed(text, 1);
    assert_non_null(at(pod, "metadata", "managedFields"));
    assert_string_equal(json_string_value(at(pod, "metadata", "name")), "p\xc3\xa9");
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shaped),
        cmocka_unit_test(test_escapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
