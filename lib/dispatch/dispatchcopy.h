/*
 * dispatchcopy: a manager's RayCluster or RayJob and its copy on one worker,
 * both ways, as pure functions of the objects (docs/dispatch.md).
 *
 * Down (manager -> worker): the copy has the manager object's namespace, name,
 * apiVersion, kind and spec (verbatim), its user labels and annotations minus
 * the manager-side dispatch annotations (raygate.io/dispatched-to,
 * dispatched-at, dispatch-renewed-at, dispatch-reasons), and none of
 * resourceVersion, uid, creationTimestamp, deletionTimestamp,
 * deletionGracePeriodSeconds, managedFields, finalizers, ownerReferences,
 * generation, selfLink nor status. Added: the label raygate.io/dispatched-from
 * (the manager's --cluster-name) and the annotations
 * raygate.io/dispatch-origin-uid (the manager object's uid),
 * raygate.io/dispatch-lease "1" and raygate.io/dispatch-lease-seconds. The
 * worker's webhook adds the gang metadata and gates as for any object.
 *
 * Up (worker -> manager): what the manager object shows of its copy
 * (struct dispatch_remote): whether the worker's gate admitted it (the
 * raygate.io/admitted-at annotation of the worker RayCluster; for a RayJob,
 * of the RayCluster KubeRay made for it), whether it is finished (a RayJob
 * whose jobDeploymentStatus is Complete or Failed), and the status the
 * manager object's status subresource gets.
 *
 * Pure: no I/O, no threads, no clock.
 */
#ifndef RAYGATE_DISPATCHCOPY_H
#define RAYGATE_DISPATCHCOPY_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "names.h"

enum dispatch_kind {
    DISPATCH_KIND_RAYCLUSTER = 1, /* ray.io/v1 RayCluster */
    DISPATCH_KIND_RAYJOB,         /* ray.io/v1 RayJob */
};

/*
 * The kind of obj (borrowed) from its "kind" member. Returns 0, or -1 with
 * err when it is neither RayCluster nor RayJob.
 */
int dispatch_copy_kind_of(const json_t *obj, enum dispatch_kind *out, struct error *err);

/*
 * The worker copy of manager object obj (borrowed), as above: a new
 * reference, to be created on the worker. cluster_name is the manager's
 * --cluster-name (a label value), lease_seconds the lease's length (> 0).
 * Returns NULL with err when obj is not a RayCluster or RayJob, or lacks
 * metadata.name, metadata.namespace or metadata.uid.
 */
json_t *dispatch_copy_worker(const json_t *obj, const char *cluster_name, int64_t lease_seconds, struct error *err);

/*
 * Whether the manager object obj (borrowed) was suspended by the manager's
 * webhook for a KubeRay there (raygate.io/dispatch-suspended "true",
 * dispatchsuspend.h): its copy then has no spec.suspend.
 */
int dispatch_copy_suspended(const json_t *obj);

/*
 * Whether worker_obj (borrowed: a RayCluster or RayJob on a worker, or the
 * RayCluster KubeRay made there for a copied RayJob, which carries the
 * RayJob's labels and annotations) was dispatched by the manager named
 * cluster_name: returns its raygate.io/dispatch-origin-uid (borrowed from
 * worker_obj) when its raygate.io/dispatched-from label is cluster_name, else
 * NULL (not a copy of this manager's: never to be renewed or deleted).
 */
const char *dispatch_copy_origin(const json_t *worker_obj, const char *cluster_name);

/*
 * The JSON merge patch that renews the lease of worker_obj (borrowed; a copy,
 * or the RayCluster KubeRay made for a copied RayJob): its
 * raygate.io/dispatch-lease counter plus one (a missing or unparsable value
 * counts as 0), with metadata.uid as a precondition so that an object created
 * again under the same name is never renewed. New reference; NULL with err
 * when worker_obj has no metadata.uid.
 */
json_t *dispatch_copy_renew_patch(const json_t *worker_obj, struct error *err);

/* What the manager object shows of its copy on a worker. */
struct dispatch_remote {
    int admitted;         /* the worker's gate admitted the gang (raygate.io/admitted-at), or a RayJob got past Initializing */
    int terminal;         /* a RayJob whose jobDeploymentStatus is Complete or Failed: it ran; never dispatched again */
    json_t *status;       /* new: the manager's status subresource body's "status": RayCluster {"state"} (when the worker
                             shows one), RayJob {"jobStatus", "jobDeploymentStatus", "endTime"} (those present); {} when none */
    json_t *worker_state; /* new string or NULL: for a suspended manager object (dispatch_copy_remote_for_suspended), the
                             annotation raygate.io/dispatch-worker-state it shows */
};

/* Whether a RayJob's status.jobDeploymentStatus (borrowed; NULL: none) says it ran to its end: Complete or Failed. */
int dispatch_copy_remote_terminal(const char *job_deployment_status);

/*
 * Whether a RayJob's status.jobDeploymentStatus (borrowed; NULL: none) says
 * its cluster was admitted and the job submitted: Running, Complete, Failed,
 * Suspending, Suspended or Retrying.
 */
int dispatch_copy_remote_started(const char *job_deployment_status);

/* Initialises an empty remote (status NULL) in caller-owned storage. */
void dispatch_copy_remote_init(struct dispatch_remote *r);

/* Releases r's status; r may be NULL. */
void dispatch_copy_remote_finish(struct dispatch_remote *r);

/*
 * Reads a worker's copy: worker_obj (borrowed) is the worker's RayCluster or
 * RayJob; for a RayJob, cluster (borrowed; NULL when KubeRay has made none
 * yet, or deleted it) is the RayCluster KubeRay made for it on the worker,
 * where the gate records admission (ignored for a RayCluster). out must be
 * initialised; it is overwritten. Returns 0, or -1 with err when worker_obj
 * is neither kind.
 */
int dispatch_copy_remote_read(const json_t *worker_obj, const json_t *cluster, struct dispatch_remote *out, struct error *err);

/*
 * What a manager object suspended for a KubeRay there (manager_obj borrowed;
 * dispatch_copy_suspended) shows of r, which dispatch_copy_remote_read filled:
 * KubeRay owns its status.state (a RayCluster: "suspended") and its
 * jobDeploymentStatus (a RayJob: "Suspended") and writes them back at its
 * next reconcile, so those move to r->worker_state, shown in the annotation
 * raygate.io/dispatch-worker-state; a RayJob's terminal jobDeploymentStatus
 * (Complete, Failed) stays in r->status too, for KubeRay leaves a finished
 * RayJob's status alone. jobStatus and endTime stay: KubeRay does not write
 * them on a suspended RayJob. Does nothing for an object not so suspended.
 */
void dispatch_copy_remote_for_suspended(const json_t *manager_obj, struct dispatch_remote *r);

/*
 * Whether the manager object's status (manager_obj borrowed) already shows
 * r->status: every member of r->status is equal in manager_obj's status, and
 * r->worker_state (when set) in its annotation raygate.io/dispatch-worker-state.
 * 1 when nothing is to be mirrored, 0 when a MIRROR is due.
 */
int dispatch_copy_remote_shown(const json_t *manager_obj, const struct dispatch_remote *r);

#endif
