/*
 * shutdown: how raygate-gate stops. SIGTERM or SIGINT asks the controller
 * registered here to stop (controller_stop, through lib/io/stop.h, on
 * whichever thread the signal lands); controller_run returns; main calls
 * shutdown_finish, which stops and frees the controller and the leader in
 * the order their threads need.
 */
#ifndef RAYGATE_GATE_SHUTDOWN_H
#define RAYGATE_GATE_SHUTDOWN_H

#include "controller.h"
#include "leader.h"

/*
 * Registers c (owned from here: shutdown_finish destroys it; NULL: none) as
 * what SIGTERM and SIGINT stop, and installs their handler (stop_register).
 */
void shutdown_register(struct controller *c);

/* The controller registered (borrowed), or NULL: none, or shutdown_finish ran. */
struct controller *shutdown_controller(void);

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
