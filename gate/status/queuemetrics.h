/*
 * queuemetrics: the Prometheus gauges that mirror the Volcano status of the
 * queues (lib/sched/status/podgroup.h computes the status, purely; this module writes
 * the gauges, from the gate's status sync):
 *   raygate_gangs_pending{queue,reason}       gangs not admitted, by podgroup_reason_token (every token, zeros included)
 *   raygate_queue_allocated{queue,resource}   status.allocated (a parent: its subtree's), for every resource allocated
 *                                             or in the capability
 *   raygate_queue_capability{queue,resource}  spec.capability
 *   raygate_queue_share{queue}                the share (status.share, unrounded; +Inf: holds what it deserves
 *                                             none of); none for the Queue named root
 *   raygate_queue_deserved{queue,resource,derived}  status.deserved; derived "true" when derived by weight, else "false"
 * cpu in cores, everything else in its base unit.
 */
#ifndef RAYGATE_GATE_QUEUEMETRICS_H
#define RAYGATE_GATE_QUEUEMETRICS_H

#include "cache.h"
#include "metrics.h"
#include "podgroup.h"

struct queuemetrics;

/* Creates the five gauge families in reg (borrowed, must outlive it). Returns a new object. */
struct queuemetrics *queuemetrics_create(struct metrics_registry *reg);

/* Frees it (not the families, nor their series); accepts NULL. */
void queuemetrics_destroy(struct queuemetrics *m);

/*
 * Sets queue q's series from c and its status st, removing those of
 * resources it no longer has: pending always, capability and allocated when
 * st has PODGROUP_QUEUE_ALLOCATED, share and deserved when it has
 * PODGROUP_QUEUE_TREE; the others are left as they were.
 */
void queuemetrics_queue(struct queuemetrics *m, const struct cache *c, const struct cache_queue *q,
                        const struct podgroup_queue_status *st);

/* Removes every series of the queues set before that c no longer holds. */
void queuemetrics_sweep(struct queuemetrics *m, const struct cache *c);

#endif
