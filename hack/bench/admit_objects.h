/*
 * admit_objects: admit_bench's options and the synthetic objects both of its
 * benchmarks make (the passes' in admit_bench.c, the eviction scan's in
 * admit_scan.c), shaped like the API's. Both use it; it uses neither.
 */
#ifndef RAYGATE_ADMIT_OBJECTS_H
#define RAYGATE_ADMIT_OBJECTS_H

#include <stdint.h>

#include <jansson.h>

#include "cache.h"

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
struct admit_objects_req {
    int64_t cpu, mem, gpu;
};

/* Pod k of gang g (0: the head): cpu 2 / 4Gi, or cpu 4 / 8Gi and the gang's GPUs. */
struct admit_objects_req admit_objects_pod_req(const struct opts *o, long g, long k);

/* The first node of rack d (the nodes of a rack are consecutive). */
long admit_objects_rack_first(const struct opts *o, long d);

/* Node i (new reference): cpu 32, memory 128Gi, pods 110, its GPUs or rack when asked. */
json_t *admit_objects_node_json(const struct opts *o, long i);

/* Queue q (new reference): four in five with a capability of 80% of their share of the nodes' cpu. */
json_t *admit_objects_queue_json(const struct opts *o, long q);

/* Pod k of gang g (new reference), bound to node (NULL: gated), confined (borrowed, may be NULL), at resourceVersion rv. */
json_t *admit_objects_pod_json(const struct opts *o, long g, long k, const char *node, const json_t *confine, const char *rv);

/* That pod into the cache (the JSON is made and dropped here). */
void admit_objects_upsert_pod(struct cache *c, const struct opts *o, long g, long k, const char *node, const json_t *confine,
                              const char *rv);

/* RayCluster g into the cache (admitted: with its admission record; placed: raygate.io/topology-placed, may be NULL). */
void admit_objects_upsert_raycluster(struct cache *c, const struct opts *o, long g, int admitted, const char *placed);

#endif
