/*
 * act: the dispatcher's writes, one API request each (two for a PodGroup):
 * on the manager's objects (finalizer, annotations, status, PodGroup) and on
 * a worker's copies (create, delete, renew the lease). Each returns 0, or -1
 * with err holding the API's answer; the caller logs and plans again at the
 * next pass, so that a failed write is retried, never fatal.
 *
 * Objects are RayClusters and RayJobs (ray.io/v1) with kind, namespace and
 * name set; all json_t arguments are borrowed unless said otherwise.
 */
#ifndef RAYGATE_DISPATCH_ACT_H
#define RAYGATE_DISPATCH_ACT_H

#include <jansson.h>

#include "error.h"
#include "kube.h"

/* The manager-side PodGroup's condition type (scheduling.volcano.sh/v1beta1, as MCAD's AppWrapper showed it). */
#define DISPATCHACT_CONDITION "Dispatched"

/* The API path of obj (a RayCluster or RayJob), new string; NULL when it lacks kind, namespace or name. */
char *dispatchact_path(const json_t *obj);

/*
 * Adds (add 1) or removes (add 0) the dispatcher's finalizer on the manager
 * object, with its resourceVersion as a precondition. *updated (may be NULL)
 * gets the object as it is now (new reference): obj with the change and the
 * API's new resourceVersion.
 */
int dispatchact_finalizer(struct kube_client *k, const json_t *obj, int add, json_t **updated, struct error *err);

/*
 * Merge-patches the manager object's annotations with annotations (a JSON
 * object; a null member removes that annotation). *updated as above.
 */
int dispatchact_annotate(struct kube_client *k, const json_t *obj, const json_t *annotations, json_t **updated, struct error *err);

/* Creates copy (dispatchcopy.h's worker copy) on worker w. */
int dispatchact_create_copy(struct kube_client *w, const json_t *copy, struct error *err);

/*
 * Deletes worker_obj (a copy on worker w, as listed there) with its uid as a
 * precondition, so that an object created again under the name is left
 * alone, and propagationPolicy Foreground: the copy stays (with its
 * deletionTimestamp) until its pods are gone, so that the plan nominates
 * nowhere else meanwhile (dispatchplan.h). Gone already (404) is success.
 */
int dispatchact_delete_copy(struct kube_client *w, const json_t *worker_obj, struct error *err);

/* Bumps the lease counter of worker_obj on worker w (dispatch_copy_renew_patch). */
int dispatchact_renew(struct kube_client *w, const json_t *worker_obj, struct error *err);

/* Writes status (a JSON object) into the manager object's status subresource (merge patch). */
int dispatchact_mirror(struct kube_client *k, const json_t *obj, const json_t *status, struct error *err);

/*
 * Creates or updates the manager-side PodGroup of obj (ray-<name>-pg, owned by
 * obj, spec.queue from its queue label, spec.minMember from its gang) with
 * the condition type Dispatched: status "True" (reason Dispatched, message
 * naming the worker) or "False" (reason, message: why not), stamped now
 * (RFC 3339) and lastTransitionTime kept while the status stays.
 */
int dispatchact_podgroup(struct kube_client *k, const json_t *obj, const char *status, const char *reason, const char *message,
                         const char *now, struct error *err);

#endif
