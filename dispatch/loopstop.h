/*
 * loopstop: how raygate-dispatch stops. SIGTERM or SIGINT asks the loop
 * registered here to stop (dispatchloop_stop, through lib/io/stop.h, on
 * whichever thread the signal lands: the workers' watch threads do not block
 * signals); dispatchloop_run returns; main calls loopstop_finish, which frees
 * the loop once no handler can reach it.
 */
#ifndef RAYGATE_LOOPSTOP_H
#define RAYGATE_LOOPSTOP_H

#include "loop.h"

/* Registers l (owned from here: loopstop_finish destroys it) as what SIGTERM and SIGINT stop, and installs their handler. */
void loopstop_register(struct dispatch_loop *l);

/*
 * Unregisters the loop (a later signal, a second SIGTERM, stops nothing)
 * and, once no handler on another thread is still stopping it, destroys it.
 * Nothing registered: nothing to do.
 */
void loopstop_finish(void);

#endif
