#include "shutdown.h"

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>

/* A signal handler may only touch lock-free atomics. */
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs lock-free atomics");

static _Atomic(struct controller *) registered;
static atomic_int in_handler; /* handlers between their read of registered and their return */

void shutdown_register(struct controller *c)
{
    atomic_store(&registered, c);
}

struct controller *shutdown_controller(void)
{
    return atomic_load(&registered);
}

void shutdown_signal(void)
{
    atomic_fetch_add(&in_handler, 1);
    struct controller *c = atomic_load(&registered);
    if (c != NULL)
        controller_stop(c);
    atomic_fetch_sub(&in_handler, 1);
}

void shutdown_finish(struct leader *leader)
{
    /* The Lease first: the other replica takes over at once, and nothing here writes any more (leader_is_leading says no). */
    leader_stop(leader);
    /* Forgotten before it is freed: a later signal (a second SIGTERM) stops nothing. */
    struct controller *c = atomic_exchange(&registered, NULL);
    /*
     * A handler on another thread may have read it just before: let it
     * return. One that interrupts this thread returns before the loop goes
     * on, so this cannot wait for itself.
     */
    while (atomic_load(&in_handler) > 0)
        sched_yield();
    /* Joins the controller's threads, which ask leader_is_leading before every write until then. */
    controller_destroy(c);
    /* Nobody asks it any more. Destroyed before the controller, it was read freed by the status writer's thread. */
    leader_destroy(leader);
}
