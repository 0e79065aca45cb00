/*
 * shutdown: how raygate-gate stops. A signal asks the controller registered
 * here to stop (shutdown_signal, from the handler); controller_run returns;
 * main calls shutdown_finish, which stops and frees the controller and the
 * leader in the order their threads need.
 *
 * The signal handler may run on any thread (the watcher's, the status
 * writer's and the leader's threads do not block SIGTERM and SIGINT).
 */
#ifndef RAYGATE_GATE_SHUTDOWN_H
#define RAYGATE_GATE_SHUTDOWN_H

#include "controller.h"
#include "leader.h"

/*
 * Registers c (owned from here: shutdown_finish destroys it) as what
 * shutdown_signal stops. Call it before the signal handlers are installed.
 */
void shutdown_register(struct controller *c);

/* The controller registered (borrowed), or NULL: none, or shutdown_finish ran. */
struct controller *shutdown_controller(void);

/* From a signal handler, on any thread: asks the registered controller to stop (controller_stop). Async-signal-safe. */
void shutdown_signal(void);

/*
 * Stops and frees the registered controller (if any) and leader (may be
 * NULL), in this order: leader_stop (the Lease released: the other replica
 * takes over at once, and this one writes nothing more); the controller
 * unregistered (a later signal stops nothing) and, once no handler is still
 * stopping it, destroyed (that joins its threads, which ask
 * leader_is_leading until then); leader_destroy.
 */
void shutdown_finish(struct leader *leader);

#endif
