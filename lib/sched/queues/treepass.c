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

void treepass_load(struct qtree *t, const struct marks *m, const unsigned char *skip, int64_t *a, int64_t *tail)
{
    for (size_t i = 0; i < t->n; i++) {
        struct cache_gang *g;
        cache_queue_for_each_gang(g, t->queues[i].q) {
            if (g->admitted)
                hold_gang(m, t->nres, g, NULL, a, tail);
            else
                hold_ungated(m, t->nres, g, a);
            if (skip == NULL || !skip[i])
                qtree_add_alloc(t, i, a, 1);
            qtree_add_demand(t, i, a, 1);     /* demand is alloc and more */
            if (g->present && !g->admitted) { /* as qtree_fill() counts it */
                treepass_min_dense(g, t->nres, a);
                qtree_add_demand(t, i, a, 1);
            }
        }
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
