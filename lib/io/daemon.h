/*
 * daemon: what the long-running programs (raygate-gate, raygate-dispatch) do
 * alike at start: ignore SIGPIPE (what stops them: stop.h), and
 * connect to the API server with the kubeconfig named (or $KUBECONFIG, or
 * the in-cluster service account), the client's metrics registered.
 */
#ifndef RAYGATE_DAEMON_H
#define RAYGATE_DAEMON_H

#include "kubeclient.h"
#include "kubeconfig.h"
#include "metrics.h"

/* Ignores SIGPIPE: a write to a closed connection fails with EPIPE instead of ending the process. */
void daemon_signals(void);

/*
 * Loads the kubeconfig (path and context may be NULL: kubeconfig_load's
 * defaults) into cfg (initialised by the caller, released by it), registers
 * the client's metrics in reg into km (which must outlive the client), and
 * returns a new client, or NULL after logging why.
 */
struct kube_client *daemon_connect(const char *path, const char *context, struct metrics_registry *reg, struct kubeconfig *cfg,
                                   struct kube_metrics *km);

#endif
