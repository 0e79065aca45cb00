#include "dracache.h"

#include "devices.h"
#include "ledger.h"
#include "sharedcarry.h"

void dracache_use(struct cache *c, struct draset *s)
{
    c->dra = s;
    c->dra_priced = 0;
}

unsigned dracache_record(struct cache *c, enum draset_kind kind, int deleted, const json_t *obj, struct error *err)
{
    err->message[0] = '\0';
    if (c->dra == NULL)
        return 0;
    unsigned bits = draset_record(c->dra, kind, deleted, obj, err);
    if (bits & DRASET_CHANGED_NODES)
        c->capacity_changed = 1;
    if (bits)
        c->generation++;
    return bits;
}

int dracache_prepare(struct cache *c)
{
    if (c->dra == NULL)
        return 0;
    ledger_prepare(c->dra);
    uint64_t gen = draset_demand_generation(c->dra) + 1;
    if (c->dra_priced == gen) {
        sharedcarry_prepare(c);
        return 0;
    }
    c->dra_priced = gen;
    int changed = 0;
    for (struct table_node *n = table_next(&c->pods, NULL); n != NULL; n = table_next(&c->pods, n)) {
        struct cache_pod *pod = TABLE_CONTAINER_OF(n, struct cache_pod, by_name);
        if (pod->dev != NULL)
            changed |= devices_pod_price(&c->shapes, c->dra, pod);
    }
    for (struct cache_gang *g = c->all_gangs; g != NULL; g = g->all_next) {
        if (g->dev != NULL)
            changed |= devices_gang_price(&c->shapes, c->dra, g);
    }
    sharedcarry_prepare(c);
    if (changed) {
        cache_mark_all_dirty(c);
        c->capacity_changed = 1;
        c->nodes_gen++; /* a pod outside any queue may have been priced again */
        c->generation++;
    }
    return changed;
}
