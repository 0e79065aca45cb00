/*
 * model: what the gate controller's cache (cache.h) keeps of each API object
 * (Node, Pod, RayCluster, Queue), and how it is read from the object's JSON.
 *
 * The structs are the cache's: cache.c indexes and links them and keeps the
 * counts that span objects (a node's bound pods, a queue's gangs, the
 * reserving pods); model.c fills and empties the fields read from one
 * object's JSON (borrowed), interning through the cache's shape pool. Nothing
 * else writes them (cache.h). Pure.
 */
#ifndef RAYGATE_MODEL_H
#define RAYGATE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dispatchlease.h"
#include "evict.h"
#include "gangclaims.h"
#include "resources.h"
#include "shape.h"
#include "topology.h"

/*
 * A pod's or a gang's device claims (DRA, gangclaims.h), read with its object;
 * devices.h prices them into its request or minResources. Owned by its pod or gang.
 */
struct cache_devices {
    struct gangclaims claims;
    const struct shape_rl *bare;  /* interned: the pod's request, or the gang's minResources, without devices */
    const struct shape_rl *fit;   /* interned: a pod's request plus its requests' variants (draset_template_fit), or NULL */
    const struct shape_rl *carry; /* interned: fit plus the shared claims it carries (sharedcarry.h), or NULL */
    struct resources bare_res;    /* the gang's minResources without devices (formats kept) */
    char *wait;                   /* owned: why its devices cannot be counted (yet), or NULL */
    uint64_t priced;              /* the draset's demand generation when priced */
};

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
    const struct shape_rl *allocatable; /* NULL: nothing */
    int64_t *foreign;                   /* requests of the counted pods outside any queue, dense by resource id (nused) */
    int64_t alloc_pods;                 /* allocatable "pods" */
    /* Requests of the non-terminated pods bound here, dense by resource id. */
    int64_t *used;
    uint32_t nused;
    int64_t used_pods;
    size_t bound;      /* pods counted in used */
    uint64_t room_gen; /* bumped whenever used or used_pods changes (fit.h reads again only the nodes whose changed) */
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
    CACHE_POD_UNBOUND = 1 << 5,        /* counted in its gang's nunbound (model_gang_insert_pod) */
    CACHE_POD_UNREADY = 1 << 6,        /* counted in its gang's nunready */
    CACHE_POD_OPEN = 1 << 7,           /* counted in its gang's nopen: live, our gate gone (model_gang_count_open) */
};

struct cache_gang;

/*
 * What is computed from a gang and its pods, kept while it stands: hold.h's sums of what the gang holds in its
 * queue, valid while the gang's version (cache_gang.version) is the one they were computed at. Allocated with the
 * gang; the computations fill it through the gang's (const) pointer.
 */
struct cache_gang_memo {
    uint64_t version;  /* the gang's version the sums are for */
    uint32_t nres;     /* the resources they are dense over */
    uint8_t have_held; /* held (hold_gang) is set */
    uint8_t have_ungated;
    int64_t *held;    /* owned: nres; hold_gang() without marks nor extra */
    int64_t *ungated; /* owned: nres; hold_ungated() without marks */
    uint64_t shown;   /* the version the gang's PodGroup was last compared at (model_gang_set_shown) */
    uint8_t have_shown;
    uint8_t have_phase; /* phase is set */
    uint8_t have_resources;
    int phase;                  /* its PodGroup's phase (podgroup.h), as the queue's counts see it */
    struct resources resources; /* owned: hold_resources() */
};

struct cache_pod {
    /* What an admission pass reads of every pod it weighs, first and in one cache line (the cache allocates pods on a
       64-byte boundary): at 10,000 gangs a pass walks 100,000 pods, and each line is a miss. */
    struct cache_pod *gang_next;     /* the pods of its gang */
    struct cache_node *node;         /* spec.nodeName's node, or NULL when unbound */
    const struct shape_rl *request;  /* effective request, or NULL when empty */
    const char *node_type;           /* interned ray.io/node-type label, or NULL */
    const char *group;               /* interned ray.io/group label, or NULL */
    const struct shape_sched *sched; /* scheduling constraints, or NULL when none */
    int64_t created;                 /* metadata.creationTimestamp, Unix seconds */
    uint8_t phase;                   /* enum cache_phase */
    uint8_t flags;
    uint8_t reserving; /* on the reserving list */
    uint8_t refused;   /* condition PodScheduled "False", reason Unschedulable: kube-scheduler found no node */
    int32_t priority;  /* spec.priority */
    /* The rest. */
    struct table_node by_name;
    struct table_node by_uid;
    struct cache_pod *gang_prev;
    size_t resv_at;                            /* while reserving: its index in the cache's reserving array */
    char *strings;                             /* owned: "name\0uid\0resourceVersion\0" */
    const char *name, *uid, *resource_version; /* into strings */
    const char *namespace_;                    /* interned */
    const char *cluster;                       /* interned ray.io/cluster label, or NULL */
    const char *queue;                         /* interned volcano.sh/queue-name label, or NULL */
    const char *replica;                       /* interned ray.io/worker-group-replica-name label (a multi-host replica), or NULL */
    const char *sched_group;                   /* interned spec.schedulingGroup.podGroupName (native gang), or NULL */
    const char **foreign_gates;                /* owned array of interned names: gates other than ours */
    uint32_t nforeign_gates;
    uint8_t ready;              /* condition Ready is True */
    int64_t ready_changed;      /* condition Ready's lastTransitionTime, Unix seconds; 0: unknown */
    int64_t scheduled_at;       /* condition PodScheduled "True": its lastTransitionTime; 0: unknown */
    const char *unschedulable;  /* interned message of condition PodScheduled "False", or NULL */
    struct cache_node *counted; /* the node whose used includes this pod, or NULL */
    struct cache_gang *gang;    /* gang of (namespace, cluster), or NULL */
    struct cache_devices *dev;  /* owned: its device claims (devices.h), or NULL when it names none */
};

enum cache_dequeue {
    CACHE_DEQUEUE_TRAVERSE = 0, /* a gang that does not fit does not block (default) */
    CACHE_DEQUEUE_FIFO,         /* a complete gang that does not fit blocks those behind it */
};

struct cache_queue {
    struct table_node by_name;
    const char *name; /* interned */
    uint8_t present;
    uint8_t dequeue;                   /* enum cache_dequeue */
    uint8_t dirty;                     /* its decisions may have changed since the last pass (cache_queue_mark_clean) */
    const char *state;                 /* interned status.state; NULL or "" is Open */
    const struct shape_rl *capability; /* NULL: unlimited */
    char *placement_timeout;           /* owned annotation raygate.io/placement-timeout, or NULL (evict.h) */
    char *pods_ready_timeout;          /* owned annotation raygate.io/pods-ready-timeout, or NULL */
    struct cache_gang *gangs;          /* gangs naming this queue */
    size_t ngangs;
    size_t node_waiters; /* its gangs on the cache's node_waiters list */
    /* Preemption and reclaim (preempt.h). */
    const struct shape_rl *deserved; /* spec.deserved; NULL: none (it neither reclaims nor is reclaimed from) */
    uint8_t reclaimable;             /* spec.reclaimable is not false */
    const char *preemption;          /* interned annotation raygate.io/preemption (preempt_policy_parse), or NULL */
    uint8_t reclaim_by_weight;       /* annotation raygate.io/reclaim-by-weight is "true" (preempt.h) */
    /* The tree (qtree.h). */
    const char *parent;               /* interned spec.parent, or NULL: a child of the root ("" and "root" too) */
    const struct shape_rl *guarantee; /* spec.guarantee.resource; NULL: none */
    uint32_t weight;                  /* spec.weight; 1 when unset or negative, as in Volcano */
    /* Bumped by every change of one of its gangs (model_gang_touch) and when a gang joins or leaves it. */
    uint64_t version;
    struct cache_queue_memo *memo; /* owned, allocated with the queue: model_queue_memo() */
};

/*
 * What a queue's gangs hold and ask for, as treepass_load() sums them for a
 * queue the pass does not evaluate (treepass.h): valid while the queue's
 * version is the one they were computed at, over nres resources. The
 * computations fill it through the queue's pointer.
 */
struct cache_queue_memo {
    uint64_t version;
    uint32_t nres;
    uint8_t valid;
    int64_t *alloc, *demand; /* owned: nres each */
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
    struct cache_gang *early_prev, *early_next; /* the cache's early list (model_gang_early_link) */
    uint8_t on_early;                           /* on it */
    const char *namespace_;                     /* interned */
    const char *name;                           /* interned RayCluster name */
    struct cache_pod *pods;                     /* pods labelled with the cluster, any state, oldest first (then by name) */
    size_t ndev;                                /* of those, the ones with device claims (pod->dev) */
    struct cache_pod *pods_tail;                /* the newest */
    size_t npods;
    /* Of those, the live ones unbound, and bound but not Ready: what eviction times (evictscan.h skips a gang with none). */
    size_t nunbound, nunready;
    /* Of those, the live ones without our gate (or marked ungated): an admitted gang with fewer than minMember has
     * members still to come or to ungate (early.h). */
    size_t nopen;
    size_t nlive; /* its live pods */
    /* The cache's clock (cache_set_clock) when nlive last fell below minMember; 0: it has not, or the clock was unknown. */
    int64_t short_since_ms;
    struct cache_queue *queue; /* its queue label's queue; kept after the cluster is deleted */
    /* The RayCluster, while present. */
    uint8_t present;
    uint8_t spec_ok;            /* the gang arithmetic succeeded */
    uint8_t admitted;           /* raygate.io/admitted-at is set (or cache_gang_mark_admitted) */
    uint8_t legacy;             /* the legacy operator's RayCluster (cluster.ray.io, legacy.h); its pods carry its labels */
    uint8_t held;               /* raygate.io/held-suspended "true" (heldsuspend.h): its suspend goes with its admission;
                                   0 once released (then a gated gang) */
    uint8_t release_on_wait;    /* held, and released when it must wait (raygate.io/held-release "on-wait") */
    char *uid;                  /* owned */
    char *resource_version;     /* owned */
    char *admitted_at;          /* owned annotation value, or NULL */
    char *admit_mark_rv;        /* owned: resourceVersion when marked admitted */
    char *topo_placed;          /* owned annotation raygate.io/topology-placed (topoconfine.h), or NULL */
    char *spec_error;           /* owned: why the gang arithmetic failed, or NULL */
    const char *priority_class; /* interned ray.io/priority-class-name label, or NULL */
    int64_t generation;         /* metadata.generation: bumped by every change of its spec */
    struct evict_record record; /* its eviction record (raygate.io/requeue-count, ...), or all zero */
    char *record_error;         /* owned: why the record's annotations did not parse (then it is all zero), or NULL */
    char *evict_mark_rv;        /* owned: resourceVersion when marked evicted (cache_gang_mark_evicted) */
    const char *owner_name;     /* interned: the RayJob it was made for (rayjob_owner_of), or NULL */
    char *owner_uid;            /* owned: that RayJob's uid, or NULL */
    int64_t created;            /* creationTimestamp, Unix seconds */
    int64_t min_member;
    int64_t native_count;       /* of those, the pods that name its native PodGroup: its minCount (gang.h) */
    struct topo_request *topo;  /* owned: where its pods are to lie (topology.h), or NULL when it asks nothing */
    struct cache_group *groups; /* owned: the gang's shape besides its head (see gang.h) */
    uint32_t ngroups;
    struct resources min_resources; /* for messages, formats kept */
    const struct shape_rl *min_rl;  /* the same, interned; NULL when empty */
    struct cache_devices *dev;      /* owned: its templates' device claims (devices.h), or NULL when they name none */
    uint8_t carried;                /* one of its pods carried a shared claim at the last sharedcarry_prepare() */
    /* Bumped by every change of the gang or of its pods (model_gang_touch): what memo keeps is valid while it stands. */
    uint64_t version;
    struct cache_gang_memo *memo; /* owned */
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
    char *preempted_by;  /* owned annotation raygate.io/preempted-by ("ns/name" of its last preemptor), or NULL; set by the cache
                            only (on cache.preempted while set) */
    /* Dispatched from a manager (dispatchlease.h): its lease as this gate saw it, from the RayCluster while present (cache's
       clock: cache_set_clock); NULL when it carries none. Owned. */
    struct dispatchlease *lease;
};

/* An RFC 3339 UTC time as the apiserver writes it (NULL fine); 0 when absent or malformed. */
int64_t model_parse_time(const char *s);

/* ---- nodes ---- */

/* fresh (overwritten) from a Node (borrowed): labels sorted by key, NoSchedule/NoExecute taints, allocatable, Ready. */
void model_node_parse(struct shape_pool *p, struct cache_node *fresh, const json_t *obj);

/* Whether a and b have the same parsed properties (interned: compared by pointer). */
int model_node_same(const struct cache_node *a, const struct cache_node *b);

/* Releases what model_node_parse set on node, leaving it as a node without an object. */
void model_node_clear(struct shape_pool *p, struct cache_node *node);

/* Adds (sign 1) or takes (-1) a pod's request (NULL: none) to node's used, and one pod. */
void model_node_account(struct cache_node *node, const struct shape_rl *req, int sign, int foreign);

/* ---- queues ---- */

/*
 * What preemption reads of a Queue (borrowed; NULL: deleted): spec.deserved,
 * spec.reclaimable, the raygate.io/preemption annotation. Returns whether it changed.
 */
int model_queue_parse_preemption(struct shape_pool *p, struct cache_queue *q, const json_t *obj);

/*
 * What the queue tree (qtree.h) reads of a Queue (borrowed; NULL: deleted):
 * spec.parent, spec.guarantee.resource, spec.weight. Returns whether it changed.
 */
int model_queue_parse_tree(struct shape_pool *p, struct cache_queue *q, const json_t *obj);

/* Releases what q holds (its shapes, annotations and memo); not its name, nor q itself (cache.c's). */
void model_queue_release(struct shape_pool *p, struct cache_queue *q);

/*
 * q's memo (cache_queue_memo), its two arrays sized for nres; sets *valid
 * when they hold the sums of q as it stands (its version), else they are the
 * caller's to fill and model_queue_memo_done(q, keep) to record: keep 0 when
 * what was filled is not q's alone (the pass's marks applied).
 */
struct cache_queue_memo *model_queue_memo(const struct cache_queue *q, uint32_t nres, int *valid);
void model_queue_memo_done(const struct cache_queue *q, int keep);

/* The eviction timeouts a Queue's annotations (borrowed; NULL: none) set (evict.h); parsed where they are used. */
void model_queue_set_timeouts(struct cache_queue *q, const json_t *annotations);

/* ---- gangs (RayClusters) ---- */

/*
 * The raygate.io/admitted-at annotation of metadata (borrowed) into
 * g->admitted_at, and raygate.io/topology-placed into g->topo_placed. Our own
 * admission stands until the watch brings a version newer than the one we
 * marked (cache_gang_mark_admitted): meanwhile both are kept.
 */
void model_gang_parse_admitted(struct cache_gang *g, const json_t *meta);

/* g->admitted_at, g->topo_placed: set to a copy of at, placed (borrowed; NULL: none). */
void model_gang_set_admitted(struct cache_gang *g, const char *at);
void model_gang_set_placed(struct cache_gang *g, const char *placed);

/* Frees g->admitted_at and g->topo_placed (the admission and where it placed the gang), leaving both NULL. */
void model_gang_clear_admitted(struct cache_gang *g);

/*
 * The generation and eviction record (evict.h) of metadata (borrowed). Our
 * own eviction stands until the watch brings a version newer than the one we
 * marked (cache_gang_mark_evicted): meanwhile the gang is not admitted.
 */
void model_gang_parse_eviction(struct cache_gang *g, const json_t *meta);

/* The gang arithmetic of the RayCluster (borrowed; a RayJob's submitter included): minMember, groups, minResources. */
void model_gang_parse_spec(struct shape_pool *p, struct cache_gang *g, const json_t *obj);

/*
 * Links pod into g's pods, in creation order (then by name), counting it in
 * g->nunbound when it is live and unbound (pod->node is set first), in
 * g->nunready when live, bound and not Ready, in g->nopen when live and not gated; pod->gang and g->npods are the
 * caller's. A pod's state changes only between model_gang_remove_pod() and the next insert (but for
 * cache_pod_mark_ungated(), which calls model_gang_count_open()).
 */
void model_gang_insert_pod(struct cache_gang *g, struct cache_pod *pod);

/* Stamps g->short_since_ms with now_ms when its live pods fall below minMember; clears it once they do not (evictscan.h). */
void model_gang_short_update(struct cache_gang *g, int64_t now_ms);

/* Marks g changed (its version): what was computed from it and its pods is computed again. */
void model_gang_touch(struct cache_gang *g);

/*
 * The early list (cache.early, linked by early_next): the gangs an admission
 * pass may keep node room for before their members exist or are ungated
 * (early.h), so that it reads those and not every gang. It holds every gang
 * changed (cache_gang_mark_changed, which every change of a gang or of its
 * pods goes through) since model_gang_early_prune last saw it, and those it
 * kept: a superset of the gangs keep() says yes to, while keep() reads only
 * the gang. A gang is taken off it when it is freed. link and unlink are
 * no-ops for a gang already on it, or not on it.
 */
void model_gang_early_link(struct cache_gang **head, struct cache_gang *g);
void model_gang_early_unlink(struct cache_gang **head, struct cache_gang *g);
/* Takes off the list every gang keep() says no to (0). */
void model_gang_early_prune(struct cache_gang **head, int (*keep)(const struct cache_gang *g));

/* Frees g's memo (the gang is freed). */
void model_gang_memo_free(struct cache_gang *g);

enum model_memo_sum {
    MODEL_MEMO_HELD = 0, /* hold_gang() without marks nor extra */
    MODEL_MEMO_UNGATED,  /* hold_ungated() without marks */
};

/*
 * The buffer (nres, dense) of g's memo for sum which, made current for g's version and nres; *valid says whether it
 * holds the sum already. Else the caller computes it there and calls model_gang_memo_done(). g's memo is written
 * through its const pointer: it is a cache of what g determines.
 */
int64_t *model_gang_memo(const struct cache_gang *g, uint32_t nres, enum model_memo_sum which, int *valid);

/* The buffer model_gang_memo() gave for which now holds its sum. */
void model_gang_memo_done(const struct cache_gang *g, enum model_memo_sum which);

/* g's memo of its PodGroup's phase (podgroup.h, as an int) into *phase: 1 when it holds one at g's version, else 0. */
int model_gang_memo_phase(const struct cache_gang *g, int *phase);

/* Sets g's memo of its phase at g's version. */
void model_gang_memo_set_phase(const struct cache_gang *g, int phase);

/* g's memo of hold_resources() at g's version (borrowed, valid until g changes), or NULL. */
const struct resources *model_gang_memo_resources(const struct cache_gang *g);

/* Sets it to a copy of r. */
void model_gang_memo_set_resources(const struct cache_gang *g, const struct resources *r);

/* Whether g is unchanged since model_gang_set_shown(g, 1): what its PodGroup shows of it is the same. */
int model_gang_shown(const struct cache_gang *g);

/* Notes that g's PodGroup was compared at g's version now (shown 1), or forgets it (0). */
void model_gang_set_shown(const struct cache_gang *g, int shown);

/* Counts pod, of g, in g->nopen if it is live and not gated and not counted yet. */
void model_gang_count_open(struct cache_gang *g, struct cache_pod *pod);

/* Unlinks pod from g's pods, and from g->nunbound, g->nunready and g->nopen; pod->gang and g->npods are the caller's. */
void model_gang_remove_pod(struct cache_gang *g, struct cache_pod *pod);

/* A pod is live (a gang member) when neither terminating nor Succeeded/Failed (cache_pod_live). */
int model_pod_live(const struct cache_pod *pod);

/* What the node fit places pod at (borrowed): its request, its claims' variants (devices.h), the shared claims it carries. */
const struct shape_rl *model_pod_fit_request(const struct cache_pod *pod);

/* Releases g's groups, its topology request and its device claims. */
void model_gang_clear_groups(struct shape_pool *p, struct cache_gang *g);

/* Frees *dev (a pod's or a gang's device claims; NULL fine) and sets it NULL. */
void model_devices_free(struct shape_pool *p, struct cache_devices **dev);

/* ---- pods ---- */

/* Namespace (ns), labels, creation time and flags from metadata (borrowed); keep: CACHE_POD_* flags that stand. */
void model_pod_parse_meta(struct shape_pool *p, struct cache_pod *pod, const char *ns, const json_t *meta, uint8_t keep);

/* Scheduling gates, priority, phase, conditions, request and scheduling constraints, from the pod (borrowed). */
void model_pod_parse_spec(struct shape_pool *p, struct cache_pod *pod, const json_t *obj);

/* Releases what the two above set, and pod->strings. */
void model_pod_release(struct shape_pool *p, struct cache_pod *pod);

#endif
