#include "daemon.h"

#include <signal.h>
#include <stddef.h>

#include "log.h"

void daemon_signals(void)
{
    signal(SIGPIPE, SIG_IGN);
}

struct kube_client *daemon_connect(const char *path, const char *context, struct metrics_registry *reg, struct kubeconfig *cfg,
                                   struct kube_metrics *km)
{
    struct error err = {{0}};
    if (kubeconfig_load(path, context, cfg, &err) != 0) {
        log_errorf("kubeconfig: %s", err.message);
        return NULL;
    }
    kube_client_metrics_register(reg, km);
    struct kube_client_options copts = {.metrics = km};
    struct kube_client *c = kube_client_create(cfg, &copts, &err);
    if (c == NULL)
        log_errorf("kubernetes client: %s", err.message);
    return c;
}
