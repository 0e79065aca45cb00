#include "reclaimtree.h"

#include <stdlib.h>
#include <string.h>

#include "qtree.h"
#include "queuetree.h"
#include "util.h"

void reclaimtree_init(struct reclaimtree *t, const struct reclaimtree_node *nodes, size_t n)
{
    memset(t, 0, sizeof(*t));
    t->nodes = nodes;
    t->n = n;
    t->up = util_calloc(n + 1, sizeof(*t->up));
    t->depth = util_calloc(n + 1, sizeof(*t->depth));
    t->freed = util_calloc(n + 1, sizeof(*t->freed));
    resources_init(&t->tmp);
    for (size_t i = 0; i < n; i++) {
        resources_init(&t->freed[i]);
        t->up[i] = nodes[i].parent < n && nodes[i].parent != i ? nodes[i].parent : QUEUETREE_ROOT;
    }
    /* A chain longer than n is a cycle (or under one): its queue is taken as a child of the root (depth 0 marks it first). */
    for (size_t i = 0; i < n; i++) {
        size_t steps = 0;
        for (size_t q = t->up[i]; q != QUEUETREE_ROOT && steps <= n; q = t->up[q])
            steps++;
        t->depth[i] = steps <= n;
    }
    for (size_t i = 0; i < n; i++) {
        if (!t->depth[i])
            t->up[i] = QUEUETREE_ROOT;
        t->depth[i] = 0;
    }
    t->guarded = util_calloc(n + 1, sizeof(*t->guarded));
    for (size_t i = 0; i < n; i++) {
        for (size_t q = i; q != QUEUETREE_ROOT; q = t->up[q])
            t->depth[i]++;
        if (nodes[i].guarantee != NULL && nodes[i].guarantee->len > 0)
            t->guarded[t->up[i] == QUEUETREE_ROOT ? n : t->up[i]] = 1;
    }
}

void reclaimtree_finish(struct reclaimtree *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++)
        resources_finish(&t->freed[i]);
    resources_finish(&t->tmp);
    free(t->freed);
    free(t->guarded);
    free(t->depth);
    free(t->up);
    memset(t, 0, sizeof(*t));
}

int64_t reclaimtree_value(const struct resources *r, const char *name)
{
    const struct quantity *q = r != NULL ? resources_get(r, name) : NULL;
    return q != NULL ? q->value : 0;
}

int reclaimtree_within(const struct resources *have, const struct resources *limit)
{
    for (size_t k = 0; limit != NULL && k < limit->len; k++) {
        if (reclaimtree_value(have, limit->items[k].name) > limit->items[k].quantity.value)
            return 0;
    }
    return 1;
}

size_t reclaimtree_depth(const struct reclaimtree *t, size_t i)
{
    return i < t->n ? t->depth[i] : 0;
}

size_t reclaimtree_lca(const struct reclaimtree *t, size_t a, size_t b)
{
    if (a >= t->n || b >= t->n)
        return QUEUETREE_ROOT;
    while (t->depth[a] > t->depth[b])
        a = t->up[a];
    while (t->depth[b] > t->depth[a])
        b = t->up[b];
    while (a != b) {
        a = t->up[a];
        b = t->up[b];
    }
    return a;
}

int reclaimtree_under(const struct reclaimtree *t, size_t anc, size_t q)
{
    return anc < t->n && reclaimtree_lca(t, anc, q) == anc;
}

void reclaimtree_clear(struct reclaimtree *t)
{
    for (size_t i = 0; i < t->n; i++)
        resources_finish(&t->freed[i]);
}

int reclaimtree_free(struct reclaimtree *t, size_t q, const struct resources *hold, struct error *err)
{
    for (; q < t->n && hold != NULL; q = t->up[q]) {
        if (resources_add_scaled(&t->freed[q], hold, 1, err) != 0)
            return -1;
    }
    return 0;
}

double reclaimtree_share(const struct resources *alloc, const struct resources *deserved)
{
    double share = 0;
    int any = 0;
    for (size_t k = 0; deserved != NULL && k < deserved->len; k++) {
        int64_t want = deserved->items[k].quantity.value;
        if (want <= 0)
            continue;
        double s = (double)reclaimtree_value(alloc, deserved->items[k].name) / (double)want;
        share = !any || s > share ? s : share;
        any = 1;
    }
    if (any)
        return share;
    for (size_t k = 0; alloc != NULL && k < alloc->len; k++) {
        if (alloc->items[k].quantity.value > 0)
            return QTREE_SHARE_MAX;
    }
    return 0;
}

/* out = queue q's allocation after the set, plus request (NULL: nothing). */
static int after(struct reclaimtree *t, size_t q, const struct resources *request, struct resources *out, struct error *err)
{
    resources_finish(out);
    const struct resources *alloc = t->nodes[q].allocated;
    if ((alloc != NULL && resources_add_scaled(out, alloc, 1, err) != 0) || resources_add_scaled(out, &t->freed[q], -1, err) != 0)
        return -1;
    return request != NULL ? resources_add_scaled(out, request, 1, err) : 0;
}

/*
 * Under parent (QUEUETREE_ROOT: the root), in each resource room lists and
 * request asks for: the sum over parent's children s of after(s) (+ request
 * for on_path), each at least its guarantee when reserve is set, stays
 * within room. With reserve, only resources some child guarantees count.
 */
static int level_fits(struct reclaimtree *t, size_t parent, const struct resources *room, size_t on_path,
                      const struct resources *request, int reserve, struct error *err)
{
    for (size_t k = 0; room != NULL && k < room->len; k++) {
        const char *name = room->items[k].name;
        if (reclaimtree_value(request, name) <= 0)
            continue;
        int64_t sum = 0;
        int guaranteed = 0;
        for (size_t s = 0; s < t->n; s++) {
            if (t->up[s] != parent)
                continue;
            int64_t g = reserve ? reclaimtree_value(t->nodes[s].guarantee, name) : 0;
            guaranteed |= g > 0;
            if (after(t, s, s == on_path ? request : NULL, &t->tmp, err) != 0)
                return -1;
            int64_t have = reclaimtree_value(&t->tmp, name), use = have > g ? have : g;
            if (__builtin_add_overflow(sum, use, &sum)) {
                error_setf(err, "%s: total overflows a 64-bit integer", name);
                return -1;
            }
        }
        if ((guaranteed || !reserve) && sum > room->items[k].quantity.value)
            return 0;
    }
    return 1;
}

/* Queue q's parent level, the root's too, leaves room for request (level_fits()). */
static int parent_fits(struct reclaimtree *t, size_t q, const struct resources *request, struct error *err)
{
    size_t up = t->up[q];
    if (up != QUEUETREE_ROOT)
        return t->guarded[up] ? level_fits(t, up, t->nodes[up].capability, q, request, 1, err) : 1;
    int r = level_fits(t, up, t->root_cap, q, request, 0, err);
    return r <= 0 || !t->guarded[t->n] ? r : level_fits(t, up, t->root_room, q, request, 1, err);
}

int reclaimtree_fits(struct reclaimtree *t, size_t p, const struct resources *request, struct reclaimtree_block *why,
                     struct error *err)
{
    for (size_t q = p; q < t->n; q = t->up[q]) {
        if (after(t, q, request, why != NULL ? &why->have : &t->tmp, err) != 0)
            return -1;
        const struct resources *cap = t->nodes[q].capability;
        if (!reclaimtree_within(why != NULL ? &why->have : &t->tmp, cap)) {
            if (why != NULL) {
                why->level = q;
                why->limit = cap;
            }
            return 0;
        }
        int r = parent_fits(t, q, request, err);
        if (r <= 0 && why != NULL) {
            why->level = t->up[q];
            why->limit = NULL;
        }
        if (r <= 0)
            return r;
    }
    return 1;
}

/*
 * Whether after (queue q's allocation after the set) keeps bound (NULL:
 * none) in each resource it lists: at or above it, or not taken from at all;
 * loose: a resource q already had less of than bound does not count.
 */
static int keeps(const struct resources *before, const struct resources *after, const struct resources *bound, int loose)
{
    for (size_t k = 0; bound != NULL && k < bound->len; k++) {
        const char *name = bound->items[k].name;
        int64_t want = bound->items[k].quantity.value, had = reclaimtree_value(before, name), have = reclaimtree_value(after, name);
        if (have < want && have < had && (!loose || had >= want))
            return 0;
    }
    return 1;
}

/* Queue q (the victim's queue: loose; an ancestor: strict) keeps its deserved and its guarantee (strict) after the set. */
static int keeps_bounds(struct reclaimtree *t, size_t q, int loose, struct error *err)
{
    if (after(t, q, NULL, &t->tmp, err) != 0)
        return -1;
    const struct reclaimtree_node *x = &t->nodes[q];
    return keeps(x->allocated, &t->tmp, x->deserved, loose) && keeps(x->allocated, &t->tmp, x->guarantee, 0);
}

/* Queue v's allocation (before) is above its deserved in some resource deserved lists. */
static int borrows(const struct reclaimtree_node *v)
{
    for (size_t k = 0; v->deserved != NULL && k < v->deserved->len; k++) {
        if (reclaimtree_value(v->allocated, v->deserved->items[k].name) > v->deserved->items[k].quantity.value)
            return 1;
    }
    return 0;
}

/* The share of queue v after the set; QTREE_SHARE_MAX when its deserved lists no positive quantity. */
static int victim_share(struct reclaimtree *t, size_t v, double *share, struct error *err)
{
    const struct resources *deserved = t->nodes[v].deserved;
    *share = QTREE_SHARE_MAX;
    for (size_t k = 0; deserved != NULL && k < deserved->len; k++) {
        if (deserved->items[k].quantity.value > 0) {
            if (after(t, v, NULL, &t->tmp, err) != 0)
                return -1;
            *share = reclaimtree_share(&t->tmp, deserved);
            break;
        }
    }
    return 0;
}

/* The rules of reclaimtree_allows() for one victim queue v. */
static int allows_one(struct reclaimtree *t, size_t p, const struct resources *request, double p_share, size_t v, struct error *err)
{
    if (v >= t->n || !borrows(&t->nodes[v]))
        return 0;
    size_t lca = reclaimtree_lca(t, p, v);
    for (size_t q = v; q != lca && q < t->n; q = t->up[q]) {
        int r = keeps_bounds(t, q, q == v, err);
        if (r <= 0)
            return r;
    }
    for (size_t q = t->up[p]; q != lca && q < t->n; q = t->up[q]) {
        if (t->nodes[q].deserved == NULL)
            continue;
        if (after(t, q, request, &t->tmp, err) != 0)
            return -1;
        if (!reclaimtree_within(&t->tmp, t->nodes[q].deserved))
            return 0;
    }
    double v_share;
    if (victim_share(t, v, &v_share, err) != 0)
        return -1;
    return p_share <= v_share;
}

int reclaimtree_allows(struct reclaimtree *t, size_t p, const struct resources *request, const size_t *victim_queues, size_t n,
                       struct error *err)
{
    if (p >= t->n || after(t, p, request, &t->tmp, err) != 0)
        return p >= t->n ? 0 : -1;
    double p_share = reclaimtree_share(&t->tmp, t->nodes[p].deserved);
    for (size_t i = 0; i < n; i++) {
        int r = allows_one(t, p, request, p_share, victim_queues[i], err);
        if (r <= 0)
            return r;
    }
    return 1;
}
