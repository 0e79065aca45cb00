/*
 * controller: the gate controller's I/O loop around the pure decision code.
 *
 * Watches (one watcher thread, lib/io/kube.h) feed the cache (lib/sched/cache.h) under
 * a mutex and wake the controller thread, which runs decision passes
 * (lib/sched/admit.h) within a few milliseconds of an event, plus a periodic full
 * resync, and carries the decisions out:
 * - ADMIT: record raygate.io/admitted-at on the RayCluster first, then remove
 *   our gate from all the gang's pods concurrently (crash-consistent: after a
 *   restart, an admitted RayCluster with gated pods is finished first); a
 *   Normal Event on the RayCluster;
 * - FINISH / TAIL_ADMIT: remove our gate from the listed pods (TAIL_ADMIT: a
 *   Normal Event on each);
 * - WAIT / TAIL_WAIT: a Warning Event on the RayCluster and its gated pods,
 *   only when the gang's reason changed ("waiting for pods": on the RayCluster
 *   only).
 * Evictions (evict.h, evictscan.h, evictor.h): after a pass (at most once a
 * second) and whenever a placement or readiness deadline or a requeue-at
 * comes, the cache is scanned; an admitted gang past its timeout has its
 * admission withdrawn and its eviction recorded on the RayCluster first, then
 * its pods get DisruptionTarget and are deleted (KubeRay creates them again,
 * the webhook gates them); an evicted gang with pods still ungated or bound
 * (a restart mid-eviction) has them deleted. A gang waits out its backoff in
 * the passes (admit.h), which run again when its requeue-at comes.
 * Gate removal is a JSON merge patch carrying the pod's resourceVersion and the
 * remaining gates; on 409 the pod is read again and the patch recomputed; a
 * gate already gone, or a pod gone, is success.
 *
 * After the gates, the Volcano-compatible status (lib/sched/podgroup.h): the
 * PodGroups of the gangs of the queues the pass evaluated (and of PodGroups
 * the watch showed changed), and those Queues' status and gauges, compared
 * with what the API showed last (the PodGroup and Queue watches, and the
 * answers to our writes) and queued for the status writer (statuswriter.h)
 * only when something differs. Discovery says which of Volcano's CRDs exist:
 * without the PodGroup CRD no PodGroup is written, without the Queue CRD no
 * queue exists; either is said once in the log, looked for again at each
 * resync, and used from the moment it appears.
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
    /* Whole-gang eviction and requeue (evict.h): the flags' timeouts, backoff and limit. Must pass evict_config_check. */
    struct evict_config evict;
    /* Preemption within a queue and reclaim across queues (preempt.h, preemptscan.h): 1 on (the default), 0 off. */
    int preemption;
    const char *instance; /* reportingInstance of Events (copied) */
    /* Leader election (borrowed, not started yet); NULL: always act. Destroy it before the controller. */
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

#endif
