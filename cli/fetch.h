/*
 * fetch: the I/O of `kubectl raygate`: reads, through lib's client, what the
 * gate controller wrote into a snapshot for cli/view.c. Only get and list:
 * manifests/cli-viewer-rbac.yaml is the read-only ClusterRole it needs.
 *
 * What cannot be read is left out, with a warning where it changes what is
 * shown: a CRD that is not installed (404: the legacy cluster.ray.io
 * RayCluster, RayJob), pods or PriorityClasses the user may not list (403:
 * PODS counts the PodGroup's running pods, PRIORITY its class), PodGroups of
 * other namespaces (403: positions count the gangs of the namespace only),
 * HyperNodes (404: no HyperNode CRD, none).
 */
#ifndef RAYGATE_CLI_FETCH_H
#define RAYGATE_CLI_FETCH_H

#include <jansson.h>

#include "kube.h"

enum {
    FETCH_QUEUES = 1 << 0,
    FETCH_GANGS = 1 << 1, /* PodGroups, their owners, pods and PriorityClasses */
    FETCH_NODES = 1 << 2, /* nodes, every namespace's pods and RayClusters, HyperNodes (cli/domains.h) */
};

struct fetch_scope {
    unsigned what;          /* FETCH_* */
    const char *namespace_; /* NULL: every namespace */
};

/*
 * Reads a snapshot (new object, view.h's shape, plus "warnings": [text, ...])
 * for scope. Returns it, or NULL with err set (a list that had to succeed
 * failed: no Volcano CRDs, no access, the server unreachable).
 */
json_t *fetch_snapshot(struct kube_client *c, const struct fetch_scope *scope, struct error *err);

/*
 * Adds to snapshot the room of the nodes (cli/domains.h): "nodes", "nodePods"
 * (every namespace's pods not Succeeded or Failed) and "hyperNodes" (none
 * without the HyperNode CRD). Returns 0, or -1 with err (nodes or pods
 * cannot be listed).
 */
int fetch_room(struct kube_client *c, json_t *snapshot, struct error *err);

/*
 * Adds to snapshot's "nativePodGroups" (created if missing) Kubernetes' own
 * PodGroups (scheduling.k8s.io/v1beta1, docs/native-gang.md) of namespace ns:
 * none where that API is not served; a warning where they may not be read.
 * Returns 0, or -1 with err.
 */
int fetch_native(struct kube_client *c, json_t *snapshot, const char *ns, struct error *err);

/*
 * Adds to snapshot's "events" (created if missing) the Events of namespace ns
 * whose involvedObject is named name. Returns 0, or -1 (a warning is added to
 * snapshot's "warnings").
 */
int fetch_events(struct kube_client *c, json_t *snapshot, const char *ns, const char *name);

#endif
