#include "admit_dra.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dracache.h"
#include "draset.h"

#define DRIVER "gpu.nvidia.com"
#define CLASS "gpu.nvidia.com"
#define CLAIM_NAME "gpu" /* the pods' spec.resourceClaims[0].name */

struct admit_dra {
    struct cache *c;
    struct draset *s;
    long nodes, devices, pods;
    uint64_t *node_used; /* per node: its devices held by the bench's claims, a bit each */
    uint64_t *pod_held;  /* per pod (gang * pods + k): the devices its claim holds */
    long *pod_node;      /* per pod: the node of its claim, -1: none */
    long gang_slots;
};

static void record(struct admit_dra *d, enum draset_kind kind, int deleted, json_t *obj)
{
    struct error err;
    dracache_record(d->c, kind, deleted, obj, &err);
    if (err.message[0] != '\0')
        bench_die(err.message);
    json_decref(obj);
}

static json_t *class_json(void)
{
    return json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass",
                     "metadata", "name", CLASS, "spec", "extendedResourceName", "nvidia.com/gpu", "selectors", "cel", "expression",
                     "device.driver == '" DRIVER "' && device.attributes['" DRIVER "'].type == 'gpu'");
}

static json_t *template_json(int64_t gpus)
{
    char name[32];
    snprintf(name, sizeof(name), "gpus-%lld", (long long)gpus);
    return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:{s:[{s:s,s:{s:s,s:I}}]}}}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceClaimTemplate", "metadata", "name", name, "namespace", "bench", "spec", "spec", "devices", "requests",
                     "name", "gpu", "exactly", "deviceClassName", CLASS, "count", (json_int_t)gpus);
}

/* Device i of a node, as NVIDIA's driver publishes a GPU (fewer attributes). */
static json_t *device_json(long node, long i)
{
    char name[32], uuid[64];
    snprintf(name, sizeof(name), "gpu-%ld", i);
    snprintf(uuid, sizeof(uuid), "GPU-%08lx-0000-4000-8000-%012ld", (unsigned long)node, i);
    return json_pack("{s:s,s:{s:{s:s},s:{s:I},s:{s:s},s:{s:s},s:{s:s}},s:{s:{s:s}}}", "name", name, "attributes", "type", "string",
                     "gpu", "index", "int", (json_int_t)i, "uuid", "string", uuid, "productName", "string", "NVIDIA H100 80GB HBM3",
                     "architecture", "string", "Hopper", "capacity", "memory", "value", "80Gi");
}

static json_t *slice_json(const struct admit_dra *d, long node, long generation)
{
    char name[80], nodename[32];
    snprintf(nodename, sizeof(nodename), "node-%05ld", node);
    snprintf(name, sizeof(name), "%s-" DRIVER "-x7k2p", nodename);
    json_t *devices = json_array();
    for (long i = 0; i < d->devices; i++)
        json_array_append_new(devices, device_json(node, i));
    return json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:s,s:{s:s,s:I,s:i},s:o}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceSlice", "metadata", "name", name, "spec", "driver", DRIVER, "nodeName", nodename, "pool", "name",
                     nodename, "generation", (json_int_t)generation, "resourceSliceCount", 1, "devices", devices);
}

struct admit_dra *admit_dra_create(struct cache *c, long nodes, long devices, const int64_t *gpus, int ngpus, long gangs, long pods)
{
    if (devices < 1 || devices > 64)
        bench_die("--dra: 1 to 64 devices per node");
    struct admit_dra *d = calloc(1, sizeof(*d));
    size_t npods = (size_t)(gangs + 1) * (size_t)pods;
    *d = (struct admit_dra){c,
                            draset_create(),
                            nodes,
                            devices,
                            pods,
                            calloc((size_t)nodes, sizeof(uint64_t)),
                            calloc(npods, sizeof(uint64_t)),
                            malloc(npods * sizeof(long)),
                            gangs + 1};
    for (size_t i = 0; i < npods; i++)
        d->pod_node[i] = -1;
    dracache_use(c, d->s);
    record(d, DRASET_CLASS, 0, class_json());
    for (int i = 0; i < ngpus; i++)
        record(d, DRASET_TEMPLATE, 0, template_json(gpus[i]));
    for (long n = 0; n < nodes; n++)
        record(d, DRASET_SLICE, 0, slice_json(d, n, 1));
    return d;
}

void admit_dra_destroy(struct admit_dra *d)
{
    if (d == NULL)
        return;
    dracache_use(d->c, NULL);
    draset_destroy(d->s);
    free(d->node_used);
    free(d->pod_held);
    free(d->pod_node);
    free(d);
}

void admit_dra_claims(json_t *spec, int64_t gpus)
{
    if (gpus <= 0)
        return;
    char tmpl[32];
    snprintf(tmpl, sizeof(tmpl), "gpus-%lld", (long long)gpus);
    json_object_set_new(spec, "resourceClaims", json_pack("[{s:s,s:s}]", "name", CLAIM_NAME, "resourceClaimTemplateName", tmpl));
    json_t *res = json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "resources");
    json_object_set_new(res, "claims", json_pack("[{s:s}]", "name", CLAIM_NAME));
}

void admit_dra_prepare(struct admit_dra *d)
{
    dracache_prepare(d->c);
}

/* The claim of pod k of gang g, as kube-controller-manager names it (<pod>-<claim>-<suffix>). */
static void claim_name(long g, long k, char *buf, size_t size)
{
    snprintf(buf, size, "rc-%06ld-w-worker-%05ld-" CLAIM_NAME "-q8z4m", g, k);
}

/* The claim of pod k of gang g (new reference), allocated the devices of held on node n (NULL: none). */
static json_t *claim_json(const struct admit_dra *d, long g, long k, long n, uint64_t held, int64_t gpus)
{
    char name[80], pod[80], uid[48], node[32];
    claim_name(g, k, name, sizeof(name));
    snprintf(pod, sizeof(pod), "rc-%06ld-w-worker-%05ld", g, k);
    snprintf(node, sizeof(node), "node-%05ld", n);
    bench_uid(uid, sizeof(uid), 'p', g * 1000 + k);
    json_t *results = json_array();
    for (long i = 0; i < d->devices; i++) {
        char dev[32];
        snprintf(dev, sizeof(dev), "gpu-%ld", i);
        if (held & ((uint64_t)1 << i))
            json_array_append_new(results,
                                  json_pack("{s:s,s:s,s:s,s:s}", "request", "gpu", "driver", DRIVER, "pool", node, "device", dev));
    }
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:{s:[{s:s,s:{s:s,s:I}}]}},s:{s:{s:{s:o}},s:[{s:s,s:s,s:s}]}}", "apiVersion",
                     "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace", "bench", "annotations",
                     DRASET_POD_CLAIM_ANNOTATION, CLAIM_NAME, "spec", "devices", "requests", "name", "gpu", "exactly",
                     "deviceClassName", CLASS, "count", (json_int_t)gpus, "status", "allocation", "devices", "results", results,
                     "reservedFor", "resource", "pods", "name", pod, "uid", uid);
}

void admit_dra_bind(struct admit_dra *d, long g, long k, long n, int64_t gpus)
{
    if (gpus <= 0)
        return;
    if (g >= d->gang_slots || k >= d->pods || n >= d->nodes)
        bench_die("--dra: a pod out of the bench's range");
    uint64_t held = 0;
    for (long i = 0; i < d->devices && gpus > 0; i++) {
        uint64_t bit = (uint64_t)1 << i;
        if (!(d->node_used[n] & bit)) {
            held |= bit;
            gpus--;
        }
    }
    if (gpus > 0)
        bench_die("--dra: a bound pod finds too few free devices on its node");
    size_t p = (size_t)(g * d->pods + k);
    d->node_used[n] |= held;
    d->pod_held[p] = held;
    d->pod_node[p] = n;
    record(d, DRASET_CLAIM, 0, claim_json(d, g, k, n, held, __builtin_popcountll(held)));
}

void admit_dra_release(struct admit_dra *d, long g)
{
    for (long k = 0; k < d->pods && g < d->gang_slots; k++) {
        size_t p = (size_t)(g * d->pods + k);
        if (d->pod_node[p] < 0)
            continue;
        char name[80];
        claim_name(g, k, name, sizeof(name));
        record(d, DRASET_CLAIM, 1, json_pack("{s:{s:s,s:s}}", "metadata", "name", name, "namespace", "bench"));
        d->node_used[d->pod_node[p]] &= ~d->pod_held[p];
        d->pod_held[p] = 0;
        d->pod_node[p] = -1;
    }
}

json_t *admit_dra_rebuild(struct admit_dra *d, long runs)
{
    json_t *slice = bench_samples(), *cls = bench_samples();
    dracache_prepare(d->c);
    for (long r = 0; r < runs; r++) {
        record(d, DRASET_SLICE, 0, slice_json(d, r % d->nodes, 1));
        struct bench_span t = bench_span_start();
        dracache_prepare(d->c);
        bench_span_add(slice, t);
    }
    for (long r = 0; r < runs; r++) {
        record(d, DRASET_CLASS, 0, class_json());
        struct bench_span t = bench_span_start();
        dracache_prepare(d->c);
        bench_span_add(cls, t);
    }
    return json_pack("{s:o,s:o}", "slice_changed_prepare_ms", slice, "class_changed_prepare_ms", cls);
}
