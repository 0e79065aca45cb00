/*
 * admit_dra: admit_bench's GPUs as DRA devices (issue 36), instead of
 * nvidia.com/gpu in the nodes' allocatable and the containers' requests.
 *
 * A DeviceClass gpu.nvidia.com (NVIDIA's DRA driver's selector: the driver and
 * attribute type == "gpu") maps the devices to nvidia.com/gpu by
 * extendedResourceName, so that queues and the fit count the same resource
 * as without devices; each node node-NNNNN publishes its GPUs in a
 * ResourceSlice of its own (pool: the node); a worker of N GPUs names
 * ResourceClaimTemplate gpus-N (namespace bench), one request of count N.
 * A worker the bench binds gets the claim kube-controller-manager would make
 * from the template, allocated on the node's first free devices, as
 * kube-scheduler allocates; deleting its gang deletes the claims.
 */
#ifndef RAYGATE_ADMIT_DRA_H
#define RAYGATE_ADMIT_DRA_H

#include <stdint.h>

#include <jansson.h>

#include "cache.h"

struct admit_dra;

/*
 * A DRA set used by c (dracache_use): the class, templates gpus-N for
 * gpus[0..ngpus), a slice of devices GPUs for each of nodes nodes; room for
 * the claims of gangs + 1 gangs of pods pods.
 */
struct admit_dra *admit_dra_create(struct cache *c, long nodes, long devices, const int64_t *gpus, int ngpus, long gangs,
                                   long pods);

/* Stops c's use of the set and frees it; d may be NULL. */
void admit_dra_destroy(struct admit_dra *d);

/* A pod spec's (borrowed) GPUs as the claim gpus-N (N > 0) of its first container. */
void admit_dra_claims(json_t *spec, int64_t gpus);

/* What the gate does before a pass: dracache_prepare. */
void admit_dra_prepare(struct admit_dra *d);

/* Pod k (a worker) of gang g, bound to node n, asking for gpus devices: its claim, allocated on n's first free ones. */
void admit_dra_bind(struct admit_dra *d, long g, long k, long n, int64_t gpus);

/* Gang g's pods are deleted: so are the claims of those bound (garbage collection). */
void admit_dra_release(struct admit_dra *d, long g);

/*
 * The ledger's rebuild, runs times each (new reference): dracache_prepare after
 * one slice was written again (the ledger built again), and after the class was
 * (the ledger, and every pod's and gang's price), as samples.
 */
json_t *admit_dra_rebuild(struct admit_dra *d, long runs);

#endif
