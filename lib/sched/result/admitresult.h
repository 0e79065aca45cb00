/*
 * admitresult: what an admission pass (admit.h) decides, as data: its
 * decisions (an action, a reason as an enum, a message for people), the pods
 * each ungates or keeps waiting, and the queues it looked at. The names a
 * result holds live in chunks that are freed with it. Pure.
 */
#ifndef RAYGATE_ADMITRESULT_H
#define RAYGATE_ADMITRESULT_H

#include <stddef.h>

#include <jansson.h>

#include "cache.h"

enum admit_action {
    ADMIT_ACTION_ADMIT = 1,
    ADMIT_ACTION_FINISH,
    ADMIT_ACTION_WAIT,
    ADMIT_ACTION_TAIL_ADMIT,
    ADMIT_ACTION_TAIL_WAIT,
};

enum admit_reason {
    ADMIT_REASON_NONE = 0,       /* ADMIT, FINISH, TAIL_ADMIT */
    ADMIT_REASON_QUEUE_MISSING,  /* "queue q does not exist" */
    ADMIT_REASON_QUEUE_CLOSED,   /* "queue q is Closed" */
    ADMIT_REASON_INVALID,        /* the RayCluster's gang could not be computed */
    ADMIT_REASON_PODS,           /* "waiting for pods: 2 of 3 created" */
    ADMIT_REASON_BLOCKED,        /* fifo queue, behind a gang that does not fit */
    ADMIT_REASON_QUEUE_CAPACITY, /* "... does not fit queue q: cpu needs 3, 1 of 4 free" */
    ADMIT_REASON_NODES,          /* "... does not fit the nodes: no node fits pod ..." */
    ADMIT_REASON_EVICTED,        /* evicted (evict.h): its old pods are being deleted, or its requeue backoff runs */
    ADMIT_REASON_DEACTIVATED,    /* evicted as often as the requeue limit allows, its spec unchanged since */
    ADMIT_REASON_QUEUE_NOT_LEAF, /* "queue eng has children (train, infer): only leaf queues hold gangs" (qtree.h) */
    ADMIT_REASON_QUEUE_BAD_TREE, /* "queue a is in a cycle: treated as Closed" (queuetree.h) */
    ADMIT_REASON_QUEUE_TREE,     /* "... does not fit queue train: queue eng (parent of train): cpu 16 of 16 allocated": an
                                    ancestor's capability, or room guaranteed to another queue (qtree_fits) */
    ADMIT_REASON_TOPOLOGY, /* "... needs nvidia.com/gpu 16 in one rack domain; largest free domain: r2 with nvidia.com/gpu 12 (...)"
                              (topoplace.h): no domain of a hard constraint holds a set */
    ADMIT_REASON_DISPATCH_LEASE, /* "gang ray-x-pg waits: its dispatch lease (raygate.io/dispatch-lease) was not renewed for 25s
                                    (lease 20s) ...", or its lease annotations do not parse (dispatchlease.h) */
    ADMIT_REASON_DEVICES,        /* "gang ray-x-pg waits: its devices cannot be counted: resourceclaimtemplate one-gpu not found
                                    in ns" (devices.h): a claim template, claim or DeviceClass not seen, or allocationMode All */
};

/* A pod to ungate (or, for TAIL_WAIT, a pod that waits). Its names belong to the result. */
struct admit_pod {
    char *name;
    char *uid;
    char *resource_version;
    int head;           /* the Ray head (ray.io/node-type head): its gate goes first */
    json_t *keep_gates; /* new: the pod's spec.schedulingGates without ours ([{"name": ...}]); NULL when none */
    char *message;      /* TAIL_WAIT: why this pod waits (owned); otherwise NULL */
    json_t *confine;    /* new: merged into the pod's spec with the gate's removal, keeping it in its topology domain
                           (topoconfine.h: {"nodeSelector": {...}} or {"affinity": {...}}); NULL: none */
};

/* A decision; namespace_ to queue belong to the result, message to the decision. */
struct admit_decision {
    enum admit_action action;
    enum admit_reason reason;
    char *namespace_;
    char *cluster;     /* RayCluster name */
    int legacy;        /* the RayCluster is the legacy operator's (cluster.ray.io/v1, legacy.h), not KubeRay's */
    char *cluster_uid; /* may be NULL */
    char *gang;        /* "ray-<cluster>-pg" */
    char *queue;
    char *message;  /* WAIT/TAIL_WAIT: the reason; otherwise the Normal event text */
    char *topology; /* ADMIT of a topology-constrained gang: the value of its raygate.io/topology-placed annotation
                       (topoconfine_record(), owned by the decision); else NULL */
    int spread;     /* ADMIT: a soft topology constraint found no domain; the gang was placed across domains */
    struct admit_pod *pods;
    size_t npods;
    size_t pods_cap;
};

struct admit_chunk;

struct admit_result {
    struct admit_decision *items;
    size_t len;
    size_t cap;
    struct admit_chunk *strings; /* where the names of decisions, pods and queues live, freed with the result */
    /* What the pass looked at: the queues it evaluated (their gangs' PodGroups and their status may change), by name. */
    char **queues;
    size_t queues_evaluated; /* the length of queues */
    size_t queues_cap;
    size_t gangs_evaluated;
};

/* Initialises an empty result in caller-owned storage. */
void admit_result_init(struct admit_result *r);

/* Releases the decisions; r may be NULL. */
void admit_result_finish(struct admit_result *r);

/* n bytes that live as long as r (never moved). */
char *admit_result_alloc(struct admit_result *r, size_t n);

/*
 * Appends a decision on gang g with message (steals; may be NULL) and no pods:
 * its namespace, cluster, uid, "ray-<cluster>-pg" and queue copied into r.
 * Returns it (valid until the next append).
 */
struct admit_decision *admit_result_add(struct admit_result *r, enum admit_action action, enum admit_reason reason,
                                        const struct cache_gang *g, char *message);

/* Appends pod (its names and the gates other than ours, copied) to d, a decision of r, with no message. */
void admit_result_add_pod(struct admit_result *r, struct admit_decision *d, const struct cache_pod *pod);

/* Appends queue name (copied) to the queues r evaluated. */
void admit_result_add_queue(struct admit_result *r, const char *name);

/*
 * The JSON merge patch that removes our gate from p (new reference):
 * {"metadata":{"resourceVersion":...},"spec":{"schedulingGates":[...rest]}},
 * with p->confine's members merged into "spec".
 * The apiserver rejects it with 409 if the pod changed since.
 */
json_t *admit_result_ungate_patch(const struct admit_pod *p);

/* "admit", "finish", "wait", "tail-admit", "tail-wait". */
const char *admit_result_action_name(enum admit_action action);

/*
 * "", "queue-missing", "queue-closed", "invalid", "pods", "blocked", "queue-capacity", "nodes", "evicted", "deactivated",
 * "queue-not-leaf", "queue-bad-tree", "queue-tree", "topology", "dispatch-lease".
 */
const char *admit_result_reason_name(enum admit_reason reason);

#endif
