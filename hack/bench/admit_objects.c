/* admit_objects: admit_bench's synthetic Nodes, Queues, RayClusters and Pods (admit_objects.h). */
#include "admit_objects.h"

#include <stdio.h>

#include "admit_dra.h"
#include "bench.h"
#include "topology.h"

/* Pod k of gang g (0: the head): cpu 2 / 4Gi, or cpu 4 / 8Gi and the gang's GPUs. */
struct admit_objects_req admit_objects_pod_req(const struct opts *o, long g, long k)
{
    if (k == 0)
        return (struct admit_objects_req){2000, 4LL << 30, 0};
    return (struct admit_objects_req){4000, 8LL << 30, o->gpus * (g % 3 == 2 ? 2 : 1)};
}

/* The rack of node i. */
static long node_rack(const struct opts *o, long i)
{
    return i * o->domains / o->nodes;
}

long admit_objects_rack_first(const struct opts *o, long d)
{
    return (d * o->nodes + o->domains - 1) / o->domains;
}

json_t *admit_objects_node_json(const struct opts *o, long i)
{
    char name[32], zone[16];
    snprintf(name, sizeof(name), "node-%05ld", i);
    snprintf(zone, sizeof(zone), "zone-%ld", i % 3);
    json_t *n = json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s}},s:{},s:{s:{s:s,s:s,s:s},s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
                          "Node", "metadata", "name", name, "labels", "kubernetes.io/hostname", name, "topology.kubernetes.io/zone",
                          zone, "node.kubernetes.io/instance-type", "bench-32", "spec", "status", "allocatable", "cpu", "32",
                          "memory", "128Gi", "pods", "110", "conditions", "type", "Ready", "status", "True");
    if (o->gpus > 0 && !o->dra)
        json_object_set_new(json_object_get(json_object_get(n, "status"), "allocatable"), "nvidia.com/gpu",
                            json_integer(NODE_GPUS));
    if (o->domains > 0) {
        char rack[32];
        snprintf(rack, sizeof(rack), "rack-%04ld", node_rack(o, i));
        json_object_set_new(json_object_get(json_object_get(n, "metadata"), "labels"), BENCH_RACK, json_string(rack));
    }
    return n;
}

json_t *admit_objects_queue_json(const struct opts *o, long q)
{
    char name[32];
    snprintf(name, sizeof(name), "queue-%03ld", q);
    json_t *spec = json_object();
    if (q % 5 != 4) {
        /* 80% of this queue's share of the nodes' cpu. */
        long long cpu = (long long)o->nodes * 32 * 8 / 10 / o->queues;
        json_object_set_new(spec, "capability", json_pack("{s:I}", "cpu", (json_int_t)cpu));
    }
    return json_pack("{s:s,s:s,s:{s:s},s:o,s:{s:s}}", "apiVersion", "scheduling.volcano.sh/v1beta1", "kind", "Queue", "metadata",
                     "name", name, "spec", spec, "status", "state", "Open");
}

static const char *gang_queue(const struct opts *o, long g, char *buf, size_t size)
{
    snprintf(buf, size, "queue-%03ld", g % o->queues);
    return buf;
}

/* Adds nvidia.com/gpu gpus (when > 0) to the requests and limits of the first container of pod spec (borrowed); --dra: a claim. */
static void add_gpus(const struct opts *o, json_t *spec, int64_t gpus)
{
    if (gpus <= 0)
        return;
    if (o->dra) {
        admit_dra_claims(spec, gpus);
        return;
    }
    json_t *res = json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "resources");
    json_object_set_new(json_object_get(res, "requests"), "nvidia.com/gpu", json_integer(gpus));
    json_object_set_new(json_object_get(res, "limits"), "nvidia.com/gpu", json_integer(gpus));
}

/* A pod template (new reference); gpus > 0 adds nvidia.com/gpu to requests and limits. */
static json_t *template_json(const struct opts *o, const char *cpu, const char *memory, int64_t gpus)
{
    json_t *t = json_pack("{s:{s:[{s:s,s:s,s:{s:{s:s,s:s},s:{s:s,s:s}}}]}}", "spec", "containers", "name", "ray", "image",
                          "rayproject/ray:2.9.0", "resources", "requests", "cpu", cpu, "memory", memory, "limits", "cpu", cpu,
                          "memory", memory);
    add_gpus(o, json_object_get(t, "spec"), gpus);
    return t;
}

/* RayCluster g (new reference); admitted: with raygate.io/admitted-at and, when placed is not NULL, raygate.io/topology-placed. */
static json_t *raycluster_json(const struct opts *o, long g, int admitted, const char *placed)
{
    char name[32], id[48], ts[48], queue[32];
    snprintf(name, sizeof(name), "rc-%06ld", g);
    bench_uid(id, sizeof(id), 'c', g);
    bench_timestamp(g, ts, sizeof(ts));
    json_t *rc = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s,s:{s:s}},s:{s:{s:{},s:o},s:[{s:s,s:I,s:I,s:I,s:{},s:o}]}}", "apiVersion", "ray.io/v1",
        "kind", "RayCluster", "metadata", "name", name, "namespace", "bench", "uid", id, "resourceVersion", "1",
        "creationTimestamp", ts, "labels", "volcano.sh/queue-name", gang_queue(o, g, queue, sizeof(queue)), "spec", "headGroupSpec",
        "rayStartParams", "template", template_json(o, "2", "4Gi", 0), "workerGroupSpecs", "groupName", "w", "replicas",
        (json_int_t)(o->pods - 1), "minReplicas", (json_int_t)(o->pods - 1), "maxReplicas", (json_int_t)(o->pods - 1),
        "rayStartParams", "template", template_json(o, "4", "8Gi", admit_objects_pod_req(o, g, 1).gpu));
    json_t *annotations = json_object();
    if (o->required)
        json_object_set_new(annotations, TOPOLOGY_REQUIRED, json_string(BENCH_RACK));
    if (admitted)
        json_object_set_new(annotations, "raygate.io/admitted-at", json_string("2024-06-01T00:00:00Z"));
    if (admitted && placed != NULL)
        json_object_set_new(annotations, TOPOLOGY_PLACED, json_string(placed));
    json_object_set_new(json_object_get(rc, "metadata"), "annotations", annotations);
    return rc;
}

/*
 * Pod k of gang g, as KubeRay creates it and the webhook gates it; bound to
 * node when node is not NULL, with confine (borrowed, may be NULL: the
 * confinement its gate's removal added) merged into its spec.
 */
json_t *admit_objects_pod_json(const struct opts *o, long g, long k, const char *node, const json_t *confine, const char *rv)
{
    char name[80], id[48], ts[48], cluster[32], queue[32], group[48];
    snprintf(cluster, sizeof(cluster), "rc-%06ld", g);
    if (k == 0)
        snprintf(name, sizeof(name), "%s-head-x7k2p", cluster);
    else
        snprintf(name, sizeof(name), "%s-w-worker-%05ld", cluster, k);
    snprintf(group, sizeof(group), "ray-%s-pg", cluster);
    bench_uid(id, sizeof(id), 'p', g * 1000 + k);
    bench_timestamp(g, ts, sizeof(ts));
    const char *cpu = k == 0 ? "2" : "4", *memory = k == 0 ? "4Gi" : "8Gi";
    json_t *pod = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s,s:s},s:{s:s}},"
        "s:{s:[{s:s,s:s,s:{s:{s:s,s:s},s:{s:s,s:s}}}],s:s,s:s,s:i},s:{s:s,s:s}}",
        "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", "bench", "uid", id, "resourceVersion", rv,
        "creationTimestamp", ts, "labels", "ray.io/cluster", cluster, "volcano.sh/queue-name",
        gang_queue(o, g, queue, sizeof(queue)), "ray.io/node-type", k == 0 ? "head" : "worker", "ray.io/group",
        k == 0 ? "headgroup" : "w", "ray.io/is-ray-node", "yes", "app.kubernetes.io/created-by", "kuberay-operator", "annotations",
        "scheduling.k8s.io/group-name", group, "spec", "containers", "name", "ray", "image", "rayproject/ray:2.9.0", "resources",
        "requests", "cpu", cpu, "memory", memory, "limits", "cpu", cpu, "memory", memory, "schedulerName", "default-scheduler",
        "restartPolicy", "Never", "priority", 0, "status", "phase", "Pending", "qosClass", "Guaranteed");
    json_t *spec = json_object_get(pod, "spec");
    add_gpus(o, spec, admit_objects_pod_req(o, g, k).gpu);
    if (confine != NULL)
        json_object_update(spec, (json_t *)confine);
    if (node != NULL) {
        json_object_set_new(spec, "nodeName", json_string(node));
        json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Running"));
    } else {
        json_object_set_new(spec, "schedulingGates", json_pack("[{s:s}]", "name", "raygate.io/gang"));
    }
    return pod;
}

void admit_objects_upsert_pod(struct cache *c, const struct opts *o, long g, long k, const char *node, const json_t *confine,
                              const char *rv)
{
    struct error err;
    json_t *pod = admit_objects_pod_json(o, g, k, node, confine, rv);
    bench_check(cache_upsert_pod(c, pod, &err), &err);
    json_decref(pod);
}

void admit_objects_upsert_raycluster(struct cache *c, const struct opts *o, long g, int admitted, const char *placed)
{
    struct error err;
    json_t *rc = raycluster_json(o, g, admitted, placed);
    bench_check(cache_upsert_raycluster(c, rc, &err), &err);
    json_decref(rc);
}
