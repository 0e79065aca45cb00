/*
 * controller: the gate controller's run loop, a coordinator of rooms around
 * the pure decision code (lib/sched/admit/admit.h):
 *   watches.h    what is watched, CRD discovery, events into the cache and the status mirror
 *   hyperwatch.h Volcano's HyperNodes, which the admission pass borrows; InvalidHyperNode Events
 *   apply.h      a pass planned under the lock, carried out without it (records, gates, Events)
 *   status.h     the Volcano PodGroups and Queue status, and their gauges (queuemetrics.h),
 *                written by statuswriter.h's thread
 *   evictor.h    whole-gang evictions (evictscan.h) and preemptions (preemptscan.h)
 *   eventpost.h  the one poster of Events
 *   leaseseen.h  the dispatch leases' sightings recorded on their RayClusters, after each pass
 *
 * The controller's thread waits for an event (a watch, the leader, a status
 * write that found its PodGroup gone) and runs a decision pass within a few
 * milliseconds (debounce_ms), plus a periodic full pass (resync_ms); after each
 * pass it syncs the status, looks for a preemption, and scans for evictions
 * (at most once a second, and whenever a placement or readiness deadline or a
 * requeue-at comes). The order that makes an admission crash-consistent
 * (record raygate.io/admitted-at on the RayCluster, then remove the gates) is
 * apply.h's; an eviction's (record, then delete the pods) is evictor.h's.
 *
 * Locks: the controller's lock (cacheguard.h, owned there and lent to the
 * rooms as a guard) guards the cache and the decision state; the lock order
 * is the controller's, then the status lock, then the status writer's
 * (status.h).
 *
 * With leader election (options.leader), nothing is written unless the
 * leader says this process leads, asked again before every write: a
 * non-leader keeps its caches warm and decides nothing; a leader that loses
 * the lease abandons the rest of its pass at once; on becoming leader it runs
 * a full pass from the cache (the API's state: admitted-at annotations, gates).
 * The gauge raygate_leader is 1 while this process acts (always, without
 * leader election), else 0.
 */
#ifndef RAYGATE_GATE_CONTROLLER_H
#define RAYGATE_GATE_CONTROLLER_H

#include <stdint.h>

#include "evict.h"
#include "kube.h"
#include "leader.h"
#include "metrics.h"

struct controller;

struct controller_options {
    long resync_ms;   /* periodic full pass (default 30000) */
    long debounce_ms; /* events within this window share one pass (default 5) */
    /*
     * Test-only fault switch (e2e restart drill; fault.h, FAULT_AFTER_RECORD):
     * after recording an admission and removing the gate from this many pods
     * of the gang, exit the process with status 3, as a crash would. -1: off.
     */
    long fault_exit_after_ungates;
    /* Test-only (FAULT_AFTER_EVICT_RECORD): after recording an eviction and deleting this many of its pods, exit(3). -1: off. */
    long fault_exit_after_evict_deletes;
    /* Test-only (FAULT_AFTER_NATIVE): 1 exit(3) once a pass wrote its native PodGroups, before any gate goes. 0: off. */
    int fault_exit_after_native;
    /* Whole-gang eviction and requeue (evict.h): the flags' timeouts, backoff and limit. Must pass evict_config_check. */
    struct evict_config evict;
    /* Preemption within a queue and reclaim across queues (preempt.h, preemptscan.h): 1 on (the default), 0 off. */
    int preemption;
    /* Gangs admitted before their pods all exist, each ungated as it arrives (early.h, admit_set_early): 1 on, 0 off (the default).
     */
    int early;
    /*
     * Kubernetes' own gang scheduling as the last step (native.h, enum native_mode): NATIVE_AUTO (where served), ON or
     * OFF. raygate-gate passes NATIVE_OFF unless --native-gang says otherwise (the step is opt-in: docs/native-gang.md);
     * options zeroed here mean NATIVE_AUTO.
     */
    int native_gang;
    const char *instance; /* reportingInstance of Events (copied) */
    /* Leader election (borrowed, not started yet); NULL: always act. Stop it (leader_stop) before controller_destroy, and
       destroy it after: the controller's threads ask it until then (shutdown.h). */
    struct leader *leader;
};

/* Creates a controller using client (borrowed, must outlive it) and reg (borrowed). NULL on failure. */
struct controller *controller_create(struct kube_client *client, struct metrics_registry *reg,
                                     const struct controller_options *opts);

/* Starts the watches. Returns 0, or -1 with err. */
int controller_start(struct controller *c, struct error *err);

/* Runs passes until controller_stop() is called (from a signal-safe context: it only writes a flag and wakes). */
void controller_run(struct controller *c);

/* Asks controller_run to return. Async-signal-safe. */
void controller_stop(struct controller *c);

/* Whether every watch delivered its initial list. */
int controller_synced(struct controller *c);

/* Stops the watches and frees everything; accepts NULL. */
void controller_destroy(struct controller *c);

/*
 * The seed of an eviction scan's backoff jitter (evictscan_run's random) at
 * wall_ms (CLOCK_REALTIME) and mono_ms (CLOCK_MONOTONIC): defined for every
 * value of both, whatever the host's uptime. The controller's own; exported
 * for its test.
 */
uint32_t controller_jitter_seed(int64_t wall_ms, long long mono_ms);

#endif
