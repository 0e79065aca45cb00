/*
 * raygate-webhook: the TLS mutating admission webhook.
 *
 *   raygate-webhook --addr 127.0.0.1:9443 --cert tls.crt --key tls.key [options]
 *
 * Flags may also come from the environment (flags win): RAYGATE_WEBHOOK_ADDR,
 * RAYGATE_WEBHOOK_CERT, RAYGATE_WEBHOOK_KEY, RAYGATE_WEBHOOK_KUBECONFIG,
 * RAYGATE_WEBHOOK_LOG_LEVEL.
 * The Queue watch and the DRA watch (snapwatch.h: the device claims a
 * RayCluster's minResources count) read the Kubernetes API as the
 * gate does: --kubeconfig, else $KUBECONFIG, else the in-cluster service
 * account; with none of them the queue tree checks are skipped and no device
 * is counted (and that is logged).
 * --native-gang (nativeprobe.h): whether gated pods also name their PodGroup
 * in spec.schedulingGroup, for Kubernetes' own gang scheduling; auto asks the
 * same API's discovery once at start-up (no API: off).
 * Paths: POST /mutate and /validate (a worker's: admission.h), POST
 * /dispatch-suspend (a manager that runs KubeRay: dispatchsuspend.h), GET
 * /healthz, /readyz, /metrics.
 * The flags, their defaults and bounds: parse_flags (raygate-webhook --help).
 * SIGTERM/SIGINT: graceful stop, exit 0 (serverstop.h); another one changes nothing.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "flags.h"
#include "kube.h"
#include "jsonarena.h"
#include "kubeconfig.h"
#include "log.h"
#include "nativeprobe.h"
#include "server.h"
#include "serverstop.h"
#include "snapwatch.h"
#include "version.h"

extern char **environ;

/*
 * Every open connection is a descriptor: raise the soft limit to the hard one
 * (often 1024 -> 1048576 in a container), so that a burst of connections
 * (1,000 idle ones in tests/local/test_slow_clients.py) cannot exhaust it.
 */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rlim_t was = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
            log_infof("open file limit raised from %llu to %llu", (unsigned long long)was, (unsigned long long)rl.rlim_cur);
    }
}

/* The command line and environment: every flag, its default and its bound. */
struct webhook_flags {
    const char *addr, *cert, *key, *kubeconfig, *context;
    int64_t max_body_bytes;
    int64_t request_timeout_ms, handshake_timeout_ms, reload_interval_ms, shutdown_delay_ms, shutdown_timeout_ms;
    int log_level;
    int native_gang; /* enum nativeprobe_mode */
    int hold_gangs;  /* enum heldsuspend_mode, or HOLD_FALSE / HOLD_TRUE: the boolean's spellings */
};

/* --hold-gangs' values, indexed as enum heldsuspend_mode; then the spellings of the boolean it was, off and wait. */
static const char *const hold_names[] = {"off", "wait", "decide", "false", "true", NULL};
enum { HOLD_FALSE = 3, HOLD_TRUE = 4 };

/* Parses the command line into f (which holds the defaults); returns -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, struct webhook_flags *f)
{
    const struct flag table[] = {
        FLAG_STRING_ENV("addr", "HOST:PORT", "RAYGATE_WEBHOOK_ADDR", &f->addr,
                        "listen address: 127.0.0.1:9443, :9443 (all interfaces), [::1]:9443"),
        FLAG_STRING_ENV("cert", "FILE", "RAYGATE_WEBHOOK_CERT", &f->cert, "PEM certificate chain, leaf first (required)"),
        FLAG_STRING_ENV("key", "FILE", "RAYGATE_WEBHOOK_KEY", &f->key, "PEM private key (required)"),
        FLAG_STRING_ENV("kubeconfig", "FILE", "RAYGATE_WEBHOOK_KUBECONFIG", &f->kubeconfig,
                        "the API the Queues are watched from: default $KUBECONFIG, else the in-cluster service account"),
        FLAG_STRING("context", "NAME", &f->context, "the kubeconfig context (default its current-context)"),
        FLAG_INT("max-body-bytes", "N", &f->max_body_bytes, 1, INT64_C(1) << 31, "larger request bodies get 413"),
        FLAG_DURATION("request-timeout", &f->request_timeout_ms, 100 * FLAGS_MILLISECOND, FLAGS_HOUR,
                      "HTTP request / keep-alive idle timeout"),
        FLAG_DURATION("handshake-timeout", &f->handshake_timeout_ms, 100 * FLAGS_MILLISECOND, FLAGS_HOUR,
                      "TLS handshake timeout, also for a first byte"),
        FLAG_DURATION("reload-interval", &f->reload_interval_ms, 100 * FLAGS_MILLISECOND, FLAGS_HOUR,
                      "how often the certificate files are checked"),
        FLAG_DURATION("shutdown-delay", &f->shutdown_delay_ms, 0, 10 * FLAGS_MINUTE,
                      "after SIGTERM, keep accepting (readyz 503) this long"),
        FLAG_DURATION("shutdown-timeout", &f->shutdown_timeout_ms, 0, FLAGS_HOUR, "then wait this long for open connections"),
        FLAG_CHOICE_ENV("log-level", "LEVEL", "RAYGATE_WEBHOOK_LOG_LEVEL", log_level_names, &f->log_level,
                        "error, warn, info or debug (debug logs one line per request)"),
        FLAG_CHOICE("native-gang", "MODE", nativeprobe_mode_names, &f->native_gang,
                    "auto, on or off: gated pods name their PodGroup in spec.schedulingGroup (Kubernetes' gang scheduling, "
                    "scheduling.k8s.io/v1beta1); auto: when the API serves its podgroups, asked once at start-up"),
        FLAG_CHOICE("hold-gangs", "MODE", hold_names, &f->hold_gangs,
                    "create a user's queued RayCluster suspended: wait, until the gate admits its gang, whose pods are "
                    "then born without the gate (one write per RayCluster, not one per pod); decide, until the gate's "
                    "first decision (admitted: as wait; must wait: released, its pods created gated); off: every "
                    "queued pod is created gated (true and false: wait and off)"),
    };
    const struct flags_program p = {
        .name = "raygate-webhook",
        .synopsis = "raygate-webhook --cert FILE --key FILE [flags]   (the mutating admission webhook)",
        .epilog = "durations: 500ms, 30s, 10m, 1h, 1m30s; the command line wins over the environment\n",
        .flags = table,
        .nflags = sizeof(table) / sizeof(table[0]),
    };
    int rc = flags_handle(&p, RAYGATE_VERSION, argc, argv, environ);
    if (rc >= 0)
        return rc;
    if (f->cert == NULL || f->key == NULL)
        return flags_fail(&p, "--cert and --key (or RAYGATE_WEBHOOK_CERT and RAYGATE_WEBHOOK_KEY) are required");
    log_set_level((enum log_level)f->log_level);
    return -1;
}

/* The Queue and DRA watches and what they need, released by api_finish. */
struct webhook_api {
    struct kubeconfig cfg;
    struct kube_client *client;
    struct snapwatch *queues, *dra, *held;
};

/*
 * Starts the Queue and DRA watches; returns 0, or the exit status. A --kubeconfig
 * that does not load is a bad flag (2); without one, a $KUBECONFIG or
 * service account that does not load, or none at all, leaves the webhook
 * without the watch (logged).
 */
static int api_start(const struct webhook_flags *f, struct webhook_api *api)
{
    struct error err = {{0}};
    kubeconfig_init(&api->cfg);
    if (f->kubeconfig == NULL && getenv("KUBECONFIG") == NULL && getenv("KUBERNETES_SERVICE_HOST") == NULL) {
        log_warnf("no Kubernetes API (--kubeconfig, $KUBECONFIG or a service account): the queue tree checks are skipped");
        return 0;
    }
    if (kubeconfig_load(f->kubeconfig, f->context, &api->cfg, &err) != 0) {
        if (f->kubeconfig != NULL) {
            log_errorf("--kubeconfig: %s", err.message);
            return 2;
        }
        log_warnf("kubeconfig: %s: the queue tree checks are skipped", err.message);
        return 0;
    }
    if ((api->client = kube_client_create(&api->cfg, NULL, &err)) == NULL ||
        (api->queues = snapwatch_queues(api->client, &err)) == NULL) {
        log_errorf("queue watch: %s", err.message);
        return 1;
    }
    if ((api->dra = snapwatch_dra(api->client, &err)) == NULL) {
        log_errorf("DRA watch: %s", err.message);
        return 1;
    }
    if (f->hold_gangs != HELDSUSPEND_OFF && (api->held = snapwatch_held(api->client, &err)) == NULL) {
        log_errorf("RayCluster watch: %s", err.message);
        return 1;
    }
    return 0;
}

static void api_finish(struct webhook_api *api)
{
    snapwatch_destroy(api->held);
    snapwatch_destroy(api->dra);
    snapwatch_destroy(api->queues);
    kube_client_destroy(api->client);
    kubeconfig_finish(&api->cfg);
}

int main(int argc, char **argv)
{
    struct webhook_flags f = {
        .addr = ":9443",
        /* An AdmissionReview holds at most a 3 MiB object (the apiserver's request limit) and its old version
           (1.5 MiB in etcd): 8 MiB is room enough, and bounds memory (a 16 MiB body peaked at 80 MiB RSS). */
        .max_body_bytes = 8 << 20,
        .request_timeout_ms = 10 * FLAGS_SECOND,
        .handshake_timeout_ms = 5 * FLAGS_SECOND,
        .reload_interval_ms = FLAGS_SECOND,
        .shutdown_delay_ms = 0,
        .shutdown_timeout_ms = 10 * FLAGS_SECOND,
        .log_level = LOG_LEVEL_INFO,
        .native_gang = NATIVEPROBE_OFF, /* opt-in: docs/native-gang.md, "Why the step is opt-in" */
        .hold_gangs = HELDSUSPEND_WAIT, /* pods born ungated where the gang is admitted at once: docs/design.md */
    };
    int rc = parse_flags(argc, argv, &f);
    if (rc >= 0)
        return rc;
    if (f.hold_gangs == HOLD_FALSE || f.hold_gangs == HOLD_TRUE)
        f.hold_gangs = f.hold_gangs == HOLD_TRUE ? HELDSUSPEND_WAIT : HELDSUSPEND_OFF;
    struct server_config cfg = {
        .addr = f.addr,
        .cert_path = f.cert,
        .key_path = f.key,
        .max_body_bytes = (size_t)f.max_body_bytes,
        .request_timeout_ms = (uint64_t)f.request_timeout_ms,
        .handshake_timeout_ms = (uint64_t)f.handshake_timeout_ms,
        .reload_interval_ms = (uint64_t)f.reload_interval_ms,
        .shutdown_delay_ms = (uint64_t)f.shutdown_delay_ms,
        .shutdown_timeout_ms = (uint64_t)f.shutdown_timeout_ms,
    };

    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    jsonarena_install(); /* before the watch threads: each review's values in one arena (server.c) */
    struct webhook_api api = {0};
    if ((rc = api_start(&f, &api)) != 0) {
        api_finish(&api);
        return rc;
    }
    cfg.queues = api.queues;
    cfg.dra = api.dra;
    cfg.held = api.held;
    /* without the watch, no pod could be born ungated */
    cfg.mutate.hold_gangs = api.held != NULL ? (enum heldsuspend_mode)f.hold_gangs : HELDSUSPEND_OFF;
    struct nativeprobe_decision native;
    cfg.mutate.native_gang = nativeprobe_decide((enum nativeprobe_mode)f.native_gang, api.client, &native);
    struct server *s = server_create(&cfg);
    if (s == NULL) {
        api_finish(&api);
        return 1;
    }
    serverstop_register(s);
    rc = server_run(s);
    serverstop_finish(); /* before api_finish: the server reads the watches */
    api_finish(&api);
    log_infof("exiting");
    return rc == 0 ? 0 : 1;
}
