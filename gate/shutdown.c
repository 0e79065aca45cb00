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
    leader_destroy(leader); /* releases the Lease if held: the other replica takes over at once */
    controller_destroy(registered);
}
