/*
 * buffers: what raygate asks a node autoscaler for, so that a gang its queue
 * admits and only the nodes refuse gets its nodes before any gate is lifted
 * (docs/nodes.md). SIG Autoscaling's CapacityBuffer (autoscaling.x-k8s.io
 * v1beta1, served by Karpenter behind its CapacityBuffer gate and by
 * cluster-autoscaler) asks for room for N copies of a PodTemplate's pod; the
 * autoscaler simulates those pods and makes nodes for the ones that fit none.
 *
 * A gang's request is one chunk per distinct member pod spec: the members as
 * KubeRay makes them (declare_member_pod: the head with its autoscaler
 * sidecar, the workers with their init container), told apart by what a node
 * is chosen by (containers' and init containers' resources, overhead, node
 * selector, affinity, tolerations, topology spread, priority class, runtime
 * class), each with how many members share it. Its objects: per chunk a
 * PodTemplate and a CapacityBuffer named "<cluster>-rg-<i>" in the
 * RayCluster's namespace, labelled raygate.io/gang: <cluster>, owned by the
 * RayCluster (a controller reference with its uid), so that they go with it,
 * and found again by label after a restart.
 *
 * Which gangs ask: buffers_select, from a pass's decisions, the waits for
 * nodes only (ADMIT_REASON_NODES: its queue, the tree and fair share admit
 * it), in the pass's order, at most per_queue gangs of one queue at once, so
 * that a deep queue never buys a fleet.
 *
 * A buffer's status: buffers_state (the autoscaler's conditions
 * ReadyForProvisioning, Provisioning, LimitedByQuotas).
 *
 * Pure: no I/O, no clock.
 */
#ifndef RAYGATE_BUFFERS_H
#define RAYGATE_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "admitresult.h"
#include "error.h"

#define BUFFERS_LABEL_GANG "raygate.io/gang"
#define BUFFERS_API_VERSION "autoscaling.x-k8s.io/v1beta1"
#define BUFFERS_STRATEGY "buffer.x-k8s.io/active-capacity"

/* One distinct member pod spec of a gang, and how many members have it. */
struct buffers_chunk {
    json_t *spec;  /* owned: the member pod's spec, what a node is chosen by only */
    int64_t count; /* members with this spec */
};

struct buffers_request {
    struct buffers_chunk *chunks; /* owned, in the order the members first show them (the head first) */
    size_t n;
    int64_t pods; /* the members, all chunks' counts */
};

/* Initialises an empty request in caller-owned storage. */
void buffers_request_init(struct buffers_request *r);

/* Releases r's memory, leaving it empty; r may be NULL. */
void buffers_request_finish(struct buffers_request *r);

/*
 * The request of a RayCluster (borrowed, KubeRay's ray.io/v1): its members
 * as gang.h counts them (minMember: the head, and each group's counted
 * pods). out must be initialised; it is overwritten. Returns 0, or -1 with err
 * naming the field (the gang arithmetic failed; out left empty).
 */
int buffers_from_cluster(const json_t *cluster, struct buffers_request *out, struct error *err);

/*
 * The PodTemplate of chunk i of cluster's (borrowed) request r (borrowed), as
 * the API takes it (POST to /api/v1/namespaces/<ns>/podtemplates). New
 * reference, or NULL when i is out of range.
 */
json_t *buffers_pod_template(const json_t *cluster, const struct buffers_request *r, size_t i);

/*
 * The CapacityBuffer of chunk i (replicas: its count; podTemplateRef: its
 * PodTemplate), as the API takes it (POST to
 * /apis/autoscaling.x-k8s.io/v1beta1/namespaces/<ns>/capacitybuffers). New
 * reference, or NULL when i is out of range.
 */
json_t *buffers_capacity_buffer(const json_t *cluster, const struct buffers_request *r, size_t i);

/* Chunk i's objects' name, "<cluster>-rg-<i>" (cut to 63 characters by the cluster's name). Caller frees. */
char *buffers_name(const char *cluster, size_t i);

enum buffers_state {
    BUFFERS_WAITING = 0,  /* no verdict yet: no status, or not for this generation */
    BUFFERS_PROVISIONING, /* Provisioning False, RequiresNewCapacity, none failed: nodes being made */
    BUFFERS_FITS,         /* Provisioning True: every chunk fits on existing capacity */
    BUFFERS_LIMITED,      /* LimitedByQuotas True, or chunks that failed to fit even new capacity */
    BUFFERS_REFUSED,      /* ReadyForProvisioning False: the autoscaler cannot use the buffer */
};

/*
 * What a CapacityBuffer (borrowed) says: its state, and the autoscaler's
 * message of the deciding condition into msg (cut to size, "" when none).
 */
enum buffers_state buffers_state_of(const json_t *buffer, char *msg, size_t size);

/* "waiting", "provisioning", "fits", "limited", "refused". */
const char *buffers_state_name(enum buffers_state s);

/*
 * Which decisions of res (borrowed) ask for nodes: the indices of its WAITs
 * for ADMIT_REASON_NODES, in its order, at most per_queue of one queue,
 * written to out (room for res->len). Returns how many.
 */
size_t buffers_select(const struct admit_result *res, size_t per_queue, size_t *out);

#endif
