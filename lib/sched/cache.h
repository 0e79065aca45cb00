/*
 * cache: the gate controller's in-memory model of the cluster, holding only
 * what admission decisions need (see admit.h for the decisions).
 *
 * Objects go in as the API returns them from list and watch (borrowed json_t);
 * each upsert extracts what decisions use once, so a decision pass runs on plain
 * C structs. Pure: no I/O, no threads, no clock.
 *
 * Memory is kept small (the target is <= 1 KB per cached pod): label values,
 * namespaces, node names and resource names are interned and compared by
 * pointer; resource lists and scheduling constraints (nodeSelector, required
 * node affinity, tolerations) are interned too, so the pods of one worker group
 * share one copy.
 *
 * Objects:
 * - node: labels, NoSchedule/NoExecute taints, allocatable, Ready and
 *   schedulable, and the requests of every non-terminated pod bound to it (any
 *   pod, not only Ray pods);
 * - pod: what is listed in struct cache_pod;
 * - gang: one per RayCluster namespace/name that is cached or still has pods.
 *   It outlives its RayCluster while the cluster's pods exist, because an
 *   admitted gang holds queue capability until its pods are gone;
 * - queue: a Volcano Queue (scheduling.volcano.sh/v1beta1), or a name gangs
 *   refer to that does not exist.
 *
 * The structs are public so that admit.c and the controller can read them;
 * only cache.c writes them: other modules change the cache through the
 * functions below and walk it with its iterators (cache_queue_for_each(),
 * cache_node_for_each(), cache_queue_for_each_gang(), cache_gang_for_each_pod()),
 * and keep their own state beside it (admit.h: a pass's state is struct
 * admit's). Pointers into the cache stay valid until the next upsert, delete
 * or cache_destroy().
 */
#ifndef RAYGATE_CACHE_H
#define RAYGATE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "evict.h"
#include "gang.h"
#include "quantity.h"
#include "names.h"
#include "shape.h"
#include "table.h"

struct cache_node {
    struct table_node by_name;
    const char *name; /* interned */
    uint8_t present;  /* the Node object is cached (else only pods bound to it are) */
    uint8_t ready;    /* condition Ready is True */
    uint8_t unschedulable;
    uint32_t nlabels;
    struct shape_label *labels;
    uint32_t ntaints;
    struct shape_taint *taints;
    const struct cache_rl *allocatable; /* NULL: nothing */
    int64_t alloc_pods;                 /* allocatable "pods" */
    /* Requests of the non-terminated pods bound here, dense by resource id. */
    int64_t *used;
    uint32_t nused;
    int64_t used_pods;
    size_t bound; /* pods counted in used */
};

enum cache_phase {
    CACHE_PHASE_PENDING = 0, /* also unknown or absent */
    CACHE_PHASE_RUNNING,
    CACHE_PHASE_SUCCEEDED,
    CACHE_PHASE_FAILED,
};

enum {
    CACHE_POD_GATED = 1 << 0,          /* spec.schedulingGates holds raygate.io/gang */
    CACHE_POD_DELETING = 1 << 1,       /* metadata.deletionTimestamp is set */
    CACHE_POD_MARKED_UNGATED = 1 << 2, /* cache_pod_mark_ungated(): kept for the pod's uid, whatever version follows */
    CACHE_POD_BAD_REQUEST = 1 << 3,    /* its request did not parse; counted as empty */
    CACHE_POD_TOLD = 1 << 4,           /* its gang's current wait reason was reported on it (cache_pod_mark_told) */
};

struct cache_gang;

struct cache_pod {
    struct table_node by_name;
    struct table_node by_uid;
    struct cache_pod *gang_prev, *gang_next; /* the pods of its gang */
    struct cache_pod *resv_prev, *resv_next; /* the cache's list of reserving pods */
    char *strings;                           /* owned: "name\0uid\0resourceVersion\0" */
    const char *name, *uid, *resource_version; /* into strings */
    const char *namespace_;                  /* interned */
    const char *cluster;                     /* interned ray.io/cluster label, or NULL */
    const char *queue;                       /* interned volcano.sh/queue-name label, or NULL */
    const char *node_type;                   /* interned ray.io/node-type label, or NULL */
    const char *group;                       /* interned ray.io/group label, or NULL */
    const char **foreign_gates;              /* owned array of interned names: gates other than ours */
    uint32_t nforeign_gates;
    uint8_t phase;                           /* enum cache_phase */
    uint8_t flags;
    uint8_t reserving;                       /* on the reserving list */
    int32_t priority;                        /* spec.priority */
    int64_t created;                         /* metadata.creationTimestamp, Unix seconds */
    uint8_t ready;                           /* condition Ready is True */
    int64_t ready_changed;                   /* condition Ready's lastTransitionTime, Unix seconds; 0: unknown */
    int64_t scheduled_at;                    /* condition PodScheduled "True": its lastTransitionTime; 0: unknown */
    const char *unschedulable;               /* interned message of condition PodScheduled "False", or NULL */
    struct cache_node *node;                 /* spec.nodeName's node, or NULL when unbound */
    struct cache_node *counted;              /* the node whose used includes this pod, or NULL */
    struct cache_gang *gang;                 /* gang of (namespace, cluster), or NULL */
    const struct cache_rl *request;          /* effective request, or NULL when empty */
    const struct shape_sched *sched;         /* scheduling constraints, or NULL when none */
};

enum cache_dequeue {
    CACHE_DEQUEUE_TRAVERSE = 0, /* a gang that does not fit does not block (default) */
    CACHE_DEQUEUE_FIFO,         /* a complete gang that does not fit blocks those behind it */
};

struct cache_queue {
    struct table_node by_name;
    const char *name; /* interned */
    uint8_t present;
    uint8_t dequeue;  /* enum cache_dequeue */
    uint8_t dirty;    /* its decisions may have changed since the last pass (cache_queue_mark_clean) */
    const char *state; /* interned status.state; NULL or "" is Open */
    const struct cache_rl *capability; /* NULL: unlimited */
    char *placement_timeout;           /* owned annotation raygate.io/placement-timeout, or NULL (evict.h) */
    char *pods_ready_timeout;          /* owned annotation raygate.io/pods-ready-timeout, or NULL */
    struct cache_gang *gangs;          /* gangs naming this queue */
    size_t ngangs;
    size_t node_waiters; /* its gangs on the cache's node_waiters list */
    /* Preemption and reclaim (preempt.h). */
    const struct cache_rl *deserved; /* spec.deserved; NULL: none (it neither reclaims nor is reclaimed from) */
    uint8_t reclaimable;             /* spec.reclaimable is not false */
    const char *preemption;          /* interned annotation raygate.io/preemption (preempt_policy_parse), or NULL */
};

/* A worker group's share of a gang: its pods counted in minMember. */
struct cache_group {
    const char *name; /* interned groupName (the pods' ray.io/group label), or NULL */
    int64_t pods;
};

struct cache_gang {
    struct table_node by_name;
    struct cache_gang *all_prev, *all_next;     /* every gang */
    struct cache_gang *pre_prev, *pre_next;     /* the cache's list of gangs whose preempted_by is set (cache.preempted) */
    struct cache_gang *queue_prev, *queue_next; /* the gangs of its queue */
    struct cache_gang *nw_prev, *nw_next;       /* the cache's list of gangs waiting on node room */
    uint8_t node_wait;                          /* on that list (cache_gang_set_node_wait) */
    const char *namespace_;                     /* interned */
    const char *name;                           /* interned RayCluster name */
    struct cache_pod *pods;      /* pods labelled with the cluster, any state, oldest first (then by name) */
    struct cache_pod *pods_tail; /* the newest */
    size_t npods;
    struct cache_queue *queue; /* its queue label's queue; kept after the cluster is deleted */
    /* The RayCluster, while present. */
    uint8_t present;
    uint8_t spec_ok;     /* the gang arithmetic succeeded */
    uint8_t admitted;    /* raygate.io/admitted-at is set (or cache_gang_mark_admitted) */
    uint8_t legacy;      /* the legacy operator's RayCluster (cluster.ray.io, legacy.h); its pods carry its labels */
    char *uid;           /* owned */
    char *resource_version; /* owned */
    char *admitted_at;   /* owned annotation value, or NULL */
    char *admit_mark_rv; /* owned: resourceVersion when marked admitted */
    char *spec_error;    /* owned: why the gang arithmetic failed, or NULL */
    const char *priority_class; /* interned ray.io/priority-class-name label, or NULL */
    int64_t generation;         /* metadata.generation: bumped by every change of its spec */
    struct evict_record record; /* its eviction record (raygate.io/requeue-count, ...), or all zero */
    char *record_error;         /* owned: why the record's annotations did not parse (then it is all zero), or NULL */
    char *evict_mark_rv;        /* owned: resourceVersion when marked evicted (cache_gang_mark_evicted) */
    const char *owner_name;     /* interned: the RayJob it was made for (rayjob_owner_of), or NULL */
    char *owner_uid;            /* owned: that RayJob's uid, or NULL */
    int64_t created;            /* creationTimestamp, Unix seconds */
    int64_t min_member;
    struct cache_group *groups;        /* owned: the gang's shape besides its head (see gang.h) */
    uint32_t ngroups;
    struct resources min_resources;    /* for messages, formats kept */
    const struct cache_rl *min_rl;     /* the same, interned; NULL when empty */
    /* The last reasons reported (admit_reason_changed(), through cache_gang_set_reason()). */
    int last_reason;
    char *last_message;
    int tail_reason;
    char *tail_message;
    /* The controller's monotonic ms when a pass first found the gang complete
       but waiting; 0 while incomplete or not yet seen waiting (cache_gang_set_complete_ms). */
    int64_t complete_ms;
    /* Preemption (preempt.h), from the RayCluster while present. */
    uint8_t preemptable; /* not volcano.sh/preemptable "false" (label or annotation) */
    char *preempted_by;  /* owned annotation raygate.io/preempted-by ("ns/name" of its last preemptor), or NULL; set by the cache only (on cache.preempted while set) */
};

struct cache {
    struct shape_pool shapes; /* interned strings, resource names, resource lists, scheduling constraints */
    struct table nodes;
    struct table pods;      /* by namespace/name */
    struct table pods_uid;  /* by uid */
    struct table gangs;
    struct table queues;
    struct cache_gang *all_gangs;
    struct cache_gang *preempted;    /* gangs whose preempted_by is set: the victims of preemptions (pre_next) */
    struct cache_gang *node_waiters; /* gangs whose last verdict waited on node room */
    struct cache_pod *reserving; /* admitted, live, ungated, unbound pods */
    size_t nreserving;
    uint8_t capacity_changed; /* room may have appeared on the nodes (cache_take_changes) */
    uint8_t nodes_changed;    /* the set or the properties of Ready nodes changed (cache_take_changes) */
    uint64_t generation;      /* bumped by every change */
    size_t nnodes_present;    /* nodes whose Node object is cached */
};

/* Creates an empty cache. */
struct cache *cache_create(void);

/* Frees the cache and everything in it; c may be NULL. */
void cache_destroy(struct cache *c);

/*
 * Inserts or replaces an object from its API JSON (borrowed), keyed by
 * metadata.namespace/metadata.name (nodes and queues: metadata.name).
 * Returns 0, or -1 with err when the object lacks a name (it is then ignored).
 * Fields that do not parse are taken as absent: the apiserver validated them.
 */
int cache_upsert_node(struct cache *c, const json_t *node, struct error *err);
int cache_upsert_pod(struct cache *c, const json_t *pod, struct error *err);
int cache_upsert_raycluster(struct cache *c, const json_t *raycluster, struct error *err);
int cache_upsert_queue(struct cache *c, const json_t *queue, struct error *err);

/* Removes an object by key; namespace_ is ignored for nodes and queues. Absent objects are fine. */
void cache_delete_node(struct cache *c, const char *name);
void cache_delete_pod(struct cache *c, const char *namespace_, const char *name);
void cache_delete_raycluster(struct cache *c, const char *namespace_, const char *name);
void cache_delete_queue(struct cache *c, const char *name);

/*
 * Removes the object a watch DELETED event carries (borrowed), by its kind:
 * "Node", "Pod", "RayCluster" or "Queue". Returns 0, or -1 for another kind.
 */
int cache_delete_object(struct cache *c, const json_t *obj);

/* Lookups; NULL when absent. */
struct cache_node *cache_node_get(const struct cache *c, const char *name);
struct cache_pod *cache_pod_get(const struct cache *c, const char *namespace_, const char *name);
struct cache_pod *cache_pod_by_uid(const struct cache *c, const char *uid);
struct cache_gang *cache_gang_get(const struct cache *c, const char *namespace_, const char *name);
struct cache_queue *cache_queue_get(const struct cache *c, const char *name);

/*
 * Records that our gate was removed from pod (the patch succeeded or is in
 * flight), before the watch shows it: the pod counts as admitted. The mark
 * lasts until an upsert brings a resourceVersion other than the one marked.
 */
void cache_pod_mark_ungated(struct cache *c, struct cache_pod *pod);

/*
 * Records that the gang's current wait reason was reported on pod (an Event).
 * Kept across updates of the same pod; admit_reason_changed() clears it on
 * every pod of the gang when the reason changes.
 */
void cache_pod_mark_told(struct cache_pod *pod);

/* Likewise for the raygate.io/admitted-at annotation of gang's RayCluster; at is its value. */
void cache_gang_mark_admitted(struct cache *c, struct cache_gang *gang, const char *at);

/*
 * Records that gang's eviction was written (evictor_record: the admission
 * withdrawn, rec in its annotations) before the watch shows it: the gang is
 * no longer admitted and has rec, until an upsert brings a resourceVersion
 * other than the one marked. Its pods' reservations end; its ungated pods
 * still count against its queue until they are gone.
 */
void cache_gang_mark_evicted(struct cache *c, struct cache_gang *gang, const struct evict_record *rec);

/*
 * Likewise, for an eviction by preemption (preempt.h): the record names its
 * preemptor by ("ns/name", copied) as raygate.io/preempted-by, kept until an
 * upsert brings a resourceVersion other than the one marked evicted.
 */
void cache_gang_mark_preempted(struct cache *c, struct cache_gang *gang, const char *by);

/*
 * Records whether the last pass that evaluated g left it (or its autoscaling
 * tail) waiting on node room: only such gangs can change their verdict when
 * room appears on the nodes while their queue is unchanged. Used by admit.c.
 */
void cache_gang_set_node_wait(struct cache *c, struct cache_gang *g, int on);

/* What the gang's PodGroup is named after (ray-<it>-pg): its RayJob's name for a RayJob's RayCluster, else its own. */
static inline const char *cache_gang_group(const struct cache_gang *g)
{
    return g->owner_name != NULL ? g->owner_name : g->name;
}

/* Whether a RayCluster's volcano.sh/preemptable label or annotation value (borrowed; NULL: absent) lets it be a victim. */
int cache_preemptable(const char *label, const char *annotation);

/* A pod is live (a gang member) when neither terminating nor Succeeded/Failed. */
int cache_pod_live(const struct cache_pod *pod);

/* Our gate is present (and not marked removed). */
int cache_pod_gated(const struct cache_pod *pod);

/* The name of resource id (interned). */
const char *cache_resource_name(const struct cache *c, uint32_t id);

/* Calls fn for every cached queue (present, or named by a gang), in no particular order. fn must not change c. */
void cache_foreach_queue(const struct cache *c, void (*fn)(struct cache_queue *q, void *arg), void *arg);

/*
 * Iterators, in no particular order; the cache must not change while one runs:
 *   struct cache_queue *q;
 *   cache_queue_for_each(q, c) { ... }
 * cache_queue_first/next and cache_node_first/next return NULL after the last.
 */
struct cache_queue *cache_queue_first(const struct cache *c);
struct cache_queue *cache_queue_next(const struct cache *c, const struct cache_queue *q);
struct cache_node *cache_node_first(const struct cache *c);
struct cache_node *cache_node_next(const struct cache *c, const struct cache_node *n);

#define cache_queue_for_each(q, c) for ((q) = cache_queue_first(c); (q) != NULL; (q) = cache_queue_next((c), (q)))
#define cache_node_for_each(n, c) for ((n) = cache_node_first(c); (n) != NULL; (n) = cache_node_next((c), (n)))
/* The gangs naming queue q, and the pods of gang g (oldest first). */
#define cache_queue_for_each_gang(g, q) for ((g) = (q)->gangs; (g) != NULL; (g) = (g)->queue_next)
#define cache_gang_for_each_pod(p, g) for ((p) = (g)->pods; (p) != NULL; (p) = (p)->gang_next)

/* Marks every queue for re-evaluation by the next incremental pass (a periodic resync). */
void cache_mark_all_dirty(struct cache *c);

enum {
    CACHE_CHANGED_CAPACITY = 1 << 0, /* room may have appeared on the nodes */
    CACHE_CHANGED_NODES = 1 << 1,    /* the set or the properties of the nodes changed */
};

/* What changed since the last call (CACHE_CHANGED_*; both after cache_create()), and forgets it. */
unsigned cache_take_changes(struct cache *c);

/* Clears q's dirty mark: a pass evaluated all its gangs. */
void cache_queue_mark_clean(struct cache *c, struct cache_queue *q);

/*
 * Records the last reason reported for g (tail: for its autoscaling tail):
 * reason (enum admit_reason) and a copy of message (NULL: none). Used by
 * admit_reason_changed().
 */
void cache_gang_set_reason(struct cache *c, struct cache_gang *g, int tail, int reason, const char *message);

/* Clears CACHE_POD_TOLD on every pod of g: its story changed, each is to be told again. */
void cache_gang_clear_told(struct cache *c, struct cache_gang *g);

/* Sets g->complete_ms (the controller's bookkeeping; see struct cache_gang). */
void cache_gang_set_complete_ms(struct cache *c, struct cache_gang *g, int64_t ms);

#endif
