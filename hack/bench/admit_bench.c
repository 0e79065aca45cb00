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

#include "admit_objects.h"
#include "admit_scan.h"

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
    struct admit_objects_req r = admit_objects_pod_req(o, g, k);
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
    struct admit_objects_req r = admit_objects_pod_req(o, strtol(p->cluster + 3, NULL, 10), pod_index(p->name));
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
            long n = rack < 0 ? fit_place(fit, o, g, k, -1, 0)
                              : fit_place(fit, o, g, k, admit_objects_rack_first(o, rack), admit_objects_rack_first(o, rack + 1));
            if (n < 0)
                bench_die("the bench's scheduler found no node for an admitted pod");
            char node[32];
            snprintf(node, sizeof(node), "node-%05ld", n);
            admit_objects_upsert_pod(c, o, g, k, node, p->confine, "3");
            if (o->devs != NULL)
                admit_dra_bind(o->devs, g, k, n, admit_objects_pod_req(o, g, k).gpu);
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
        admit_objects_upsert_raycluster(c, o, g, 1, d->topology);
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

static void usage(void)
{
    fputs("usage: admit_bench [--gangs N] [--nodes N] [--queues N] [--pods-per-gang N] [--runs N]\n"
          "                   [--gpus N (0-4)] [--domains N] [--topology none|required (required: --domains)]\n"
          "                   [--dra (with --gpus)]\n"
          "       admit_bench --scan [--pod-template FILE] [--gangs N] [--nodes N] [--queues N] [--pods-per-gang N] [--runs N]\n",
          stderr);
    exit(2);
}

/* The flags into o; usage() (exit 2) on a bad one. */
static void parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option options[] = {
        {"gangs", required_argument, NULL, 'g'},   {"nodes", required_argument, NULL, 'n'},
        {"queues", required_argument, NULL, 'q'},  {"pods-per-gang", required_argument, NULL, 'p'},
        {"runs", required_argument, NULL, 'r'},    {"gpus", required_argument, NULL, 'G'},
        {"domains", required_argument, NULL, 'd'}, {"topology", required_argument, NULL, 't'},
        {"scan", no_argument, NULL, 's'},          {"pod-template", required_argument, NULL, 'T'},
        {"dra", no_argument, NULL, 'D'},           {NULL, 0, NULL, 0},
    };
    long *nums[128] = {0};
    nums['g'] = &o->gangs, nums['n'] = &o->nodes, nums['q'] = &o->queues, nums['p'] = &o->pods, nums['r'] = &o->runs;
    nums['G'] = &o->gpus, nums['d'] = &o->domains;
    int ch;
    while ((ch = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (ch > 0 && ch < 128 && nums[ch] != NULL) {
            *nums[ch] = strtol(optarg, NULL, 10);
        } else if (ch == 't') {
            if (strcmp(optarg, "required") != 0 && strcmp(optarg, "none") != 0)
                usage();
            o->required = strcmp(optarg, "required") == 0;
        } else if (ch == 's') {
            o->scan = 1;
        } else if (ch == 'T') {
            o->pod_template = optarg;
        } else if (ch == 'D') {
            o->dra = 1;
        } else {
            usage();
        }
    }
}

/* What the passes' phases share. */
struct run {
    struct opts o;
    struct cache *c;
    struct admit *adm;
    struct fit fit;         /* the nodes' room as the scheduler binds */
    unsigned char *running; /* per gang: admitted and bound */
    struct admit_result last;
};

/* The cluster into the cache: nodes, queues, RayClusters, then their pods (timed; the cache's heap per pod). */
static void load(struct run *b, json_t *out)
{
    struct error err;
    double t0 = bench_now_ms();
    if (b->o.dra)
        b->o.devs =
            admit_dra_create(b->c, b->o.nodes, NODE_GPUS, (const int64_t[]){b->o.gpus, 2 * b->o.gpus}, 2, b->o.gangs, b->o.pods);
    for (long i = 0; i < b->o.nodes; i++) {
        json_t *n = admit_objects_node_json(&b->o, i);
        bench_check(cache_upsert_node(b->c, n, &err), &err);
        json_decref(n);
    }
    for (long q = 0; q < b->o.queues; q++) {
        json_t *j = admit_objects_queue_json(&b->o, q);
        bench_check(cache_upsert_queue(b->c, j, &err), &err);
        json_decref(j);
    }
    for (long g = 0; g < b->o.gangs; g++)
        admit_objects_upsert_raycluster(b->c, &b->o, g, 0, NULL);
    struct mallinfo2 m0 = mallinfo2();
    double t1 = bench_now_ms();
    for (long g = 0; g < b->o.gangs; g++) {
        for (long k = 0; k < b->o.pods; k++)
            admit_objects_upsert_pod(b->c, &b->o, g, k, NULL, NULL, "2");
    }
    double load_pods_ms = bench_now_ms() - t1;
    struct mallinfo2 m1 = mallinfo2();
    json_object_set_new(out, "load_ms", json_real(bench_now_ms() - t0));
    json_object_set_new(out, "load_pods_ms", json_real(load_pods_ms));
    json_object_set_new(out, "bytes_per_pod",
                        json_real(((double)m1.uordblks - (double)m0.uordblks) / (double)(b->o.gangs * b->o.pods)));
}

/* Full passes over the pending state (each run sees the same cache), their decisions carried out, then full passes again. */
static void full_passes(struct run *b, json_t *out)
{
    json_t *full = bench_samples();
    struct admit_result first;
    admit_result_init(&first);
    timed_pass(&b->o, b->adm, ADMIT_PASS_FULL, NULL, NULL); /* warm-up */
    for (long r = 0; r < b->o.runs; r++)
        timed_pass(&b->o, b->adm, ADMIT_PASS_FULL, full, &first);
    json_object_set_new(out, "full_pass_ms", full);
    json_object_set_new(out, "full_pass_counts", counts(&first));
    /* Carry the decisions out; the scheduler binds the admitted pods. */
    json_object_set_new(out, "bound_pods", json_integer(carry_out(b->c, &b->o, &b->fit, &first, b->running)));
    admit_result_finish(&first);
    timed_pass(&b->o, b->adm, 0, NULL, NULL); /* settles what the binds changed */
    json_t *steady = bench_samples();
    for (long r = 0; r < b->o.runs; r++)
        timed_pass(&b->o, b->adm, ADMIT_PASS_FULL, steady, &b->last);
    json_object_set_new(out, "steady_full_pass_ms", steady);
    json_object_set_new(out, "steady_full_pass_counts", counts(&b->last));
}

/* One new pod of a pending RayCluster arrives, then the incremental pass. */
static void pod_created(struct run *b, json_t *out)
{
    json_t *created = bench_samples(), *created_pass = bench_samples(), *created_counts = NULL;
    long extra = b->o.gangs; /* a new RayCluster whose pods arrive one by one */
    admit_objects_upsert_raycluster(b->c, &b->o, extra, 0, NULL);
    timed_pass(&b->o, b->adm, 0, NULL, NULL);
    for (long r = 0; r < b->o.runs; r++) {
        struct bench_span a = bench_span_start();
        admit_objects_upsert_pod(b->c, &b->o, extra, 1 + r % (b->o.pods - 1), NULL, NULL, "2");
        timed_pass(&b->o, b->adm, 0, created_pass, &b->last);
        bench_span_add(created, a);
        if (created_counts == NULL)
            created_counts = counts(&b->last);
        /* Back to the same state, unmeasured. */
        char name[64];
        snprintf(name, sizeof(name), "rc-%06ld-w-worker-%05ld", extra, 1 + r % (b->o.pods - 1));
        cache_delete_pod(b->c, "bench", name);
        timed_pass(&b->o, b->adm, 0, NULL, NULL);
    }
    json_object_set_new(out, "pod_created_ms", created);
    json_object_set_new(out, "pod_created_pass_ms", created_pass);
    json_object_set_new(out, "pod_created_counts", created_counts);
}

/* A pending RayCluster and its pods deleted, then the pass; made again, unmeasured. */
static void pending_deleted(struct run *b, long pending, json_t *out)
{
    json_t *samples = bench_samples(), *first_counts = NULL;
    for (long r = 0; r < b->o.runs; r++) {
        struct bench_span a = bench_span_start();
        delete_gang(b->c, &b->o, pending);
        timed_pass(&b->o, b->adm, 0, NULL, &b->last);
        bench_span_add(samples, a);
        if (first_counts == NULL)
            first_counts = counts(&b->last);
        admit_objects_upsert_raycluster(b->c, &b->o, pending, 0, NULL);
        for (long k = 0; k < b->o.pods; k++)
            admit_objects_upsert_pod(b->c, &b->o, pending, k, NULL, NULL, "2");
        timed_pass(&b->o, b->adm, 0, NULL, NULL);
    }
    json_object_set_new(out, "pending_gang_deleted_ms", samples);
    json_object_set_new(out, "pending_gang_deleted_counts", first_counts);
}

/* A running gang deleted, then the pass: a different one each run (the room it frees may admit another, carried out). */
static void running_deleted(struct run *b, long run, json_t *out)
{
    json_t *samples = bench_samples(), *first_counts = NULL;
    for (long r = 0; r < b->o.runs; r++) {
        while (run < b->o.gangs && !b->running[run])
            run++;
        if (run >= b->o.gangs)
            bench_die("not enough running gangs for the runs");
        char cluster[32];
        snprintf(cluster, sizeof(cluster), "rc-%06ld", run);
        struct cache_gang *g = cache_gang_get(b->c, "bench", cluster);
        if (g == NULL)
            bench_die("running gang not cached");
        for (const struct cache_pod *p = g->pods; p != NULL; p = p->gang_next)
            fit_free(&b->fit, &b->o, p);
        struct bench_span a = bench_span_start();
        delete_gang(b->c, &b->o, run);
        timed_pass(&b->o, b->adm, 0, NULL, &b->last);
        bench_span_add(samples, a);
        if (first_counts == NULL)
            first_counts = counts(&b->last);
        b->running[run] = 0;
        run++;
        carry_out(b->c, &b->o, &b->fit, &b->last, b->running);
        timed_pass(&b->o, b->adm, 0, NULL, NULL);
    }
    json_object_set_new(out, "running_gang_deleted_ms", samples);
    json_object_set_new(out, "running_gang_deleted_counts", first_counts);
}

/* Single events in the steady state, on a pending gang and a running one. */
static void single_events(struct run *b, json_t *out)
{
    long pending = -1, run = -1;
    for (long g = 0; g < b->o.gangs && (pending < 0 || run < 0); g++) {
        if (b->running[g] && run < 0)
            run = g;
        if (!b->running[g] && pending < 0 && g % b->o.queues % 5 != 4)
            pending = g;
    }
    if (pending < 0 || run < 0)
        bench_die("no pending or no running gang to delete: choose more gangs");
    pod_created(b, out);
    pending_deleted(b, pending, out);
    running_deleted(b, run, out);
}

int main(int argc, char **argv)
{
    struct run b = {.o = {10000, -1, 100, 10, 5, 0, NULL, 0, 0, 0, 0, NULL}};
    struct opts *o = &b.o;
    parse_opts(argc, argv, o);
    if (o->scan)
        return o->gangs < 1 || o->queues < 1 || o->pods < 2 || o->runs < 1 || o->gangs > 900000 || o->pods > 999
                   ? (usage(), 2)
                   : admit_scan_run(o);
    if (o->nodes < 0)
        o->nodes = o->gangs / 2;
    if (o->gangs < 4 || o->nodes < 1 || o->queues < 1 || o->pods < 2 || o->runs < 1 || o->gangs > 900000 || o->pods > 999)
        usage();
    if (o->gpus < 0 || 2 * o->gpus > NODE_GPUS || o->domains < 0 || o->domains > o->nodes || (o->required && o->domains == 0) ||
        (o->dra && o->gpus == 0))
        usage();
    json_t *out = json_object();
    json_object_set_new(out, "config",
                        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:b}", "gangs", (json_int_t)o->gangs, "nodes",
                                  (json_int_t)o->nodes, "queues", (json_int_t)o->queues, "pods_per_gang", (json_int_t)o->pods,
                                  "runs", (json_int_t)o->runs, "gpus_per_worker", (json_int_t)o->gpus, "domains",
                                  (json_int_t)o->domains, "topology", o->required ? "required" : "none", "dra", o->dra));
    json_object_set_new(out, "load_average_start", bench_loadavg());
    b.c = cache_create();
    b.adm = admit_create(b.c);
    load(&b, out);
    fit_init(&b.fit, o);
    b.running = calloc((size_t)o->gangs + 1, 1);
    admit_result_init(&b.last);
    full_passes(&b, out);
    single_events(&b, out);
    admit_result_finish(&b.last);
    json_object_set_new(out, "ledger_rebuild_ms", o->devs != NULL ? admit_dra_rebuild(o->devs, o->runs) : json_null());
    json_object_set_new(out, "load_average_end", bench_loadavg());
    bench_print(out);
    free(b.running);
    fit_finish(&b.fit);
    admit_destroy(b.adm);
    cache_destroy(b.c);
    admit_dra_destroy(o->devs);
    return 0;
}
