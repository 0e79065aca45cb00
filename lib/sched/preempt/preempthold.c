#include "preempthold.h"

#include <stdlib.h>
#include <string.h>

#include "evict.h"
#include "util.h"

/* What a refresh remembers of a held preemptor for the next one. */
struct held {
    char *ns, *name; /* owned */
    int64_t since_ms;
    int let_go; /* preempthold_forget */
};

struct preempthold {
    struct preempthold_item *items;
    struct held *held; /* parallel to items */
    size_t n, cap;
};

struct preempthold *preempthold_create(void)
{
    return util_calloc(1, sizeof(struct preempthold));
}

static void clear(struct preempthold *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->items[i].victims);
        free(h->items[i].victim_gangs);
        free(h->held[i].ns);
        free(h->held[i].name);
    }
    h->n = 0;
}

void preempthold_destroy(struct preempthold *h)
{
    if (h == NULL)
        return;
    clear(h);
    free(h->items);
    free(h->held);
    free(h);
}

int preempthold_pods_remain(const struct cache_gang *g)
{
    const struct cache_pod *p;
    cache_gang_for_each_pod(p, g) {
        if (p->phase != CACHE_PHASE_SUCCEEDED && p->phase != CACHE_PHASE_FAILED && (!cache_pod_gated(p) || p->node != NULL))
            return 1;
    }
    return 0;
}

/* Whether g may be held: present, complete spec, not admitted, in a queue, not the legacy operator's (never a preemptor). */
static int holdable(const struct cache_gang *g)
{
    return g != NULL && g->present && g->spec_ok && !g->admitted && g->queue != NULL && !g->legacy;
}

static struct cache_gang *named(const struct cache *c, const char *ns_name)
{
    const char *slash = strchr(ns_name, '/');
    if (slash == NULL)
        return NULL;
    char *ns = util_memdup(ns_name, (size_t)(slash - ns_name));
    struct cache_gang *g = cache_gang_get(c, ns, slash + 1);
    free(ns);
    return g;
}

static size_t find(const struct preempthold *h, size_t n, const char *ns, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(h->held[i].ns, ns) == 0 && strcmp(h->held[i].name, name) == 0)
            return i;
    }
    return SIZE_MAX;
}

/* The entry of p in h (added when missing), since_ms the earliest start seen. */
static size_t add(struct preempthold *h, struct cache_gang *p, int64_t since_ms)
{
    size_t i = find(h, h->n, p->namespace_, p->name);
    if (i != SIZE_MAX) {
        h->held[i].since_ms = since_ms < h->held[i].since_ms ? since_ms : h->held[i].since_ms;
        return i;
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 4;
        h->items = util_realloc(h->items, h->cap * sizeof(*h->items));
        h->held = util_realloc(h->held, h->cap * sizeof(*h->held));
    }
    i = h->n++;
    h->items[i] = (struct preempthold_item){.g = p, .victims = util_strdup("")};
    h->held[i] = (struct held){.ns = util_strdup(p->namespace_), .name = util_strdup(p->name), .since_ms = since_ms};
    return i;
}

int preempthold_in_flight(const struct cache_gang *v, int64_t now_ms)
{
    const struct evict_record *r = &v->record;
    if (v->preempted_by == NULL || v->admitted)
        return 0;
    if (r->evicted_at_ms > 0 && (now_ms - r->evicted_at_ms >= PREEMPTHOLD_MAX_MS ||
                                 (r->reason != EVICT_REASON_PREEMPTED && r->reason != EVICT_REASON_RECLAIMED)))
        return 0;
    return preempthold_pods_remain(v);
}

size_t preempthold_refresh(struct preempthold *h, const struct cache *c, int64_t now_ms, const struct preempthold_item **out)
{
    /* What the last refresh held and did not let go, looked up again below. */
    size_t nold = 0;
    struct held *old = util_calloc(h->n + 1, sizeof(*old));
    for (size_t i = 0; i < h->n; i++) {
        if (!h->held[i].let_go) {
            old[nold] = h->held[i];
            old[nold].ns = util_strdup(h->held[i].ns);
            old[nold++].name = util_strdup(h->held[i].name);
        }
    }
    clear(h);
    for (struct cache_gang *v = c->preempted; v != NULL; v = v->pre_next) {
        if (!preempthold_in_flight(v, now_ms))
            continue;
        struct cache_gang *p = named(c, v->preempted_by);
        if (!holdable(p))
            continue;
        size_t i = add(h, p, v->record.evicted_at_ms > 0 ? v->record.evicted_at_ms : now_ms); /* add() may move h->items */
        struct preempthold_item *it = &h->items[i];
        char *list = util_strdupf("%s%s%s/%s", it->victims, it->victims[0] ? ", " : "", v->namespace_, v->name);
        free(it->victims);
        it->victims = list;
        it->victims_remain = 1;
        it->victim_gangs = util_realloc(it->victim_gangs, (it->nvictim_gangs + 1) * sizeof(*it->victim_gangs));
        it->victim_gangs[it->nvictim_gangs++] = v;
    }
    /* Held before, its victims' pods gone since: held until a pass weighs it once more. */
    for (size_t i = 0; i < nold; i++) {
        struct cache_gang *p = cache_gang_get(c, old[i].ns, old[i].name);
        if (holdable(p) && now_ms - old[i].since_ms < PREEMPTHOLD_MAX_MS)
            add(h, p, old[i].since_ms);
        free(old[i].ns);
        free(old[i].name);
    }
    free(old);
    *out = h->items;
    return h->n;
}

const struct preempthold_item *preempthold_get(const struct preempthold *h, const struct cache_gang *g)
{
    size_t i = find(h, h->n, g->namespace_, g->name);
    return i != SIZE_MAX && !h->held[i].let_go ? &h->items[i] : NULL;
}

void preempthold_forget(struct preempthold *h, const struct cache_gang *g)
{
    size_t i = find(h, h->n, g->namespace_, g->name);
    if (i != SIZE_MAX)
        h->held[i].let_go = 1;
}
