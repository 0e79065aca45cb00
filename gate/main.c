/*
 * raygate-gate: the gang gate controller.
 *
 *   raygate-gate [--kubeconfig FILE] [--context NAME] [--namespace NS] [--metrics-addr ADDR]
 *                [--resync D] [--log-level L]
 *                [--placement-timeout D] [--partial-placement-timeout D] [--pods-ready-timeout D]
 *                [--requeue-backoff-base D]
 *                [--requeue-backoff-max D] [--requeue-limit N] [--preemption=false]
 *                [--early-admission] [--native-gang auto|on|off]
 *                [--leader-elect [--leader-elect-lease-duration D] [--leader-elect-renew-deadline D]
 *                 [--leader-elect-retry-period D]]
 *
 * The flags, their defaults and bounds: parse_flags (raygate-gate --help).
 *
 * Without --kubeconfig it uses $KUBECONFIG, else the in-cluster config.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "controller.h"
#include "daemon.h"
#include "evict.h"
#include "flags.h"
#include "httpd.h"
#include "kube.h"
#include "kubeconfig.h"
#include "leader.h"
#include "lease.h"
#include "log.h"
#include "metrics.h"
#include "native.h"
#include "shutdown.h"
#include "version.h"

extern char **environ;

/* /readyz: ready once every watch delivered its initial list. */
static int gate_ready(void *arg, char *why, size_t size)
{
    (void)arg;
    struct controller *c = shutdown_controller();
    if (c != NULL && controller_synced(c))
        return 1;
    snprintf(why, size, "caches not synced yet");
    return 0;
}

/* The command line: every flag, its default and its bound are in parse_flags' table. */
struct gate_flags {
    const char *kubeconfig, *context, *namespace_, *metrics_addr;
    int64_t resync_ms;
    int leader_elect;
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    int64_t fault_exit_after_ungates;       /* -1: off */
    int64_t fault_exit_after_evict_deletes; /* -1: off */
    int fault_exit_after_native;
    struct evict_config evict;
    int preemption;
    int early;
    int native_gang; /* enum native_mode */
    int log_level;
};

/* Lease timings as client-go wants them: retry period < renew deadline < lease duration (whole seconds). */
static int check_leader_flags(const struct flags_program *p, const struct gate_flags *f)
{
    char a[FLAGS_DURATION_MAX], b[FLAGS_DURATION_MAX];
    if (f->lease_duration_ms % FLAGS_SECOND != 0) {
        flags_format_duration(f->lease_duration_ms, a, sizeof(a));
        return flags_fail(p, "--leader-elect-lease-duration: %s is not whole seconds (a Lease holds seconds)", a);
    }
    if (f->renew_deadline_ms >= f->lease_duration_ms) {
        flags_format_duration(f->renew_deadline_ms, a, sizeof(a));
        flags_format_duration(f->lease_duration_ms, b, sizeof(b));
        return flags_fail(p, "--leader-elect-renew-deadline (%s) must be shorter than --leader-elect-lease-duration (%s)", a, b);
    }
    if (f->retry_period_ms >= f->renew_deadline_ms) {
        flags_format_duration(f->retry_period_ms, a, sizeof(a));
        flags_format_duration(f->renew_deadline_ms, b, sizeof(b));
        return flags_fail(p, "--leader-elect-retry-period (%s) must be shorter than --leader-elect-renew-deadline (%s)", a, b);
    }
    return -1;
}

/* Parses the command line into f (which holds the defaults); returns -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, struct gate_flags *f)
{
    const struct flag table[] = {
        FLAG_STRING("kubeconfig", "FILE", &f->kubeconfig, "default $KUBECONFIG, else the in-cluster service account"),
        FLAG_STRING("context", "NAME", &f->context, "the kubeconfig context (default its current-context)"),
        FLAG_STRING("namespace", "NS", &f->namespace_, "the controller's own namespace (its Lease)"),
        FLAG_STRING("metrics-addr", "ADDR", &f->metrics_addr,
                    "serve /metrics, /healthz and /readyz over HTTP on HOST:PORT, :PORT or [IPv6]:PORT (default: not served)"),
        FLAG_DURATION("resync", &f->resync_ms, FLAGS_SECOND, 24 * FLAGS_HOUR, "full decision pass period"),
        FLAG_CHOICE("log-level", "LEVEL", log_level_names, &f->log_level, "error, warn, info or debug"),
        FLAG_BOOL("leader-elect", &f->leader_elect, "act only while holding the Lease raygate-gate in NS (for several replicas)"),
        FLAG_DURATION("leader-elect-lease-duration", &f->lease_duration_ms, FLAGS_SECOND, FLAGS_HOUR,
                      "how long a Lease holds without renewal (whole seconds)"),
        FLAG_DURATION("leader-elect-renew-deadline", &f->renew_deadline_ms, 100 * FLAGS_MILLISECOND, FLAGS_HOUR,
                      "the leader steps down when it could not renew this long"),
        FLAG_DURATION("leader-elect-retry-period", &f->retry_period_ms, 100 * FLAGS_MILLISECOND, FLAGS_HOUR,
                      "between attempts to acquire or renew"),
        FLAG_DURATION("placement-timeout", &f->evict.placement_timeout_ms, 0, EVICT_DURATION_MAX_MS,
                      "evict an admitted gang whose members are not all bound this long after admission (0: never; "
                      "Queue annotation raygate.io/placement-timeout)"),
        FLAG_DURATION("partial-placement-timeout", &f->evict.partial_timeout_ms, 0, EVICT_DURATION_MAX_MS,
                      "evict sooner an admitted gang partly bound, a member of which kube-scheduler found no node for "
                      "(0: never; at most the placement timeout)"),
        FLAG_DURATION("pods-ready-timeout", &f->evict.pods_ready_timeout_ms, 0, EVICT_DURATION_MAX_MS,
                      "evict a placed gang whose members are not all Ready this long after binding (0: never; "
                      "Queue annotation raygate.io/pods-ready-timeout)"),
        FLAG_DURATION("requeue-backoff-base", &f->evict.backoff_base_ms, FLAGS_SECOND, EVICT_DURATION_MAX_MS,
                      "an evicted gang waits base*2^(n-1) plus jitter before its n-th readmission"),
        FLAG_DURATION("requeue-backoff-max", &f->evict.backoff_max_ms, FLAGS_SECOND, EVICT_DURATION_MAX_MS,
                      "the longest such wait"),
        FLAG_INT("requeue-limit", "N", &f->evict.requeue_limit, 0, 1000000,
                 "deactivate a gang after N evictions until its RayCluster's spec changes (0: no limit)"),
        FLAG_BOOL("preemption", &f->preemption,
                  "evict admitted gangs whole to admit a waiting gang of higher priority (Queue annotation "
                  "raygate.io/preemption: LowerPriority, LowerOrNewerEqualPriority or Never) or of a queue under its "
                  "spec.deserved"),
        FLAG_BOOL("early-admission", &f->early,
                  "admit a gang once its head and a pod of each worker group exist, its other pods weighed as copies of "
                  "those and ungated as they are created, instead of waiting for all of its pods"),
        FLAG_CHOICE("native-gang", "MODE", native_mode_names, &f->native_gang,
                    "Kubernetes' own gang scheduling (scheduling.k8s.io/v1beta1 PodGroups) as the last step: auto (where "
                    "the API is served), on or off"),
        FLAG_INT("test-fault-exit-after-ungates", "N", &f->fault_exit_after_ungates, 0, 1000000,
                 "TEST ONLY: exit(3) after recording an admission and ungating N pods"),
        FLAG_INT("test-fault-exit-after-evict-deletes", "N", &f->fault_exit_after_evict_deletes, 0, 1000000,
                 "TEST ONLY: exit(3) after recording an eviction and deleting N of its pods"),
        FLAG_BOOL("test-fault-exit-after-native", &f->fault_exit_after_native,
                  "TEST ONLY: exit(3) once a pass wrote its native PodGroups, before removing any gate"),
    };
    const struct flags_program p = {
        .name = "raygate-gate",
        .synopsis = "raygate-gate [flags]   (the gang gate controller)",
        .epilog = "durations: 500ms, 30s, 10m, 1h, 1m30s\n",
        .flags = table,
        .nflags = sizeof(table) / sizeof(table[0]),
    };
    int rc = flags_handle(&p, RAYGATE_VERSION, argc, argv, environ);
    if (rc >= 0)
        return rc;
    log_set_level((enum log_level)f->log_level);
    struct error err = {{0}};
    if (evict_config_check(&f->evict, &err) != 0)
        return flags_fail(&p, "%s", err.message);
    return check_leader_flags(&p, f);
}

/* What main starts, released in reverse order by gate_finish. */
struct gate {
    struct kubeconfig cfg;
    struct metrics_registry *reg;
    struct kube_metrics km;
    struct kube_client *client;
    struct leader *leader;
    struct httpd *httpd;
    char host[256];
};

static int connect_api(struct gate *g, const struct gate_flags *f)
{
    g->client = daemon_connect(f->kubeconfig, f->context, g->reg, &g->cfg, &g->km);
    return g->client != NULL ? 0 : -1;
}

static int create_leader(struct gate *g, const struct gate_flags *f)
{
    struct error err = {{0}};
    struct leader_options lo = {
        .namespace_ = f->namespace_,
        .name = "raygate-gate",
        .duration_ms = (long)f->lease_duration_ms,
        .renew_deadline_ms = (long)f->renew_deadline_ms,
        .retry_period_ms = (long)f->retry_period_ms,
        .metrics = &g->km,
    };
    if ((g->leader = leader_create(&g->cfg, &lo, &err)) == NULL) {
        log_errorf("%s", err.message);
        return -1;
    }
    return 0;
}

static int create_controller(struct gate *g, const struct gate_flags *f)
{
    struct controller_options opts = {
        .resync_ms = (long)f->resync_ms,
        .debounce_ms = 5,
        .fault_exit_after_ungates = (long)f->fault_exit_after_ungates,
        .fault_exit_after_evict_deletes = (long)f->fault_exit_after_evict_deletes,
        .fault_exit_after_native = f->fault_exit_after_native,
        .evict = f->evict,
        .preemption = f->preemption,
        .early = f->early,
        .native_gang = f->native_gang,
        .instance = g->host,
        .leader = g->leader,
    };
    struct controller *c = controller_create(g->client, g->reg, &opts);
    if (c == NULL) {
        log_errorf("cannot create the controller");
        return -1;
    }
    shutdown_register(c);
    return 0;
}

/* The eviction settings, once at the start. */
static void log_evict_flags(const struct evict_config *e)
{
    char p[FLAGS_DURATION_MAX], q[FLAGS_DURATION_MAX], r[FLAGS_DURATION_MAX], b[FLAGS_DURATION_MAX], m[FLAGS_DURATION_MAX];
    flags_format_duration(e->placement_timeout_ms, p, sizeof(p));
    flags_format_duration(e->partial_timeout_ms, q, sizeof(q));
    flags_format_duration(e->pods_ready_timeout_ms, r, sizeof(r));
    flags_format_duration(e->backoff_base_ms, b, sizeof(b));
    flags_format_duration(e->backoff_max_ms, m, sizeof(m));
    log_infof("eviction: placement timeout %s (partly placed %s), readiness timeout %s (0s: off), requeue backoff %s..%s, requeue "
              "limit %lld (0: none)",
              p, q, r, b, m, (long long)e->requeue_limit);
}

/* Serves metrics, starts the watches and the election: then controller_run may run. */
static int start(struct gate *g, const struct gate_flags *f)
{
    struct error err = {{0}};
    if (f->metrics_addr != NULL && (g->httpd = httpd_start(f->metrics_addr, g->reg, gate_ready, NULL)) == NULL)
        return -1;
    daemon_signals();
    if (controller_start(shutdown_controller(), &err) != 0) {
        log_errorf("watches: %s", err.message);
        return -1;
    }
    if (g->leader != NULL && leader_start(g->leader) != 0) {
        log_errorf("cannot start the leader election thread");
        return -1;
    }
    return 0;
}

static void gate_finish(struct gate *g)
{
    httpd_stop(g->httpd); /* first: /readyz asks the controller */
    shutdown_finish(g->leader);
    kube_client_destroy(g->client);
    kubeconfig_finish(&g->cfg);
    metrics_registry_destroy(g->reg);
}

int main(int argc, char **argv)
{
    struct gate_flags f = {
        .namespace_ = "raygate-system",
        .resync_ms = 30 * FLAGS_SECOND,
        .lease_duration_ms = LEASE_DEFAULT_DURATION_MS,
        .renew_deadline_ms = LEASE_DEFAULT_RENEW_DEADLINE_MS,
        .retry_period_ms = LEASE_DEFAULT_RETRY_PERIOD_MS,
        .fault_exit_after_ungates = -1,
        .fault_exit_after_evict_deletes = -1,
        .log_level = LOG_LEVEL_INFO,
        .preemption = 1, /* on unless --preemption=false (docs/eviction-and-preemption.md) */
        .early = 0,      /* off unless --early-admission: KubeRay's creates then queue behind ungating PATCHes (docs/design.md) */
        .native_gang = NATIVE_OFF, /* opt-in: docs/native-gang.md, "Why the step is opt-in" */
    };
    evict_config_default(&f.evict);
    int rc = parse_flags(argc, argv, &f);
    if (rc >= 0)
        return rc;

    struct gate g = {.reg = metrics_registry_create(), .host = "raygate-gate"};
    kubeconfig_init(&g.cfg);
    gethostname(g.host, sizeof(g.host) - 1);
    rc = 1;
    if (connect_api(&g, &f) == 0 && (!f.leader_elect || create_leader(&g, &f) == 0) && create_controller(&g, &f) == 0 &&
        start(&g, &f) == 0) {
        char resync[FLAGS_DURATION_MAX];
        flags_format_duration(f.resync_ms, resync, sizeof(resync));
        log_infof("raygate-gate %s started (namespace %s, resync %s)", RAYGATE_VERSION, f.namespace_, resync);
        log_evict_flags(&f.evict);
        log_infof("preemption: %s", f.preemption ? "on (Queue annotation raygate.io/preemption; --preemption=false turns it off)"
                                                 : "off (--preemption=false)");
        log_infof("early admission: %s", f.early ? "on (--early-admission)" : "off (--early-admission turns it on)");
        controller_run(shutdown_controller());
        log_infof("raygate-gate stopping");
        rc = 0;
    }
    gate_finish(&g);
    return rc;
}
