#include "treepass.h"

#include <stdlib.h>
#include <string.h>

#include "hold.h"
#include "util.h"

int treepass_linked(const struct cache *c)
{
    struct cache_queue *q;
    cache_queue_for_each(q, c) {
        /* as qtree_build() sets nested, or the Queue named "root" */
        if (q->parent != NULL || q->guarantee != NULL || (q->present && strcmp(q->name, QUEUETREE_ROOT_NAME) == 0))
            return 1;
    }
    return 0;
}

void treepass_min_dense(const struct cache_gang *g, uint32_t nres, int64_t *out)
{
    memset(out, 0, nres * sizeof(*out));
    for (uint32_t k = 0; g->min_rl != NULL && k < g->min_rl->len; k++) {
        if (g->min_rl->items[k].id < nres)
            out[g->min_rl->items[k].id] = g->min_rl->items[k].value;
    }
}

static void add_into(int64_t *dst, const int64_t *v, uint32_t nres)
{
    for (uint32_t k = 0; k < nres; k++)
        dst[k] = util_sat_add(dst[k], v[k]);
}

/* What queue q's gangs hold (alloc) and ask for (demand: alloc, and the minResources of its present gangs not admitted). */
static void sum_queue(const struct cache_queue *q, uint32_t nres, const struct marks *m, int64_t *alloc, int64_t *demand,
                      int64_t *a, int64_t *tail)
{
    memset(alloc, 0, nres * sizeof(*alloc));
    memset(demand, 0, nres * sizeof(*demand));
    struct cache_gang *g;
    cache_queue_for_each_gang(g, q) {
        if (g->admitted)
            hold_gang(m, nres, g, NULL, a, tail);
        else
            hold_ungated(m, nres, g, a);
        add_into(alloc, a, nres);
        add_into(demand, a, nres);        /* demand is alloc and more */
        if (g->present && !g->admitted) { /* as qtree_fill() counts it */
            treepass_min_dense(g, nres, a);
            add_into(demand, a, nres);
        }
    }
}

/*
 * Queue q's sums: kept from the last pass when it is not evaluated (the pass's marks are on its works' gangs and pods only,
 * so an other queue's sums depend on the cache alone) and none of its gangs changed since (q->version).
 */
static const struct cache_queue_memo *queue_sums(const struct cache_queue *q, uint32_t nres, const struct marks *m, int evaluated,
                                                 int64_t *a, int64_t *tail)
{
    int valid;
    struct cache_queue_memo *mm = model_queue_memo(q, nres, &valid);
    if (valid && !evaluated)
        return mm;
    sum_queue(q, nres, m, mm->alloc, mm->demand, a, tail);
    model_queue_memo_done(q, !evaluated);
    return mm;
}

void treepass_load(struct qtree *t, const struct marks *m, const unsigned char *skip, int64_t *a, int64_t *tail)
{
    for (size_t i = 0; i < t->n; i++) {
        int evaluated = skip != NULL && skip[i];
        const struct cache_queue_memo *mm = queue_sums(t->queues[i].q, t->nres, m, evaluated, a, tail);
        if (!evaluated)
            qtree_add_alloc(t, i, mm->alloc, 1);
        qtree_add_demand(t, i, mm->demand, 1);
    }
    qtree_derive(t);
}

enum admit_reason treepass_unusable(const struct qtree *t, size_t i, const struct cache *c, char **why)
{
    if (i == QUEUETREE_ROOT || qtree_leaf_usable(t, i))
        return ADMIT_REASON_NONE;
    struct util_buf b = {0};
    int64_t zero = 0;
    /* qtree_fits says which: a bad queue, or one with children (or the root queue). */
    int64_t *none = t->nres > 0 ? util_calloc(t->nres, sizeof(*none)) : &zero;
    enum admit_reason r = treepass_fits(t, i, none, c, &b, NULL);
    if (none != &zero)
        free(none);
    if (r != ADMIT_REASON_QUEUE_NOT_LEAF && r != ADMIT_REASON_QUEUE_BAD_TREE) {
        /* Not a leaf the tree lets hold gangs, whatever qtree_fits says of nothing: as one with children. */
        util_buf_finish(&b);
        struct qtree_block nl = {.kind = QTREE_BLOCK_NOT_LEAF, .level = i};
        qtree_block_text(t, i, &nl, c, &b);
        r = ADMIT_REASON_QUEUE_NOT_LEAF;
    }
    *why = util_buf_take(&b);
    return r;
}

enum admit_reason treepass_fits(const struct qtree *t, size_t i, const int64_t *need, const struct cache *c, struct util_buf *b,
                                int *guarantee)
{
    struct qtree_block why;
    if (i == QUEUETREE_ROOT || qtree_fits(t, i, need, &why))
        return ADMIT_REASON_NONE;
    qtree_block_text(t, i, &why, c, b);
    if (guarantee != NULL)
        *guarantee = why.kind == QTREE_BLOCK_GUARANTEE;
    switch (why.kind) {
    case QTREE_BLOCK_NOT_LEAF:
        return ADMIT_REASON_QUEUE_NOT_LEAF;
    case QTREE_BLOCK_BAD_TREE:
        return ADMIT_REASON_QUEUE_BAD_TREE;
    case QTREE_FITS:
    case QTREE_BLOCK_CAPABILITY:
    case QTREE_BLOCK_GUARANTEE:
        break;
    }
    return ADMIT_REASON_QUEUE_TREE;
}
