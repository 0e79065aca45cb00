/*
 * nativegang: what raygate writes for Kubernetes' own gang scheduling
 * (KEP-4671, scheduling.k8s.io/v1beta1, Kubernetes 1.37 with the feature gate
 * GenericWorkload), the last step after raygate admits a gang: kube-scheduler
 * then binds the gang's pods all or nothing (docs/native-gang.md). Pure:
 * objects in, objects out.
 *
 * For each gang it manages, raygate writes, before it lifts any gate:
 * - a Workload of one PodGroup template, "gang", whose gang policy's minCount
 *   is the number of the gang's pods that name the group (below; the template as it was when first written:
 *   kube-scheduler reads the PodGroup);
 * - a PodGroup of that template, the runtime group its pods name in
 *   spec.schedulingGroup.podGroupName (the webhook sets it at CREATE: the
 *   field is immutable), its minCount that number (mutable: it follows
 *   minReplicas), the gang's PriorityClass (its label
 *   ray.io/priority-class-name: the apiserver's Priority admission resolves it,
 *   and refuses a priority set without its class), and disruptionMode All:
 *   whatever kube-scheduler's workload-aware preemption takes of a gang, it
 *   takes whole, as raygate evicts whole.
 * Both are named as the Volcano PodGroup is, "ray-<cluster>-pg" (a RayJob's
 * cluster: its RayJob's), and controlled by the RayCluster (or the RayJob), so
 * that the garbage collector deletes them with it.
 *
 * Only members name the group: the head's pods and those of worker groups
 * whose every pod is a member (gang.h's all_members, native_count). A worker
 * group that autoscales beyond minReplicas names none: kube-scheduler would
 * hold the whole group back while raygate keeps its tail pods gated. Its
 * members are placed as without the native step.
 */
#ifndef RAYGATE_NATIVEGANG_H
#define RAYGATE_NATIVEGANG_H

#include <stdint.h>

#include <jansson.h>

#define NATIVEGANG_API "/apis/scheduling.k8s.io/v1beta1"
#define NATIVEGANG_API_VERSION "scheduling.k8s.io/v1beta1"
/* The one PodGroup template of raygate's Workloads. */
#define NATIVEGANG_TEMPLATE "gang"
/* The PodGroup condition kube-scheduler sets once a group was placed, or why it cannot be. */
#define NATIVEGANG_CONDITION "PodGroupInitiallyScheduled"

/* One gang's native objects. Strings borrowed. */
struct nativegang_spec {
    const char *namespace_;
    const char *name;              /* of the Workload and the PodGroup: the gang's PodGroup name */
    int64_t min_count;             /* the gang's pods that name the group (gang.h's native_count), >= 1 */
    const char *priority_class;    /* the gang's ray.io/priority-class-name, or NULL: none */
    const char *owner_api_version; /* the controller: "ray.io/v1" (or the legacy operator's) */
    const char *owner_kind;        /* "RayCluster" or "RayJob" */
    const char *owner_name;
    const char *owner_uid; /* NULL: no ownerReference (the objects then outlive the gang) */
};

/* The Workload for s (new reference). */
json_t *nativegang_workload(const struct nativegang_spec *s);

/* The PodGroup for s (new reference). */
json_t *nativegang_podgroup(const struct nativegang_spec *s);

/* A merge patch that sets a PodGroup's minCount (new reference). */
json_t *nativegang_min_count_patch(int64_t min_count);

/* What kube-scheduler last said of a PodGroup: its minCount, and its NATIVEGANG_CONDITION. */
struct nativegang_seen {
    int64_t min_count;   /* 0: none read */
    int scheduled;       /* the condition: 1 True (placed), 0 False (cannot be placed now), -1 not set yet */
    const char *message; /* the condition's message (borrowed from the object), or NULL */
};

/* Reads a PodGroup (borrowed) into out; message borrowed from pg. */
void nativegang_seen_parse(const json_t *pg, struct nativegang_seen *out);

/* What a gang's PodGroup needs before its gates are lifted. */
enum nativegang_op {
    NATIVEGANG_NONE,   /* it exists with the gang's minCount */
    NATIVEGANG_CREATE, /* not seen: create the Workload and the PodGroup (an existing one is then patched) */
    NATIVEGANG_PATCH,  /* seen with another minCount: patch it */
};

/* seen: the watch's view of the PodGroup, or NULL when it has none. */
enum nativegang_op nativegang_op(const struct nativegang_seen *seen, int64_t min_count);

/*
 * What a person reads of the native group, for `kubectl raygate why` and the
 * logs (new string): "kube-scheduler: placed", "kube-scheduler: waiting for
 * 3 of 8 pods" (bound of min_count, the condition not set yet or True), or
 * "kube-scheduler: cannot place the group whole: <its message>".
 */
char *nativegang_describe(const struct nativegang_seen *seen, int64_t bound);

#endif
