/*
 * raygate-gate: the gang gate controller.
 *
 *   raygate-gate [--kubeconfig FILE] [--context NAME] [--namespace NS] [--metrics-addr ADDR]
 *                [--resync D] [--log-level L]
 *                [--leader-elect [--leader-elect-lease-duration S] [--leader-elect-renew-deadline S]
 *                 [--leader-elect-retry-period S]]
 *
 * Without --kubeconfig it uses $KUBECONFIG, else the in-cluster config.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller.h"
#include "httpd.h"
#include "kube.h"
#include "kubeconfig.h"
#include "leader.h"
#include "lease.h"
#include "log.h"
#include "metrics.h"

static struct controller *the_controller;

static void on_signal(int sig)
{
    (void)sig;
    if (the_controller != NULL)
        controller_stop(the_controller);
}

/* /readyz: ready once every watch delivered its initial list. */
static int gate_ready(void *arg, char *why, size_t size)
{
    (void)arg;
    if (the_controller != NULL && controller_synced(the_controller))
        return 1;
    snprintf(why, size, "caches not synced yet");
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: raygate-gate [--kubeconfig FILE] [--context NAME] [--namespace NS] [--metrics-addr ADDR]\n"
          "                    [--resync SECONDS] [--log-level error|warn|info|debug] [--version]\n"
          "  --kubeconfig FILE   default $KUBECONFIG, else the in-cluster service account\n"
          "  --namespace NS      the controller's own namespace (default raygate-system)\n"
          "  --metrics-addr ADDR serve /metrics, /healthz and /readyz over HTTP on ADDR\n"
          "                      (HOST:PORT, :PORT or [IPv6]:PORT; default: not served)\n"
          "  --resync SECONDS    full decision pass period (default 30)\n"
          "  --leader-elect      act only while holding the Lease raygate-gate in NS (for several replicas)\n"
          "  --leader-elect-lease-duration SECONDS   (default 15)\n"
          "  --leader-elect-renew-deadline SECONDS   (default 10)\n"
          "  --leader-elect-retry-period SECONDS     (default 2)\n"
          "  --test-fault-exit-after-ungates N\n"
          "                      TEST ONLY: exit(3) after recording an admission and ungating N pods\n",
          f);
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *kubeconfig_path = NULL, *context = NULL, *ns = "raygate-system", *metrics_addr = NULL;
    long resync_s = 30, fault = -1;
    int leader_elect = 0;
    long le_lease_s = LEASE_DEFAULT_DURATION_MS / 1000, le_renew_s = LEASE_DEFAULT_RENEW_DEADLINE_MS / 1000,
         le_retry_s = LEASE_DEFAULT_RETRY_PERIOD_MS / 1000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--version") == 0) {
            puts("raygate-gate " RAYGATE_VERSION);
            return 0;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--leader-elect") == 0) {
            leader_elect = 1;
            continue;
        } else if (v == NULL) {
            usage(stderr);
            return 2;
        } else if (strcmp(a, "--kubeconfig") == 0) {
            kubeconfig_path = v;
        } else if (strcmp(a, "--context") == 0) {
            context = v;
        } else if (strcmp(a, "--metrics-addr") == 0) {
            metrics_addr = v;
        } else if (strcmp(a, "--namespace") == 0) {
            ns = v;
        } else if (strcmp(a, "--resync") == 0) {
            if (parse_long(v, &resync_s) != 0 || resync_s == 0) {
                fprintf(stderr, "raygate-gate: --resync takes a number of seconds\n");
                return 2;
            }
        } else if (strncmp(a, "--leader-elect-", 15) == 0) {
            long *dst = strcmp(a + 15, "lease-duration") == 0   ? &le_lease_s
                        : strcmp(a + 15, "renew-deadline") == 0 ? &le_renew_s
                        : strcmp(a + 15, "retry-period") == 0   ? &le_retry_s
                                                                : NULL;
            if (dst == NULL) {
                usage(stderr);
                return 2;
            }
            if (parse_long(v, dst) != 0 || *dst == 0) {
                fprintf(stderr, "raygate-gate: %s takes a number of seconds\n", a);
                return 2;
            }
        } else if (strcmp(a, "--test-fault-exit-after-ungates") == 0) {
            if (parse_long(v, &fault) != 0) {
                fprintf(stderr, "raygate-gate: --test-fault-exit-after-ungates takes a count\n");
                return 2;
            }
        } else if (strcmp(a, "--log-level") == 0) {
            enum log_level l;
            if (log_level_parse(v, &l) != 0) {
                fprintf(stderr, "raygate-gate: unknown log level %s\n", v);
                return 2;
            }
            log_set_level(l);
        } else {
            usage(stderr);
            return 2;
        }
        i++; /* the option's value */
    }

    int rc = 1;
    struct kubeconfig cfg;
    struct kubeconfig_error kerr = {{0}};
    struct kube_error err = {{0}};
    struct kube_client *client = NULL;
    struct httpd *httpd = NULL;
    struct leader *leader = NULL;
    struct metrics_registry *reg = metrics_registry_create();
    struct kube_metrics km;
    kubeconfig_init(&cfg);
    if (kubeconfig_load(kubeconfig_path, context, &cfg, &kerr) != 0) {
        log_errorf("kubeconfig: %s", kerr.message);
        goto out;
    }
    kube_metrics_register(reg, &km);
    struct kube_client_options copts = {.metrics = &km};
    client = kube_client_create(&cfg, &copts, &err);
    if (client == NULL) {
        log_errorf("kubernetes client: %s", err.message);
        goto out;
    }
    char host[256] = "raygate-gate";
    gethostname(host, sizeof(host) - 1);
    if (leader_elect) {
        struct leader_options lo = {
            .namespace_ = ns,
            .name = "raygate-gate",
            .duration_ms = le_lease_s * 1000,
            .renew_deadline_ms = le_renew_s * 1000,
            .retry_period_ms = le_retry_s * 1000,
            .metrics = &km,
        };
        leader = leader_create(&cfg, &lo, &err);
        if (leader == NULL) {
            log_errorf("%s", err.message);
            goto out;
        }
    }
    struct controller_options opts = {
        .resync_ms = resync_s * 1000,
        .debounce_ms = 5,
        .fault_exit_after_ungates = fault,
        .instance = host,
        .leader = leader,
    };
    the_controller = controller_create(client, reg, &opts);
    if (the_controller == NULL) {
        log_errorf("cannot create the controller");
        goto out;
    }
    if (metrics_addr != NULL && (httpd = httpd_start(metrics_addr, reg, gate_ready, NULL)) == NULL)
        goto out;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (controller_start(the_controller, &err) != 0) {
        log_errorf("watches: %s", err.message);
        goto out;
    }
    if (leader != NULL && leader_start(leader) != 0) {
        log_errorf("cannot start the leader election thread");
        goto out;
    }
    log_infof("raygate-gate %s started (namespace %s, resync %lds)", RAYGATE_VERSION, ns, resync_s);
    controller_run(the_controller);
    log_infof("raygate-gate stopping");
    rc = 0;
out:
    httpd_stop(httpd);
    leader_destroy(leader); /* releases the Lease if held: the other replica takes over at once */
    controller_destroy(the_controller);
    kube_client_destroy(client);
    kubeconfig_finish(&cfg);
    metrics_registry_destroy(reg);
    return rc;
}
