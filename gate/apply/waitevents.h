/*
 * waitevents: the GangWaiting Warnings of waiting gangs, once per gang and
 * per distinct reason, not per pod (lib/sched/status/eventplan.h decides when; this
 * module keeps its state per gang, reads the cache and adds the Events to a
 * pass's list, eventpost.h).
 *
 * - A gang's wait (WAIT) is told on its RayCluster and on its head pod (every
 *   live gated head: a second head waits too). A head created after the
 *   Warning went out is told when a pass next reports the gang.
 * - Its autoscaling tail's wait (TAIL_WAIT) is told on the RayCluster and on
 *   the tail's first waiting pod (the next to be admitted), with that pod's
 *   own message, and on any extra head pod among the waiting ones.
 * - A reason is told once it has lasted EVENTPLAN_SETTLE_MS (settle_ms):
 *   waitevents_flush tells the waits that have settled since, also for gangs
 *   the pass did not look at again. The same reason again later counts its
 *   Event up (count, lastTimestamp), as Kubernetes' recorder does.
 * A worker pod gets no Event: `kubectl describe pod` shows its scheduling
 * gate and ray.io/cluster label; the why is on its head pod, its RayCluster
 * and its PodGroup's condition (docs/troubleshooting.md).
 *
 * Not thread-safe: the controller calls it under its lock, from apply_plan.
 */
#ifndef RAYGATE_GATE_WAITEVENTS_H
#define RAYGATE_GATE_WAITEVENTS_H

#include "admit.h"
#include "cache.h"
#include "eventpost.h"

struct waitevents;

/* What a pass's Events need; borrowed for the call. */
struct waitevents_pass {
    struct eventpost_list *events; /* where Events are added */
    const char *now;               /* RFC 3339, the Events' timestamps */
    const char *instance;          /* reportingInstance */
    long long mono_ms;             /* CLOCK_MONOTONIC ms of the pass */
};

/*
 * settle_ms: how long a reason lasts before it is told, in ms; 0: at once, never negative. The gate passes
 * EVENTPLAN_SETTLE_MS (apply_config.settle_ms, the same meaning).
 */
struct waitevents *waitevents_create(long long settle_ms);

/* Accepts NULL. */
void waitevents_destroy(struct waitevents *w);

/*
 * A decision d (borrowed) of the pass about a gang: a WAIT or TAIL_WAIT notes
 * its reason (and tells it when settled, or a head not told yet); any other
 * decision ends the gang's (ADMIT, FINISH) or its tail's (TAIL_ADMIT) wait.
 */
void waitevents_note(struct waitevents *w, struct cache *cache, const struct admit_decision *d, const struct waitevents_pass *x);

/*
 * After the pass's decisions: tells every wait settled by now that was not
 * told yet, and (every few seconds) forgets gangs gone from cache. Returns
 * when the next wait settles (CLOCK_MONOTONIC ms), or -1 when none waits
 * untold: a pass is wanted then.
 */
long long waitevents_flush(struct waitevents *w, struct cache *cache, const struct waitevents_pass *x);

#endif
