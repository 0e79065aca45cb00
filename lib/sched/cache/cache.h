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
 * share one copy (shape.h, the pool).
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
 * Their structs, and how each is read from its JSON, are model.h's; this
 * module indexes and links them and tracks what changed.
 *
 * The structs are public so that admit.c and the controller can read them;
 * only the cache (cache.c, model.c, shape.c, prioclass.c, and devices.c, dracache.c, sharedcarry.c for DRA) writes them: other
 * modules change the cache through the functions below and walk it with its iterators (cache_queue_for_each(),
 * cache_node_for_each(), cache_queue_for_each_gang(), cache_gang_for_each_pod()), and keep their own state beside it (admit.h: a
 * pass's state is struct admit's). Pointers into the cache stay valid until the next upsert, delete or cache_destroy().
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
#include "model.h"
#include "shape.h"
#include "table.h"

struct cache {
    struct shape_pool shapes; /* interned strings, resource names, resource lists, scheduling constraints */
    struct table nodes;
    struct table pods;     /* by namespace/name */
    struct table pods_uid; /* by uid */
    struct table gangs;
    struct table queues;
    struct cache_gang *all_gangs;
    struct cache_gang *preempted;    /* gangs whose preempted_by is set: the victims of preemptions (pre_next) */
    struct cache_gang *node_waiters; /* gangs whose last verdict waited on node room */
    struct cache_gang *early;        /* gangs changed or kept since the early list's last prune (model.h) */
    /* Admitted, live, ungated, unbound pods, nreserving of them in no order (a removal moves the last into its
       place): an array, since a pass reads them all and a list's walk is a cache miss per pod. */
    struct cache_pod **reserving;
    size_t nreserving, reserving_cap;
    uint8_t capacity_changed; /* room may have appeared on the nodes (cache_take_changes) */
    uint8_t nodes_changed;    /* the set or the properties of Ready nodes changed (cache_take_changes) */
    uint64_t generation;      /* bumped by every change */
    uint64_t nodes_gen;       /* bumped by every change of a Node, and of what pods outside any queue use on one (qtree.h) */
    size_t nnodes_present;    /* nodes whose Node object is cached */
    int64_t clock_ms;         /* the time changes happen at (cache_set_clock): a dispatch lease seen, a gang falling short */
    uint8_t lease_news;       /* a dispatch lease's sighting may be to record (cachelease.h) */
    struct draset *dra;       /* borrowed: the DRA objects devices are counted by (devices.h), or NULL */
    uint64_t dra_priced;      /* the draset's demand generation every claim was priced at, plus 1; 0: price again */
    struct prioclasses *prio; /* borrowed: the PriorityClasses (prioclass.h), or NULL */
    size_t shared_gangs;      /* gangs whose RayCluster names a shared claim (devices_gang_shares) */
    size_t carried_gangs;     /* gangs one of whose pods carries one (sharedcarry.h); with the above, 0 skips its walk */
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

/*
 * The time (Unix ms of the caller's clock) at which the next upserts and
 * deletions are seen: a RayCluster's dispatch lease (dispatchlease.h) that
 * changes is stamped with it, and so is a gang whose live pods fall below its
 * minMember (short_since_ms, which the eviction scan times its members to come
 * from: evictscan.h). Set it before every change, or a stale time makes them
 * late at once. 0 after cache_create().
 */
void cache_set_clock(struct cache *c, int64_t now_ms);

/* Removes an object by key; namespace_ is ignored for nodes and queues. Absent objects are fine. */
void cache_delete_node(struct cache *c, const char *name);
void cache_delete_pod(struct cache *c, const char *namespace_, const char *name);
void cache_delete_raycluster(struct cache *c, const char *namespace_, const char *name);
void cache_delete_queue(struct cache *c, const char *name);

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

/* With it, the raygate.io/topology-placed annotation written in the same patch (placed: its value, copied; NULL: none). */
void cache_gang_mark_placed(struct cache_gang *gang, const char *placed);

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

/*
 * Iterators, in no particular order; the cache must not change while one runs:
 *   struct cache_queue *q;
 *   cache_queue_for_each(q, c) { ... }
 * cache_queue_first/next and cache_node_first/next return NULL after the last.
 * Inline: a pass walks every queue, and every node, each time it runs.
 */
static inline struct cache_queue *cache_queue_next(const struct cache *c, const struct cache_queue *q)
{
    struct table_node *n = table_next(&c->queues, q != NULL ? &q->by_name : NULL);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct cache_queue, by_name) : NULL;
}

static inline struct cache_queue *cache_queue_first(const struct cache *c)
{
    return cache_queue_next(c, NULL);
}

static inline struct cache_node *cache_node_next(const struct cache *c, const struct cache_node *node)
{
    struct table_node *n = table_next(&c->nodes, node != NULL ? &node->by_name : NULL);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct cache_node, by_name) : NULL;
}

static inline struct cache_node *cache_node_first(const struct cache *c)
{
    return cache_node_next(c, NULL);
}

#define cache_queue_for_each(q, c) for ((q) = cache_queue_first(c); (q) != NULL; (q) = cache_queue_next((c), (q)))
#define cache_node_for_each(n, c) for ((n) = cache_node_first(c); (n) != NULL; (n) = cache_node_next((c), (n)))
/* The gangs naming queue q, and the pods of gang g (oldest first). */
#define cache_queue_for_each_gang(g, q) for ((g) = (q)->gangs; (g) != NULL; (g) = (g)->queue_next)
#define cache_gang_for_each_pod(p, g) for ((p) = (g)->pods; (p) != NULL; (p) = (p)->gang_next)

/* Every gang (cache_gang: present or only holding pods), in no particular order; the cache must not change meanwhile. */
#define cache_for_each_gang(g, c) for ((g) = (c)->all_gangs; (g) != NULL; (g) = (g)->all_next)

/* Marks every queue for re-evaluation by the next incremental pass (a periodic resync). */
void cache_mark_all_dirty(struct cache *c);

/* Gang g changed outside an upsert (sharedcarry.h): what was computed from it goes, and its queue is dirty. */
void cache_gang_mark_changed(struct cache *c, struct cache_gang *g);

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
