/*
 * gang: how many pods a RayCluster needs at once, and what they request.
 *
 * Pure arithmetic shared by the webhook (annotations) and the gate controller
 * (admission of gated pods):
 * - a pod's effective request is kube-scheduler's: per resource, the larger of
 *   (sum of containers + sidecar init containers, restartPolicy Always) and
 *   (each regular init container + the sidecars before it), plus spec.overhead;
 *   a container requests its requests value, else its limits value;
 * - head: 1 pod, plus KubeRay's autoscaler sidecar when
 *   spec.enableInTreeAutoscaling is true (spec.autoscalerOptions.resources,
 *   default cpu 500m, memory 512Mi);
 * - worker group: 0 pods when suspended; else replicas x numOfHosts, replicas
 *   being minReplicas under autoscaling and otherwise replicas clamped to
 *   [minReplicas, maxReplicas] (maxReplicas when minReplicas > maxReplicas);
 * - minMember = 1 + worker pods; minResources = head + sum of worker pods;
 * - the gang's shape: the head plus, per worker group, its pods counted in
 *   minMember. The gate controller takes the gang's members by this shape (the
 *   head and each group's first pods), never simply the first pods created;
 * - a worker group whose every pod is a member (all_members): not suspended,
 *   and without in-tree autoscaling or with maxReplicas <= minReplicas, so
 *   that no pod of it can be an autoscaler's tail. Only such groups' pods,
 *   and the head's, name the gang's native PodGroup (docs/native-gang.md):
 *   native_count = 1 + their pods, the PodGroup's minCount.
 */
#ifndef RAYGATE_GANG_H
#define RAYGATE_GANG_H

#include <stdint.h>

#include <jansson.h>

#include "resources.h"
#include "error.h"

/* One worker group's share of the gang. */
struct gang_group {
    char *name;      /* owned: spec.workerGroupSpecs[i].groupName, or NULL when it is not a string */
    int64_t pods;    /* replicas x numOfHosts counted in minMember; 0 when suspended */
    int all_members; /* 1: every pod KubeRay runs for the group is one of those (no tail can grow); 0 otherwise */
};

struct gang_spec {
    int64_t min_member;
    int64_t native_count; /* the members that name the native PodGroup: the head's and all_members groups' pods */
    struct resources min_resources;
    struct gang_group *groups; /* owned: one per spec.workerGroupSpecs entry, in order */
    size_t ngroups;
};

/* Initialises an empty spec (min_member 0, native_count 0, no groups) in caller-owned storage. */
void gang_spec_init(struct gang_spec *spec);

/* Releases the spec's memory; spec may be NULL. */
void gang_spec_finish(struct gang_spec *spec);

/*
 * Computes the gang of a RayCluster object (borrowed; apiVersion is not checked).
 * out must be initialised; it is overwritten. Returns 0, or -1 with err naming
 * the field when a quantity is invalid or negative, a count is negative or not
 * an integer, or a total overflows.
 */
int gang_from_raycluster(const json_t *raycluster, struct gang_spec *out, struct error *err);

/*
 * Computes the effective request of a pod spec (borrowed: a Pod's or a pod
 * template's "spec") into out, which must be initialised and is overwritten.
 * Field paths in errors start with "spec.". Returns 0, or -1 with err.
 */
int gang_pod_request(const json_t *pod_spec, struct resources *out, struct error *err);

/*
 * KubeRay's autoscaler sidecar of the head pod of a RayCluster whose spec
 * (borrowed) sets enableInTreeAutoscaling: a container named "autoscaler"
 * whose resources are spec.autoscalerOptions.resources, else KubeRay's
 * defaults (cpu 500m, memory 512Mi, requests equal to limits), as the gang's
 * minResources counts it. New reference, or NULL when spec does not
 * autoscale.
 */
json_t *gang_autoscaler_container(const json_t *spec);

/*
 * The init container KubeRay adds to every worker pod (ENABLE_INIT_CONTAINER_INJECTION, on by default):
 * "wait-gcs-ready", cpu 200m and memory 256Mi, requests equal to limits (KubeRay 1.6's common/pod.go). A
 * worker's effective request is at least it. New reference.
 */
json_t *gang_worker_init_container(void);

#endif
