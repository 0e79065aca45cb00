/*
 * podgroup: the Volcano-compatible status raygate keeps, as pure functions of
 * the cache (cache.h) and of what the API last showed: a PodGroup
 * (scheduling.volcano.sh/v1beta1) per gang, the status of every Queue, and the
 * reason tokens of the gauges that mirror them (gate/status/queuemetrics.h). No
 * I/O: the controller reads the
 * objects and writes what these functions return.
 *
 * PodGroup "ray-<cluster>-pg", in the RayCluster's namespace and controlled by
 * it (ownerReference, so that the garbage collector deletes it with the
 * RayCluster; KubeRay's ray.io/v1 or the legacy operator's cluster.ray.io/v1);
 * for a RayJob's RayCluster "ray-<rayjob>-pg", controlled by the
 * RayJob (as KubeRay's Volcano integration names it), so that it is kept across
 * the RayClusters KubeRay makes for the job and none is named after them:
 * - spec: minMember, minResources (zero quantities left out), queue and
 *   priorityClassName (the ray.io/priority-class-name label), from the gang;
 * - status.phase: Pending while not admitted, Inqueue once admitted, Running
 *   once minMember of its pods are Running;
 * - status.conditions, of Volcano's two types:
 *   - Unschedulable "True" while the gang waits, reason NotEnoughResources
 *     (the queue, a queue above it or the nodes are short, or a fifo queue's
 *     head blocks it), NotEnoughTasks (pods are missing), QueueNotFound,
 *     QueueClosed (also a queue in a bad tree), QueueNotLeaf (the queue has
 *     children) or InvalidSpec, message the wait reason the gang's Events carry; "False"
 *     (reason GangAdmitted) once admitted;
 *   - Scheduled "True" once admitted (reason Volcano's "tasks in the gang are
 *     ready to be scheduled", at the admission time recorded on the
 *     RayCluster), "False" if an admission is withdrawn;
 *   and raygate's own:
 *   - Evicted "True" once raygate took the gang back (evict.h), reason
 *     PlacementTimeout or PodsReadyTimeout, or Preempted or Reclaimed with
 *     the preemptor named in the message ("preempted by gang ns/x",
 *     preempt.h), at the eviction's time, until it is admitted again
 *     ("False", reason Readmitted); meanwhile Unschedulable says Evicted
 *     (with until when it waits) or Deactivated;
 *   - Preempting "True" on a preemptor while the room its victims free is
 *     held for it (preempthold.h), message naming the victims; "False" once
 *     not (reason Admitted, or NotPreempting when it waits in order again);
 *   lastTransitionTime and transitionID change only when a condition's status
 *   does; conditions of other types are kept as they are;
 * - status.running, succeeded, failed: the gang's pods by phase (terminating
 *   pods are not running); zero counts are left out, as Volcano leaves them;
 * - metadata.annotations (names.h), raygate's reason in a form programs read,
 *   since the condition's reason is Volcano's and its message is for people:
 *   raygate.io/wait-reason, admit_result_reason_name() of why the gang waits, while
 *   it is not admitted and a decision was taken; with "pods",
 *   raygate.io/wait-pods-created, how many of its members exist ("2"). Both
 *   are removed once they no longer apply; other annotations are left alone.
 *
 * Queue status: running, inqueue and pending count the queue's PodGroups in
 * those phases (zero counts left out), allocated is what its admitted gangs
 * hold (admit_gang_hold: what admission charges them with; a queue with
 * children: its subtree's); deserved, deservedDerived, share and treeError
 * show its place in the queue tree (qtree.h); state is set to Open only when
 * it is empty. Other fields are left alone.
 */
#ifndef RAYGATE_PODGROUP_H
#define RAYGATE_PODGROUP_H

#include <stdint.h>

#include <jansson.h>

#include "admit.h"
#include "cache.h"
#include "qtree.h"
#include "resources.h"

#define PODGROUP_GROUP_VERSION "scheduling.volcano.sh/v1beta1"
#define PODGROUP_REASON_SCHEDULED "tasks in the gang are ready to be scheduled"

enum podgroup_phase {
    PODGROUP_PHASE_PENDING = 0,
    PODGROUP_PHASE_INQUEUE,
    PODGROUP_PHASE_RUNNING,
};

/* What a PodGroup shows of a gang. Strings are borrowed. */
struct podgroup_gang {
    const char *namespace_;
    const char *cluster;        /* the RayCluster's name */
    const char *cluster_uid;    /* its uid; NULL: unknown, no PodGroup is written */
    const char *rayjob;         /* the RayJob it was made for (rayjob.h), or NULL: then the PodGroup is */
    const char *rayjob_uid;     /* ray-<rayjob>-pg, owned by the RayJob (uid not NULL), not the cluster's */
    int legacy;                 /* the RayCluster is the legacy operator's (cluster.ray.io/v1): the owner's apiVersion */
    const char *queue;          /* NULL: none */
    const char *priority_class; /* NULL: none */
    int spec_ok;                /* minMember and minResources are known */
    int64_t min_member;
    const struct resources *min_resources; /* NULL: none */
    int admitted;
    const char *admitted_at;            /* RFC 3339 admission time, or NULL */
    const struct evict_record *record;  /* its eviction record (evict.h), or NULL */
    const char *preempted_by;           /* raygate.io/preempted-by: "ns/name" of the gang that preempted it last, or NULL */
    const char *preempting;             /* a preemptor whose room is held: its victims ("ns/a, ns/b"), else NULL (the
                                           controller sets it from admit_held(); not from the cache) */
    enum admit_reason reason;           /* why it waits (not admitted); NONE: no decision yet */
    const char *message;                /* the wait message, or NULL */
    int64_t pods_created;               /* reason PODS: the members that exist (admit_gang_members) */
    int64_t running, succeeded, failed; /* pods by phase */
    const char *native;                 /* what kube-scheduler says of its native PodGroup (nativegang_describe), or NULL:
                                           the Scheduled condition's message adds it (not from the cache: the caller sets it) */
};

/* Whether a cached gang has a PodGroup: its RayCluster is cached and names a queue. */
int podgroup_wanted(const struct cache_gang *g);

/* Fills out from a cached gang; strings are borrowed from the cache (valid until its next change). */
void podgroup_gang_from_cache(const struct cache_gang *g, struct podgroup_gang *out);

/*
 * A fingerprint of everything podgroup_sync() reads of g, but min_resources,
 * which only a change of the RayCluster's spec moves: that and every other
 * change of the RayCluster (its annotations: admission time, eviction record,
 * preempted-by) moves cluster_rv, its resourceVersion (NULL: none), which is
 * hashed in. Equal fingerprints and an unchanged PodGroup give the same
 * answer, so a caller that compared at one may skip the next (status.c).
 */
uint64_t podgroup_gang_fingerprint(const struct podgroup_gang *g, const char *cluster_rv);

enum podgroup_phase podgroup_phase_of(const struct podgroup_gang *g);

/* "Pending", "Inqueue", "Running". */
const char *podgroup_phase_name(enum podgroup_phase phase);

enum podgroup_write {
    PODGROUP_WRITE_NONE = 0, /* the PodGroup is as it should be */
    PODGROUP_WRITE_CREATE,   /* *body: the whole object to POST */
    PODGROUP_WRITE_PATCH,    /* *body: a JSON merge patch of raygate's fields */
    PODGROUP_WRITE_FOREIGN,  /* controlled by another owner (an earlier RayCluster of that name, being
                                garbage-collected): left alone */
};

/*
 * What to write so that the PodGroup shows g, given the PodGroup the API
 * showed last (borrowed; NULL when there is none). now (RFC 3339) stamps the
 * conditions whose status changes, except admission's, stamped with
 * g->admitted_at. Sets *body to a new reference for CREATE and PATCH, NULL
 * otherwise. A patch carries only what differs: spec and status fields named
 * above, our annotations, and metadata.ownerReferences when ours is missing.
 */
enum podgroup_write podgroup_sync(const struct podgroup_gang *g, const json_t *observed, const char *now, json_t **body);

/* The parts of a PodGroup (borrowed) that podgroup_sync reads, as a new object sharing nothing with it: what the controller keeps.
 */
json_t *podgroup_trim(const json_t *podgroup);

/* ---- Queue status ---- */

/* Which fields of a struct podgroup_queue_status are set: podgroup_queue_patch() compares and writes only those. */
enum {
    PODGROUP_QUEUE_COUNTS = 1 << 0,    /* running, inqueue, pending */
    PODGROUP_QUEUE_ALLOCATED = 1 << 1, /* allocated */
    PODGROUP_QUEUE_TREE = 1 << 2,      /* deserved, deserved_derived, share, tree_error */
};

/* Longest share string, NUL included. */
#define PODGROUP_SHARE_MAX 32

struct podgroup_queue_status {
    unsigned fields;                     /* PODGROUP_QUEUE_* */
    int64_t running, inqueue, pending;   /* its own PodGroups by phase */
    struct resources allocated;          /* what it holds; a queue with children (or the root queue): its subtree */
    struct resources deserved;           /* its effective deserved: spec.deserved, or derived by weight */
    int deserved_derived;                /* deserved was derived (spec.deserved unset) */
    double share;                        /* qtree_share(); negative: none (the root queue) */
    char share_text[PODGROUP_SHARE_MAX]; /* status.share: "0.50"; "inf" when it deserves nothing and holds something */
    char *tree_error;                    /* owned: why it is outside the tree (then treated as Closed), or NULL */
};

void podgroup_queue_status_init(struct podgroup_queue_status *st);
void podgroup_queue_status_finish(struct podgroup_queue_status *st);

/*
 * Computes the counts and allocation of queue q of cache c into st
 * (initialised; those are overwritten, and set in st->fields). Returns 0, or
 * -1 with err when a sum overflows.
 */
int podgroup_queue_status(const struct cache *c, const struct cache_queue *q, struct podgroup_queue_status *st, struct error *err);

/*
 * Sets st's tree fields (PODGROUP_QUEUE_TREE) for queue i of t, a tree
 * built from c with every queue's alloc and demand added and deserved
 * derived (qtree.h): deserved (zero quantities left out) and whether it was
 * derived, share (qtree_share, two decimals) and tree_error for a bad queue:
 *   "its own parent: treated as Closed"
 *   "in a cycle of parents (a -> b -> a): treated as Closed"
 *   "parent x does not exist: treated as Closed"
 *   "under queue a, which is in a cycle of parents (a -> b -> a): treated as Closed"
 * For a queue with children, and the Queue named root, also allocated
 * (PODGROUP_QUEUE_ALLOCATED): its subtree's, from t; a leaf's is
 * podgroup_queue_status()'s. The root queue has no deserved and no share.
 * Quantities take the format of the queue's spec where it lists the
 * resource, else binary (Gi) for memory, ephemeral-storage and hugepages,
 * decimal for the rest.
 */
void podgroup_queue_tree(const struct qtree *t, size_t i, const struct cache *c, struct podgroup_queue_status *st);

/*
 * The JSON merge patch {"status": {...}} (new) that turns the Queue status the
 * API showed last (borrowed; NULL when none) into st, or NULL when nothing
 * differs. Only st->fields are compared (status.running, inqueue and pending;
 * allocated; deserved, deservedDerived, share and treeError); state is set
 * to Open when empty; other fields are left alone.
 */
json_t *podgroup_queue_patch(const json_t *observed_status, const struct podgroup_queue_status *st);

/* ---- discovery ---- */

enum {
    PODGROUP_CRD_PODGROUPS = 1 << 0,
    PODGROUP_CRD_PODGROUPS_STATUS = 1 << 1, /* a status subresource (Volcano's PodGroup has none) */
    PODGROUP_CRD_QUEUES = 1 << 2,
    PODGROUP_CRD_QUEUES_STATUS = 1 << 3,
};

/* The PODGROUP_CRD_* flags of the resources an APIResourceList (borrowed: GET /apis/scheduling.volcano.sh/v1beta1) names. */
unsigned podgroup_discovery(const json_t *resource_list);

/* ---- the reason label of the gauges (gate/status/queuemetrics.h) ---- */

/*
 * The short, stable token of why a gang waits, for the reason label:
 * queue_missing, queue_closed, invalid, incomplete, fifo_blocked,
 * queue_capability, node_fit, evicted, deactivated, queue_not_leaf,
 * queue_bad_tree, queue_tree; "unknown" before its first decision.
 */
const char *podgroup_reason_token(enum admit_reason reason);

/* How many tokens there are: enum admit_reason's values 0 .. PODGROUP_REASON_TOKENS - 1. */
#define PODGROUP_REASON_TOKENS 16

#endif
