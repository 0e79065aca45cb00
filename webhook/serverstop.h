/*
 * serverstop: how raygate-webhook stops. SIGTERM or SIGINT asks the server
 * registered here to stop (server_request_stop, through lib/io/stop.h, on
 * whichever thread the signal lands: the Queue, DRA and RayCluster watch
 * threads do not block signals); server_run returns; main calls
 * serverstop_finish, which frees the server once no handler can reach it.
 */
#ifndef RAYGATE_SERVERSTOP_H
#define RAYGATE_SERVERSTOP_H

#include "server.h"

/* Registers s (owned from here: serverstop_finish destroys it) as what SIGTERM and SIGINT stop, and installs their handler. */
void serverstop_register(struct server *s);

/*
 * Unregisters the server (a later signal, a second SIGTERM, stops nothing)
 * and, once no handler on another thread is still asking it to stop,
 * destroys it.
 */
void serverstop_finish(void);

#endif
