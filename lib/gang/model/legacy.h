/*
 * legacy: the clusters of the legacy Ray Kubernetes operator (Ray 1.x,
 * cluster.ray.io/v1 RayCluster), as pure functions. No I/O.
 *
 * The object: spec.podTypes[] (name, minWorkers, maxWorkers, podConfig: a
 * whole Pod, rayResources), spec.headPodType naming the head's pod type, and
 * spec.maxWorkers. Its node provider creates pods from a podConfig labelled
 * ray-cluster-name=<cluster>, ray-node-type=head|worker and
 * ray-user-node-type=<pod type> (and ray-node-name, ray-launch-config,
 * ray-node-status, ray-node-uuid), each with a controller ownerReference to
 * the RayCluster, the head first.
 *
 * The gang: the head plus every pod type's minWorkers (capped by the type's
 * maxWorkers, then by spec.maxWorkers, taking the types in order); workers
 * above that are the autoscaling tail. A pod's request is kube-scheduler's
 * effective request of its podConfig (gang_pod_request: requests, else
 * limits, per container). The gang's groups are the pod types, named by
 * ray-user-node-type, so that the gate takes the head and each type's first
 * minWorkers pods as members. A type whose count reaches its maxWorkers has
 * no tail (all_members): its podConfig's pods, the head's among them for the
 * head's type, name the native PodGroup (native_count, gang.h).
 */
#ifndef RAYGATE_LEGACY_H
#define RAYGATE_LEGACY_H

#include <jansson.h>

#include "gang.h"

#define LEGACY_GROUP "cluster.ray.io"
#define LEGACY_API_VERSION "cluster.ray.io/v1"
#define LEGACY_LABEL_CLUSTER "ray-cluster-name"
#define LEGACY_LABEL_NODE_KIND "ray-node-type"      /* "head" or "worker" */
#define LEGACY_LABEL_NODE_TYPE "ray-user-node-type" /* the pod type's name */

/* Whether obj (borrowed) is a legacy RayCluster: apiVersion cluster.ray.io/<version>, kind RayCluster. */
int legacy_is_raycluster(const json_t *obj);

/*
 * Computes the gang of a legacy RayCluster (borrowed) into out (initialised;
 * overwritten): min_member = 1 + the workers counted, min_resources = the
 * head's request + each type's workers x its request, one group per pod type
 * in order (name: the type's name; pods: its workers counted). Returns 0, or
 * -1 with err naming the field ("spec.podTypes[1].minWorkers: must not be
 * negative", "spec.headPodType: \"x\" is not the name of a pod type",
 * "spec.podTypes[0].podConfig.spec.containers[0].resources.requests.cpu:
 * invalid quantity ...").
 */
int legacy_gang_from_raycluster(const json_t *raycluster, struct gang_spec *out, struct error *err);

/* The pod types' podConfigs of a legacy RayCluster (borrowed): how many there are. */
size_t legacy_pod_type_count(const json_t *raycluster);

/* The i-th pod type's podConfig (borrowed), or NULL when it is not an object. */
json_t *legacy_pod_config(const json_t *raycluster, size_t i);

/*
 * What a pod's labels (borrowed) say of its legacy cluster: *cluster (the
 * ray-cluster-name value), *node_kind (ray-node-type) and *node_type
 * (ray-user-node-type), each borrowed or NULL. Returns 1 when the pod names a
 * legacy cluster (a non-empty ray-cluster-name), else 0.
 */
int legacy_pod_labels(const json_t *labels, const char **cluster, const char **node_kind, const char **node_type);

#endif
