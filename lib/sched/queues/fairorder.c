#include "fairorder.h"

#include <stdlib.h>
#include <string.h>

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

/* Group g's parent: the group of queue i's siblings (t->n: the root's children). */
static size_t group_of(const struct qtree *t, size_t i)
{
    return t->queues[i].parent != QUEUETREE_ROOT ? t->queues[i].parent : t->n;
}

static size_t group_first(const struct qtree *t, size_t g)
{
    return g == t->n ? t->root_first : t->queues[g].first_child;
}

/* Whether queue a goes before queue b in qtree_pick_ranked()'s walk (either may be QUEUETREE_ROOT: an empty slot). */
static int beats(const struct fairorder *f, size_t a, size_t b)
{
    if (a == QUEUETREE_ROOT || f->head[a] == QTREE_RANK_NONE)
        return 0;
    if (b == QUEUETREE_ROOT || f->head[b] == QTREE_RANK_NONE)
        return 1;
    double ka = f->t->queues[a].key, kb = f->t->queues[b].key;
    return ka < kb || (ka == kb && f->head[a] < f->head[b]);
}

/* Replays the matches above slot at of group g's tournament. */
static void replay(struct fairorder *f, size_t g, size_t at)
{
    size_t *tour = f->tour + f->base[g];
    for (at /= 2; at >= 1; at /= 2) {
        size_t a = tour[2 * at], b = tour[2 * at + 1];
        tour[at] = beats(f, b, a) ? b : a;
    }
}

/* Queue i's share or next item moved: its matches again. */
static void moved(struct fairorder *f, size_t i)
{
    size_t g = group_of(f->t, i);
    replay(f, g, f->width[g] + f->slot[i]);
}

/* Every group's slots, then every match. */
static void tournaments_init(struct fairorder *f)
{
    const struct qtree *t = f->t;
    f->base = util_calloc(t->n + 1, sizeof(*f->base));
    f->width = util_calloc(t->n + 1, sizeof(*f->width));
    f->slot = util_calloc(t->n + 1, sizeof(*f->slot));
    size_t total = 0;
    for (size_t g = 0; g <= t->n; g++) {
        size_t m = 0;
        for (size_t c = group_first(t, g); c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
            f->slot[c] = m++;
        size_t w = 1;
        while (w < m)
            w *= 2;
        f->base[g] = total;
        f->width[g] = w;
        total += 2 * w;
    }
    f->tour = util_calloc(total + 1, sizeof(*f->tour));
    for (size_t k = 0; k < total; k++)
        f->tour[k] = QUEUETREE_ROOT;
    for (size_t i = 0; i < t->n; i++)
        f->tour[f->base[group_of(t, i)] + f->width[group_of(t, i)] + f->slot[i]] = i;
    for (size_t g = 0; g <= t->n; g++) {
        size_t *tour = f->tour + f->base[g];
        for (size_t at = f->width[g] - 1; at >= 1; at--)
            tour[at] = beats(f, tour[2 * at + 1], tour[2 * at]) ? tour[2 * at + 1] : tour[2 * at];
    }
}

void fairorder_init(struct fairorder *f, struct qtree *t, const size_t *leaf, size_t n)
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
    tournaments_init(f);
    f->log = (struct qtree_keylog){.logged = util_calloc(t->n + 1, 1)};
    t->keylog = &f->log;
}

void fairorder_finish(struct fairorder *f)
{
    if (f->t->keylog == &f->log)
        f->t->keylog = NULL;
    free(f->first);
    free(f->next);
    free(f->head);
    free(f->tour);
    free(f->base);
    free(f->width);
    free(f->slot);
    free(f->log.idx);
    free(f->log.logged);
    memset(f, 0, sizeof(*f));
}

/*
 * qtree_pick_ranked()'s walk over the kept tournaments, with equal shares won
 * by the child whose next item comes first in the caller's order (priority,
 * then age, then name) rather than by the lower name: while shares are equal
 * (nothing held yet) the order across queues stays the one within them. The
 * queues the tree logged as moved replay their matches first.
 */
static size_t pick(struct fairorder *f)
{
    for (size_t k = 0; k < f->log.n; k++) {
        moved(f, f->log.idx[k]);
        f->log.logged[f->log.idx[k]] = 0;
    }
    f->log.n = 0;
    size_t picked = QUEUETREE_ROOT;
    for (size_t g = f->t->n;;) {
        size_t w = f->tour[f->base[g] + 1];
        if (w == QUEUETREE_ROOT || f->head[w] == QTREE_RANK_NONE)
            return picked;
        picked = g = w;
    }
}

/* Leaf l's first item changed: its head, and its ancestors' as far as theirs change (O(siblings) a level), replayed. */
static void update_heads(struct fairorder *f, size_t l)
{
    const struct qtree *t = f->t;
    f->head[l] = f->first[l];
    moved(f, l);
    for (size_t at = t->queues[l].parent; at != QUEUETREE_ROOT; at = t->queues[at].parent) {
        size_t h = f->first[at];
        for (size_t c = t->queues[at].first_child; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
            h = f->head[c] < h ? f->head[c] : h;
        if (h == f->head[at])
            break;
        f->head[at] = h;
        moved(f, at);
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
