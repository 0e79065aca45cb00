/*
 * stop: what SIGTERM and SIGINT stop in a daemon, and when that target may
 * be freed. One target at a time is registered (stop_register); the signal
 * handler, which may run on any thread (the daemons' watch, status and
 * leader threads do not block signals), calls its stop function; before the
 * program frees the target it unregisters it (stop_unregister), which returns
 * only once no handler is still inside that stop function. A signal after
 * that stops nothing: a second SIGTERM during teardown is ignored.
 *
 * Why a handler and not a thread in sigwait: every daemon already stops by an
 * async-signal-safe call (an atomic flag, an eventfd write); with a blocked
 * mask every thread (libcurl's, the watches', the leader's) would have to be
 * started after it was set, or the signal lands on that thread with its
 * default action and ends the process uncleanly; and the waiting thread
 * would itself need waking and joining at teardown.
 */
#ifndef RAYGATE_STOP_H
#define RAYGATE_STOP_H

/* What a signal stops: stop(arg), which must be async-signal-safe and harmless when repeated. */
struct stop_target {
    void (*stop)(void *arg);
    void *arg;
};

/*
 * Registers t (borrowed: it and t->arg must stay valid until stop_unregister
 * returns) as what SIGTERM and SIGINT stop, and installs the handler on both
 * (from here on they no longer end the process). Replaces any target before.
 */
void stop_register(const struct stop_target *t);

/*
 * Forgets the target and returns once no handler, on any thread, is still
 * calling its stop function: the caller may free it then. Call it from the
 * thread that frees the target, not from a signal handler.
 */
void stop_unregister(void);

#endif
