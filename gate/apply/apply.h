/*
 * apply: carries out one decision pass (lib/sched/admit/admit.h) in two halves.
 *
 * apply_plan runs under the controller's lock, right after the pass: it counts
 * every decision, keeps the gangs' completeness times, builds the Warning
 * Events of the waits (waitevents.h: once per gang and reason, on the
 * RayCluster and the head pod, once the reason has lasted a second) and lists the acts, the
 * decisions that remove gates (ADMIT, FINISH, TAIL_ADMIT), with all it needs
 * of the cache, so that carrying them out reads nothing more from it.
 *
 * apply_carry_out runs without the lock (with the native gang step, native.h,
 * each act's native PodGroup is made sure of after the RayCluster's record or
 * read, before its gates: a failed write keeps them):
 * - ADMIT: record raygate.io/admitted-at on the RayCluster first (with
 *   raygate.io/topology-placed, where a topology-constrained gang was placed,
 *   in the same patch), then remove our gate from all the gang's pods (crash-consistent: after a restart, an
 *   admitted RayCluster with gated pods is finished first); a Normal Event on
 *   the RayCluster;
 * - FINISH / TAIL_ADMIT: read the RayCluster (the cache may be behind), then
 *   remove our gate from the listed pods (TAIL_ADMIT: a Normal Event on each).
 * Every RayCluster of the pass is asked in one concurrent batch, and every gate
 * removed in one more (a pass admitting 50 gangs costs two round trips).
 * Then, once, under the lock: the cache learns which gangs are admitted and
 * which pods ungated. That one trip back is needed: the cache may only believe
 * a write the API accepted (a refused record or PATCH leaves the gang waiting
 * and the pod gated, to be decided again), and only after the writes is it
 * known which ones were. Last, the pass's Events are posted (eventpost.h).
 *
 * The metrics: raygate_gangs_admitted_total{queue},
 * raygate_decisions_total{action,reason},
 * raygate_gate_removal_duration_seconds, raygate_gang_wait_duration_seconds,
 * raygate_gang_ungate_spread_seconds.
 */
#ifndef RAYGATE_GATE_APPLY_H
#define RAYGATE_GATE_APPLY_H

#include <stdatomic.h>

#include "admit.h"
#include "cache.h"
#include "cacheguard.h"
#include "eventpost.h"
#include "kube.h"
#include "metrics.h"
#include "native.h"
#include "release.h"

struct apply;

/* Borrowed, must outlive the apply. */
struct apply_config {
    struct kube_client *client;
    struct metrics_registry *reg;
    const char *instance;        /* reportingInstance of Events */
    int (*may_write)(void *arg); /* asked before every write (leader election); NULL: always */
    void *arg;
    const atomic_bool *stopping; /* true: no gate removal starts any more */
    /* How long a wait lasts before its Warning, in ms, as waitevents_create takes it: 0 at once, never negative (the gate
       passes EVENTPLAN_SETTLE_MS). */
    long long settle_ms;
    struct native *native; /* Kubernetes' own gang scheduling (native.h), read under the lock; NULL: not used */
};

struct apply *apply_create(const struct apply_config *cfg);

/* Accepts NULL. */
void apply_destroy(struct apply *a);

struct apply_act;

/* One pass being carried out: apply_plan fills it, apply_carry_out empties it. */
struct apply_pass {
    struct admit_result *res; /* borrowed */
    char now[32];             /* Event and admitted-at timestamp */
    struct eventpost_list events;
    struct apply_act *acts;
    size_t nacts;
    struct release_list releases; /* the held RayClusters whose gangs must wait, released (release.h) */
    long long mono_ms;            /* CLOCK_MONOTONIC ms of the plan */
    long long settle_at;          /* when a wait not told yet settles (waitevents.h), or -1 */
};

/*
 * Caller holds the cache's lock, right after admit_pass filled res (borrowed,
 * must outlive p). woke_ms: when the pass's first event came (CLOCK_MONOTONIC
 * ms), the wait's start when a gang's completeness is not known.
 */
void apply_plan(struct apply *a, struct apply_pass *p, struct cache *cache, struct admit_result *res, long long woke_ms);

/*
 * Without the lock: carries out p's acts and Events (above); guard (the
 * cache's, not held by the caller) and cache only for the paced release's
 * look at the binds and the one trip that records what the API accepted.
 * Both borrowed for the call. Frees what p holds.
 * Returns -1 if something failed that a pass soon should try again, or a
 * wait is to be told once it has lasted its settle time (a pass then tells
 * it, waitevents.h), else 0.
 */
int apply_carry_out(struct apply *a, struct apply_pass *p, struct cacheguard *guard, struct cache *cache);

#endif
