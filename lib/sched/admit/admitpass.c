#include "admitpass.h"

#include <inttypes.h>
#include <stdlib.h>

#include "hold.h"
#include "names.h"

struct admit_decision *admitpass_decide(struct pass *p, enum admit_action action, enum admit_reason reason, const struct work *w,
                                        char *message)
{
    struct admit_decision *d = admit_result_add(p->out, action, reason, w->g, message);
    if (reason == ADMIT_REASON_NODES || reason == ADMIT_REASON_TOPOLOGY)
        cache_gang_set_node_wait(p->c, w->g, 1);
    return d;
}

/* " (3 pods; cpu 3, memory 4Gi)", what follows a gang's name */
static void put_gang_size(struct util_buf *b, const struct cache_gang *g)
{
    util_buf_printf(b, " (%" PRId64 " %s", g->min_member, util_plural(g->min_member, "pod", "pods"));
    const char *sep = "; ";
    for (size_t i = 0; i < g->min_resources.len; i++) {
        const struct resource *r = &g->min_resources.items[i];
        if (r->quantity.value == 0)
            continue;
        util_buf_printf(b, "%s%s ", sep, r->name);
        resources_put_quantity(b, r->name, r->quantity.value, (uint8_t)r->quantity.format);
        sep = ", ";
    }
    util_buf_printf(b, ")");
}

/* Gangs of one size share one text: one formatting per pass. */
const char *admitpass_size_text(struct pass *p, const struct cache_gang *g)
{
    if (p->size_text == NULL || p->size_rl != g->min_rl || p->size_member != g->min_member) {
        struct util_buf b = {0};
        put_gang_size(&b, g);
        free(p->size_text);
        p->size_text = util_buf_take(&b);
        p->size_rl = g->min_rl;
        p->size_member = g->min_member;
    }
    return p->size_text;
}

void admitpass_put_name(const struct cache_gang *g, struct util_buf *b)
{
    util_buf_puts(b, "gang ");
    names_podgroup_put(b, cache_gang_group(g));
}

void admitpass_put_gang(struct pass *p, const struct cache_gang *g, struct util_buf *b)
{
    admitpass_put_name(g, b);
    util_buf_puts(b, admitpass_size_text(p, g));
}

void admitpass_block_queue(struct qstate *qs, const struct cache_gang *g)
{
    if (qs->q->dequeue == CACHE_DEQUEUE_FIFO)
        qs->blocker = g;
}

void admitpass_wait(struct pass *p, const struct work *w, enum admit_reason reason, char *message)
{
    admitpass_decide(p, ADMIT_ACTION_WAIT, reason, w, message);
    admitpass_block_queue(w->qs, w->g);
}
