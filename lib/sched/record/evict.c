#include "evict.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "flags.h"
#include "util.h"

/* Event messages are cut by the apiserver at 1 KiB; the list of late members stops before that. */
#define MESSAGE_BUDGET 900
/* The scheduler's reason quoted per member, at most. */
#define QUOTE_MAX 240

void evict_config_default(struct evict_config *cfg)
{
    *cfg = (struct evict_config){
        .placement_timeout_ms = EVICT_DEFAULT_PLACEMENT_TIMEOUT_MS,
        .partial_timeout_ms = EVICT_DEFAULT_PARTIAL_TIMEOUT_MS,
        .pods_ready_timeout_ms = 0,
        .backoff_base_ms = EVICT_DEFAULT_BACKOFF_BASE_MS,
        .backoff_max_ms = EVICT_DEFAULT_BACKOFF_MAX_MS,
        .requeue_limit = 0,
    };
}

int evict_config_check(const struct evict_config *cfg, struct error *err)
{
    const struct {
        const char *flag;
        int64_t v;
    } durations[] = {
        {"--placement-timeout", cfg->placement_timeout_ms},   {"--partial-placement-timeout", cfg->partial_timeout_ms},
        {"--pods-ready-timeout", cfg->pods_ready_timeout_ms}, {"--requeue-backoff-base", cfg->backoff_base_ms},
        {"--requeue-backoff-max", cfg->backoff_max_ms},
    };
    for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
        if (durations[i].v < 0 || durations[i].v > EVICT_DURATION_MAX_MS) {
            error_setf(err, "%s: must be between 0 and 720h", durations[i].flag);
            return -1;
        }
    }
    if (cfg->backoff_base_ms == 0) {
        error_setf(err, "--requeue-backoff-base: must be more than 0");
        return -1;
    }
    if (cfg->backoff_max_ms < cfg->backoff_base_ms) {
        error_setf(err, "--requeue-backoff-max: must not be less than --requeue-backoff-base");
        return -1;
    }
    if (cfg->requeue_limit < 0) {
        error_setf(err, "--requeue-limit: must not be negative");
        return -1;
    }
    return 0;
}

int evict_config_for_queue(const struct evict_config *base, const char *placement_timeout, const char *pods_ready_timeout,
                           struct evict_config *out, struct error *err)
{
    *out = *base;
    int rc = 0;
    const struct {
        const char *name;
        const char *value;
        int64_t *dst;
    } over[] = {
        {EVICT_ANNOTATION_PLACEMENT_TIMEOUT, placement_timeout, &out->placement_timeout_ms},
        {EVICT_ANNOTATION_PODS_READY_TIMEOUT, pods_ready_timeout, &out->pods_ready_timeout_ms},
    };
    for (size_t i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
        if (over[i].value == NULL)
            continue;
        int64_t ms;
        struct error why = {{0}};
        if (flags_parse_duration(over[i].value, 0, EVICT_DURATION_MAX_MS, &ms, &why) == 0) {
            *over[i].dst = ms;
        } else if (rc == 0) {
            error_setf(err, "Queue annotation %s: %s; the flag's value is used", over[i].name, why.message);
            util_one_line(err->message);
            rc = -1;
        }
    }
    /* A gang partly placed is timed as one waiting whole is, only sooner: never later, and not when placement is not timed. */
    if (out->partial_timeout_ms > out->placement_timeout_ms)
        out->partial_timeout_ms = out->placement_timeout_ms;
    return rc;
}

/* ------------------------------------------------------------ times */

int evict_parse_time(const char *s, int64_t *ms)
{
    int64_t t;
    if (util_parse_time(s, &t) != 0)
        return -1;
    *ms = t * 1000;
    return 0;
}

char *evict_format_time(int64_t ms, char *buf, size_t size)
{
    return events_timestamp(ms >= 0 ? ms / 1000 : (ms - 999) / 1000, buf, size);
}

/* ------------------------------------------------------------ the timeouts */

void evict_verdict_init(struct evict_verdict *v)
{
    *v = (struct evict_verdict){0};
}

void evict_verdict_finish(struct evict_verdict *v)
{
    if (v == NULL)
        return;
    free(v->late);
    evict_verdict_init(v);
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* a + b for a time and a timeout, saturating (both are non-negative). */
static int64_t deadline(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* When member m's placement clock started, and when its readiness clock did. */
static int64_t placement_start(const struct evict_gang *g, const struct evict_member *m)
{
    return max64(g->admitted_ms, m->created_ms);
}

static int64_t ready_start(const struct evict_gang *g, const struct evict_member *m)
{
    return max64(max64(placement_start(g, m), m->bound_ms), m->ready_change_ms);
}

static void keep_earliest(int64_t *recheck, int64_t at)
{
    if (*recheck == 0 || at < *recheck)
        *recheck = at;
}

/* Lists the members for which late(m) holds into v. */
static void list_late(struct evict_verdict *v, const struct evict_gang *g, int want_bound)
{
    v->late = util_calloc(g->nmembers, sizeof(*v->late));
    for (size_t i = 0; i < g->nmembers; i++) {
        const struct evict_member *m = &g->members[i];
        if (want_bound ? (m->bound && !m->ready) : !m->bound)
            v->late[v->nlate++] = i;
    }
}

/* Whether any member of g is bound. */
static int any_bound(const struct evict_gang *g)
{
    for (size_t i = 0; i < g->nmembers; i++)
        if (g->members[i].bound)
            return 1;
    return 0;
}

enum evict_reason evict_check(const struct evict_config *cfg, const struct evict_gang *g, int64_t now_ms, struct evict_verdict *v)
{
    evict_verdict_finish(v);
    if (g->admitted_ms <= 0)
        return EVICT_REASON_NONE;
    int placement_late = 0, partial_late = 0, ready_late = 0, partly = cfg->partial_timeout_ms > 0 && !g->leaving && any_bound(g);
    int64_t recheck = 0;
    for (size_t i = 0; i < g->nmembers; i++) {
        const struct evict_member *m = &g->members[i];
        if (!m->bound && partly && m->refused) {
            int64_t due = deadline(placement_start(g, m), cfg->partial_timeout_ms);
            if (now_ms >= due)
                partial_late = 1;
            else
                keep_earliest(&recheck, due);
        }
        if (!m->bound && cfg->placement_timeout_ms > 0) {
            int64_t due = deadline(placement_start(g, m), cfg->placement_timeout_ms);
            if (now_ms >= due)
                placement_late = 1;
            else
                keep_earliest(&recheck, due);
        } else if (m->bound && !m->ready && cfg->pods_ready_timeout_ms > 0) {
            int64_t due = deadline(ready_start(g, m), cfg->pods_ready_timeout_ms);
            if (now_ms >= due)
                ready_late = 1;
            else
                keep_earliest(&recheck, due);
        }
    }
    if (placement_late || partial_late) {
        v->reason = placement_late ? EVICT_REASON_PLACEMENT_TIMEOUT : EVICT_REASON_PARTLY_PLACED;
        v->timeout_ms = placement_late ? cfg->placement_timeout_ms : cfg->partial_timeout_ms;
        list_late(v, g, 0);
    } else if (ready_late) {
        v->reason = EVICT_REASON_PODS_READY_TIMEOUT;
        v->timeout_ms = cfg->pods_ready_timeout_ms;
        list_late(v, g, 1);
    } else {
        v->recheck_ms = recheck;
    }
    return v->reason;
}

const char *evict_reason_name(enum evict_reason reason)
{
    switch (reason) {
    case EVICT_REASON_PLACEMENT_TIMEOUT:
        return "PlacementTimeout";
    case EVICT_REASON_PODS_READY_TIMEOUT:
        return "PodsReadyTimeout";
    case EVICT_REASON_PREEMPTED:
        return "Preempted";
    case EVICT_REASON_RECLAIMED:
        return "Reclaimed";
    case EVICT_REASON_DISPATCH_LEASE:
        return "DispatchLeaseExpired";
    case EVICT_REASON_PARTLY_PLACED:
        return "PartlyPlaced";
    case EVICT_REASON_NONE:
        break;
    }
    return "";
}

/* ------------------------------------------------------------ the requeue */

/* A decimal integer in 0..INT64_MAX with nothing around it (no sign either). */
static int parse_count(const char *s, int64_t *out)
{
    return s != NULL && *s >= '0' && *s <= '9' ? util_parse_int64(s, out) : -1;
}

static enum evict_reason reason_of(const char *s)
{
    if (strcmp(s, evict_reason_name(EVICT_REASON_PLACEMENT_TIMEOUT)) == 0)
        return EVICT_REASON_PLACEMENT_TIMEOUT;
    if (strcmp(s, evict_reason_name(EVICT_REASON_PODS_READY_TIMEOUT)) == 0)
        return EVICT_REASON_PODS_READY_TIMEOUT;
    if (strcmp(s, evict_reason_name(EVICT_REASON_PREEMPTED)) == 0)
        return EVICT_REASON_PREEMPTED;
    if (strcmp(s, evict_reason_name(EVICT_REASON_RECLAIMED)) == 0)
        return EVICT_REASON_RECLAIMED;
    if (strcmp(s, evict_reason_name(EVICT_REASON_DISPATCH_LEASE)) == 0)
        return EVICT_REASON_DISPATCH_LEASE;
    if (strcmp(s, evict_reason_name(EVICT_REASON_PARTLY_PLACED)) == 0)
        return EVICT_REASON_PARTLY_PLACED;
    return EVICT_REASON_NONE;
}

int evict_record_parse(const json_t *annotations, struct evict_record *out, struct error *err)
{
    *out = (struct evict_record){0};
    struct evict_record r = {0};
    const char *count = json_string_value(json_object_get(annotations, EVICT_ANNOTATION_REQUEUE_COUNT));
    const char *requeue_at = json_string_value(json_object_get(annotations, EVICT_ANNOTATION_REQUEUE_AT));
    const char *evicted_at = json_string_value(json_object_get(annotations, EVICT_ANNOTATION_EVICTED_AT));
    const char *generation = json_string_value(json_object_get(annotations, EVICT_ANNOTATION_EVICTED_GENERATION));
    const char *reason = json_string_value(json_object_get(annotations, EVICT_ANNOTATION_EVICTED_REASON));
    const char *bad = NULL, *value = NULL;
    if (count != NULL && parse_count(count, &r.count) != 0)
        bad = EVICT_ANNOTATION_REQUEUE_COUNT, value = count;
    else if (requeue_at != NULL && evict_parse_time(requeue_at, &r.requeue_at_ms) != 0)
        bad = EVICT_ANNOTATION_REQUEUE_AT, value = requeue_at;
    else if (evicted_at != NULL && evict_parse_time(evicted_at, &r.evicted_at_ms) != 0)
        bad = EVICT_ANNOTATION_EVICTED_AT, value = evicted_at;
    else if (generation != NULL && parse_count(generation, &r.generation) != 0)
        bad = EVICT_ANNOTATION_EVICTED_GENERATION, value = generation;
    else if (reason != NULL && (r.reason = reason_of(reason)) == EVICT_REASON_NONE)
        bad = EVICT_ANNOTATION_EVICTED_REASON, value = reason;
    if (bad != NULL) {
        error_setf(err, "annotation %s: \"%.64s\" does not parse; the eviction record is ignored", bad, value);
        util_one_line(err->message);
        return -1;
    }
    *out = r;
    return 0;
}

int64_t evict_backoff_ms(const struct evict_config *cfg, int64_t n, uint32_t random)
{
    int64_t d = cfg->backoff_base_ms;
    for (int64_t i = 1; i < n && d < cfg->backoff_max_ms; i++)
        d = d > INT64_MAX / 2 ? INT64_MAX : d * 2;
    if (d >= cfg->backoff_max_ms)
        return cfg->backoff_max_ms;
    /* d < max <= EVICT_DURATION_MAX_MS (checked config), so d / 10 * 2^32 fits in 64 bits. */
    int64_t jitter = (int64_t)(((uint64_t)(d / 10) * random) >> 32);
    return d + jitter < cfg->backoff_max_ms ? d + jitter : cfg->backoff_max_ms;
}

void evict_record_next(const struct evict_record *prev, const struct evict_config *cfg, enum evict_reason reason,
                       int64_t generation, int64_t now_ms, uint32_t random, struct evict_record *out)
{
    int64_t count = prev->generation == generation ? prev->count : 0;
    if (reason == EVICT_REASON_PREEMPTED || reason == EVICT_REASON_RECLAIMED || reason == EVICT_REASON_DISPATCH_LEASE) {
        /* No penalty for having been preempted (or for a lost manager): the count stays, the gang may be admitted again at
           once (a lease's gang once renewed: dispatchlease.h). */
        *out = (struct evict_record){.count = count,
                                     .evicted_at_ms = now_ms - now_ms % 1000,
                                     .requeue_at_ms = now_ms - now_ms % 1000,
                                     .generation = generation,
                                     .reason = (int)reason};
        return;
    }
    if (count < INT64_MAX)
        count++;
    /* Whole seconds, as the annotations keep them: evicted-at not later than now, requeue-at not earlier than the backoff. */
    *out = (struct evict_record){
        .count = count, .evicted_at_ms = now_ms - now_ms % 1000, .generation = generation, .reason = (int)reason};
    if (cfg->requeue_limit == 0 || count < cfg->requeue_limit) {
        int64_t at = deadline(now_ms, evict_backoff_ms(cfg, count, random));
        out->requeue_at_ms = at % 1000 == 0 || at > INT64_MAX - 1000 ? at : at - at % 1000 + 1000;
    }
}

json_t *evict_record_patch(const struct evict_record *rec, const char *admitted_annotation, const char *resource_version)
{
    char at[32], evicted[32];
    json_t *ann = json_object();
    json_object_set_new(ann, admitted_annotation, json_null());
    json_object_set_new(ann, EVICT_ANNOTATION_REQUEUE_COUNT, json_sprintf("%" PRId64, rec->count));
    json_object_set_new(ann, EVICT_ANNOTATION_REQUEUE_AT,
                        rec->requeue_at_ms > 0 ? json_string(evict_format_time(rec->requeue_at_ms, at, sizeof(at))) : json_null());
    json_object_set_new(ann, EVICT_ANNOTATION_EVICTED_AT,
                        json_string(evict_format_time(rec->evicted_at_ms, evicted, sizeof(evicted))));
    json_object_set_new(ann, EVICT_ANNOTATION_EVICTED_GENERATION, json_sprintf("%" PRId64, rec->generation));
    json_object_set_new(ann, EVICT_ANNOTATION_EVICTED_REASON, json_string(evict_reason_name((enum evict_reason)rec->reason)));
    json_t *meta = json_pack("{s:o}", "annotations", ann);
    if (resource_version != NULL)
        json_object_set_new(meta, "resourceVersion", json_string(resource_version));
    return json_pack("{s:o}", "metadata", meta);
}

enum evict_hold evict_hold(const struct evict_config *cfg, const struct evict_record *rec, int64_t generation, int64_t now_ms,
                           int64_t *until_ms)
{
    if (rec->count <= 0 || rec->generation != generation)
        return EVICT_HOLD_NONE;
    if (cfg->requeue_limit > 0 && rec->count >= cfg->requeue_limit)
        return EVICT_HOLD_DEACTIVATED;
    if (now_ms < rec->requeue_at_ms) {
        *until_ms = rec->requeue_at_ms;
        return EVICT_HOLD_BACKOFF;
    }
    return EVICT_HOLD_NONE;
}

char *evict_hold_message(const char *gang, enum evict_hold hold, const struct evict_config *cfg, const struct evict_record *rec)
{
    char at[32];
    switch (hold) {
    case EVICT_HOLD_BACKOFF:
        return util_strdupf("gang %s was evicted %" PRId64 " time%s; it may be admitted again at %s", gang, rec->count,
                            rec->count == 1 ? "" : "s", evict_format_time(rec->requeue_at_ms, at, sizeof(at)));
    case EVICT_HOLD_DEACTIVATED:
        return util_strdupf("gang %s is deactivated after %" PRId64 " eviction%s (requeue limit %" PRId64
                            "): change the RayCluster's spec to requeue it",
                            gang, rec->count, rec->count == 1 ? "" : "s", cfg->requeue_limit);
    case EVICT_HOLD_NONE:
        break;
    }
    return NULL;
}

/* Appends member m's name and why it is late, unless the budget is spent. Returns 0 when it was left out. */
static int append_member(struct util_buf *b, const struct evict_member *m, enum evict_reason reason, int first)
{
    char quote[QUOTE_MAX + 1];
    if ((reason == EVICT_REASON_PLACEMENT_TIMEOUT || reason == EVICT_REASON_PARTLY_PLACED) && m->message != NULL &&
        m->message[0] != '\0')
        util_format(quote, sizeof(quote), " (%s)", m->message);
    else
        quote[0] = '\0';
    util_one_line(quote);
    if (b->len + strlen(m->name) + strlen(quote) + 2 > MESSAGE_BUDGET)
        return 0;
    util_buf_printf(b, "%s%s%s", first ? "" : ", ", m->name, quote);
    return 1;
}

char *evict_message(const char *gang, const struct evict_gang *g, const struct evict_verdict *v, const struct evict_config *cfg,
                    const struct evict_record *rec)
{
    char timeout[32], at[32];
    struct util_buf b = {0};
    int placement = v->reason == EVICT_REASON_PLACEMENT_TIMEOUT || v->reason == EVICT_REASON_PARTLY_PLACED;
    const char *which = v->reason == EVICT_REASON_PARTLY_PLACED ? "partial placement" : placement ? "placement" : "readiness";
    util_buf_printf(&b, "gang %s evicted: %zu of %zu members not %s within the %s timeout (%s)%s: ", gang, v->nlate, g->nmembers,
                    placement ? "bound to a node" : "Ready", which,
                    (flags_format_duration(v->timeout_ms, timeout, sizeof(timeout)), timeout),
                    v->reason == EVICT_REASON_PARTLY_PLACED ? " while the others are bound" : "");
    size_t shown = 0;
    for (size_t i = 0; i < v->nlate; i++) {
        if (!append_member(&b, &g->members[v->late[i]], v->reason, shown == 0))
            break;
        shown++;
    }
    if (shown < v->nlate)
        util_buf_printf(&b, "%sand %zu more", shown > 0 ? ", " : "", v->nlate - shown);
    if (rec->requeue_at_ms > 0)
        util_buf_printf(&b, "; eviction %" PRId64 ", it may be admitted again at %s", rec->count,
                        evict_format_time(rec->requeue_at_ms, at, sizeof(at)));
    else
        util_buf_printf(
            &b, "; eviction %" PRId64 " reached the requeue limit (%" PRId64 "): deactivated until the RayCluster's spec changes",
            rec->count, cfg->requeue_limit);
    return util_buf_take(&b);
}

/* ------------------------------------------------------------ the pods */

int evict_pod_leftover(int gang_admitted, const struct evict_record *rec, int pod_live, int pod_gated, int pod_bound)
{
    return !gang_admitted && rec->evicted_at_ms > 0 && pod_live && (!pod_gated || pod_bound);
}

json_t *evict_disruption_patch(const char *message, const char *now)
{
    char cut[1024];
    util_format(cut, sizeof(cut), "%s", message);
    return json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status", "conditions", "type", "DisruptionTarget", "status", "True",
                     "reason", EVICT_DISRUPTION_REASON, "message", cut, "lastTransitionTime", now);
}
