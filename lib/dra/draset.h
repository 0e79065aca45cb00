/*
 * draset: the Dynamic Resource Allocation objects a pass needs
 * (resource.k8s.io/v1 DeviceClasses, ResourceSlices, ResourceClaims,
 * ResourceClaimTemplates), fed by watch events, and what follows from them:
 *
 *  - what a pod's claims count as (draset_template_demand, draset_claim_demand):
 *    per request, `count` devices of the queue resource its DeviceClass maps to
 *    (deviceclass.h). A claim, a template or a class not seen (yet), and a
 *    request that cannot be sized (claimspec.h: allocationMode All), make the
 *    pod wait, with a reason that names the object or the field;
 *  - the nodes' devices (ledger.h): per node and device resource, the devices
 *    its slices publish that a class mapping to the resource selects, less
 *    those that claims' status.allocation holds.
 *
 * The device resources are the queue resources of the classes seen, numbered
 * densely in the order first seen (a number stays while the set lives).
 *
 * Pure: no I/O, no clock. The caller serializes every call (the gate's lock).
 */
#ifndef RAYGATE_DRASET_H
#define RAYGATE_DRASET_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "resources.h"

/* On a claim kube-controller-manager made from a pod's template: the pod's claim entry it stands for. */
#define DRASET_POD_CLAIM_ANNOTATION "resource.kubernetes.io/pod-claim-name"

enum draset_kind {
    DRASET_CLASS = 0, /* DeviceClass (cluster) */
    DRASET_SLICE,     /* ResourceSlice (cluster) */
    DRASET_CLAIM,     /* ResourceClaim (namespaced) */
    DRASET_TEMPLATE,  /* ResourceClaimTemplate (namespaced) */
    DRASET_KINDS,
};

/* What a recorded event changed (draset_record). */
enum {
    DRASET_CHANGED_DEMAND = 1 << 0, /* what pods' claims count as: classes, templates, claims' specs */
    DRASET_CHANGED_NODES = 1 << 1,  /* the nodes' devices: slices, classes, claims' allocations */
};

struct draset;

struct draset *draset_create(void);

/* Frees s and everything it holds; s may be NULL. */
void draset_destroy(struct draset *s);

/*
 * Records an ADDED or MODIFIED (deleted 0) or DELETED (deleted 1) event of
 * kind's object obj (borrowed). Returns the DRASET_CHANGED_* bits. An object
 * that does not parse is kept as invalid, with its error: a template or a
 * claim that pods name makes them wait with it; a class likewise for its
 * requests; a slice's devices are not counted. *err then says what is wrong
 * (for the log), else err->message is "".
 */
unsigned draset_record(struct draset *s, enum draset_kind kind, int deleted, const json_t *obj, struct error *err);

/* Counts DRASET_CHANGED_DEMAND changes: a pod's demand computed at another value may differ now. */
uint64_t draset_demand_generation(const struct draset *s);

/* The device resources (borrowed names, valid while s lives), by number; returns how many. */
size_t draset_resources(const struct draset *s, const char *const **names);

/* The number of device resource name, or -1 when no class maps to it. */
int draset_resource_index(const struct draset *s, const char *name);

/*
 * Adds into out (initialised) the devices a pod's claim from template tmpl in
 * namespace ns counts as (per request, count of its class's resource). Returns
 * 0; or 1 when it cannot be counted yet, with why: "resourceclaimtemplate
 * one-gpu not found in ns", "deviceclass gpu.example.com (spec.spec.devices.
 * requests[0].exactly.deviceClassName of resourceclaimtemplate ns/one-gpu) not
 * found", "resourceclaimtemplate ns/all-gpus: spec.spec.devices.requests[0].
 * exactly.allocationMode: All cannot be counted before allocation"; or -1 on
 * overflow, with err.
 */
int draset_template_demand(const struct draset *s, const char *ns, const char *tmpl, struct resources *out, struct error *why);

/* draset_template_demand() for a ResourceClaim that pods name (resourceClaimName): "resourceclaim shared-gpu not found in ns". */
int draset_claim_demand(const struct draset *s, const char *ns, const char *claim, struct resources *out, struct error *why);

/*
 * What a pod's claim from template tmpl counts as on the nodes beyond
 * draset_template_demand(): per request with selectors of its own, count
 * devices of the request's variant, a device resource named "<class> devices
 * where <selectors>" that the ledger counts as the devices both the class and
 * the request select. Only a pod's fit request names a variant, never a
 * queue (which counts the class's resource). Adds into out; 0 (also when the
 * template cannot be counted: draset_template_demand says why), or -1 on
 * overflow, with why.
 */
int draset_template_fit(const struct draset *s, const char *ns, const char *tmpl, struct resources *out, struct error *why);

/* draset_template_fit() for a ResourceClaim that pods name (resourceClaimName): its requests' variants. */
int draset_claim_fit(const struct draset *s, const char *ns, const char *claim, struct resources *out, struct error *why);

/* Whether the claim ns/name has a status.allocation (1), none (0), or is not seen (-1). */
int draset_claim_allocated(const struct draset *s, const char *ns, const char *name);

/*
 * What selectors the set could not evaluate (devsel.h), e.g. `deviceclass
 * gpu.example.com: device.capacity[...]...: a method call not evaluated; every
 * device of its driver counted`, or NULL (borrowed, valid until the next record).
 */
const char *draset_inexact(const struct draset *s);

#endif
