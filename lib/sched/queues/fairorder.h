/*
 * fairorder: the order an admission pass (admit.h) weighs gangs in across the
 * leaf queues of the tree (qtree.h): fair sharing between leaves, the caller's
 * order within each.
 *
 * The caller gives its items (gangs) already sorted in their within-leaf order
 * (priority, then older, then name), each with the tree index of its queue.
 * fairorder_next() first returns, in that order, the items whose queue is not
 * a usable leaf (qtree_leaf_usable(): they can only wait, or finish what was
 * admitted before), then picks the leaf whose turn it is as qtree_pick() does
 * (qtree_pick_ranked()), and returns that leaf's next item: from the root
 * down, the child with the lowest share (qtree_share(); one that deserves
 * nothing last) whose subtree has items left. Shares are read from the tree's
 * alloc at each call, so what the caller admitted meanwhile (qtree_add_alloc())
 * moves the turn. Between equal shares the child whose next item comes first
 * in the caller's order wins (qtree_pick(): the lower name), so that while
 * nothing is held the order across queues is the order within them: priority,
 * then age, as kueue #10131 asks of hierarchical fair sharing.
 *
 * The pick is kept, not redone: each queue's children (and the root's) play a
 * tournament (a winner tree over the siblings, by share then rank), and only
 * the entries whose share or next item moved are replayed: the picked leaf's
 * path, and the queues the tree logs as moved (qtree_keylog: reclaim and
 * preemption move others' shares than the picked one's). O(depth × log
 * siblings) per item, where qtree_pick_ranked() is O(queues). Pure: no I/O.
 */
#ifndef RAYGATE_FAIRORDER_H
#define RAYGATE_FAIRORDER_H

#include <stddef.h>

#include "qtree.h"

/* fairorder_next() when every item was returned. */
#define FAIRORDER_END QTREE_RANK_NONE

struct fairorder {
    struct qtree *t;    /* borrowed; its keylog is f's until fairorder_finish() */
    size_t n;           /* items */
    const size_t *leaf; /* borrowed, n: each item's tree index (QUEUETREE_ROOT: not in the tree) */
    size_t *first;      /* t->n: each leaf's next item, FAIRORDER_END: none left */
    size_t *next;       /* n: the item after it in its leaf */
    size_t *head;       /* t->n: the first item left in each subtree (the pick's ranks), kept up to date */
    size_t unusable;    /* the position of the next item (in the caller's order) to check for an unusable queue */
    /* The tournaments: group g (queue g's children; t->n: the root's) holds width[g] (a power of two) leaf slots at
       tour[base[g] + width[g] ...], its winner at tour[base[g] + 1]; each slot a queue index, QUEUETREE_ROOT: empty. */
    size_t *tour;
    size_t *base;  /* t->n + 1 */
    size_t *width; /* t->n + 1 */
    size_t *slot;  /* t->n: each queue's slot in its parent's group */
    struct qtree_keylog log;
};

/*
 * Sets f up for items 0..n (leaf: their tree indexes, borrowed until
 * fairorder_finish()) over tree t (borrowed; t's keylog is f's until then).
 */
void fairorder_init(struct fairorder *f, struct qtree *t, const size_t *leaf, size_t n);

void fairorder_finish(struct fairorder *f);

/* The next item to weigh, or FAIRORDER_END. */
size_t fairorder_next(struct fairorder *f);

#endif
