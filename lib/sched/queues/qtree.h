/*
 * qtree: the gate controller's queue tree, as a pure function of the cache.
 *
 * Queues nest through spec.parent (queuetree.h: the root is implicit, a Queue
 * named "root" is the root itself). Only leaves hold gangs. For each queue
 * the tree keeps, dense by resource id (nres of each):
 * - cap: its effective capability, the least of its own spec.capability and
 *   every ancestor's (a Queue named "root" included), per resource; a
 *   resource none of them lists is QTREE_UNLIMITED. A child's capability
 *   above its parent's is thus the parent's;
 * - guarantee: spec.guarantee.resource (0 when unlisted), reserved for its
 *   subtree and never lent: see qtree_fits();
 * - alloc: what its subtree holds (a leaf: what its gangs hold, hold.h; a
 *   parent: the sum of its children's), added by the caller
 *   (qtree_add_alloc());
 * - demand: alloc plus what its subtree's present gangs that are not
 *   admitted ask for (their minResources; qtree_add_demand());
 * - deserved: spec.deserved when set (explicit; unlisted resources are 0),
 *   else derived by weight (qtree_derive()).
 *
 * Deserved by weight (Volcano's proportion plugin): among the children of one
 * parent, the room is the parent's deserved (the root's: t->total, the nodes'
 * allocatable less what pods outside any queue request), less the explicit
 * deserved of the children that have one; it is split by spec.weight
 * (default 1; 0 gets nothing), each child capped by its cap and its demand,
 * and what a capped child leaves is split again among the others, until
 * nothing is left or every child is capped. Per resource. A queue with an
 * explicit spec.deserved keeps it.
 *
 * Share (Kueue's dominant resource share, with deserved for the nominal
 * quota): the largest alloc[k] / deserved[k] over the resources whose
 * deserved is positive; 0 when it has none and holds nothing, QTREE_SHARE_MAX
 * when it has none and holds something. The weight is in deserved already, so
 * it is not counted again.
 *
 * Bad queues (queuetree.h: a cycle, its own parent, a missing parent, under
 * a bad one) are treated as Closed; the rest of the tree goes on. So is a
 * queue stored against the rules of queuespec.h that would make this
 * arithmetic wrong (QUEUETREE_BAD_SPEC: a negative quantity, or deserved
 * above capability), with its subtree (under a bad ancestor): each says why
 * in its status (podgroup.h). A stored guarantee above deserved, or children
 * guaranteed more than their parent, are kept as raygate always read them
 * (deserved derived; a parent reserves at least its children's guarantees):
 * only the webhook refuses new ones. Such a queue cannot
 * starve its neighbours: its subtree's guarantees and explicit deserved are
 * dropped (it reserves only what its gangs hold, and its deserved is derived),
 * a negative capability counts as 0, and what its gangs hold still counts in
 * its ancestors' allocation.
 *
 * Building the tree is O(queues x nres); adding an allocation walks one path.
 * Pure: no I/O, no threads, no clock.
 */
#ifndef RAYGATE_QTREE_H
#define RAYGATE_QTREE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "queuespec.h"
#include "queuetree.h"
#include "util.h"

/* A capability no queue sets. */
#define QTREE_UNLIMITED INT64_MAX

/* The share of a queue that holds what it deserves none of. */
#define QTREE_SHARE_MAX 1e18

/* One queue of the tree. Arrays are nres long, owned by the tree. */
struct qtree_queue {
    struct cache_queue *q; /* borrowed from the cache */
    size_t parent;         /* index, or QUEUETREE_ROOT */
    size_t first_child;    /* QUEUETREE_ROOT: none (a leaf, when present) */
    size_t next_sibling;   /* QUEUETREE_ROOT: the last */
    size_t nchildren;
    size_t depth;                  /* 1: a child of the root */
    enum queuetree_state state;    /* not QUEUETREE_OK: treated as Closed */
    const char *bad;               /* state not OK: the name of the queue that is bad (itself, or its bad ancestor) */
    struct queuespec_problem spec; /* QUEUETREE_BAD_SPEC: the rule it breaks; else rule QUEUESPEC_OK */
    int is_root;                   /* the Queue named "root": not a queue gangs may use */
    int explicit_deserved;         /* spec.deserved is set (else deserved is derived) */
    uint32_t weight;
    int64_t *cap;
    int64_t *guarantee;
    int64_t *deserved;
    int64_t *alloc;
    int64_t *demand;
    double key; /* what qtree_pick_ranked() compares: QTREE_SHARE_MAX when it deserves nothing, else its share; kept as alloc and
                   deserved change */
};

/* The queues whose key (qtree_pick_ranked()'s share) moved, for a caller that keeps the pick (fairorder.h). */
struct qtree_keylog {
    size_t *idx; /* n of them, each once */
    size_t n, cap;
    unsigned char *logged; /* the tree's n: whether queue i is in idx */
};

struct qtree {
    uint32_t nres;
    size_t n;
    struct qtree_queue *queues;  /* one per cached queue */
    size_t root_first;           /* the root's first child, QUEUETREE_ROOT: none */
    int64_t *total;              /* nres: the room the root shares (see above) */
    int64_t *root_cap;           /* nres: the Queue named "root"'s capability, else QTREE_UNLIMITED */
    int nested;                  /* some queue has a parent or a guarantee: the tree is more than flat queues */
    struct qtree_keylog *keylog; /* borrowed, or NULL: where a queue whose key moves is recorded */
};

/* Why a gang does not fit the tree (qtree_fits). */
enum qtree_block_kind {
    QTREE_FITS = 0,
    QTREE_BLOCK_CAPABILITY, /* queue level's alloc + the gang would exceed its cap in resource res */
    QTREE_BLOCK_GUARANTEE,  /* it would use room guaranteed to queue other, a sibling of level (or of its ancestor) */
    QTREE_BLOCK_NOT_LEAF,   /* the leaf has children */
    QTREE_BLOCK_BAD_TREE,   /* the leaf is a bad queue (state) */
};

struct qtree_block {
    enum qtree_block_kind kind;
    size_t level;  /* the queue that blocks: the leaf or one of its ancestors */
    size_t other;  /* QTREE_BLOCK_GUARANTEE: the queue whose guarantee is reserved */
    uint32_t res;  /* the resource that does not fit */
    int64_t have;  /* CAPABILITY: level's alloc; GUARANTEE: what the level's siblings hold or reserve */
    int64_t limit; /* CAPABILITY: level's cap; GUARANTEE: the room of level's parent */
};

void qtree_init(struct qtree *t);
void qtree_finish(struct qtree *t);

/*
 * (Re)builds t from every queue cached in c, for resource ids below nres:
 * links, states, cap, guarantee, explicit deserved, weight and total; alloc
 * and demand zero; derived deserved zero until qtree_derive().
 */
void qtree_build(struct qtree *t, const struct cache *c, uint32_t nres);

/*
 * The total a build computed, kept between builds (a pass's: admit.h): the
 * nodes' allocatable less what pods outside any queue use is a walk over
 * every node, and changes only with c's nodes_gen. Zero-initialised; freed
 * by qtree_total_memo_finish.
 */
struct qtree_total_memo {
    uint64_t gen; /* c->nodes_gen + 1 when total was computed; 0: never */
    uint32_t nres;
    int64_t *total; /* owned: nres */
};
void qtree_total_memo_finish(struct qtree_total_memo *m);

/* qtree_build, its total taken from memo (or computed and kept there) while c's nodes_gen and nres are unchanged. */
void qtree_build_memo(struct qtree *t, const struct cache *c, uint32_t nres, struct qtree_total_memo *memo);

/* The index of q in t, or QUEUETREE_ROOT when q is not in it. */
size_t qtree_index(const struct qtree *t, const struct cache_queue *q);

/* Adds sign * v (dense, nres) to queue i's alloc (or demand) and to every ancestor's. */
void qtree_add_alloc(struct qtree *t, size_t i, const int64_t *v, int sign);
void qtree_add_demand(struct qtree *t, size_t i, const int64_t *v, int sign);

/* Derives the deserved of every queue without spec.deserved (see above), top down. Call after adding demand. */
void qtree_derive(struct qtree *t);

/*
 * Whether resource k is contended at queue i's level: its parent's children
 * together demand more of it than the room the parent shares among them (the
 * water-filling's: the root's min(total, root_cap), else the parent's
 * deserved). Where it is not, a derived deserved is only the queue's own
 * demand, not a share of anything. Call after qtree_derive().
 */
int qtree_contended(const struct qtree *t, size_t i, uint32_t k);

/* Queue i's share (see above), from its alloc and deserved now. */
double qtree_share(const struct qtree *t, size_t i);

/* Whether queue i is a leaf (present, no children, not the root queue) in a good part of the tree. */
int qtree_leaf_usable(const struct qtree *t, size_t i);

/*
 * Whether need (dense, nres) fits leaf i and every ancestor: alloc + need <=
 * cap at each level; and, at each level L with parent P (the root included),
 * the sum over P's children s of max(alloc[s] (+ need for L), guarantee[s])
 * stays within P's room (P's cap; the root's: min(total, root_cap)), for the
 * resources some child of P guarantees: room guaranteed to a sibling and not
 * used by it is never lent. Returns 1, or 0 with why (the lowest level that
 * blocks, leaf first).
 */
int qtree_fits(const struct qtree *t, size_t i, const int64_t *need, struct qtree_block *why);

/*
 * Appends why's story to b: "queue eng (parent of train): cpu 16 of 16
 * allocated", "queue infer's guarantee (cpu 4) is reserved under eng",
 * "queue eng has children (train, infer): only leaf queues hold gangs",
 * "queue a is in a cycle". leaf is the gang's queue; res_name gives resource
 * ids' names.
 */
void qtree_block_text(const struct qtree *t, size_t leaf, const struct qtree_block *why, const struct cache *c, struct util_buf *b);

/*
 * Fair sharing: the leaf the next gang comes from, among the leaves where
 * has_work[leaf] is set (indexed like t->queues): from the root down, the
 * child with the lowest share whose subtree has work (ties: the lower name);
 * a queue that deserves nothing (weight 0) comes after those that deserve some.
 * QUEUETREE_ROOT when no leaf has work. O(queues).
 */
size_t qtree_pick(const struct qtree *t, const unsigned char *has_work);

/* A rank of qtree_pick_ranked(): the subtree has no work. */
#define QTREE_RANK_NONE ((size_t)-1)

/*
 * qtree_pick() with the caller's tie-break: rank[i] (indexed like t->queues)
 * is QTREE_RANK_NONE when queue i's subtree has no work, else its rank; among
 * children of equal share the lower rank wins (qtree_pick(): the index, so the
 * name; the admission pass: where the subtree's next gang is in its order).
 * Returns the queue the walk ends at (the caller ranks leaves only by their
 * work), or QUEUETREE_ROOT. O(queues).
 */
size_t qtree_pick_ranked(const struct qtree *t, const size_t *rank);

/*
 * qtree_build() for every resource id the cache knows, then every queue's
 * alloc (what its gangs hold: an admitted gang as a pass charges it, hold.h;
 * another its ungated pods' requests) and demand (plus the minResources of
 * its present gangs that are not admitted), then qtree_derive(): the tree as
 * it stands outside a pass (status, metrics, preemption).
 */
void qtree_fill(struct qtree *t, const struct cache *c);

/*
 * The rule queue i breaks (QUEUETREE_BAD_SPEC), or the one its bad ancestor
 * breaks (BAD_ANCESTOR under a BAD_SPEC queue); NULL otherwise. Borrowed from t.
 */
const struct queuespec_problem *qtree_bad_spec(const struct qtree *t, const struct cache *c, size_t i);

/* The names of queue i's children, ", "-separated, into b (for denials and messages). */
void qtree_children_text(const struct qtree *t, size_t i, struct util_buf *b);

#endif
