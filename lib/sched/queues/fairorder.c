#include "fairorder.h"

#include <stdlib.h>

#include "util.h"

static int usable(const struct fairorder *f, size_t item)
{
    return f->leaf[item] != QUEUETREE_ROOT && qtree_leaf_usable(f->t, f->leaf[item]);
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
    for (size_t c = t->root_first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
        mark_heads(f, c, f->head);
}

void fairorder_finish(struct fairorder *f)
{
    free(f->first);
    free(f->next);
    free(f->head);
    f->first = f->next = f->head = NULL;
}

/*
 * qtree_pick()'s walk, with equal shares won by the child whose next item
 * comes first in the caller's order (priority, then age, then name) rather
 * than by the lower name: while shares are equal (nothing held yet) the order
 * across queues stays the one within them.
 */
static size_t pick(struct fairorder *f)
{
    return qtree_pick_ranked(f->t, f->head);
}

/* Leaf l's first item changed: its head, and its ancestors' as far as theirs change (O(siblings) a level). */
static void update_heads(struct fairorder *f, size_t l)
{
    const struct qtree *t = f->t;
    f->head[l] = f->first[l];
    for (size_t at = t->queues[l].parent; at != QUEUETREE_ROOT; at = t->queues[at].parent) {
        size_t h = f->first[at];
        for (size_t c = t->queues[at].first_child; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
            h = f->head[c] < h ? f->head[c] : h;
        if (h == f->head[at])
            break;
        f->head[at] = h;
    }
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
    update_heads(f, l);
    return k;
}
