/*
 * drawatch: the webhook's view of the Dynamic Resource Allocation objects
 * that size a gang (resource.k8s.io/v1 DeviceClasses, ResourceClaimTemplates
 * and the ResourceClaims that pods name), listed and watched on a thread of
 * its own (kube.h) into a draset (draset.h), so that the admission path never
 * calls the API server: it prices a RayCluster's claims into its
 * raygate.io/min-resources under the lock (mutate_options.dra).
 *
 * ResourceSlices are not watched (the webhook counts no node), nor the claims
 * kube-controller-manager makes from a pod's template (annotated
 * resource.kubernetes.io/pod-claim-name: pods name their template, not them).
 *
 * Discovery, once at start-up: where the API server does not serve
 * resource.k8s.io/v1 (Kubernetes 1.33) nothing is watched, and said once.
 * Until the three lists have completed (the service account may not list
 * them, the API server does not answer) the set is not synced: the request
 * path gets none, and the webhook writes minResources without devices (the
 * gate counts them anyway, from its own watches).
 */
#ifndef RAYGATE_DRAWATCH_H
#define RAYGATE_DRAWATCH_H

#include <jansson.h>

#include "draset.h"
#include "error.h"
#include "kube.h"

/* The group-version discovered and watched. */
#define DRAWATCH_API "/apis/resource.k8s.io/v1"

struct drawatch;

/* Whether an APIResourceList (borrowed; may be NULL or of any shape) lists what the webhook watches. */
int drawatch_served(const json_t *resources);

/*
 * Asks c (borrowed: it must outlive the watch) whether DRAWATCH_API is served
 * and, unless it answered 404 or without those resources, starts listing and
 * watching them (a discovery that fails otherwise starts them too: their
 * lists retry). Returns a new drawatch (drawatch_destroy), which may watch
 * nothing, or NULL with err.
 */
struct drawatch *drawatch_create(struct kube_client *c, struct error *err);

/* Stops the watch thread and frees everything. Accepts NULL. */
void drawatch_destroy(struct drawatch *w);

/*
 * Locks the set and returns it when synced (borrowed until drawatch_unlock),
 * else NULL. drawatch_unlock must follow on the same thread either way. Keep
 * the lock short: the watch waits on it.
 */
const struct draset *drawatch_lock(struct drawatch *w);

void drawatch_unlock(struct drawatch *w);

/* Whether the set is synced (the gauge raygate_webhook_dra_synced). w may be NULL (0). */
int drawatch_synced(struct drawatch *w);

#endif
