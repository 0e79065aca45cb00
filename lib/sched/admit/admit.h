/*
 * admit: the gate controller's decisions, as a pure function of the cache.
 *
 * A gang is the live pods (neither terminating nor Succeeded/Failed) of a
 * RayCluster labelled volcano.sh/queue-name. One pass decides, for every gang
 * it evaluates:
 * - ADMIT: a pending gang that is complete (>= minMember live pods; with
 *   admit_set_early, once its head and a pod of each worker group exist, its
 *   members to come weighed as copies of those: early.h), whose
 *   queue exists and is Open, whose minResources fit the queue's capability
 *   (listed resources only; admitted gangs of the queue hold the larger of
 *   their minResources and their members' requests plus their tail's, until
 *   their pods are gone; a gang not admitted holds what its ungated pods
 *   request, e.g. the terminating pods of a RayCluster deleted and created
 *   again under the same name), and whose first minMember pods (creation order) all fit on Ready,
 *   schedulable nodes pod by pod, larger pods first (fit.h; nodeSelector, required
 *   node affinity, NoSchedule/NoExecute taints, allocatable "pods"). Free room
 *   on a node is allocatable - requests of the pods bound to it - what admitted
 *   but unbound pods reserve (where there is no room for one, on the node it
 *   is least short on: fithold.h). The controller records raygate.io/admitted-at,
 *   then removes our gate from the listed pods.
 * - FINISH: an admitted gang with fewer than minMember ungated live pods and
 *   gated ones (a restart mid-admission, KubeRay replacing a pod): remove our
 *   gate from the listed pods, no capacity check.
 * - TAIL_ADMIT / TAIL_WAIT: pods of an admitted gang beyond its members (the
 *   autoscaler's) are admitted one at a time in creation order by the same
 *   queue and node checks, once every member is bound (ADMIT_REASON_NODES
 *   until then: kube-scheduler could give a member's room to the tail); the
 *   first that does not fit waits, and those behind it wait with it: one
 *   TAIL_WAIT lists them all, each with its own message.
 *
 * A legacy operator's gang (legacy.h) is complete once its head exists: that
 * operator creates the workers only after the head runs Ray. It is weighed
 * like the others (its whole minResources against the queue, so it holds the
 * share of the workers still to come; the pods that exist against the nodes),
 * and its workers, members as they come, are ungated by FINISH.
 *
 * A gang's members are its head and, per worker group, as many of the group's
 * pods as minMember counts (ray.io/node-type and ray.io/group labels; ungated
 * pods first, then in creation order), not the first minMember pods created.
 * An admitted gang holds in its queue the larger of its minResources and its
 * members' requests, plus its ungated tail's requests: a tail pod deleted
 * (the gang shrinking) gives its share back at once, a member being replaced
 * does not.
 * - WAIT: with a reason and a message for Events.
 *
 * Dispatch leases (dispatchlease.h): a gang whose RayCluster carries a
 * manager's lease that expired at the pass's time, or that does not parse,
 * waits (ADMIT_REASON_DISPATCH_LEASE) before any check of room; an admitted
 * gang whose lease expired gets no pod ungated (no FINISH, no TAIL_ADMIT)
 * until the eviction scan (evictscan.h) takes it back. A renewal changes its
 * RayCluster, which makes its queue dirty: the next pass admits it as usual.
 *
 * Devices (DRA, devices.h): a gang's device claims count in its minResources
 * and its pods' requests as the queue resources their DeviceClasses map to,
 * and on the nodes by the ledger (fit.h). A gang whose claims cannot be
 * counted yet (a template, claim or class not seen; allocationMode All) waits
 * (ADMIT_REASON_DEVICES) before any check of room.
 *
 * The queue tree (qtree.h): queues nest through spec.parent. A gang is
 * admitted only when, besides its own queue's capability as above, every
 * ancestor stays within its capability and no room guaranteed to another
 * queue (spec.guarantee) is used, not even while that queue is idle
 * (ADMIT_REASON_QUEUE_TREE, naming the level: "queue eng (parent of train):
 * cpu 16 of 16 allocated"); a tail pod likewise. A gang of a queue with
 * children waits (ADMIT_REASON_QUEUE_NOT_LEAF: only leaves hold gangs; its
 * admitted gangs keep running), one of a queue in a bad tree (a cycle, its own
 * parent, a missing parent, under such a queue) waits as if it were Closed
 * (ADMIT_REASON_QUEUE_BAD_TREE); the rest of the tree goes on. Every pass
 * builds the tree from the cache, with what every queue's gangs hold and ask
 * for (treepass.h).
 *
 * Order: within a leaf queue, gangs are taken by priority (the highest
 * spec.priority of their live pods) descending, then older RayCluster, then
 * namespace/name. Across leaves, the next gang comes from the child with the
 * lowest share (allocated / deserved, dominant resource) at each level, down
 * the tree, recomputed after each admission; between equal shares, the child
 * whose next gang comes first in that order; a queue that deserves nothing
 * (weight 0) after those that deserve something (fairorder.h). Flat queues
 * are children of the root and take turns the same way. Held preemptors
 * (admit_held) go before all. Everything admitted earlier in a pass reduces
 * what later gangs see. A queue with dequeueStrategy fifo stops at its first
 * complete gang that does not fit; traverse (the default) goes on. Incomplete
 * gangs never block.
 *
 * Incremental: unless ADMIT_PASS_FULL is given, a pass evaluates every gang
 * of the queues marked dirty by the cache (their objects changed) and, when
 * room may have appeared on the nodes (a node changed, a bound pod or a
 * reservation went away), the gangs whose last verdict waited on node room
 * (all gangs of such a gang's queue if it is fifo), or on room guaranteed to
 * another queue. A gang that is not
 * evaluated would decide nothing new: it waited on its unchanged queue, for
 * pods, or on nodes that gained no room (a message may then be stale, never a
 * verdict). The work of a pass after one event is thus bounded by the gangs
 * that event concerns, not by the cluster. In a tree (some queue has a parent
 * or a guarantee, or a Queue is named "root") a gang's verdict depends on its
 * ancestors and their other children: there, any dirty queue makes the pass
 * evaluate every queue whole.
 *
 * The decisions as data are admitresult.h's. A pass (admitpass.h: its state;
 * admitselect.h: what it weighs) is built on qtree.h, treepass.h, fairorder.h, members.h
 * (which pods are a gang's members), hold.h (what a gang holds of its queue,
 * and whether more fits), marks.h (what the pass found of pods) and fit.h.
 */
#ifndef RAYGATE_ADMIT_H
#define RAYGATE_ADMIT_H

#include <stddef.h>

#include <jansson.h>

#include "admitresult.h"
#include "cache.h"
#include "evict.h"
#include "resources.h"

enum {
    ADMIT_PASS_FULL = 1 << 0, /* evaluate every queue, dirty or not */
};

/*
 * The decision state of one cache, kept across passes: the pass's buffers
 * and the eligible nodes sorted by name (rebuilt when the cache says the nodes
 * changed). What a pass computes of queues and pods lives in the pass, never
 * in the cache (cache.h). Pure: no I/O, no threads, no clock.
 */
struct admit;

/* Creates the decision state for cache c (borrowed; it must outlive the state, and is the only cache used with it). */
struct admit *admit_create(struct cache *c);

/* Frees a; a may be NULL. */
void admit_destroy(struct admit *a);

/*
 * What holds an evicted gang back (evict.h), and the time (Unix ms) the next
 * passes decide at. An evicted gang waits (ADMIT_REASON_EVICTED) while any of
 * its live pods is ungated or bound (its eviction's leftovers, which the
 * controller deletes) and until its requeue-at, or for good once deactivated
 * (ADMIT_REASON_DEACTIVATED) until its RayCluster's spec changes. Defaults:
 * evict_config_default(), time 0.
 */
void admit_set_evict(struct admit *a, const struct evict_config *cfg);
void admit_set_now(struct admit *a, int64_t now_ms);

/*
 * Whether a pass weighs a gang before its pods all exist (early.h): once its
 * head and a pod of each worker group exist, its members to come as copies of
 * those; an admitted gang's members to come then keep their room on the nodes
 * as copies, and each is ungated as it arrives (FINISH). Default off: a gang
 * waits for its pods (ADMIT_REASON_PODS) until it is complete.
 */
void admit_set_early(struct admit *a, int on);

/*
 * The HyperNodes (hypernode.h; borrowed, may be NULL: none) that Volcano-style
 * topology constraints resolve against. A pass that finds them changed
 * (hypernode_generation) re-evaluates the gangs waiting on room, as after a
 * node change; the controller only needs to run a pass.
 */
struct hypernodes;
void admit_set_hypernodes(struct admit *a, const struct hypernodes *h);

/*
 * The members of gang g as a pass picks them (the head and, per worker group,
 * as many pods as minMember counts: ungated ones first, then by creation),
 * among its live pods. Sets *out to a new array (caller frees) of g's live
 * pods, members first, and returns how many members lead it.
 */
size_t admit_gang_members(const struct cache_gang *g, struct cache_pod ***out);

/*
 * Runs one decision pass over a's cache and appends the decisions to out
 * (initialised by the caller), in the order they were taken, and the names of
 * the queues it evaluated to out->queues. The pass does not change what the
 * cache models: the controller reports what it did with
 * cache_gang_mark_admitted() and cache_pod_mark_ungated(). It takes the
 * cache's changes (cache_take_changes), clears the dirty marks of the queues
 * it evaluated whole, and records which gangs wait on node room
 * (cache_gang_set_node_wait). Returns the number of decisions added.
 */
size_t admit_pass(struct admit *a, unsigned flags, struct admit_result *out);

/*
 * The room held for a preemptor while its victims are evicted (preempthold.h):
 * every pass weighs a held preemptor before every other gang, and one that
 * does not fit yet keeps its room (its minResources in its queue, its members
 * on the nodes where they fit) from every other gang, whatever its priority.
 * admit_held returns g's hold as of the last pass (borrowed, valid until the
 * next pass), or NULL when g is not held.
 */
struct preempthold_item;
const struct preempthold_item *admit_held(const struct admit *a, const struct cache_gang *g);

/*
 * Whether d's reason differs from the last one recorded for its gang (WAIT) or
 * for its gang's autoscaling tail (TAIL_WAIT), recording it. Another count of
 * "waiting for pods" is not a new reason (its message is still recorded: the
 * gang's PodGroup shows the current one). When the gang's (or its tail's)
 * reason changes, CACHE_POD_TOLD is cleared on its pods, so that the pods the
 * controller tells (gate/apply/waitevents.c: the head, or a tail's first waiting
 * pod, once the reason has lasted its settling time) are told the new reason
 * once (cache_pod_mark_told()). ADMIT and FINISH forget the gang's reason,
 * TAIL_ADMIT the tail's, and return 1. Returns 0 when the gang is no longer
 * cached.
 */
int admit_reason_changed(struct cache *c, const struct admit_decision *d);

/*
 * What gang g holds of its queue's capability, outside a pass (after the
 * controller recorded what it did): once any of its admitted pods (ungated)
 * has not finished, per resource the larger of its minResources and the
 * requests of those pods; nothing once they are gone. This is what a pass
 * charges an admitted gang with. out must be initialised; it is overwritten
 * (quantity formats are the requests' or minResources'). Returns 0, or -1 with
 * err when a sum overflows.
 */
int admit_gang_hold(const struct cache *c, const struct cache_gang *g, struct resources *out, struct error *err);

/*
 * The same, without a copy: the gang's memo of it (borrowed, valid until g
 * changes) or, when g keeps none, *scratch (initialised; overwritten) filled.
 * NULL with err when a sum overflows.
 */
const struct resources *admit_gang_hold_ref(const struct cache *c, const struct cache_gang *g, struct resources *scratch,
                                            struct error *err);

#endif
