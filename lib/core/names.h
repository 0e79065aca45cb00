/*
 * names: the Kubernetes names raygate reads and writes in more than one module,
 * defined once. A name only one module uses stays in that module's header
 * (evict.h's annotations, rayjob.h's labels).
 */
#ifndef RAYGATE_NAMES_H
#define RAYGATE_NAMES_H

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

/* A RayJob's submitter request (compact JSON ResourceList): written on the RayJob by the webhook, copied by
   KubeRay onto its RayCluster, read there (submitter.h). */
#define NAMES_ANNOTATION_SUBMITTER "raygate.io/submitter-resources"

/* Preemption (preempt.h): a Queue's policy; a RayCluster's consent to be a victim (label or annotation,
   "false"), and the preemptor a victim RayCluster was evicted for ("ns/name"). */
#define NAMES_ANNOTATION_PREEMPTION "raygate.io/preemption"
#define NAMES_LABEL_PREEMPTABLE "volcano.sh/preemptable"
#define NAMES_ANNOTATION_PREEMPTED_BY "raygate.io/preempted-by"

/*
 * Annotations on a PodGroup, the gate controller's typed wait reason (podgroup.h)
 * that `kubectl raygate why` reads: the reason code, admit_reason_name() of
 * the gang's last decision while it is not admitted; with code "pods", how
 * many of its minMember pods exist (a decimal integer).
 */
#define NAMES_ANNOTATION_WAIT_PODS "raygate.io/wait-pods-created"
#define NAMES_ANNOTATION_WAIT_REASON "raygate.io/wait-reason"

#endif
