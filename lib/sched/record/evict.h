/*
 * evict: when raygate takes back an admitted gang that does not start, and
 * when the gang may come back. Pure: no I/O, no threads, no clock (the time
 * is passed in as Unix milliseconds, the jitter as a caller-supplied random
 * number), so every rule below is tested on a fake clock (tests/unit/test_evict.c).
 *
 * Timeouts (struct evict_config; a Queue's annotations override the flags):
 * - placement: a member of an admitted gang that is not bound to a node
 *   within placement_timeout of max(the gang's admission, the member's
 *   creation) gets the whole gang evicted (reason PlacementTimeout). Counting
 *   from the member's creation covers recovery: a placed gang that loses a
 *   member has until the replacement's creation + the timeout to place it.
 * - partly placed: while a member is bound, an unbound member
 *   that kube-scheduler found no node for (PodScheduled False, reason
 *   Unschedulable) and that is not bound within partial_timeout of the same
 *   start gets the whole gang evicted (reason PartlyPlaced). kube-scheduler
 *   binds where it scores best, not where the pass planned, so gangs
 *   admitted together may strand a member, and a gang half placed must not
 *   wait out the placement timeout (a gang waiting whole, none of it bound,
 *   does). A member not tried yet (no such condition) is not timed so, nor
 *   is any while a pod of the gang terminates (a replacement born ungated
 *   waits for its predecessor's room; leaving).
 * - readiness (Kueue's waitForPodsReady, off by default): a bound member that
 *   is not Ready within pods_ready_timeout of max(the admission, its
 *   creation, its binding, the last time its Ready condition changed) gets
 *   the whole gang evicted (reason PodsReadyTimeout).
 * A gang whose members are all bound and Ready is never evicted, however
 * long it runs, nor is a gang whose admission time is unknown. Members not
 * created yet are timed as unbound by evictscan.h (an early admission's,
 * early.h, or a deleted member's replacement) from when the gang fell short.
 *
 * Requeue (struct evict_record, kept in the RayCluster's annotations):
 * - eviction n (n = 1, 2, ...) sets requeue-at to the eviction time +
 *   min(backoff_max, base * 2^(n-1) + jitter), jitter in [0, base * 2^(n-1) / 10);
 * - when n reaches requeue_limit (0: no limit) the gang is deactivated: it
 *   is not admitted again until its RayCluster's spec changes;
 * - a spec change (metadata.generation differs from the one recorded at the
 *   last eviction) resets the count and ends both the backoff and the
 *   deactivation.
 *
 * Crash safety (carried out by the controller): the annotations of an
 * eviction are written in one PATCH that also withdraws the admission record
 * (evict_record_patch) before any pod is touched; while a gang is not
 * admitted and has an eviction record, any of its live pods that is ungated
 * or bound is a leftover of that eviction and is deleted
 * (evict_pod_leftover), so a restart in the middle finishes it.
 */
#ifndef RAYGATE_EVICT_H
#define RAYGATE_EVICT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

#define EVICT_ANNOTATION_PLACEMENT_TIMEOUT "raygate.io/placement-timeout"   /* on a Queue */
#define EVICT_ANNOTATION_PODS_READY_TIMEOUT "raygate.io/pods-ready-timeout" /* on a Queue */
#define EVICT_ANNOTATION_REQUEUE_COUNT "raygate.io/requeue-count"           /* on a RayCluster: times evicted */
#define EVICT_ANNOTATION_REQUEUE_AT "raygate.io/requeue-at"                 /* RFC 3339: earliest re-admission */
#define EVICT_ANNOTATION_EVICTED_AT "raygate.io/evicted-at"                 /* RFC 3339: the last eviction */
#define EVICT_ANNOTATION_EVICTED_GENERATION "raygate.io/evicted-generation" /* metadata.generation then */
#define EVICT_ANNOTATION_EVICTED_REASON "raygate.io/evicted-reason"         /* evict_reason_name() */

/* The reason of the DisruptionTarget condition on deleted pods (kube-scheduler writes PreemptionByScheduler). */
#define EVICT_DISRUPTION_REASON "EvictionByRaygate"

#define EVICT_DEFAULT_PLACEMENT_TIMEOUT_MS (5 * 60 * 1000LL)
#define EVICT_DEFAULT_PARTIAL_TIMEOUT_MS (30 * 1000LL)
#define EVICT_DEFAULT_BACKOFF_BASE_MS (60 * 1000LL)
#define EVICT_DEFAULT_BACKOFF_MAX_MS (60 * 60 * 1000LL)
/* The largest timeout or backoff accepted (flags, annotations): 30 days. */
#define EVICT_DURATION_MAX_MS (30LL * 24 * 3600 * 1000)

struct evict_config {
    int64_t placement_timeout_ms;  /* 0: disabled */
    int64_t partial_timeout_ms;    /* a member refused while another is bound; 0: disabled */
    int64_t pods_ready_timeout_ms; /* 0: disabled */
    int64_t backoff_base_ms;       /* > 0 */
    int64_t backoff_max_ms;        /* >= backoff_base_ms */
    int64_t requeue_limit;         /* evictions before deactivation; 0: no limit */
};

/* The defaults: placement 5m, partly placed 30s, readiness off, backoff 60s..1h, no limit. */
void evict_config_default(struct evict_config *cfg);

/*
 * Returns 0 when cfg is consistent (durations within 0..EVICT_DURATION_MAX_MS,
 * base > 0, max >= base, limit >= 0), or -1 with err naming the flag.
 */
int evict_config_check(const struct evict_config *cfg, struct error *err);

/*
 * The configuration for a gang of a queue: base with the Queue's annotations
 * (values borrowed; NULL: absent) applied, and the partial timeout then no
 * longer than the placement timeout (0 when placement is not timed). An annotation that does not parse
 * as a duration (flags_parse_duration: "90s", "5m", "1h30m"; "0" disables)
 * within EVICT_DURATION_MAX_MS is ignored (the flag's value is kept) and -1
 * is returned with err naming it, for the controller to report; otherwise 0.
 */
int evict_config_for_queue(const struct evict_config *base, const char *placement_timeout, const char *pods_ready_timeout,
                           struct evict_config *out, struct error *err);

/* RFC 3339 UTC ("2026-11-23T15:04:05Z"; fractions are ignored) to Unix ms. Returns 0 and sets *ms, or -1 when malformed. */
int evict_parse_time(const char *s, int64_t *ms);

/* Formats Unix ms as RFC 3339 UTC, whole seconds (the milliseconds are dropped), into buf (>= 21 bytes). */
char *evict_format_time(int64_t ms, char *buf, size_t size);

/* ------------------------------------------------------------ the timeouts */

/* A gang member, as the cache knows it. Strings borrowed. */
struct evict_member {
    const char *name;
    int64_t created_ms;      /* creationTimestamp; 0: unknown (counts from the admission) */
    uint8_t bound;           /* spec.nodeName is set */
    uint8_t ready;           /* condition Ready is True */
    int64_t bound_ms;        /* condition PodScheduled turned True; 0: unknown */
    int64_t ready_change_ms; /* condition Ready last changed; 0: unknown */
    const char *message;     /* unbound: the scheduler's reason (PodScheduled False message); NULL: none */
    uint8_t refused;         /* unbound: PodScheduled False with reason Unschedulable (kube-scheduler found no node) */
};

/* An admitted gang's members (head and, per worker group, its counted workers; not the autoscaler's tail). */
struct evict_gang {
    int64_t admitted_ms; /* the admission record; 0: unknown or not admitted (never evicted) */
    uint8_t leaving;     /* a pod of it is terminating: its room comes back (no partial placement timeout meanwhile) */
    const struct evict_member *members;
    size_t nmembers;
};

enum evict_reason {
    EVICT_REASON_NONE = 0,
    EVICT_REASON_PLACEMENT_TIMEOUT,
    EVICT_REASON_PODS_READY_TIMEOUT,
    EVICT_REASON_PREEMPTED,      /* a higher-priority gang of its queue took its place (preempt.h): no backoff, not counted */
    EVICT_REASON_RECLAIMED,      /* a queue under its deserved share took it back (preempt.h): likewise */
    EVICT_REASON_DISPATCH_LEASE, /* its dispatch lease was not renewed (dispatchlease.h): likewise; held until renewed */
    EVICT_REASON_PARTLY_PLACED,  /* a member refused by kube-scheduler while others are bound, past partial_timeout */
};

/* What evict_check found. Initialise with evict_verdict_init, release with evict_verdict_finish. */
struct evict_verdict {
    enum evict_reason reason; /* NONE: keep the gang */
    int64_t timeout_ms;       /* the timeout that expired */
    int64_t recheck_ms;       /* NONE: the earliest time the verdict may change (a deadline); 0: only when something changes */
    size_t *late;             /* owned: indexes into the gang's members that were late (not bound, or not Ready) */
    size_t nlate;
};

void evict_verdict_init(struct evict_verdict *v);
void evict_verdict_finish(struct evict_verdict *v);

/*
 * Decides at now whether g is to be evicted under cfg, filling v (initialised
 * by the caller; it is reset). Placement is judged first: when any member is
 * past its placement deadline, the reason is PLACEMENT_TIMEOUT and late lists
 * every unbound member; otherwise, when a member is bound and a refused one is
 * past its partial deadline, PARTLY_PLACED and late lists every unbound
 * member; otherwise, when a bound member is past its readiness
 * deadline, PODS_READY_TIMEOUT and late lists every bound member that is not
 * Ready. Returns v->reason.
 */
enum evict_reason evict_check(const struct evict_config *cfg, const struct evict_gang *g, int64_t now_ms, struct evict_verdict *v);

/* "PlacementTimeout", "PodsReadyTimeout", "Preempted", "Reclaimed", "DispatchLeaseExpired", "PartlyPlaced" (Event
   reasons and the metric's label), "" for NONE. */
const char *evict_reason_name(enum evict_reason reason);

/* ------------------------------------------------------------ the requeue */

/* A RayCluster's eviction record (its annotations). All zero: never evicted. */
struct evict_record {
    int64_t count;         /* requeue-count: evictions since the spec last changed */
    int64_t requeue_at_ms; /* requeue-at; 0: none (deactivated, or never evicted) */
    int64_t evicted_at_ms; /* evicted-at; 0: none */
    int64_t generation;    /* evicted-generation: metadata.generation at the last eviction */
    int reason;            /* evicted-reason: enum evict_reason of the last eviction */
};

/*
 * Reads the record from a RayCluster's metadata.annotations (borrowed; NULL:
 * none). A value that does not parse (edited by hand) makes the whole record
 * read as never evicted, and -1 is returned with err naming it: a malformed
 * record never holds a gang back nor deletes a pod. Otherwise 0.
 */
int evict_record_parse(const json_t *annotations, struct evict_record *out, struct error *err);

/* The delay before re-admission after eviction number n (>= 1): min(max, base * 2^(n-1) + jitter), random uniform in 0..2^32-1. */
int64_t evict_backoff_ms(const struct evict_config *cfg, int64_t n, uint32_t random);

/*
 * The record after an eviction for reason at now of a RayCluster at generation: the
 * count grows by one (from 0 when prev was written at another generation);
 * requeue_at is now + the backoff rounded up to a whole second, or 0 when
 * the count reaches the limit (deactivated); evicted_at is now rounded down.
 * PREEMPTED, RECLAIMED and DISPATCH_LEASE carry no penalty: the count stays
 * (0 from another generation) and requeue_at is evicted_at.
 */
void evict_record_next(const struct evict_record *prev, const struct evict_config *cfg, enum evict_reason reason,
                       int64_t generation, int64_t now_ms, uint32_t random, struct evict_record *out);

/*
 * The JSON merge patch of an eviction (new reference): withdraws the
 * admission record (admitted_annotation: null) and writes the record's five
 * annotations (requeue-at null when deactivated). With resource_version
 * (borrowed; NULL: none) the apiserver refuses it with 409 if the RayCluster
 * changed since.
 */
json_t *evict_record_patch(const struct evict_record *rec, const char *admitted_annotation, const char *resource_version);

enum evict_hold {
    EVICT_HOLD_NONE = 0,    /* may be admitted */
    EVICT_HOLD_BACKOFF,     /* not before *until_ms */
    EVICT_HOLD_DEACTIVATED, /* not until its spec changes */
};

/* Whether a gang with rec, its RayCluster at generation, may be admitted at now; sets *until_ms for BACKOFF. */
enum evict_hold evict_hold(const struct evict_config *cfg, const struct evict_record *rec, int64_t generation, int64_t now_ms,
                           int64_t *until_ms);

/*
 * The wait message of a held gang (new string, caller frees): "gang ray-x-pg
 * was evicted 2 times; it may be admitted again at 2026-11-23T16:04:05Z",
 * or "gang ray-x-pg is deactivated after 3 evictions (requeue limit 3):
 * change the RayCluster's spec to requeue it". NULL for EVICT_HOLD_NONE.
 */
char *evict_hold_message(const char *gang, enum evict_hold hold, const struct evict_config *cfg, const struct evict_record *rec);

/*
 * The message of an eviction (new string, caller frees), for the GangEvicted
 * Events and the PodGroup's condition: what expired, the late members with
 * the scheduler's reason when there is one, and what happens next (rec is
 * the record written by the eviction). Bounded to about 1 KiB.
 */
char *evict_message(const char *gang, const struct evict_gang *g, const struct evict_verdict *v, const struct evict_config *cfg,
                    const struct evict_record *rec);

/* ------------------------------------------------------------ the pods */

/*
 * Whether a pod of a gang is a leftover of its eviction, to be deleted: the
 * gang is not admitted, has an eviction record (evicted_at set), and the pod
 * is live (not terminating, not finished) and ungated or bound. Pods that
 * KubeRay creates after the eviction are gated and unbound: they wait.
 */
int evict_pod_leftover(int gang_admitted, const struct evict_record *rec, int pod_live, int pod_gated, int pod_bound);

/*
 * The strategic merge patch of a pod's status that marks it about to be
 * deleted by raygate (new reference): condition DisruptionTarget "True",
 * reason EVICT_DISRUPTION_REASON, message (borrowed, cut to 1 KiB), at now
 * (RFC 3339).
 */
json_t *evict_disruption_patch(const char *message, const char *now);

#endif
