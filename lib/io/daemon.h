/*
 * daemon: what the long-running programs (raygate-gate, raygate-dispatch) do
 * alike at start: stop cleanly on SIGTERM and SIGINT, ignore SIGPIPE, and
 * connect to the API server with the kubeconfig named (or $KUBECONFIG, or
 * the in-cluster service account), the client's metrics registered.
 */
#ifndef RAYGATE_DAEMON_H
#define RAYGATE_DAEMON_H

#include "kubeclient.h"
#include "kubeconfig.h"
#include "metrics.h"

/* Calls on_stop(signal) on SIGTERM and SIGINT (from the signal handler: it may only set flags); ignores SIGPIPE. */
void daemon_signals(void (*on_stop)(int sig));

/*
 * Loads the kubeconfig (path and context may be NULL: kubeconfig_load's
 * defaults) into cfg (initialised by the caller, released by it), registers
 * the client's metrics in reg into km (which must outlive the client), and
 * returns a new client, or NULL after logging why.
 */
struct kube_client *daemon_connect(const char *path, const char *context, struct metrics_registry *reg, struct kubeconfig *cfg,
                                   struct kube_metrics *km);

#endif
