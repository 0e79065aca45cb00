#include "waitevents.h"

#include <stdlib.h>
#include <string.h>

#include "declare.h"
#include "eventplan.h"
#include "legacy.h"
#include "log.h"
#include "table.h"
#include "util.h"

/* Gangs gone from the cache are forgotten this often. */
#define SWEEP_MS 10000

/* A pod of a tail's wait, told with its own message. */
struct target {
    char *name, *uid, *message; /* owned */
};

struct gang {
    struct table_node node;
    char *ns, *cluster, *uid; /* owned; uid may be NULL */
    int legacy;
    char *message;          /* the wait's latest message (owned) */
    char *tail_message;     /* the tail's (owned) */
    struct target *targets; /* the tail's pods to tell (owned) */
    size_t ntargets;
    struct eventplan wait, tail;
};

struct waitevents {
    long long settle_ms;
    long long swept_ms;
    struct table gangs;
};

static uint64_t key_hash(const char *ns, const char *cluster)
{
    return table_hash_str(table_hash_str(TABLE_HASH_SEED, ns), cluster);
}

static struct gang *lookup(const struct waitevents *w, const char *ns, const char *cluster)
{
    uint64_t h = key_hash(ns, cluster);
    for (struct table_node *n = table_first(&w->gangs, h); n != NULL; n = n->next) {
        struct gang *g = TABLE_CONTAINER_OF(n, struct gang, node);
        if (n->hash == h && strcmp(g->ns, ns) == 0 && strcmp(g->cluster, cluster) == 0)
            return g;
    }
    return NULL;
}

static void clear_targets(struct gang *g)
{
    for (size_t i = 0; i < g->ntargets; i++) {
        free(g->targets[i].name);
        free(g->targets[i].uid);
        free(g->targets[i].message);
    }
    free(g->targets);
    g->targets = NULL;
    g->ntargets = 0;
}

static void gang_free(struct gang *g)
{
    clear_targets(g);
    free(g->ns);
    free(g->cluster);
    free(g->uid);
    free(g->message);
    free(g->tail_message);
    free(g);
}

struct waitevents *waitevents_create(long long settle_ms)
{
    struct waitevents *w = util_calloc(1, sizeof(*w));
    w->settle_ms = settle_ms;
    table_init(&w->gangs);
    return w;
}

void waitevents_destroy(struct waitevents *w)
{
    if (w == NULL)
        return;
    struct table_node *n = table_next(&w->gangs, NULL);
    while (n != NULL) {
        struct table_node *next = table_next(&w->gangs, n);
        table_remove(&w->gangs, n);
        gang_free(TABLE_CONTAINER_OF(n, struct gang, node));
        n = next;
    }
    table_finish(&w->gangs);
    free(w);
}

static void set_str(char **dst, const char *s)
{
    if (*dst != NULL && s != NULL && strcmp(*dst, s) == 0)
        return;
    free(*dst);
    *dst = s != NULL ? util_strdup(s) : NULL;
}

/* The gang's entry, created for a wait (d's RayCluster's uid kept current). */
static struct gang *entry(struct waitevents *w, const struct admit_decision *d)
{
    struct gang *g = lookup(w, d->namespace_, d->cluster);
    if (g == NULL) {
        g = util_calloc(1, sizeof(*g));
        g->ns = util_strdup(d->namespace_);
        g->cluster = util_strdup(d->cluster);
        g->node.hash = key_hash(d->namespace_, d->cluster);
        table_insert(&w->gangs, &g->node);
    }
    if (d->cluster_uid != NULL && (g->uid == NULL || strcmp(g->uid, d->cluster_uid) != 0)) {
        /* Another RayCluster of that name: its own story. */
        set_str(&g->uid, d->cluster_uid);
        g->wait = (struct eventplan){0};
        g->tail = (struct eventplan){0};
    }
    g->legacy = d->legacy;
    return g;
}

/* One aggregated GangWaiting Event about an object, the count-th of plan's reason. */
static void tell(const struct waitevents_pass *x, const struct events_object *obj, const struct eventplan *plan, int tail,
                 const char *message, uint32_t count)
{
    char name[256];
    eventplan_event_name(name, sizeof(name), obj->name, obj->uid, plan->reason, tail);
    eventpost_add_counted(x->events, obj, name, "Warning", "GangWaiting", message, x->now, x->instance, count);
}

static void tell_cluster(const struct gang *g, const struct waitevents_pass *x, const struct eventplan *plan, int tail,
                         const char *message, uint32_t count)
{
    struct events_object rc = {g->legacy ? LEGACY_API_VERSION : "ray.io/v1", "RayCluster", g->ns, g->cluster, g->uid};
    tell(x, &rc, plan, tail, message, count);
}

/* The gang's live gated head pods not told the current reason: told now, with the wait's count. */
static void tell_heads(const struct gang *g, struct cache *cache, const struct waitevents_pass *x, uint32_t count)
{
    struct cache_gang *cg = cache_gang_get(cache, g->ns, g->cluster);
    struct cache_pod *pod;
    for (pod = cg != NULL ? cg->pods : NULL; pod != NULL; pod = pod->gang_next) {
        if (pod->node_type == NULL || strcmp(pod->node_type, "head") != 0 || !cache_pod_live(pod) || !cache_pod_gated(pod) ||
            (pod->flags & CACHE_POD_TOLD) || declare_pod_is(pod)) /* a held gang's declared head: not in the API */
            continue;
        cache_pod_mark_told(pod);
        struct events_object po = {"v1", "Pod", pod->namespace_, pod->name, pod->uid};
        tell(x, &po, &g->wait, 0, g->message, count);
    }
}

/* The tail's pods (first waiting, extra heads) not told the current reason, each with its own message. */
static void tell_targets(const struct gang *g, struct cache *cache, const struct waitevents_pass *x, uint32_t count)
{
    for (size_t i = 0; i < g->ntargets; i++) {
        struct cache_pod *pod = cache_pod_by_uid(cache, g->targets[i].uid);
        if (pod == NULL || !cache_pod_live(pod) || !cache_pod_gated(pod) || (pod->flags & CACHE_POD_TOLD) || declare_pod_is(pod))
            continue;
        cache_pod_mark_told(pod);
        struct events_object po = {"v1", "Pod", g->ns, g->targets[i].name, g->targets[i].uid};
        tell(x, &po, &g->tail, 1, g->targets[i].message != NULL ? g->targets[i].message : g->tail_message, count);
    }
}

/* The tail's pods to tell: the first waiting one, and every head among them (a second head). */
static void note_targets(struct gang *g, struct cache *cache, const struct admit_decision *d)
{
    clear_targets(g);
    g->targets = util_calloc(d->npods + 1, sizeof(*g->targets));
    for (size_t k = 0; k < d->npods; k++) {
        const struct cache_pod *pod = cache_pod_by_uid(cache, d->pods[k].uid);
        int head = pod != NULL && pod->node_type != NULL && strcmp(pod->node_type, "head") == 0;
        if (k > 0 && !head)
            continue;
        struct target *t = &g->targets[g->ntargets++];
        t->name = util_strdup(d->pods[k].name);
        t->uid = util_strdup(d->pods[k].uid);
        t->message = d->pods[k].message != NULL ? util_strdup(d->pods[k].message) : NULL;
    }
}

/* Tells g's wait (tail: its tail's) if it settled by now; or, told already, the pods not told yet. */
static void tell_due(struct waitevents *w, struct gang *g, struct cache *cache, const struct waitevents_pass *x, int tail)
{
    struct eventplan *plan = tail ? &g->tail : &g->wait;
    uint32_t count = 0;
    if (eventplan_due(plan, x->mono_ms, w->settle_ms, &count) != EVENTPLAN_NONE) {
        tell_cluster(g, x, plan, tail, tail ? g->tail_message : g->message, count);
        log_infof("gang %s/%s%s waits: %s", g->ns, g->cluster, tail ? ": autoscaled pods" : "",
                  tail ? g->tail_message : g->message);
    } else if (plan->told) {
        count = eventplan_count(plan);
    } else {
        return;
    }
    if (tail)
        tell_targets(g, cache, x, count);
    else
        tell_heads(g, cache, x, count);
}

void waitevents_note(struct waitevents *w, struct cache *cache, const struct admit_decision *d, const struct waitevents_pass *x)
{
    int tail = d->action == ADMIT_ACTION_TAIL_WAIT;
    if (d->action != ADMIT_ACTION_WAIT && !tail) {
        /* ADMIT and FINISH end the gang's wait (ADMIT its tail's too: a new gang); the counts are kept, for a reason
           that comes back. A TAIL_ADMIT may come in the same pass as the next pod's TAIL_WAIT: it ends nothing. */
        struct gang *g = lookup(w, d->namespace_, d->cluster);
        if (g != NULL && d->action != ADMIT_ACTION_TAIL_ADMIT)
            eventplan_note(&g->wait, ADMIT_REASON_NONE, x->mono_ms);
        if (g != NULL && d->action == ADMIT_ACTION_ADMIT)
            eventplan_note(&g->tail, ADMIT_REASON_NONE, x->mono_ms);
        return;
    }
    struct gang *g = entry(w, d);
    /* Another pod first in the tail's line: a new stretch, told anew. */
    if (tail && g->ntargets > 0 && d->npods > 0 && strcmp(g->targets[0].uid, d->pods[0].uid) != 0)
        eventplan_note(&g->tail, ADMIT_REASON_NONE, x->mono_ms);
    eventplan_note(tail ? &g->tail : &g->wait, d->reason, x->mono_ms);
    set_str(tail ? &g->tail_message : &g->message, d->message);
    if (tail)
        note_targets(g, cache, d);
    tell_due(w, g, cache, x, tail);
}

/*
 * Whether the cache still shows g's wait (tail: its tail's, an admitted gang
 * with a gated pod): for a wait told after the pass that reported it.
 */
static int still_waits(const struct gang *g, struct cache *cache, int tail)
{
    const struct cache_gang *cg = cache_gang_get(cache, g->ns, g->cluster);
    if (cg == NULL || (g->uid != NULL && cg->uid != NULL && strcmp(cg->uid, g->uid) != 0))
        return 0;
    if (!tail)
        return !cg->admitted;
    for (const struct cache_pod *pod = cg->admitted ? cg->pods : NULL; pod != NULL; pod = pod->gang_next) {
        if (cache_pod_live(pod) && cache_pod_gated(pod))
            return 1;
    }
    return 0;
}

long long waitevents_flush(struct waitevents *w, struct cache *cache, const struct waitevents_pass *x)
{
    int sweep = x->mono_ms - w->swept_ms >= SWEEP_MS;
    if (sweep)
        w->swept_ms = x->mono_ms;
    long long next = -1;
    struct table_node *n = table_next(&w->gangs, NULL);
    while (n != NULL) {
        struct table_node *after = table_next(&w->gangs, n);
        struct gang *g = TABLE_CONTAINER_OF(n, struct gang, node);
        if (sweep && cache_gang_get(cache, g->ns, g->cluster) == NULL) {
            table_remove(&w->gangs, n);
            gang_free(g);
            n = after;
            continue;
        }
        for (int tail = 0; tail <= 1; tail++) {
            struct eventplan *plan = tail ? &g->tail : &g->wait;
            long long at = eventplan_due_at(plan, w->settle_ms);
            if (at >= 0 && at <= x->mono_ms && !still_waits(g, cache, tail))
                eventplan_note(plan, ADMIT_REASON_NONE, x->mono_ms); /* over before it was told */
            else if (at >= 0 && at <= x->mono_ms)
                tell_due(w, g, cache, x, tail);
            else if (at >= 0 && (next < 0 || at < next))
                next = at;
        }
        n = after;
    }
    return next;
}
