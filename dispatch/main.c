/*
 * raygate-dispatch: dispatches the RayClusters and RayJobs of a manager
 * cluster's opted-in Queues to one worker cluster each (docs/dispatch.md).
 *
 *   raygate-dispatch [--kubeconfig FILE] [--context NAME] [--cluster-name NAME] [--namespace NS]
 *                    [--dispatch-timeout D] [--dispatch-lease D] [--dispatch-lease-margin D]
 *                    [--resync D] [--metrics-addr ADDR] [--log-level L] [--test-fault-exit-at-nomination N]
 *
 * The flags, their defaults and bounds: parse_flags (raygate-dispatch --help).
 * Without --kubeconfig it uses $KUBECONFIG, else the in-cluster config (the
 * manager's API server).
 */
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "daemon.h"
#include "flags.h"
#include "httpd.h"
#include "kube.h"
#include "kubeconfig.h"
#include "log.h"
#include "loop.h"
#include "loopstop.h"
#include "metrics.h"
#include "version.h"
#include "workers.h"

extern char **environ;

/* /readyz: ready once a whole pass ran (arg: the loop, borrowed; the endpoint stops before the loop is freed). */
static int dispatch_ready(void *arg, char *why, size_t size)
{
    if (dispatchloop_synced(arg))
        return 1;
    snprintf(why, size, "no pass completed yet");
    return 0;
}

/* The lease must be renewable: the dispatcher renews every lease/4, and a withdrawal must not wait longer than a day. */
static int check_flags(const struct flags_program *p, const struct dispatch_options *c)
{
    char a[FLAGS_DURATION_MAX], b[FLAGS_DURATION_MAX];
    if (!dispatchworkers_name_ok(c->cluster_name))
        return flags_fail(p, "--cluster-name: \"%s\" is not a label value (1-63 of a-z, A-Z, 0-9, '-', '_', '.')", c->cluster_name);
    if (c->namespace_[0] == '\0')
        return flags_fail(p, "--namespace: must not be empty");
    if (c->lease_ms % FLAGS_SECOND != 0) {
        flags_format_duration(c->lease_ms, a, sizeof(a));
        return flags_fail(p, "--dispatch-lease: %s is not whole seconds (the lease is written in seconds)", a);
    }
    if (c->resync_ms * 4 > c->lease_ms) {
        flags_format_duration(c->resync_ms, a, sizeof(a));
        flags_format_duration(c->lease_ms, b, sizeof(b));
        return flags_fail(p, "--resync (%s) must be at most a quarter of --dispatch-lease (%s): the lease is renewed every quarter",
                          a, b);
    }
    return -1;
}

/* Parses the command line into c (which holds the defaults); returns -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, struct dispatch_options *c)
{
    const struct flag table[] = {
        FLAG_STRING("kubeconfig", "FILE", &c->kubeconfig,
                    "the manager cluster's; default $KUBECONFIG, else the in-cluster service account"),
        FLAG_STRING("context", "NAME", &c->context, "the kubeconfig context (default its current-context)"),
        FLAG_STRING("cluster-name", "NAME", &c->cluster_name,
                    "this manager's name, the raygate.io/dispatched-from label of the copies it makes on workers"),
        FLAG_STRING("namespace", "NS", &c->namespace_,
                    "where the workers' kubeconfig Secrets (label raygate.io/worker-cluster) live"),
        FLAG_DURATION("dispatch-timeout", &c->timeout_ms, FLAGS_SECOND, 24 * FLAGS_HOUR,
                      "withdraw a copy the worker's gate has not admitted this long after dispatch, and nominate again"),
        FLAG_DURATION("dispatch-lease", &c->lease_ms, 4 * FLAGS_SECOND, 24 * FLAGS_HOUR,
                      "a worker's gate evicts a copy whose lease was not renewed this long (whole seconds; renewed every quarter)"),
        FLAG_DURATION(
            "dispatch-lease-margin", &c->margin_ms, 0, 24 * FLAGS_HOUR,
            "re-dispatch off a lost worker only after the lease plus this (clock-rate skew, the gate's eviction latency)"),
        FLAG_DURATION("resync", &c->resync_ms, 100 * FLAGS_MILLISECOND, FLAGS_HOUR,
                      "one pass (workers, the manager's objects; the workers' views are watched) this often"),
        FLAG_STRING("metrics-addr", "ADDR", &c->metrics_addr,
                    "serve /metrics, /healthz and /readyz over HTTP on HOST:PORT, :PORT or [IPv6]:PORT (default: not served)"),
        FLAG_CHOICE("log-level", "LEVEL", log_level_names, &c->log_level, "error, warn, info or debug"),
        FLAG_INT("test-fault-exit-at-nomination", "N", &c->fault_exit_at_nomination, 0, 1000000,
                 "TEST ONLY: exit(3) at the Nth nomination, after writing raygate.io/dispatched-to, before the copy"),
    };
    const struct flags_program p = {
        .name = "raygate-dispatch",
        .synopsis = "raygate-dispatch [flags]   (dispatches Ray objects of a manager cluster to worker clusters)",
        .epilog = "durations: 500ms, 30s, 10m, 1h, 1m30s\n",
        .flags = table,
        .nflags = sizeof(table) / sizeof(table[0]),
    };
    int rc = flags_handle(&p, RAYGATE_VERSION, argc, argv, environ);
    if (rc >= 0)
        return rc;
    log_set_level((enum log_level)c->log_level);
    return check_flags(&p, c);
}

/* What main starts, released in reverse order by dispatch_finish. */
struct dispatch_main {
    struct kubeconfig kcfg;
    struct metrics_registry *reg;
    struct kube_metrics km;
    struct kube_client *client;
    struct dispatch_loop *loop; /* borrowed: loopstop's from its creation */
    struct httpd *httpd;
};

static int connect_manager(struct dispatch_main *m, const struct dispatch_options *c)
{
    m->client = daemon_connect(c->kubeconfig, c->context, m->reg, &m->kcfg, &m->km);
    return m->client != NULL ? 0 : -1;
}

/* Connects, creates the loop (what a signal stops from here on) and serves metrics: then dispatchloop_run may run. */
static int start(struct dispatch_main *m, const struct dispatch_options *c)
{
    if (connect_manager(m, c) != 0 || (m->loop = dispatchloop_create(c, m->client, m->reg)) == NULL)
        return -1;
    loopstop_register(m->loop);
    if (c->metrics_addr != NULL && (m->httpd = httpd_start(c->metrics_addr, m->reg, dispatch_ready, m->loop)) == NULL)
        return -1;
    daemon_signals();
    return 0;
}

static void log_started(const struct dispatch_options *c)
{
    char t[FLAGS_DURATION_MAX], l[FLAGS_DURATION_MAX], g[FLAGS_DURATION_MAX], r[FLAGS_DURATION_MAX];
    flags_format_duration(c->timeout_ms, t, sizeof(t));
    flags_format_duration(c->lease_ms, l, sizeof(l));
    flags_format_duration(c->margin_ms, g, sizeof(g));
    flags_format_duration(c->resync_ms, r, sizeof(r));
    log_infof("raygate-dispatch %s started (manager %s, worker Secrets in %s, timeout %s, lease %s + margin %s, resync %s)",
              RAYGATE_VERSION, c->cluster_name, c->namespace_, t, l, g, r);
}

static void dispatch_finish(struct dispatch_main *m)
{
    httpd_stop(m->httpd); /* first: /readyz asks the loop */
    loopstop_finish();
    kube_client_destroy(m->client);
    kubeconfig_finish(&m->kcfg);
    metrics_registry_destroy(m->reg);
}

int main(int argc, char **argv)
{
    struct dispatch_options c = {
        .cluster_name = "manager",
        .namespace_ = "raygate-system",
        .timeout_ms = 60 * FLAGS_SECOND,
        .lease_ms = 120 * FLAGS_SECOND,
        .margin_ms = 30 * FLAGS_SECOND,
        .resync_ms = 2 * FLAGS_SECOND,
        .log_level = LOG_LEVEL_INFO,
    };
    int rc = parse_flags(argc, argv, &c);
    if (rc >= 0)
        return rc;

    struct dispatch_main m = {.reg = metrics_registry_create()};
    kubeconfig_init(&m.kcfg);
    rc = 1;
    if (start(&m, &c) == 0) {
        log_started(&c);
        dispatchloop_run(m.loop);
        log_infof("raygate-dispatch stopping");
        rc = 0;
    }
    dispatch_finish(&m);
    return rc;
}
