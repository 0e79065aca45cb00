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
 * O(queues) per item (qtree_pick_ranked()). Pure: no I/O.
 */
#ifndef RAYGATE_FAIRORDER_H
#define RAYGATE_FAIRORDER_H

#include <stddef.h>

#include "qtree.h"

/* fairorder_next() when every item was returned. */
#define FAIRORDER_END QTREE_RANK_NONE

struct fairorder {
    const struct qtree *t; /* borrowed */
    size_t n;              /* items */
    const size_t *leaf;    /* borrowed, n: each item's tree index (QUEUETREE_ROOT: not in the tree) */
    size_t *first;         /* t->n: each leaf's next item, FAIRORDER_END: none left */
    size_t *next;          /* n: the item after it in its leaf */
    size_t *head;          /* t->n: the first item left in each subtree (the pick's ranks), kept up to date */
    size_t unusable;       /* the position of the next item (in the caller's order) to check for an unusable queue */
};

/* Sets f up for items 0..n (leaf: their tree indexes, borrowed until fairorder_finish()) over tree t (borrowed). */
void fairorder_init(struct fairorder *f, const struct qtree *t, const size_t *leaf, size_t n);

void fairorder_finish(struct fairorder *f);

/* The next item to weigh, or FAIRORDER_END. */
size_t fairorder_next(struct fairorder *f);

#endif
