#include "loopstop.h"

#include <stddef.h>

#include "stop.h"

static struct dispatch_loop *registered; /* read by main's thread only: the handler reads target */
static struct stop_target target;

static void stop_loop(void *l)
{
    dispatchloop_stop(l);
}

void loopstop_register(struct dispatch_loop *l)
{
    registered = l;
    target = (struct stop_target){.stop = stop_loop, .arg = l};
    stop_register(&target);
}

void loopstop_finish(void)
{
    /* First unregistered, and no handler still in dispatchloop_stop: then nothing else reaches the loop. */
    stop_unregister();
    dispatchloop_destroy(registered);
    registered = NULL;
}
