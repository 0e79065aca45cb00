/*
 * admit_bench: the gate controller's decision code (lib/sched/cache + lib/sched/admit) at
 * scale, in process, on synthetic objects shaped like the API's.
 *
 *   admit_bench [--gangs N] [--nodes N] [--queues N] [--pods-per-gang N] [--runs N]
 *               [--gpus N] [--domains N] [--topology none|required]
 *
 * The cluster: NODES Ready nodes (cpu 32, memory 128Gi, pods 110; default
 * gangs/2, so the mix stays the same at every size), QUEUES queues, GANGS
 * RayClusters of PODS pods (a head of cpu 2 / 4Gi, workers of cpu 4 / 8Gi),
 * every pod created and gated, spread round-robin over the queues. Four queues
 * in five have a capability of 80% of their share of the nodes' cpu, so most
 * of their gangs wait on the queue; every fifth queue is unlimited, so its
 * gangs compete for nodes until no node has room.
 *
 * GPUs (--gpus N, N > 0; issue 24): every node also has nvidia.com/gpu 8, and
 * every worker asks for N GPUs, every third gang's workers for 2N (two gang
 * sizes, so that domains fragment).
 * Domains (--domains D; issue 24): node i carries the label
 * raygate.io/bench-rack = rack-NNNN, i * D / nodes, so each rack is a run of
 * nodes D-th of the cluster in name order. --topology required puts the
 * annotation raygate.io/topology-required: raygate.io/bench-rack on every
 * RayCluster (its workers lie in one rack, the head anywhere); none (the
 * default) leaves it out: the same cluster and gangs, unconstrained. Admitted
 * pods are bound in the rack their confinement (admit_pod.confine) names, and
 * the admitted RayCluster records raygate.io/topology-placed, as the gate
 * controller does. The counts say how many admitted gangs were placed in a
 * domain (topology_placed).
 * DRA (--dra, with --gpus; issue 36): the same GPUs as DRA devices
 * (admit_dra.h): no nvidia.com/gpu in the nodes' allocatable, a ResourceSlice
 * of 8 devices per node, workers asking through ResourceClaimTemplates, and
 * each bound worker's claim allocated. Every pass is preceded by
 * dracache_prepare (timed with it, as the gate runs it), and the figures add
 * ledger_rebuild_ms: dracache_prepare after a slice and after the DeviceClass
 * changed, in the steady state.
 *
 * Measured (each RUNS times; raw samples in milliseconds, wall and thread CPU time):
 * - full_pass_ms: admit_pass(ADMIT_PASS_FULL) over the pending state (the pass
 *   does not change what the cache models, so every run sees the same state);
 * - then the first pass's decisions are carried out as the controller and the
 *   scheduler would (admitted-at, gates removed, pods bound to nodes) and, in
 *   that steady state:
 *   - steady_full_pass_ms: a full pass (the periodic resync);
 *   - pod_created_ms: one new pod of a pending RayCluster arrives (upsert),
 *     then the incremental pass the controller runs;
 *   - pending_gang_deleted_ms: a pending RayCluster and its pods are deleted
 *     (1 + PODS watch events, one pass);
 *   - running_gang_deleted_ms: the same for an admitted gang whose pods run
 *     (the room it frees may admit waiting gangs);
 * - bytes_per_pod: heap (mallinfo2) held by the cache per pending pod, measured
 *   over inserting every pod.
 * Prints one JSON object on stdout, with the load average (/proc/loadavg) at
 * the start and the end: on a shared machine, figures come with the load.
 */
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "admit.h"
#include "admit_dra.h"
#include "bench.h"
#include "cache.h"
#include "evictscan.h"
#include "topology.h"

/* The node label of --domains: the bench's racks. */
#define BENCH_RACK "raygate.io/bench-rack"
#define NODE_GPUS 8

struct opts {
    long gangs, nodes, queues, pods, runs;
    int scan;                 /* --scan: the eviction scan and the cache's memory instead of the passes */
    const char *pod_template; /* --pod-template: a Pod or AdmissionReview JSON file the scan's pods are made from */
    long gpus;                /* GPUs per worker (every third gang's workers: twice as many); 0: no GPUs anywhere */
    long domains;             /* racks the nodes are labelled into; 0: no label */
    int required;             /* every RayCluster asks raygate.io/topology-required: BENCH_RACK */
    int dra;                  /* --dra: the GPUs are DRA devices (admit_dra.h) */
    struct admit_dra *devs;   /* with --dra: the DRA set the cache uses */
};

/* What one pod asks for. */
struct req {
    int64_t cpu, mem, gpu;
};

/* Pod k of gang g (0: the head): cpu 2 / 4Gi, or cpu 4 / 8Gi and the gang's GPUs. */
static struct req pod_req(const struct opts *o, long g, long k)
{
    if (k == 0)
        return (struct req){2000, 4LL << 30, 0};
    return (struct req){4000, 8LL << 30, o->gpus * (g % 3 == 2 ? 2 : 1)};
}

/* The rack of node i, and the first node of rack d (nodes of a rack are consecutive). */
static long node_rack(const struct opts *o, long i)
{
    return i * o->domains / o->nodes;
}

static long rack_first(const struct opts *o, long d)
{
    return (d * o->nodes + o->domains - 1) / o->domains;
}

static json_t *node_json(const struct opts *o, long i)
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

static json_t *queue_json(const struct opts *o, long q)
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
    json_t *rc =
        json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s,s:{s:s}},s:{s:{s:{},s:o},s:[{s:s,s:I,s:I,s:I,s:{},s:o}]}}", "apiVersion",
                  "ray.io/v1", "kind", "RayCluster", "metadata", "name", name, "namespace", "bench", "uid", id, "resourceVersion",
                  "1", "creationTimestamp", ts, "labels", "volcano.sh/queue-name", gang_queue(o, g, queue, sizeof(queue)), "spec",
                  "headGroupSpec", "rayStartParams", "template", template_json(o, "2", "4Gi", 0), "workerGroupSpecs", "groupName",
                  "w", "replicas", (json_int_t)(o->pods - 1), "minReplicas", (json_int_t)(o->pods - 1), "maxReplicas",
                  (json_int_t)(o->pods - 1), "rayStartParams", "template", template_json(o, "4", "8Gi", pod_req(o, g, 1).gpu));
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
static json_t *pod_json(const struct opts *o, long g, long k, const char *node, const json_t *confine, const char *rv)
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
    add_gpus(o, spec, pod_req(o, g, k).gpu);
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

static void upsert_pod(struct cache *c, const struct opts *o, long g, long k, const char *node, const json_t *confine,
                       const char *rv)
{
    struct error err;
    json_t *pod = pod_json(o, g, k, node, confine, rv);
    bench_check(cache_upsert_pod(c, pod, &err), &err);
    json_decref(pod);
}

static void upsert_raycluster(struct cache *c, const struct opts *o, long g, int admitted, const char *placed)
{
    struct error err;
    json_t *rc = raycluster_json(o, g, admitted, placed);
    bench_check(cache_upsert_raycluster(c, rc, &err), &err);
    json_decref(rc);
}

static void delete_gang(struct cache *c, const struct opts *o, long g)
{
    char cluster[32], name[80];
    snprintf(cluster, sizeof(cluster), "rc-%06ld", g);
    cache_delete_raycluster(c, "bench", cluster);
    if (o->devs != NULL)
        admit_dra_release(o->devs, g);
    for (long k = 0; k < o->pods; k++) {
        if (k == 0)
            snprintf(name, sizeof(name), "%s-head-x7k2p", cluster);
        else
            snprintf(name, sizeof(name), "%s-w-worker-%05ld", cluster, k);
        cache_delete_pod(c, "bench", name);
    }
}

/* One pass, timed into samples (NULL: not timed); keeps the decisions in last (NULL: drops them). */
static void timed_pass(const struct opts *o, struct admit *a, unsigned flags, json_t *samples, struct admit_result *last)
{
    struct admit_result r;
    admit_result_init(&r);
    struct bench_span t = bench_span_start();
    if (o->devs != NULL)
        admit_dra_prepare(o->devs); /* the gate's, before every pass */
    admit_pass(a, flags, &r);
    if (samples != NULL)
        bench_span_add(samples, t);
    if (last != NULL) {
        admit_result_finish(last);
        *last = r;
    } else {
        admit_result_finish(&r);
    }
}

/*
 * The scheduler's part: first fit by node name, larger pods first, as admit.c
 * places them, so that every admitted pod finds the node admit_pass found; a
 * pod confined to a rack, first fit among the rack's nodes. start[shape]
 * skips nodes that cannot take the shape (room only shrinks between frees).
 */
struct fit {
    long nnodes;
    int64_t *cpu, *mem, *gpu, *pods;
    long start[3]; /* the head; workers of N GPUs; workers of 2N */
};

static void fit_init(struct fit *f, const struct opts *o)
{
    size_t n = (size_t)o->nodes;
    *f = (struct fit){o->nodes, calloc(n, 8), calloc(n, 8), calloc(n, 8), calloc(n, 8), {0, 0, 0}};
    for (long i = 0; i < o->nodes; i++) {
        f->cpu[i] = 32000;
        f->mem[i] = 128LL << 30;
        f->gpu[i] = o->gpus > 0 ? NODE_GPUS : 0;
        f->pods[i] = 110;
    }
}

static void fit_finish(struct fit *f)
{
    free(f->cpu);
    free(f->mem);
    free(f->gpu);
    free(f->pods);
}

static int shape_of(long g, long k)
{
    return k == 0 ? 0 : g % 3 == 2 ? 2 : 1;
}

/* Places pod k of gang g on the first node of [lo, hi) with room (lo < 0: anywhere, from start[shape]). Returns it, or -1. */
static long fit_place(struct fit *f, const struct opts *o, long g, long k, long lo, long hi)
{
    struct req r = pod_req(o, g, k);
    int shape = shape_of(g, k), anywhere = lo < 0;
    if (anywhere) {
        lo = f->start[shape];
        hi = f->nnodes;
    }
    for (long i = lo; i < hi; i++) {
        if (f->cpu[i] >= r.cpu && f->mem[i] >= r.mem && f->gpu[i] >= r.gpu && f->pods[i] >= 1) {
            f->cpu[i] -= r.cpu;
            f->mem[i] -= r.mem;
            f->gpu[i] -= r.gpu;
            f->pods[i]--;
            if (anywhere)
                f->start[shape] = i;
            return i;
        }
    }
    return -1;
}

/* Pod k of its gang, from its name ("rc-G-head-x7k2p", "rc-G-w-worker-K"). */
static long pod_index(const char *name)
{
    return strstr(name, "-head-") != NULL ? 0 : strtol(strrchr(name, '-') + 1, NULL, 10);
}

static void fit_free(struct fit *f, const struct opts *o, const struct cache_pod *p)
{
    if (p->node == NULL)
        return;
    long i = strtol(p->node->name + 5, NULL, 10);
    struct req r = pod_req(o, strtol(p->cluster + 3, NULL, 10), pod_index(p->name));
    f->cpu[i] += r.cpu;
    f->mem[i] += r.mem;
    f->gpu[i] += r.gpu;
    f->pods[i]++;
    f->start[0] = f->start[1] = f->start[2] = 0;
}

/* The rack a confinement (borrowed, may be NULL) names: {"nodeSelector": {BENCH_RACK: "rack-NNNN"}}; -1: none. */
static long confine_rack(const struct opts *o, const json_t *confine)
{
    if (confine == NULL)
        return -1;
    const char *v = json_string_value(json_object_get(json_object_get(confine, "nodeSelector"), BENCH_RACK));
    long d = v != NULL && strncmp(v, "rack-", 5) == 0 ? strtol(v + 5, NULL, 10) : -1;
    if (d < 0 || d >= o->domains)
        bench_die("an admitted pod's confinement is not a bench rack");
    return d;
}

/* Binds the pods of ADMIT decision d of gang g: workers, then the head (larger first). Returns pods bound. */
static long bind_gang(struct cache *c, const struct opts *o, struct fit *fit, const struct admit_decision *d, long g)
{
    long nbound = 0;
    for (int head = 0; head <= 1; head++) {
        for (size_t j = 0; j < d->npods; j++) {
            const struct admit_pod *p = &d->pods[j];
            long k = pod_index(p->name);
            if ((k == 0) != head)
                continue;
            long rack = confine_rack(o, p->confine);
            long n =
                rack < 0 ? fit_place(fit, o, g, k, -1, 0) : fit_place(fit, o, g, k, rack_first(o, rack), rack_first(o, rack + 1));
            if (n < 0)
                bench_die("the bench's scheduler found no node for an admitted pod");
            char node[32];
            snprintf(node, sizeof(node), "node-%05ld", n);
            upsert_pod(c, o, g, k, node, p->confine, "3");
            if (o->devs != NULL)
                admit_dra_bind(o->devs, g, k, n, pod_req(o, g, k).gpu);
            nbound++;
        }
    }
    return nbound;
}

/* What the controller and the scheduler do with a pass's admissions: admitted-at, gates off, pods bound. Returns pods bound. */
static long carry_out(struct cache *c, const struct opts *o, struct fit *fit, const struct admit_result *res,
                      unsigned char *running)
{
    long nbound = 0;
    for (size_t i = 0; i < res->len; i++) {
        const struct admit_decision *d = &res->items[i];
        if (d->action != ADMIT_ACTION_ADMIT)
            continue;
        long g = strtol(d->cluster + 3, NULL, 10);
        running[g] = 1;
        cache_gang_mark_admitted(c, cache_gang_get(c, d->namespace_, d->cluster), "2024-06-01T00:00:00Z");
        upsert_raycluster(c, o, g, 1, d->topology);
        nbound += bind_gang(c, o, fit, d, g);
    }
    return nbound;
}

/* What a pass decided: gangs admitted (and their pods; those placed in a topology domain) and waits by reason. */
static json_t *counts(const struct admit_result *r)
{
    size_t admit = 0, pods = 0, placed = 0;
    json_t *waits = json_object();
    for (size_t i = 0; i < r->len; i++) {
        const struct admit_decision *d = &r->items[i];
        if (d->action == ADMIT_ACTION_ADMIT) {
            admit++;
            pods += d->npods;
            placed += d->topology != NULL;
        } else if (d->action == ADMIT_ACTION_WAIT) {
            const char *reason = admit_result_reason_name(d->reason);
            json_object_set_new(waits, reason, json_integer(json_integer_value(json_object_get(waits, reason)) + 1));
        }
    }
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:o}", "queues_evaluated", (json_int_t)r->queues_evaluated, "gangs_evaluated",
                     (json_int_t)r->gangs_evaluated, "admit", (json_int_t)admit, "admit_pods", (json_int_t)pods, "topology_placed",
                     (json_int_t)placed, "wait", waits);
}

/* ------------------------------------------------------------------ --scan */

/*
 * --scan: GANGS admitted RayClusters whose PODS pods all run, bound and Ready
 * on nodes of 8 pods (the steady state the gate's eviction scan walks about
 * once a second: gate/controller.c, EVICT_SCAN_MIN_MS), the pods made from a
 * real KubeRay pod (--pod-template: its spec, labels and owner) when given.
 * Measured:
 * - scan_ms: one evictscan_run over the cache, RUNS times (after one warm-up),
 *   wall and process CPU time, under the default timeouts with the readiness
 *   timeout on (every member is judged on both); nothing is due;
 * - scan_tenth_unready_ms: the same after one worker of every tenth gang
 *   stopped being Ready a minute ago (those gangs have a deadline running);
 * - memory: the heap the cache holds (mallinfo2: uordblks + hblkhd) and the
 *   RSS growth while the pods are inserted, against the bytes of the pods'
 *   compact JSON (what the API sends, without managedFields), per 1,000 pods.
 */

#define SCAN_PERIOD_MS 1000 /* gate/controller.c's EVICT_SCAN_MIN_MS */
#define PODS_PER_NODE 8

/* The pod of --pod-template (new reference): the file's object, or its AdmissionReview's request.object. */
static json_t *read_template(const char *path)
{
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (j == NULL)
        bench_die(jerr.text);
    json_t *obj = json_object_get(json_object_get(j, "request"), "object");
    if (obj != NULL) {
        json_incref(obj);
        json_decref(j);
        j = obj;
    }
    if (!json_is_object(json_object_get(j, "spec")) || !json_is_object(json_object_get(j, "metadata")))
        bench_die("--pod-template: not a pod");
    return j;
}

/* The status of a pod running and Ready since ts on node n (new reference). */
static json_t *running_status(const char *ts, long n, const char *container)
{
    char host[32], ip[32], cid[96];
    snprintf(host, sizeof(host), "10.1.%ld.%ld", n / 250 % 250, n % 250 + 1);
    snprintf(ip, sizeof(ip), "10.244.%ld.%ld", n / 250 % 250, n % 250 + 1);
    snprintf(cid, sizeof(cid), "containerd://%064lx", (unsigned long)n * 2654435761u);
    json_t *conds = json_array();
    static const char *const types[] = {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        json_array_append_new(
            conds, json_pack("{s:n,s:s,s:s,s:s}", "lastProbeTime", "lastTransitionTime", ts, "status", "True", "type", types[i]));
    return json_pack(
        "{s:s,s:o,s:s,s:[{s:s}],s:s,s:[{s:s}],s:s,s:s,s:[{s:s,s:s,s:s,s:{},s:s,s:b,s:i,s:b,s:{s:{s:s}}}]}", "phase", "Running",
        "conditions", conds, "hostIP", host, "hostIPs", "ip", host, "podIP", ip, "podIPs", "ip", ip, "startTime", ts, "qosClass",
        "Guaranteed", "containerStatuses", "containerID", cid, "image", "docker.io/rayproject/ray:2.9.0", "imageID",
        "docker.io/rayproject/ray@sha256:"
        "e64546fb5c3233bb0f33608e186e285c52cdd7440cae1af18f7fcde1c04e49f2",
        "lastState", "name", container, "ready", 1, "restartCount", 0, "started", 1, "state", "running", "startedAt", ts);
}

/* t (borrowed) with pod's (borrowed) names, labels and annotations over its metadata; t's owner made g's RayCluster. */
static void template_rename(json_t *t, const json_t *pod, long g)
{
    json_t *tmeta = json_object_get(t, "metadata"), *meta = json_deep_copy(json_object_get(pod, "metadata"));
    json_t *labels = json_deep_copy(json_object_get(tmeta, "labels"));
    if (labels == NULL)
        labels = json_object();
    json_object_del(labels, "ray.io/identifier");
    json_object_update(labels, json_object_get(meta, "labels"));
    json_object_set_new(meta, "labels", labels);
    json_object_del(tmeta, "generateName");
    json_object_update(tmeta, meta);
    json_decref(meta);
    json_t *owner = json_array_get(json_object_get(tmeta, "ownerReferences"), 0);
    if (owner != NULL) {
        char cid[48];
        bench_uid(cid, sizeof(cid), 'c', g);
        json_object_set(owner, "name",
                        json_object_get(json_object_get(json_object_get(pod, "metadata"), "labels"), "ray.io/cluster"));
        json_object_set_new(owner, "uid", json_string(cid));
    }
}

/*
 * Pod k of gang g, running on node n (new reference): pod_json's, or tmpl's (borrowed, may be NULL) renamed;
 * Ready, or not Ready since unready (not NULL).
 */
static json_t *running_pod(const struct opts *o, const json_t *tmpl, long g, long k, long n, const char *unready)
{
    char node[32], ts[48];
    snprintf(node, sizeof(node), "node-%05ld", n);
    bench_timestamp(g, ts, sizeof(ts));
    json_t *pod = pod_json(o, g, k, node, NULL, "3");
    if (tmpl != NULL) {
        json_t *t = json_deep_copy(tmpl);
        template_rename(t, pod, g);
        json_object_set_new(json_object_get(t, "spec"), "nodeName", json_string(node));
        json_object_del(json_object_get(t, "spec"), "schedulingGates");
        json_decref(pod);
        pod = t;
    }
    const char *container =
        json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0), "name"));
    json_t *status = running_status(ts, n, container != NULL ? container : "ray");
    if (unready != NULL) {
        json_t *ready = json_array_get(json_object_get(status, "conditions"), 2); /* Ready */
        json_object_set_new(ready, "status", json_string("False"));
        json_object_set_new(ready, "lastTransitionTime", json_string(unready));
    }
    json_object_set_new(pod, "status", status);
    return pod;
}

static double heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return (double)m.uordblks + (double)m.hblkhd;
}

/* This process's resident set, in bytes (/proc/self/statm). */
static double rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (double)resident * 4096.0;
}

/* Inserts every gang (admitted) and its pods, running; returns the memory figures per 1,000 pods (new reference). */
static json_t *scan_fill(struct cache *c, const struct opts *o, const json_t *tmpl)
{
    struct error err;
    for (long i = 0; i < o->nodes; i++) {
        json_t *n = node_json(o, i);
        bench_check(cache_upsert_node(c, n, &err), &err);
        json_decref(n);
    }
    for (long q = 0; q < o->queues; q++) {
        json_t *j = queue_json(o, q);
        bench_check(cache_upsert_queue(c, j, &err), &err);
        json_decref(j);
    }
    for (long g = 0; g < o->gangs; g++)
        upsert_raycluster(c, o, g, 1, NULL);
    double heap0 = heap_bytes(), rss0 = rss_bytes(), json_bytes = 0;
    long npods = 0;
    for (long g = 0; g < o->gangs; g++) {
        for (long k = 0; k < o->pods; k++, npods++) {
            json_t *pod = running_pod(o, tmpl, g, k, npods / PODS_PER_NODE, NULL);
            json_bytes += (double)json_dumpb(pod, NULL, 0, JSON_COMPACT);
            bench_check(cache_upsert_pod(c, pod, &err), &err);
            json_decref(pod);
        }
    }
    double heap = heap_bytes() - heap0, rss = rss_bytes() - rss0, per = (double)npods / 1000;
    return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f}", "pods", (json_int_t)npods, "json_bytes_per_1000_pods", json_bytes / per,
                     "heap_bytes_per_1000_pods", heap / per, "rss_bytes_per_1000_pods", rss / per, "heap_over_json",
                     heap / json_bytes, "rss_over_json", rss / json_bytes);
}

/* One scan, timed into samples (NULL: not timed). Returns the gangs it would evict. */
static size_t timed_scan(const struct cache *c, const struct evict_config *cfg, int64_t now, json_t *samples)
{
    struct evictscan_result r;
    evictscan_result_init(&r);
    double wall = bench_now_ms(), cpu = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
    size_t evicted = evictscan_run(c, cfg, now, 0, 12345, &r);
    cpu = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    wall = bench_now_ms() - wall;
    if (samples != NULL) {
        json_array_append_new(json_object_get(samples, "wall"), json_real(wall));
        json_array_append_new(json_object_get(samples, "cpu"), json_real(cpu));
    }
    evictscan_result_finish(&r);
    return evicted;
}

static int scan_bench(struct opts *o)
{
    json_t *load_start = bench_loadavg();
    json_t *tmpl = o->pod_template != NULL ? read_template(o->pod_template) : NULL;
    if (o->nodes < 0)
        o->nodes = (o->gangs * o->pods + PODS_PER_NODE - 1) / PODS_PER_NODE;
    struct cache *c = cache_create();
    json_t *memory = scan_fill(c, o, tmpl);
    struct evict_config cfg;
    evict_config_default(&cfg);
    cfg.pods_ready_timeout_ms = 10 * 60 * 1000;
    int64_t now;
    if (evict_parse_time("2024-06-02T00:00:00Z", &now) != 0)
        bench_die("cannot parse the scan's time");
    json_t *scan = bench_samples();
    size_t evicted = timed_scan(c, &cfg, now, NULL); /* warm-up */
    for (long r = 0; r < o->runs; r++)
        evicted += timed_scan(c, &cfg, now, scan);
    json_t *tenth = bench_samples();
    struct error err;
    for (long g = 0; g < o->gangs; g += 10) {
        json_t *pod = running_pod(o, tmpl, g, 1, (g * o->pods + 1) / PODS_PER_NODE, "2024-06-01T23:59:00Z");
        bench_check(cache_upsert_pod(c, pod, &err), &err);
        json_decref(pod);
    }
    for (long r = 0; r < o->runs; r++)
        evicted += timed_scan(c, &cfg, now, tenth);
    if (evicted != 0)
        bench_die("the scan evicted a running gang");
    json_t *out =
        json_pack("{s:s,s:{s:I,s:I,s:I,s:I,s:I,s:s?,s:I,s:I},s:o,s:o,s:I,s:o,s:o,s:o}", "mode", "scan", "config", "gangs",
                  (json_int_t)o->gangs, "pods_per_gang", (json_int_t)o->pods, "nodes", (json_int_t)o->nodes, "queues",
                  (json_int_t)o->queues, "runs", (json_int_t)o->runs, "pod_template", o->pod_template, "placement_timeout_ms",
                  (json_int_t)cfg.placement_timeout_ms, "pods_ready_timeout_ms", (json_int_t)cfg.pods_ready_timeout_ms,
                  "load_average_start", load_start, "load_average_end", bench_loadavg(), "scan_period_ms",
                  (json_int_t)SCAN_PERIOD_MS, "scan_ms", scan, "scan_tenth_unready_ms", tenth, "memory", memory);
    bench_print(out);
    json_decref(tmpl);
    cache_destroy(c);
    return 0;
}

static void usage(void)
{
    fputs("usage: admit_bench [--gangs N] [--nodes N] [--queues N] [--pods-per-gang N] [--runs N]\n"
          "                   [--gpus N (0-4)] [--domains N] [--topology none|required (required: --domains)]\n"
          "                   [--dra (with --gpus)]\n"
          "       admit_bench --scan [--pod-template FILE] [--gangs N] [--nodes N] [--queues N] [--pods-per-gang N] [--runs N]\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    struct opts o = {10000, -1, 100, 10, 5, 0, NULL, 0, 0, 0, 0, NULL};
    static const struct option options[] = {
        {"gangs", required_argument, NULL, 'g'},   {"nodes", required_argument, NULL, 'n'},
        {"queues", required_argument, NULL, 'q'},  {"pods-per-gang", required_argument, NULL, 'p'},
        {"runs", required_argument, NULL, 'r'},    {"gpus", required_argument, NULL, 'G'},
        {"domains", required_argument, NULL, 'd'}, {"topology", required_argument, NULL, 't'},
        {"scan", no_argument, NULL, 's'},          {"pod-template", required_argument, NULL, 'T'},
        {"dra", no_argument, NULL, 'D'},           {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "", options, NULL)) != -1) {
        long v = optarg != NULL ? strtol(optarg, NULL, 10) : 0;
        switch (ch) {
        case 'g':
            o.gangs = v;
            break;
        case 'n':
            o.nodes = v;
            break;
        case 'q':
            o.queues = v;
            break;
        case 'p':
            o.pods = v;
            break;
        case 'r':
            o.runs = v;
            break;
        case 'G':
            o.gpus = v;
            break;
        case 'd':
            o.domains = v;
            break;
        case 't':
            if (strcmp(optarg, "required") != 0 && strcmp(optarg, "none") != 0)
                usage();
            o.required = strcmp(optarg, "required") == 0;
            break;
        case 's':
            o.scan = 1;
            break;
        case 'T':
            o.pod_template = optarg;
            break;
        case 'D':
            o.dra = 1;
            break;
        default:
            usage();
        }
    }
    if (o.scan)
        return o.gangs < 1 || o.queues < 1 || o.pods < 2 || o.runs < 1 || o.gangs > 900000 || o.pods > 999 ? (usage(), 2)
                                                                                                           : scan_bench(&o);
    if (o.nodes < 0)
        o.nodes = o.gangs / 2;
    if (o.gangs < 4 || o.nodes < 1 || o.queues < 1 || o.pods < 2 || o.runs < 1 || o.gangs > 900000 || o.pods > 999)
        usage();
    if (o.gpus < 0 || 2 * o.gpus > NODE_GPUS || o.domains < 0 || o.domains > o.nodes || (o.required && o.domains == 0) ||
        (o.dra && o.gpus == 0))
        usage();
    json_t *load_start = bench_loadavg();

    struct cache *c = cache_create();
    struct admit *adm = admit_create(c);
    struct error err;
    double t0 = bench_now_ms();
    if (o.dra)
        o.devs = admit_dra_create(c, o.nodes, NODE_GPUS, (const int64_t[]){o.gpus, 2 * o.gpus}, 2, o.gangs, o.pods);
    for (long i = 0; i < o.nodes; i++) {
        json_t *n = node_json(&o, i);
        bench_check(cache_upsert_node(c, n, &err), &err);
        json_decref(n);
    }
    for (long q = 0; q < o.queues; q++) {
        json_t *j = queue_json(&o, q);
        bench_check(cache_upsert_queue(c, j, &err), &err);
        json_decref(j);
    }
    for (long g = 0; g < o.gangs; g++)
        upsert_raycluster(c, &o, g, 0, NULL);
    struct mallinfo2 m0 = mallinfo2();
    double t1 = bench_now_ms();
    for (long g = 0; g < o.gangs; g++) {
        for (long k = 0; k < o.pods; k++)
            upsert_pod(c, &o, g, k, NULL, NULL, "2");
    }
    double load_pods_ms = bench_now_ms() - t1;
    struct mallinfo2 m1 = mallinfo2();
    double load_ms = bench_now_ms() - t0;
    long npods = o.gangs * o.pods;
    double bytes_per_pod = ((double)m1.uordblks - (double)m0.uordblks) / (double)npods;

    /* The pending state: the pass sees the same cache every run. */
    json_t *full = bench_samples();
    struct admit_result first;
    admit_result_init(&first);
    timed_pass(&o, adm, ADMIT_PASS_FULL, NULL, NULL); /* warm-up */
    for (long r = 0; r < o.runs; r++)
        timed_pass(&o, adm, ADMIT_PASS_FULL, full, &first);
    json_t *first_counts = counts(&first);

    /* Carry the decisions out; the scheduler binds the admitted pods. */
    struct fit fit;
    fit_init(&fit, &o);
    unsigned char *running = calloc((size_t)o.gangs + 1, 1);
    long nbound = carry_out(c, &o, &fit, &first, running);
    admit_result_finish(&first);
    timed_pass(&o, adm, 0, NULL, NULL); /* settles what the binds changed */

    json_t *steady = bench_samples();
    struct admit_result last;
    admit_result_init(&last);
    for (long r = 0; r < o.runs; r++)
        timed_pass(&o, adm, ADMIT_PASS_FULL, steady, &last);
    json_t *steady_counts = counts(&last);

    /* Single events in the steady state. Pick a pending gang and a running one. */
    long pending = -1, run = -1;
    for (long g = 0; g < o.gangs && (pending < 0 || run < 0); g++) {
        if (running[g] && run < 0)
            run = g;
        if (!running[g] && pending < 0 && g % o.queues % 5 != 4)
            pending = g;
    }
    if (pending < 0 || run < 0)
        bench_die("no pending or no running gang to delete: choose more gangs");

    json_t *created = bench_samples(), *created_pass = bench_samples();
    json_t *created_counts = NULL;
    long extra = o.gangs; /* a new RayCluster whose pods arrive one by one */
    upsert_raycluster(c, &o, extra, 0, NULL);
    timed_pass(&o, adm, 0, NULL, NULL);
    for (long r = 0; r < o.runs; r++) {
        struct bench_span a = bench_span_start();
        upsert_pod(c, &o, extra, 1 + r % (o.pods - 1), NULL, NULL, "2");
        timed_pass(&o, adm, 0, created_pass, &last);
        bench_span_add(created, a);
        if (created_counts == NULL)
            created_counts = counts(&last);
        /* Back to the same state, unmeasured. */
        char name[64];
        snprintf(name, sizeof(name), "rc-%06ld-w-worker-%05ld", extra, 1 + r % (o.pods - 1));
        cache_delete_pod(c, "bench", name);
        timed_pass(&o, adm, 0, NULL, NULL);
    }

    json_t *del_pending = bench_samples(), *del_running = bench_samples();
    json_t *del_pending_counts = NULL, *del_running_counts = NULL;
    for (long r = 0; r < o.runs; r++) {
        struct bench_span a = bench_span_start();
        delete_gang(c, &o, pending);
        timed_pass(&o, adm, 0, NULL, &last);
        bench_span_add(del_pending, a);
        if (del_pending_counts == NULL)
            del_pending_counts = counts(&last);
        upsert_raycluster(c, &o, pending, 0, NULL);
        for (long k = 0; k < o.pods; k++)
            upsert_pod(c, &o, pending, k, NULL, NULL, "2");
        timed_pass(&o, adm, 0, NULL, NULL);
    }
    for (long r = 0; r < o.runs; r++) {
        /* A different running gang each run: the room it frees may admit another gang, which is carried out too. */
        while (run < o.gangs && !running[run])
            run++;
        if (run >= o.gangs)
            bench_die("not enough running gangs for the runs");
        char cluster[32];
        snprintf(cluster, sizeof(cluster), "rc-%06ld", run);
        struct cache_gang *g = cache_gang_get(c, "bench", cluster);
        if (g == NULL)
            bench_die("running gang not cached");
        for (const struct cache_pod *p = g->pods; p != NULL; p = p->gang_next)
            fit_free(&fit, &o, p);
        struct bench_span a = bench_span_start();
        delete_gang(c, &o, run);
        timed_pass(&o, adm, 0, NULL, &last);
        bench_span_add(del_running, a);
        if (del_running_counts == NULL)
            del_running_counts = counts(&last);
        running[run] = 0;
        run++;
        carry_out(c, &o, &fit, &last, running);
        timed_pass(&o, adm, 0, NULL, NULL);
    }
    admit_result_finish(&last);
    json_t *rebuild = o.devs != NULL ? admit_dra_rebuild(o.devs, o.runs) : json_null();

    json_t *out = json_pack(
        "{s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:b},s:o,s:o,s:f,s:f,s:f,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
        "config", "gangs", (json_int_t)o.gangs, "nodes", (json_int_t)o.nodes, "queues", (json_int_t)o.queues, "pods_per_gang",
        (json_int_t)o.pods, "runs", (json_int_t)o.runs, "gpus_per_worker", (json_int_t)o.gpus, "domains", (json_int_t)o.domains,
        "topology", o.required ? "required" : "none", "dra", o.dra, "load_average_start", load_start, "load_average_end",
        bench_loadavg(), "load_ms", load_ms, "load_pods_ms", load_pods_ms, "bytes_per_pod", bytes_per_pod, "bound_pods",
        (json_int_t)nbound, "full_pass_ms", full, "full_pass_counts", first_counts, "steady_full_pass_ms", steady,
        "steady_full_pass_counts", steady_counts, "pod_created_ms", created, "pod_created_pass_ms", created_pass,
        "pod_created_counts", created_counts, "pending_gang_deleted_ms", del_pending, "pending_gang_deleted_counts",
        del_pending_counts, "running_gang_deleted_ms", del_running, "running_gang_deleted_counts", del_running_counts,
        "ledger_rebuild_ms", rebuild);
    bench_print(out);
    free(running);
    fit_finish(&fit);
    admit_destroy(adm);
    cache_destroy(c);
    admit_dra_destroy(o.devs);
    return 0;
}
