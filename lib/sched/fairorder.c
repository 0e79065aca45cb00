#include "fairorder.h"

#include <stdlib.h>

#include "util.h"

static int usable(const struct fairorder *f, size_t item)
{
    return f->leaf[item] != QUEUETREE_ROOT && qtree_leaf_usable(f->t, f->leaf[item]);
}

void fairorder_init(struct fairorder *f, const struct qtree *t, const size_t *leaf, size_t n)
{
    f->t = t;
    f->n = n;
    f->leaf = leaf;
    f->unusable = 0;
    f->first = util_calloc(t->n + 1, sizeof(*f->first));
    f->next = util_calloc(n + 1, sizeof(*f->next));
    f->head = util_calloc(t->n + 1, sizeof(*f->head));
    size_t *last = util_calloc(t->n + 1, sizeof(*last));
    for (size_t i = 0; i < t->n; i++)
        f->first[i] = last[i] = FAIRORDER_END;
    /* Each leaf's items, linked in the caller's order. */
    for (size_t k = 0; k < n; k++) {
        f->next[k] = FAIRORDER_END;
        if (!usable(f, k))
            continue;
        size_t l = leaf[k];
        if (last[l] == FAIRORDER_END)
            f->first[l] = k;
        else
            f->next[last[l]] = k;
        last[l] = k;
    }
    free(last);
}

void fairorder_finish(struct fairorder *f)
{
    free(f->first);
    free(f->next);
    free(f->head);
    f->first = f->next = f->head = NULL;
}

/* The first item left of subtree i's leaves (into head[], post-order); FAIRORDER_END: none. */
static size_t mark_heads(const struct fairorder *f, size_t i, size_t *head)
{
    size_t h = f->first[i];
    for (size_t c = f->t->queues[i].first_child; c != QUEUETREE_ROOT; c = f->t->queues[c].next_sibling) {
        size_t x = mark_heads(f, c, head);
        if (x < h)
            h = x;
    }
    head[i] = h;
    return h;
}

/*
 * Queue c's share for its turn: qtree_share(), except that a queue that
 * deserves nothing (weight 0, or no room left for it) comes after every queue
 * that deserves something, even while it holds nothing: it only borrows what
 * they leave.
 */
static double turn_share(const struct qtree *t, size_t c)
{
    double s = qtree_share(t, c);
    for (uint32_t k = 0; s == 0 && k < t->nres; k++) {
        if (t->queues[c].deserved[k] > 0)
            return s;
    }
    return s == 0 ? QTREE_SHARE_MAX : s;
}

/*
 * qtree_pick()'s walk: from the root down, the child with the lowest share
 * whose subtree has items left; between equal shares, the one whose next item
 * comes first in the caller's order (priority, then age, then name), not the
 * lower name: while shares are equal (nothing held yet) the order across
 * queues stays the one within them.
 */
static size_t pick(struct fairorder *f)
{
    const struct qtree *t = f->t;
    for (size_t c = t->root_first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
        mark_heads(f, c, f->head);
    size_t first = t->root_first, picked = QUEUETREE_ROOT;
    while (first != QUEUETREE_ROOT) {
        size_t best = QUEUETREE_ROOT;
        double best_share = 0;
        for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling) {
            if (f->head[c] == FAIRORDER_END)
                continue;
            double s = turn_share(t, c);
            if (best == QUEUETREE_ROOT || s < best_share || (s == best_share && f->head[c] < f->head[best])) {
                best = c;
                best_share = s;
            }
        }
        if (best == QUEUETREE_ROOT)
            break;
        picked = best;
        first = t->queues[best].first_child;
    }
    return picked;
}

size_t fairorder_next(struct fairorder *f)
{
    while (f->unusable < f->n) {
        size_t k = f->unusable++;
        if (!usable(f, k))
            return k;
    }
    size_t l = pick(f);
    if (l == QUEUETREE_ROOT || f->first[l] == FAIRORDER_END) {
        /* No leaf the walk reaches has items: any that has (none, unless the links disagree with qtree_leaf_usable). */
        for (l = 0; l < f->t->n && f->first[l] == FAIRORDER_END; l++)
            ;
        if (l == f->t->n)
            return FAIRORDER_END;
    }
    size_t k = f->first[l];
    f->first[l] = f->next[k];
    return k;
}
