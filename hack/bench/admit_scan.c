/* admit_bench --scan (admit_scan.h). */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "admit_objects.h"
#include "admit_scan.h"
#include "bench.h"
#include "cache.h"
#include "evictscan.h"

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
    json_t *pod = admit_objects_pod_json(o, g, k, node, NULL, "3");
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
        json_t *n = admit_objects_node_json(o, i);
        bench_check(cache_upsert_node(c, n, &err), &err);
        json_decref(n);
    }
    for (long q = 0; q < o->queues; q++) {
        json_t *j = admit_objects_queue_json(o, q);
        bench_check(cache_upsert_queue(c, j, &err), &err);
        json_decref(j);
    }
    for (long g = 0; g < o->gangs; g++)
        admit_objects_upsert_raycluster(c, o, g, 1, NULL);
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

int admit_scan_run(struct opts *o)
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
