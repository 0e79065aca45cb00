#include "evictscan.h"

#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "declare.h"
#include "dispatchlease.h"
#include "names.h"
#include "util.h"

void evictscan_result_init(struct evictscan_result *r)
{
    memset(r, 0, sizeof(*r));
}

/* Frees what entry g owns. */
static void gang_finish(struct evictscan_gang *g)
{
    for (size_t k = 0; k < g->npods; k++) {
        free(g->pods[k].name);
        free(g->pods[k].uid);
    }
    free(g->pods);
    free(g->namespace_);
    free(g->cluster);
    free(g->cluster_uid);
    free(g->rayjob);
    free(g->rayjob_uid);
    free(g->resource_version);
    free(g->gang);
    free(g->queue);
    free(g->message);
    free(g->preempted_by);
    free(g->lease_seen);
}

void evictscan_result_finish(struct evictscan_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->len; i++)
        gang_finish(&r->items[i]);
    free(r->items);
    for (size_t i = 0; i < r->nwarnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    evictscan_result_init(r);
}

static void keep_earliest(int64_t *next, int64_t at)
{
    if (at > 0 && (*next == 0 || at < *next))
        *next = at;
}

/* A number of its own for each gang, from the caller's random one (FNV-1a over the gang's key, then mixed). */
static uint32_t gang_random(uint32_t random, const struct cache_gang *g)
{
    uint32_t h = 2166136261u ^ random;
    for (const char *s = g->namespace_; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    h = (h ^ '/') * 16777619u;
    for (const char *s = g->name; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    /* murmur3's finaliser: names differing in their last byte get far-apart numbers (FNV leaves the high bits close). */
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* g's lease sighting as its record says it (dispatchlease.h: "COUNTER@TIME"), owned; NULL without a counted lease. */
static char *lease_seen(const struct cache_gang *g)
{
    const struct dispatchlease *l = g->lease;
    if (l == NULL || !l->valid || !l->counted || l->seen_ms < 0)
        return NULL;
    char buf[DISPATCHLEASE_SEEN_SIZE];
    struct dispatchlease_seen s = {.counter = l->counter, .at_ms = l->seen_ms};
    return util_strdup(dispatchlease_seen_format(&s, buf, sizeof(buf)));
}

/* A new entry for g, its pods to delete being its live pods that are ungated or bound (members: the first nmembers of live). */
static struct evictscan_gang *add_gang(struct evictscan_result *out, const struct cache_gang *g, struct cache_pod *const *members,
                                       size_t nmembers)
{
    if (out->len == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 8;
        out->items = util_realloc(out->items, out->cap * sizeof(*out->items));
    }
    struct evictscan_gang *e = &out->items[out->len++];
    memset(e, 0, sizeof(*e));
    e->namespace_ = util_strdup(g->namespace_);
    e->cluster = util_strdup(g->name);
    e->cluster_uid = util_strdup(g->uid);
    e->resource_version = util_strdup(g->resource_version);
    e->gang = names_podgroup(cache_gang_group(g));
    e->rayjob = util_strdup(g->owner_name);
    e->rayjob_uid = util_strdup(g->owner_uid);
    e->queue = util_strdup(g->queue != NULL ? g->queue->name : "");
    e->held = g->held;
    e->lease_seen = lease_seen(g);
    e->pods = util_calloc(g->npods + 1, sizeof(*e->pods));
    const struct cache_pod *p;
    cache_gang_for_each_pod(p, g) {
        if (!cache_pod_live(p) || (cache_pod_gated(p) && p->node == NULL) || declare_pod_is(p))
            continue;
        int member = 0;
        for (size_t k = 0; k < nmembers && !member; k++)
            member = members[k] == p;
        e->pods[e->npods++] = (struct evictscan_pod){util_strdup(p->name), util_strdup(p->uid), member};
    }
    return e;
}

/* The configuration of queue q's gangs: the flags with its annotations; a bad annotation is noted once. */
static void queue_config(const struct cache_queue *q, const struct evict_config *cfg, struct evict_config *out,
                         struct evictscan_result *r)
{
    struct error err = {{0}};
    if (evict_config_for_queue(cfg, q->placement_timeout, q->pods_ready_timeout, out, &err) != 0) {
        r->warnings = util_realloc(r->warnings, (r->nwarnings + 1) * sizeof(*r->warnings));
        r->warnings[r->nwarnings++] = util_strdupf("queue %s: %s", q->name, err.message);
    }
}

/*
 * How many members admitted gang g lacks that are timed: while some of its
 * pods live (a suspended RayCluster, its pods all deleted, is not timed), the
 * members it has fewer live pods than (an early admission's still to come,
 * or a deleted member's replacement), unbound since it fell short.
 */
static size_t missing_timed(const struct cache_gang *g)
{
    return g->nlive > 0 && (int64_t)g->nlive < g->min_member ? (size_t)(g->min_member - (int64_t)g->nlive) : 0;
}

/*
 * No member of g has a deadline running under qcfg (evict_check's): none is unbound, or placement is not timed;
 * and none is bound but not Ready, or readiness is not timed (the default).
 */
static int nothing_timed(const struct cache_gang *g, const struct evict_config *qcfg)
{
    return (g->nunbound == 0 || qcfg->placement_timeout_ms == 0) && (g->nunready == 0 || qcfg->pods_ready_timeout_ms == 0) &&
           (missing_timed(g) == 0 || qcfg->placement_timeout_ms == 0);
}

/* Whether a pod of g is terminating (deleted, not finished): the room it holds comes back. */
static int leaving(const struct cache_gang *g)
{
    for (const struct cache_pod *p = g->pods; p != NULL; p = p->gang_next) {
        if ((p->flags & CACHE_POD_DELETING) && p->phase != CACHE_PHASE_SUCCEEDED && p->phase != CACHE_PHASE_FAILED)
            return 1;
    }
    return 0;
}

/* An admitted gang: evicted when evict_check says so, else its next deadline noted. Returns 1 when evicted. */
static int scan_admitted(const struct cache_gang *g, const struct evict_config *qcfg, const struct evict_config *cfg,
                         int64_t now_ms, int64_t floor_ms, uint32_t random, struct evictscan_result *out)
{
    int64_t admitted_ms;
    if (g->admitted_at == NULL || evict_parse_time(g->admitted_at, &admitted_ms) != 0)
        return 0; /* its admission time unknown: never timed */
    struct cache_pod **live;
    size_t nmembers = admit_gang_members(g, &live), nmissing = missing_timed(g);
    struct evict_member *m = util_calloc(nmembers + nmissing + 1, sizeof(*m));
    for (size_t i = 0; i < nmissing; i++) /* not created yet: unbound since the gang fell short (0: since its admission) */
        m[nmembers + i] = (struct evict_member){.name = "a member not created yet", .created_ms = g->short_since_ms};
    for (size_t i = 0; i < nmembers; i++) {
        const struct cache_pod *p = live[i];
        m[i] = (struct evict_member){
            .name = p->name,
            .created_ms = p->created * 1000,
            .bound = p->node != NULL,
            .ready = p->ready,
            .bound_ms = p->scheduled_at * 1000,
            .ready_change_ms = p->ready_changed * 1000,
            .message = p->unschedulable,
            .refused = p->refused,
        };
    }
    struct evict_gang eg = {.admitted_ms = admitted_ms > floor_ms ? admitted_ms : floor_ms,
                            .leaving = leaving(g),
                            .members = m,
                            .nmembers = nmembers + nmissing};
    struct evict_verdict v;
    evict_verdict_init(&v);
    int evicted = evict_check(qcfg, &eg, now_ms, &v) != EVICT_REASON_NONE;
    if (evicted) {
        struct evictscan_gang *e = add_gang(out, g, live, nmembers);
        e->reason = v.reason;
        evictscan_record_next(g, cfg, v.reason, now_ms, gang_random(random, g), &e->record);
        e->message = evict_message(e->gang, &eg, &v, cfg, &e->record);
    } else {
        keep_earliest(&out->next_ms, v.recheck_ms);
    }
    evict_verdict_finish(&v);
    free(m);
    free(live);
    return evicted;
}

/* An admitted gang whose dispatch lease expired (dispatchlease.h) is evicted whole, else its lease's end noted. Returns 1 when
 * evicted. */
static int scan_lease(const struct cache_gang *g, const struct evict_config *cfg, int64_t now_ms, struct evictscan_result *out)
{
    int64_t deadline;
    if (dispatchlease_check(g->lease, now_ms, &deadline) != DISPATCHLEASE_EXPIRED) {
        keep_earliest(&out->next_ms, deadline);
        return 0;
    }
    struct cache_pod **live;
    size_t nmembers = admit_gang_members(g, &live);
    struct evictscan_gang *e = add_gang(out, g, live, nmembers);
    free(live);
    e->reason = EVICT_REASON_DISPATCH_LEASE;
    evictscan_record_next(g, cfg, e->reason, now_ms, 0, &e->record);
    e->message = dispatchlease_evict_message(e->gang, g->lease, now_ms);
    return 1;
}

/* A gang not admitted with an eviction record, or held: its leftovers to delete, and the end of its backoff to look again at. */
static void scan_evicted(const struct cache_gang *g, const struct evict_config *cfg, int64_t now_ms, struct evictscan_result *out)
{
    const struct cache_pod *p;
    size_t left = 0;
    cache_gang_for_each_pod(p, g) {
        if (declare_pod_is(p))
            continue;
        left += evict_pod_leftover(0, &g->record, cache_pod_live(p), cache_pod_gated(p), p->node != NULL) ||
                (g->held && cache_pod_live(p) && (!cache_pod_gated(p) || p->node != NULL));
    }
    if (left > 0)
        add_gang(out, g, NULL, 0);
    int64_t until = 0;
    if (evict_hold(cfg, &g->record, g->generation, now_ms, &until) == EVICT_HOLD_BACKOFF)
        keep_earliest(&out->next_ms, until);
}

/* Whether head pod a came before b: created earlier, then by name. */
static int head_before(const struct cache_pod *a, const struct cache_pod *b)
{
    return a->created != b->created ? a->created < b->created : strcmp(a->name, b->name) < 0;
}

/*
 * An admitted held gang's heads past its one: a second head KubeRay made
 * from a stale view (gate_extra_head) is born ungated with --hold-gangs, as
 * a member, though the admission counted one head; the gate cannot gate it
 * again, so it deletes the later ones that are ungated or bound (a gated one
 * waits, as without the flag). Walked only while g has more live pods than
 * members (an autoscaler's tail, or such a head).
 */
static void scan_surplus_heads(const struct cache_gang *g, struct evictscan_result *out)
{
    if (!g->held || (int64_t)g->nlive <= g->min_member)
        return;
    const struct cache_pod *p, *first = NULL;
    size_t heads = 0;
    cache_gang_for_each_pod(p, g) {
        if (!cache_pod_live(p) || declare_pod_is(p) || p->node_type == NULL || strcmp(p->node_type, "head") != 0)
            continue;
        heads++;
        if (first == NULL || head_before(p, first))
            first = p;
    }
    if (heads < 2)
        return;
    struct evictscan_gang *e = add_gang(out, g, NULL, 0);
    for (size_t k = 0; k < e->npods; k++) {
        free(e->pods[k].name);
        free(e->pods[k].uid);
    }
    e->npods = 0;
    e->surplus = 1;
    cache_gang_for_each_pod(p, g) {
        if (p != first && cache_pod_live(p) && !declare_pod_is(p) && p->node_type != NULL && strcmp(p->node_type, "head") == 0 &&
            (!cache_pod_gated(p) || p->node != NULL))
            e->pods[e->npods++] = (struct evictscan_pod){util_strdup(p->name), util_strdup(p->uid), 0};
    }
    if (e->npods == 0)
        gang_finish(&out->items[--out->len]); /* none to delete: all gated and unbound */
}

json_t *evictscan_rayjob_record(const struct evictscan_gang *g)
{
    json_t *patch = evict_record_patch(&g->record, NAMES_ANNOTATION_ADMITTED, NULL);
    json_t *record = json_incref(json_object_get(json_object_get(patch, "metadata"), "annotations"));
    json_decref(patch);
    if (record == NULL)
        record = json_object();
    json_object_del(record, NAMES_ANNOTATION_ADMITTED);
    if (g->lease_seen != NULL)
        json_object_set_new(record, NAMES_ANNOTATION_DISPATCH_LEASE_SEEN, json_string(g->lease_seen));
    return record;
}

size_t evictscan_run(const struct cache *c, const struct evict_config *cfg, int64_t now_ms, int64_t floor_ms, uint32_t random,
                     struct evictscan_result *out)
{
    size_t evicted = 0;
    struct cache_queue *q;
    cache_queue_for_each(q, c) {
        struct evict_config qcfg;
        int configured = 0;
        struct cache_gang *g;
        cache_queue_for_each_gang(g, q) {
            if (!g->present || !g->spec_ok || g->legacy)
                continue; /* the legacy operator's clusters (legacy.h) are not evicted */
            if (!g->admitted) {
                if (g->record.evicted_at_ms > 0 || g->held)
                    scan_evicted(g, cfg, now_ms, out);
                continue;
            }
            if (scan_lease(g, cfg, now_ms, out)) {
                evicted++;
                continue;
            }
            scan_surplus_heads(g, out);
            if (!configured) {
                queue_config(q, cfg, &qcfg, out);
                configured = 1;
            }
            if (nothing_timed(g, &qcfg))
                continue; /* its pods stay untouched */
            evicted += (size_t)scan_admitted(g, &qcfg, cfg, now_ms, floor_ms, random, out);
        }
    }
    return evicted;
}

void evictscan_record_next(const struct cache_gang *g, const struct evict_config *cfg, enum evict_reason reason, int64_t now_ms,
                           uint32_t random, struct evict_record *out)
{
    evict_record_next(&g->record, cfg, reason, g->generation, now_ms, random, out);
    if (g->held && out->generation < INT64_MAX)
        out->generation++;
}
