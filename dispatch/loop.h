/*
 * loop: the dispatcher's pass, every --resync:
 * 1. the worker registry from the Secrets (workers.h), and each worker's view
 *    (view.h: kept by watches on the worker's own thread; the pass takes its
 *    copies as they are now): a worker whose watches fail is down; the state
 *    of each is reported on its Secret;
 * 2. the manager's Queues, RayClusters and RayJobs (manager.h);
 * 3. for each object whose Queue dispatches (or that carries the
 *    dispatcher's finalizer or a dispatched-to), the plan (dispatchplan.h)
 *    and its action: the simulation and pick (dispatchsim.h, dispatchpick.h)
 *    when the plan asks for them, and the writes (act.h) with their Events;
 * 4. copies of this manager on reachable workers whose manager object is
 *    gone are deleted.
 * One thread; a pass's failures are logged and retried at the next pass.
 */
#ifndef RAYGATE_DISPATCH_LOOP_H
#define RAYGATE_DISPATCH_LOOP_H

#include <stdint.h>

#include "config.h"
#include "kube.h"
#include "metrics.h"

struct dispatch_loop;

/* Creates the loop (opt, manager and reg borrowed: they outlive it). Returns the loop (never NULL). */
struct dispatch_loop *dispatchloop_create(const struct dispatch_options *opt, struct kube_client *manager,
                                          struct metrics_registry *reg);

/* Frees the loop and its workers; l may be NULL. */
void dispatchloop_destroy(struct dispatch_loop *l);

/* One pass at now_ms (Unix ms, the manager's clock). */
void dispatchloop_pass(struct dispatch_loop *l, int64_t now_ms);

/* Runs passes every --resync until dispatchloop_stop. */
void dispatchloop_run(struct dispatch_loop *l);

/* Makes dispatchloop_run return after its current pass; async-signal-safe. */
void dispatchloop_stop(struct dispatch_loop *l);

/* Whether a whole pass completed. */
int dispatchloop_synced(const struct dispatch_loop *l);

#endif
