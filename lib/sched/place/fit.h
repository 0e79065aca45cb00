/*
 * fit: the nodes' free room during a decision pass (admit.h), and first-fit
 * placement of pods on it, as kube-scheduler would place them: Ready,
 * schedulable nodes only; nodeSelector, required node affinity,
 * NoSchedule/NoExecute taints and tolerations; allocatable "pods".
 *
 * Free room on a node is its allocatable minus the requests of the pods bound
 * to it (cache.h), minus what the pass placed since fit_begin(). A placement
 * is tentative until fit_commit(); one that fails is undone whole. Nodes are
 * tried in name order, each pod on the first node that takes it; max trees
 * over the free room make that about log(nodes) per pod.
 *
 * Pure: no I/O, no threads, no clock. The cache must not change between
 * fit_begin() and fit_end().
 */
#ifndef RAYGATE_FIT_H
#define RAYGATE_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "util.h"

struct fit;

/* Creates the placement state of cache c (borrowed; it must outlive f). */
struct fit *fit_create(const struct cache *c);

/* Frees f; f may be NULL. */
void fit_destroy(struct fit *f);

/* The set or the properties of the nodes changed (CACHE_CHANGED_NODES): the next fit_begin() looks at them again. */
void fit_nodes_changed(struct fit *f);

/* A pass begins: the free room of every Ready, schedulable node, nothing placed. */
void fit_begin(struct fit *f);

/* The pass ends: what it placed is forgotten (the buffers are kept for the next). */
void fit_end(struct fit *f);

/* Sorts pods larger first: extended resources (GPUs) dominate, then cpu, then memory; then creation order. */
void fit_sort_larger_first(struct fit *f, struct cache_pod **pods, size_t n);

/*
 * The same order by size, pods of equal size kept in the order given (no
 * creation time nor name compared): for many pods whose order among equals
 * does not matter (fithold_admitted's reservations, thousands in a flood,
 * most of a few shapes).
 */
void fit_sort_larger_first_stable(struct fit *f, struct cache_pod **pods, size_t n);

/*
 * Places pods (sorted larger first) one by one, tentatively. Returns n when
 * all fit (the placements stay; fit_commit() them), else the index of the
 * first that fits nowhere, every placement of this call undone, and *why set
 * (new string): what follows "no node fits pod NAME", e.g. " (cpu 4): at most
 * 2 free on one node".
 */
size_t fit_place(struct fit *f, struct cache_pod **pods, size_t n, char **why);

/*
 * fit_place() for a gang's pods, remembering the last failure: a gang whose
 * pods have the same shapes in the same order, with nothing committed since,
 * fails the same way without being placed again.
 */
size_t fit_place_gang(struct fit *f, struct cache_pod **pods, size_t n, char **why);

/*
 * Simulation (preempt.h: what if these pods were gone): fit_mark() notes
 * where the tentative changes stand; fit_release() gives back, tentatively,
 * the room of pod on the node it is counted on (cache_pod.counted) and
 * returns 1, or returns 0 when that node is not one of the pass's (or the pod
 * is counted on none); fit_undo() undoes every tentative placement and
 * release since mark. What fit_place() remembers of failures is forgotten on
 * a release (room grew). Never fit_commit() while releases are tentative.
 */
size_t fit_mark(const struct fit *f);
int fit_release(struct fit *f, const struct cache_pod *pod);
void fit_undo(struct fit *f, size_t mark);

/* Makes the tentative placements final. */
void fit_commit(struct fit *f);

/* "cpu 2, memory 4Gi": a resource list, as messages write it. */
void fit_request_text(struct util_buf *b, const struct cache *c, const struct shape_rl *req);

/* ---- topology (topodomain.h, topoplace.h) ---- */

/* The pass's nodes (Ready, schedulable, sorted by name): sets *nodes (borrowed until fit_end) and returns how many. */
size_t fit_nodes(const struct fit *f, struct cache_node *const **nodes);

/* Bumped whenever fit_begin() built the node list anew: indices of an older generation are stale. */
uint64_t fit_nodes_generation(const struct fit *f);

/* The pass's index of node n, or SIZE_MAX when it is not one of the pass's nodes. */
size_t fit_node_index(const struct fit *f, const struct cache_node *n);

/* Node i's free room now (tentative placements included): resource id -> value (borrowed, fit_resources() long), and free pods. */
const int64_t *fit_node_free(const struct fit *f, size_t i, int64_t *pods);

/* Changes whenever the pass's free room may have grown or shrunk for good (a commit, a release): equal values, same room. */
uint64_t fit_room_version(const struct fit *f);

/*
 * The nodes whose free room changed since fit_begin() (placed, released,
 * undone, committed or not), in order, a node once per change: sets *nodes
 * (borrowed until the next change) and returns how many. Whoever keeps sums
 * over nodes catches up from where it last read.
 */
size_t fit_touched(const struct fit *f, const uint32_t **nodes);

/* How many resource ids the pass counts (the length of fit_node_free()'s array). */
uint32_t fit_resources(const struct fit *f);

/*
 * fit_place() restricted to the nodes of indices nodes[0..nn) (ascending),
 * first fit in that order: returns n when all fit (tentative; fit_commit() or
 * fit_undo()), else the index of the first pod that fits on none of them,
 * with every placement of this call undone. No message and no memo: the
 * caller (topoplace.h) says why.
 */
size_t fit_place_on(struct fit *f, struct cache_pod **pods, size_t n, const uint32_t *nodes, size_t nn);

/* Whether pod may go to node i (its selector, affinity and tolerations; not the room). */
int fit_node_matches(const struct fit *f, size_t i, const struct cache_pod *pod);

/*
 * Places pod on node i whatever room is left there (fithold.h): the room may
 * go below zero. When pod may go to every node of the pass, what node i
 * lacks is owed by the others: from then on in the pass, no pod is placed
 * (fit_place(), fit_place_on()) unless the free room of the nodes together,
 * less what is owed, still holds it (its message then says the room left is
 * held). A pod that may go to some nodes only holds node i's room alone.
 * Call fit_commit() next; never between fit_mark() and fit_undo() (what is
 * owed is not undone).
 */
void fit_take_on(struct fit *f, size_t i, const struct cache_pod *pod);

#endif
