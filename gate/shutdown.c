#include "shutdown.h"

#include <stdatomic.h>
#include <stddef.h>

#include "stop.h"

/* Atomic: /readyz asks for it on the metrics server's thread. */
static _Atomic(struct controller *) registered;
static struct stop_target target; /* what the signal handler reads until stop_unregister */

static void stop_controller(void *c)
{
    controller_stop(c);
}

void shutdown_register(struct controller *c)
{
    atomic_store(&registered, c);
    if (c == NULL)
        return;
    target = (struct stop_target){.stop = stop_controller, .arg = c};
    stop_register(&target);
}

struct controller *shutdown_controller(void)
{
    return atomic_load(&registered);
}

void shutdown_finish(struct leader *leader)
{
    /* The Lease first: the other replica takes over at once, and nothing here writes any more (leader_is_leading says no). */
    leader_stop(leader);
    /* Forgotten, and no handler still in controller_stop, before it is freed: a later signal (a second SIGTERM) stops nothing. */
    stop_unregister();
    struct controller *c = atomic_exchange(&registered, NULL);
    /* Joins the controller's threads, which ask leader_is_leading before every write until then. */
    controller_destroy(c);
    /* Nobody asks it any more. Destroyed before the controller, it was read freed by the status writer's thread. */
    leader_destroy(leader);
}
