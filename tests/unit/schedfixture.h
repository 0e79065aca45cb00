/*
 * schedfixture: a small cache of one RayCluster and its pods, built from
 * objects written here, for the tests of the modules a pass is made of
 * (test_members, test_hold, test_admitresult).
 */
#ifndef RAYGATE_TEST_SCHEDFIXTURE_H
#define RAYGATE_TEST_SCHEDFIXTURE_H

#include <stdio.h>

#include <jansson.h>

#include "cache.h"

/* RayCluster ns/c in queue q: a head of cpu 1 and group "w" of `workers` pods of cpu 2; minResources cpu 1 + 2 * workers. */
static inline void schedfixture_cluster(struct cache *c, int workers)
{
    json_t *obj =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s}}, s:{s:{s:{s:{s:[{s:s, s:{s:{s:s}}}]}}},"
                  " s:[{s:s, s:i, s:i, s:{s:{s:[{s:s, s:{s:{s:s}}}]}}}]}}",
                  "apiVersion", "ray.io/v1", "kind", "RayCluster", "metadata", "name", "c", "namespace", "ns", "uid", "u-c",
                  "labels", NAMES_LABEL_QUEUE, "q", "spec", "headGroupSpec", "template", "spec", "containers", "name", "h",
                  "resources", "requests", "cpu", "1", "workerGroupSpecs", "groupName", "w", "replicas", workers, "minReplicas",
                  workers, "template", "spec", "containers", "name", "w", "resources", "requests", "cpu", "2");
    struct error err;
    assert_int_equal(cache_upsert_raycluster(c, obj, &err), 0);
    json_decref(obj);
}

/* Pod ns/name of cluster c created at second t: node type "head" or "worker" (group "w"), gated or not, cpu. */
static inline struct cache_pod *schedfixture_pod(struct cache *c, const char *name, int t, const char *type, int gated,
                                                 const char *cpu)
{
    char created[32];
    snprintf(created, sizeof(created), "1970-01-01T00:00:%02dZ", t);
    json_t *labels = json_pack("{s:s, s:s, s:s}", NAMES_LABEL_CLUSTER, "c", NAMES_LABEL_NODE_TYPE, type, NAMES_LABEL_QUEUE, "q");
    if (type[0] == 'w')
        json_object_set_new(labels, NAMES_LABEL_GROUP, json_string("w"));
    json_t *gates = gated ? json_pack("[{s:s}, {s:s}]", "name", NAMES_GATE, "name", "other") : json_array();
    json_t *obj = json_pack("{s:{s:s, s:s, s:s, s:s, s:s, s:o}, s:{s:o, s:[{s:s, s:{s:{s:s}}}]}}", "metadata", "name", name,
                            "namespace", "ns", "uid", name, "resourceVersion", "7", "creationTimestamp", created, "labels", labels,
                            "spec", "schedulingGates", gates, "containers", "name", "c", "resources", "requests", "cpu", cpu);
    struct error err;
    assert_int_equal(cache_upsert_pod(c, obj, &err), 0);
    json_decref(obj);
    return cache_pod_get(c, "ns", name);
}

#endif
