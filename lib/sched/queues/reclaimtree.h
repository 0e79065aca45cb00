/*
 * reclaimtree: the queue tree's rules for preemption (preempt.h): capability
 * at every level, and reclaim across the tree bounded by deserved, guarantee
 * and share. Pure: no I/O, no threads, no clock.
 *
 * The tree is given as nodes, one per queue, each with its parent (an index,
 * or QUEUETREE_ROOT for a child of the root) and, by resource name, its
 * capability, deserved, guarantee and allocation (its subtree's: a leaf's
 * gangs, a parent's children's and its own). A parent index out of range, or
 * a chain of parents that does not reach the root, is taken as the root.
 *
 * A selection weighs a set of victims: reclaimtree_clear(), then
 * reclaimtree_free() for each victim gang (what it holds, in its queue),
 * then the checks below, which see every queue's allocation "after": its
 * allocation less what the set's victims in its subtree hold.
 *
 * Share (qtree.h's): the largest alloc[k] / deserved[k] over the resources
 * deserved lists with a positive quantity; 0 when there is none and the
 * queue holds nothing, QTREE_SHARE_MAX when none and it holds something.
 */
#ifndef RAYGATE_RECLAIMTREE_H
#define RAYGATE_RECLAIMTREE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "resources.h"

/* One queue. Everything borrowed. */
struct reclaimtree_node {
    size_t parent;                      /* index, or QUEUETREE_ROOT */
    const struct resources *capability; /* its own spec.capability; NULL: unlimited */
    const struct resources *deserved;   /* NULL: none */
    const struct resources *guarantee;  /* NULL: none */
    const struct resources *allocated;  /* its subtree's, victims being evicted included; NULL: nothing */
};

/* Initialise with reclaimtree_init, release with reclaimtree_finish. */
struct reclaimtree {
    const struct reclaimtree_node *nodes; /* borrowed */
    size_t n;
    size_t *up;              /* owned: each queue's parent, QUEUETREE_ROOT for a bad one */
    size_t *depth;           /* owned: 1 for a child of the root */
    struct resources *freed; /* owned: per queue, what the set's victims in its subtree hold */
    unsigned char *guarded;  /* owned: n + 1, the root's last: some child of the queue has a guarantee */
    struct resources tmp;
    /* Set by the caller after reclaimtree_init, borrowed; NULL: not checked. */
    const struct resources *root_cap;  /* the capability of a Queue named root */
    const struct resources *root_room; /* the room the root shares (qtree.h: min(total, root_cap)) */
};

/* Why a preemptor does not fit the tree (reclaimtree_fits). */
struct reclaimtree_block {
    size_t level;                  /* the queue that blocks: the preemptor's or an ancestor; QUEUETREE_ROOT: none */
    const struct resources *limit; /* its capability, or NULL when a sibling's guarantee blocks */
    struct resources have;         /* owned: level's allocation after the set, plus the request */
};

void reclaimtree_init(struct reclaimtree *t, const struct reclaimtree_node *nodes, size_t n);
void reclaimtree_finish(struct reclaimtree *t);

/* The value of name in r (0 when r is NULL or lacks it). */
int64_t reclaimtree_value(const struct resources *r, const char *name);

/* Whether have is within limit in every resource limit lists (NULL: unlimited). */
int reclaimtree_within(const struct resources *have, const struct resources *limit);

/* The depth of queue i (1: a child of the root); 0 for the root. */
size_t reclaimtree_depth(const struct reclaimtree *t, size_t i);

/* The lowest common ancestor of a and b (a itself when b is under it), or QUEUETREE_ROOT. */
size_t reclaimtree_lca(const struct reclaimtree *t, size_t a, size_t b);

/* Whether q is anc or under it. */
int reclaimtree_under(const struct reclaimtree *t, size_t anc, size_t q);

/* Forgets the set's victims. */
void reclaimtree_clear(struct reclaimtree *t);

/* Counts hold (NULL: nothing) as freed in queue q and every ancestor. Returns 0, or -1 with err on overflow. */
int reclaimtree_free(struct reclaimtree *t, size_t q, const struct resources *hold, struct error *err);

/* The share (see above) of alloc against deserved. */
double reclaimtree_share(const struct resources *alloc, const struct resources *deserved);

/*
 * Whether request fits queue p and every ancestor after the set, as
 * qtree_fits() decides, in each resource request asks for: at each level
 * its allocation after plus request is within its capability (the root's:
 * the sum of the root's children within root_cap); and, below a parent P,
 * the children s of P hold or reserve sum(max(after(s) (+ request on p's
 * path), guarantee(s))) within P's capability (the root's: root_room) in
 * each resource a child of P guarantees: room guaranteed to a sibling is
 * never lent. Returns 1, 0 with why (when not NULL; initialised by the
 * caller; level QUEUETREE_ROOT: the root) or -1 with err on overflow.
 */
int reclaimtree_fits(struct reclaimtree *t, size_t p, const struct resources *request, struct reclaimtree_block *why,
                     struct error *err);

/*
 * Whether reclaiming the set for a preemptor of queue p asking request is
 * allowed. victim_queues (n, repeats allowed) are the queues of the set's
 * victims; for each victim queue v, with L the lowest common ancestor of p
 * and v:
 * - v borrows: its allocation (before) is above its deserved in some
 *   resource deserved lists;
 * - v and each ancestor of v below L are not taken below their deserved or
 *   guarantee: in each resource one lists, the allocation after is at least
 *   that quantity unless the set takes none of it; for v's deserved only,
 *   a resource v already had less of than deserved does not count (Volcano's
 *   partial comparison; v borrows another). A queue without deserved or
 *   guarantee is not bounded by it;
 * - each ancestor of p below L that has a deserved: its allocation after
 *   plus request stays within it (a subtree above its deserved does not take
 *   from a cousin);
 * - the share rule: the share of p's allocation after plus request is at
 *   most the share of v's allocation after (a v whose deserved lists no
 *   positive quantity counts QTREE_SHARE_MAX: it deserves nothing, so all it
 *   holds is borrowed and it never reclaims).
 * Returns 1, 0, or -1 with err on overflow.
 */
int reclaimtree_allows(struct reclaimtree *t, size_t p, const struct resources *request, const size_t *victim_queues, size_t n,
                       struct error *err);

#endif
