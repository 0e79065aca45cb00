#include "fitwhy.h"

#include "draset.h"
#include "resources.h"

void fitwhy_no_match(struct util_buf *b, size_t nn, size_t not_ready, size_t selector, size_t taints)
{
    const char *sep = ": ";
    if (nn == 0 && not_ready == 0)
        util_buf_printf(b, ": there are no nodes");
    if (not_ready > 0) {
        util_buf_printf(b, "%s%zu %s not Ready or unschedulable", sep, not_ready,
                        util_plural((int64_t)not_ready, "node is", "nodes are"));
        sep = ", ";
    }
    if (selector > 0) {
        util_buf_printf(b, "%s%zu %s not match its node selector or affinity", sep, selector,
                        util_plural((int64_t)selector, "node does", "nodes do"));
        sep = ", ";
    }
    if (taints > 0)
        util_buf_printf(b, "%s%zu %s a taint it does not tolerate", sep, taints,
                        util_plural((int64_t)taints, "node has", "nodes have"));
}

void fitwhy_shortage(struct util_buf *b, const struct cache *c, const struct shape_rl *req, const int64_t *best, int64_t best_pods,
                     size_t nshort)
{
    struct util_buf most = {0};
    const char *sep = "";
    util_buf_printf(b, " (");
    for (uint32_t k = 0; req != NULL && k < req->len; k++) {
        if (best[k] >= req->items[k].value)
            continue;
        const char *name = cache_resource_name(c, req->items[k].id);
        util_buf_printf(b, "%s%s ", sep, name);
        resources_put_quantity(b, name, req->items[k].value, req->items[k].format);
        if (nshort > 1)
            util_buf_printf(&most, "%s%s ", sep, name);
        resources_put_quantity(&most, name, best[k], req->items[k].format);
        sep = ", ";
    }
    if (best_pods < 1) {
        util_buf_printf(b, "%spods 1", sep);
        util_buf_printf(&most, "%s%s0", sep, nshort > 1 ? "pods " : "");
    }
    util_buf_printf(b, "): at most %s free on one node", most.data);
    util_buf_finish(&most);
}

void fitwhy_devices(struct util_buf *b, const struct cache *c, const struct shape_rl *req, const int64_t *best)
{
    for (uint32_t k = 0; c->dra != NULL && req != NULL && k < req->len; k++) {
        if (best[k] >= req->items[k].value || draset_resource_index(c->dra, cache_resource_name(c, req->items[k].id)) < 0)
            continue;
        const char *inexact = draset_inexact(c->dra);
        util_buf_printf(b, " (%s: DRA devices the nodes' ResourceSlices publish, less those claims hold%s%s)",
                        cache_resource_name(c, req->items[k].id), inexact != NULL ? "; " : "", inexact != NULL ? inexact : "");
        return;
    }
}
