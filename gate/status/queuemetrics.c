#include "queuemetrics.h"

#include <math.h>
#include <stdlib.h>

#include "resources.h"
#include "util.h"

struct queuemetrics {
    struct metrics_family *pending, *allocated, *capability, *share, *deserved;
    json_t *queues; /* owned: {queue: {"allocated": {resource: true}, "capability": {resource: true},
                       "deserved": {resource: "true"|"false"}}}: the series set */
};

struct queuemetrics *queuemetrics_create(struct metrics_registry *reg)
{
    static const char *const queue_reason[] = {"queue", "reason"}, *const queue_resource[] = {"queue", "resource"},
                             *const queue[] = {"queue"}, *const queue_resource_derived[] = {"queue", "resource", "derived"};
    struct queuemetrics *m = util_calloc(1, sizeof(*m));
    m->pending = metrics_gauge_create(reg, "raygate_gangs_pending", "Gangs not admitted, by queue and reason.", 2, queue_reason);
    m->allocated = metrics_gauge_create(
        reg, "raygate_queue_allocated",
        "What the queue's admitted gangs hold (a parent: its subtree's), by resource (cpu in cores, others in base units).", 2,
        queue_resource);
    m->capability =
        metrics_gauge_create(reg, "raygate_queue_capability",
                             "The queue's capability, by resource (cpu in cores, others in base units).", 2, queue_resource);
    m->share = metrics_gauge_create(reg, "raygate_queue_share",
                                    "The queue's share: its dominant resource's allocated / deserved (+Inf: holds what it "
                                    "deserves none of).",
                                    1, queue);
    m->deserved = metrics_gauge_create(reg, "raygate_queue_deserved",
                                       "The queue's effective deserved, by resource (cpu in cores, others in base units); "
                                       "derived=\"true\" when derived by weight.",
                                       3, queue_resource_derived);
    m->queues = json_object();
    return m;
}

void queuemetrics_destroy(struct queuemetrics *m)
{
    if (m == NULL)
        return;
    json_decref(m->queues);
    free(m);
}

static double gauge_value(const char *resource, int64_t v)
{
    return resources_unit(resource) == QUANTITY_UNIT_MILLI ? (double)v / 1000.0 : (double)v;
}

/*
 * Removes fam's series {queue, resource[, value]} for each resource in old
 * (borrowed) that now (borrowed) lacks or gives another value: a string value
 * is the series' last label.
 */
static void remove_gone(struct metrics_family *fam, const char *queue, const json_t *old, const json_t *now)
{
    const char *res;
    json_t *v;
    json_object_foreach((json_t *)old, res, v)
    {
        json_t *n = json_object_get(now, res);
        if (n == NULL || !json_equal(n, v)) {
            const char *labels[] = {queue, res, json_string_value(v)};
            metrics_remove(fam, labels);
        }
    }
}

static void set_pending(struct queuemetrics *m, const struct cache_queue *q)
{
    int64_t pending[PODGROUP_REASON_TOKENS] = {0};
    for (const struct cache_gang *g = q->gangs; g != NULL; g = g->queue_next) {
        if (podgroup_wanted(g) && !g->admitted)
            pending[(size_t)g->last_reason < PODGROUP_REASON_TOKENS ? (size_t)g->last_reason : 0]++;
    }
    for (size_t k = 0; k < PODGROUP_REASON_TOKENS; k++) {
        const char *labels[] = {q->name, podgroup_reason_token((enum admit_reason)k)};
        metrics_gauge_set(m->pending, labels, (double)pending[k]);
    }
}

/* The capability and allocated series of q (its capability's resources are in alloc too, zero when unheld). */
static void set_allocated(struct queuemetrics *m, const struct cache *c, const struct cache_queue *q,
                          const struct podgroup_queue_status *st, json_t *cap, json_t *alloc)
{
    for (uint32_t k = 0; q->present && q->capability != NULL && k < q->capability->len; k++) {
        const char *res = cache_resource_name(c, q->capability->items[k].id);
        const char *labels[] = {q->name, res};
        metrics_gauge_set(m->capability, labels, gauge_value(res, q->capability->items[k].value));
        json_object_set_new(cap, res, json_true());
        json_object_set_new(alloc, res, json_true());
    }
    for (size_t i = 0; i < st->allocated.len; i++)
        json_object_set_new(alloc, st->allocated.items[i].name, json_true());
    const char *res;
    json_t *v;
    json_object_foreach(alloc, res, v)
    {
        const struct quantity *qty = resources_get(&st->allocated, res);
        const char *labels[] = {q->name, res};
        metrics_gauge_set(m->allocated, labels, qty != NULL ? gauge_value(res, qty->value) : 0.0);
    }
}

/* The share and deserved series of q; the resources set into des ({resource: derived}). */
static void set_tree(struct queuemetrics *m, const struct cache_queue *q, const struct podgroup_queue_status *st, json_t *des)
{
    const char *queue[] = {q->name};
    if (st->share >= 0)
        metrics_gauge_set(m->share, queue, st->share >= QTREE_SHARE_MAX ? INFINITY : st->share);
    else
        metrics_remove(m->share, queue);
    const char *derived = st->deserved_derived ? "true" : "false";
    for (size_t i = 0; i < st->deserved.len; i++) {
        const char *res = st->deserved.items[i].name;
        const char *labels[] = {q->name, res, derived};
        metrics_gauge_set(m->deserved, labels, gauge_value(res, st->deserved.items[i].quantity.value));
        json_object_set_new(des, res, json_string(derived));
    }
}

void queuemetrics_queue(struct queuemetrics *m, const struct cache *c, const struct cache_queue *q,
                        const struct podgroup_queue_status *st)
{
    json_t *old = json_object_get(m->queues, q->name);
    json_t *now = old != NULL ? json_deep_copy(old) : json_pack("{s:{},s:{},s:{}}", "allocated", "capability", "deserved");
    set_pending(m, q);
    if (st->fields & PODGROUP_QUEUE_ALLOCATED) {
        json_t *cap = json_object(), *alloc = json_object();
        set_allocated(m, c, q, st, cap, alloc);
        remove_gone(m->capability, q->name, json_object_get(old, "capability"), cap);
        remove_gone(m->allocated, q->name, json_object_get(old, "allocated"), alloc);
        json_object_set_new(now, "capability", cap);
        json_object_set_new(now, "allocated", alloc);
    }
    if (st->fields & PODGROUP_QUEUE_TREE) {
        json_t *des = json_object();
        set_tree(m, q, st, des);
        remove_gone(m->deserved, q->name, json_object_get(old, "deserved"), des);
        json_object_set_new(now, "deserved", des);
    }
    json_object_set_new(m->queues, q->name, now);
}

void queuemetrics_sweep(struct queuemetrics *m, const struct cache *c)
{
    const char *name;
    json_t *v, *tmp;
    json_object_foreach_safe(m->queues, tmp, name, v)
    {
        if (cache_queue_get(c, name) != NULL)
            continue;
        const char *labels[] = {name, NULL, NULL};
        metrics_remove(m->pending, labels);
        metrics_remove(m->allocated, labels);
        metrics_remove(m->capability, labels);
        metrics_remove(m->share, labels);
        metrics_remove(m->deserved, labels);
        json_object_del(m->queues, name);
    }
}
