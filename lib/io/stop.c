#include "stop.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

/* A signal handler may only touch lock-free atomics. */
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs lock-free atomics");

static _Atomic(const struct stop_target *) registered;
static atomic_int in_handler; /* handlers between their read of registered and their return */

static void on_signal(int sig)
{
    (void)sig;
    /* Counted before the read: stop_unregister, having cleared registered, waits for every handler that may have read it. */
    atomic_fetch_add(&in_handler, 1);
    const struct stop_target *t = atomic_load(&registered);
    if (t != NULL)
        t->stop(t->arg);
    atomic_fetch_sub(&in_handler, 1);
}

void stop_register(const struct stop_target *t)
{
    atomic_store(&registered, t);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

void stop_unregister(void)
{
    atomic_store(&registered, NULL);
    /*
     * A handler on another thread may have read the target just before: let
     * it return. One that interrupts this thread returns before the loop
     * goes on, so this never waits for itself.
     */
    while (atomic_load(&in_handler) > 0)
        sched_yield();
}
