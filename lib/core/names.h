/*
 * names: the Kubernetes names raygate reads and writes in more than one module,
 * defined once. A name only one module uses stays in that module's header
 * (evict.h's annotations, rayjob.h's labels).
 */
#ifndef RAYGATE_NAMES_H
#define RAYGATE_NAMES_H

#include "util.h"

/*
 * The PodGroup of a gang, "ray-<cluster>-pg": its name is the RayCluster's
 * (a RayJob's for the RayCluster it made), as KubeRay's Volcano integration
 * names it. Every module spells it through these.
 */
#define NAMES_PODGROUP_PREFIX "ray-"
#define NAMES_PODGROUP_SUFFIX "-pg"
/* "ray-<cluster>-pg" (new string; cluster not NULL). */
char *names_podgroup(const char *cluster);
/* Appends "ray-<cluster>-pg" to b. */
void names_podgroup_put(struct util_buf *b, const char *cluster);
/* The cluster in a PodGroup name "ray-<cluster>-pg" (new string), or NULL for another name (or NULL). */
char *names_podgroup_cluster(const char *name);

/*
 * Whether s[0..n) is a DNS-1123 subdomain, as Kubernetes validates most
 * object names (IsDNS1123Subdomain): dot-separated [a-z0-9]([-a-z0-9]*[a-z0-9])?,
 * 1 to 253 bytes. s need not be NUL-terminated.
 */
int names_dns_subdomain(const char *s, size_t n);

/* The scheduling gate on every pod of a queued Ray cluster (webhook adds it, gate controller removes it). */
#define NAMES_GATE "raygate.io/gang"

/* Labels: KubeRay's on its pods, and the Volcano integration's that users set. */
#define NAMES_LABEL_CLUSTER "ray.io/cluster"
#define NAMES_LABEL_NODE_TYPE "ray.io/node-type"
#define NAMES_LABEL_GROUP "ray.io/group"
#define NAMES_LABEL_QUEUE "volcano.sh/queue-name"
#define NAMES_LABEL_PRIORITY "ray.io/priority-class-name"

/* The kind of object KubeRay made a RayCluster for ("RayJob"), on the cluster. */
#define NAMES_LABEL_ORIGIN_CRD "ray.io/originated-from-crd"

/* Annotations on a RayCluster: the webhook's gang metadata, the gate controller's admission time. */
#define NAMES_ANNOTATION_GROUP "scheduling.k8s.io/group-name"
#define NAMES_ANNOTATION_MIN_MEMBER "raygate.io/min-member"
#define NAMES_ANNOTATION_MIN_RESOURCES "raygate.io/min-resources"
#define NAMES_ANNOTATION_ADMITTED "raygate.io/admitted-at"

/*
 * On a RayCluster the webhook created suspended (its --hold-gangs, heldsuspend.h): "true". The gate admits such
 * a gang from its declaration, and its admission record clears spec.suspend: KubeRay then makes its pods, born
 * without the gate (heldset.h). Its eviction suspends it again.
 */
#define NAMES_ANNOTATION_HELD "raygate.io/held-suspended"

/*
 * On a held RayCluster, how long the hold lasts (heldsuspend.h, the webhook's --hold-gangs decide):
 * "on-wait", written with the hold: the gate releases it when its first decision is to wait; "released",
 * written by that release with spec.suspend false: from then on a gated gang (KubeRay makes its pods, each
 * gated, and the gate lifts their gates when it admits the gang), never held again.
 */
#define NAMES_ANNOTATION_HELD_RELEASE "raygate.io/held-release"
#define NAMES_HELD_RELEASE_ON_WAIT "on-wait"
#define NAMES_HELD_RELEASE_DONE "released"

/*
 * On a held RayCluster, written by its admission record: the metadata.generation the record's clear of
 * spec.suspend makes. Its pods are born without the gate only while the RayCluster is still at that
 * generation (heldset.h): after a change of its spec (a group scaled up), they are gated, and the gate weighs
 * them as it does any pod of an admitted gang.
 */
#define NAMES_ANNOTATION_HELD_GENERATION "raygate.io/held-generation"

/*
 * On an admitted held RayCluster, written by the gate once KubeRay has taken
 * the resume in (heldresume.h): the raygate.io/held-generation it nudged
 * KubeRay at. A RayCluster change KubeRay's watch passes on (an annotation),
 * so that it makes the pods now rather than after its 2-second requeue.
 */
#define NAMES_ANNOTATION_HELD_RESUMED "raygate.io/held-resumed"

/*
 * On a RayCluster's pod templates (the webhook's RayCluster mutation) and so
 * on their pods: "true" when every pod of the template is a gang member
 * (gang.h's all_members; always the head), "false" when some may be an
 * autoscaler's tail. Only a pod marked "true" names the native PodGroup
 * (mutate.h, docs/native-gang.md).
 */
#define NAMES_ANNOTATION_GANG_MEMBER "raygate.io/gang-member"

/* A RayJob's submitter request (compact JSON ResourceList): written on the RayJob by the webhook, copied by
   KubeRay onto its RayCluster, read there (submitter.h). */
#define NAMES_ANNOTATION_SUBMITTER "raygate.io/submitter-resources"

/* Preemption (preempt.h): a Queue's policy; a RayCluster's consent to be a victim (label or annotation,
   "false"), and the preemptor a victim RayCluster was evicted for ("ns/name"). */
#define NAMES_ANNOTATION_PREEMPTION "raygate.io/preemption"
#define NAMES_LABEL_PREEMPTABLE "volcano.sh/preemptable"
#define NAMES_ANNOTATION_PREEMPTED_BY "raygate.io/preempted-by"

/* A Queue's consent ("true") that it and its subtree reclaim, and are reclaimed from, by their deserved derived by
   weight when spec.deserved is unset (preempt.h); off by default, as Volcano's reclaim action and Kueue's fair
   sharing preemption are. */
#define NAMES_ANNOTATION_RECLAIM_BY_WEIGHT "raygate.io/reclaim-by-weight"

/*
 * Annotations on a PodGroup, the gate controller's typed wait reason (podgroup.h)
 * that `kubectl raygate why` reads: the reason code, admit_result_reason_name() of
 * the gang's last decision while it is not admitted; with code "pods", how
 * many of its minMember pods exist (a decimal integer).
 */
#define NAMES_ANNOTATION_WAIT_PODS "raygate.io/wait-pods-created"
#define NAMES_ANNOTATION_WAIT_REASON "raygate.io/wait-reason"

/*
 * Dispatch to many clusters (docs/dispatch.md). On the manager: a Queue's
 * workers (comma-separated, in order of preference); a worker's kubeconfig
 * Secret in raygate-system, labelled with the worker's name (data key
 * "kubeconfig"); on a dispatched RayCluster or RayJob, where it runs, when it
 * was created there and when its lease was last renewed there (RFC 3339,
 * the manager's clock), per-worker reasons while no worker fits (JSON
 * {"worker": "message"}), the user's give-up duration ("10m"; unset: wait
 * forever), and the dispatcher's finalizer.
 */
#define NAMES_ANNOTATION_DISPATCH_TO "raygate.io/dispatch-to"
#define NAMES_LABEL_WORKER_CLUSTER "raygate.io/worker-cluster"
#define NAMES_SECRET_KUBECONFIG_KEY "kubeconfig"
#define NAMES_ANNOTATION_DISPATCHED_TO "raygate.io/dispatched-to"
#define NAMES_ANNOTATION_DISPATCHED_AT "raygate.io/dispatched-at"
#define NAMES_ANNOTATION_DISPATCH_RENEWED "raygate.io/dispatch-renewed-at"
#define NAMES_ANNOTATION_DISPATCH_REASONS "raygate.io/dispatch-reasons"
#define NAMES_ANNOTATION_DISPATCH_GIVE_UP "raygate.io/dispatch-give-up"
#define NAMES_FINALIZER_DISPATCH "raygate.io/dispatch"

/*
 * A manager that runs KubeRay (docs/dispatch.md): its webhook sets
 * spec.suspend on a RayCluster or RayJob of a dispatching Queue and marks it
 * with NAMES_ANNOTATION_DISPATCH_SUSPENDED "true" (the copy then drops the
 * suspend); KubeRay owns the manager's status.state and jobDeploymentStatus
 * until the end, so the dispatcher shows the worker's live state (the
 * RayCluster's state, the RayJob's jobDeploymentStatus) in
 * NAMES_ANNOTATION_DISPATCH_WORKER_STATE.
 */
#define NAMES_ANNOTATION_DISPATCH_SUSPENDED "raygate.io/dispatch-suspended"
#define NAMES_ANNOTATION_DISPATCH_WORKER_STATE "raygate.io/dispatch-worker-state"

/*
 * On a worker's copy (and on the RayCluster KubeRay makes there for a copied
 * RayJob): the manager it came from (label: the dispatcher's --cluster-name),
 * the manager object's uid, the lease (a decimal counter the dispatcher bumps
 * at every renewal) and the lease's length in seconds. A worker's gate that
 * sees the counter unchanged for that long, on its own clock, evicts the gang
 * whole and admits it no more.
 */
#define NAMES_LABEL_DISPATCHED_FROM "raygate.io/dispatched-from"
#define NAMES_ANNOTATION_DISPATCH_ORIGIN_UID "raygate.io/dispatch-origin-uid"
#define NAMES_ANNOTATION_DISPATCH_LEASE "raygate.io/dispatch-lease"
#define NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS "raygate.io/dispatch-lease-seconds"

/*
 * On the same RayCluster, written by the worker's gate (the leader) once per
 * change of the counter: "COUNTER@TIME", the counter and when the gate saw it
 * change (RFC 3339 UTC with milliseconds, the gate's clock). A restarted gate,
 * or a standby taking over, counts the lease from it, not afresh
 * (dispatchlease.h).
 */
#define NAMES_ANNOTATION_DISPATCH_LEASE_SEEN "raygate.io/dispatch-lease-seen"

#endif
