/*
 * admit_bench's parts (hack/bench/admit_bench.c): the options, the synthetic
 * objects both benchmarks make (the passes' here, the eviction scan's in
 * admit_scan.h).
 */
#ifndef RAYGATE_ADMIT_BENCH_H
#define RAYGATE_ADMIT_BENCH_H

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

/* Node i (new reference): cpu 32, memory 128Gi, pods 110, its GPUs or rack when asked. */
json_t *admitbench_node_json(const struct opts *o, long i);

/* Queue q (new reference): four in five with a capability of 80% of their share of the nodes' cpu. */
json_t *admitbench_queue_json(const struct opts *o, long q);

/* Pod k of gang g (new reference), bound to node (NULL: gated), confined (may be NULL), at resourceVersion rv. */
json_t *admitbench_pod_json(const struct opts *o, long g, long k, const char *node, const json_t *confine, const char *rv);

/* RayCluster g into the cache (admitted: with its admission record; placed: raygate.io/topology-placed, may be NULL). */
void admitbench_upsert_raycluster(struct cache *c, const struct opts *o, long g, int admitted, const char *placed);

#endif
