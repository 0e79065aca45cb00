#include "shutdown.h"

#include <stddef.h>

static struct controller *registered;

void shutdown_register(struct controller *c)
{
    registered = c;
}

struct controller *shutdown_controller(void)
{
    return registered;
}

void shutdown_signal(void)
{
    if (registered != NULL)
        controller_stop(registered);
}

void shutdown_finish(struct leader *leader)
{
    /* The Lease first: the other replica takes over at once, and nothing here writes any more (leader_is_leading says no). */
    leader_stop(leader);
    /* Joins the controller's threads, which ask leader_is_leading before every write until then. */
    controller_destroy(registered);
    /* Nobody asks it any more. Destroyed before the controller, it was read freed by the status writer's thread. */
    leader_destroy(leader);
}
