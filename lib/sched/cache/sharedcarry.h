/*
 * sharedcarry: who places a gang's shared claims that are not allocated yet.
 *
 * A ResourceClaim that pods name (resourceClaimName) is counted once in the
 * gang's minResources (gangclaims.h), never in a pod's request. Once
 * allocated, the ledger counts its devices on the nodes (ledger.h). Before,
 * kube-scheduler allocates it with the first pod that it schedules among those
 * that name it; the fit must then find its devices on that pod's node too.
 * So the first live, unbound pod of the gang (oldest first) that names such a
 * claim carries it: its fit request (model_pod_fit_request) adds what the
 * claim counts as (devices.h, devices_pod_carry), once for the gang.
 *
 * Not modelled: the other pods that share the claim must go where its devices
 * are reachable (for a node-local device, the carrier's node); the fit places
 * them by their own request. docs/dra.md says so.
 *
 * Pure. dracache_prepare() calls it before each pass.
 */
#ifndef RAYGATE_SHAREDCARRY_H
#define RAYGATE_SHAREDCARRY_H

#include "cache.h"

/*
 * Chooses the carriers of every gang whose pods name shared claims, by the
 * claims' allocation in c's DRA set (none without a set). A gang whose
 * carriers changed is marked changed (its queue dirty). Returns how many
 * gangs changed.
 */
size_t sharedcarry_prepare(struct cache *c);

#endif
