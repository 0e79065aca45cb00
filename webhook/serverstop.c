#include "serverstop.h"

#include <stddef.h>

#include "stop.h"

static struct server *registered; /* read by main's thread only: the handler reads target */
static struct stop_target target;

static void stop_server(void *s)
{
    server_request_stop(s);
}

void serverstop_register(struct server *s)
{
    registered = s;
    target = (struct stop_target){.stop = stop_server, .arg = s};
    stop_register(&target);
}

void serverstop_finish(void)
{
    /* First unregistered, and no handler still in server_request_stop: then nothing else reaches the server. */
    stop_unregister();
    server_destroy(registered);
    registered = NULL;
}
