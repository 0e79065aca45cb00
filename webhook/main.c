/*
 * raygate-webhook: the TLS mutating admission webhook.
 *
 *   raygate-webhook --addr 127.0.0.1:9443 --cert tls.crt --key tls.key [options]
 *
 * Flags may also come from the environment (flags win): RAYGATE_WEBHOOK_ADDR,
 * RAYGATE_WEBHOOK_CERT, RAYGATE_WEBHOOK_KEY, RAYGATE_WEBHOOK_LOG_LEVEL.
 * SIGTERM/SIGINT: graceful stop, exit 0.
 */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "log.h"
#include "server.h"

static struct server *running;

static void usage(FILE *out)
{
    fputs("usage: raygate-webhook --addr HOST:PORT --cert FILE --key FILE [options]\n"
          "  --addr HOST:PORT         listen address: 127.0.0.1:9443, :9443 (all interfaces), [::1]:9443\n"
          "                           (env RAYGATE_WEBHOOK_ADDR; default :9443)\n"
          "  --cert FILE              PEM certificate chain, leaf first (env RAYGATE_WEBHOOK_CERT)\n"
          "  --key FILE               PEM private key (env RAYGATE_WEBHOOK_KEY)\n"
          "  --max-body-bytes N       larger request bodies get 413 (default 8388608: the apiserver sends at most\n"
          "                           a 3 MiB object and a 1.5 MiB old one)\n"
          "  --request-timeout D      HTTP request / keep-alive idle timeout (default 10s)\n"
          "  --handshake-timeout D    TLS handshake timeout (default 5s)\n"
          "  --reload-interval D      how often the certificate files are checked (default 1s)\n"
          "  --shutdown-delay D       after SIGTERM, keep accepting (readyz 503) this long (default 0s)\n"
          "  --shutdown-timeout D     then wait this long for open connections (default 10s)\n"
          "  --log-level LEVEL        error, warn, info or debug (env RAYGATE_WEBHOOK_LOG_LEVEL; default info;\n"
          "                           debug logs one line per request)\n"
          "  --version, --help\n"
          "durations: an integer with suffix ms or s (a bare integer is seconds)\n",
          out);
}

/* "250ms", "5s" or "5" (seconds) into milliseconds. */
static int parse_duration(const char *flag, const char *s, uint64_t *ms)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t scale = 0;
    if (end != s && s[0] != '-') {
        if (strcmp(end, "ms") == 0)
            scale = 1;
        else if (strcmp(end, "s") == 0 || *end == '\0')
            scale = 1000;
    }
    if (scale == 0 || v > 86400000ULL) {
        log_errorf("%s: want a duration like 500ms or 10s, got \"%s\"", flag, s);
        return -1;
    }
    *ms = v * scale;
    return 0;
}

static int parse_size(const char *flag, const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0' || s[0] == '-' || v == 0 || v > (1ULL << 31)) {
        log_errorf("%s: want a byte count from 1 to 2147483648, got \"%s\"", flag, s);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

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

static int set_log_level(const char *name)
{
    enum log_level level;
    if (log_level_parse(name, &level) != 0) {
        log_errorf("unknown log level \"%s\" (error, warn, info, debug)", name);
        return -1;
    }
    log_set_level(level);
    return 0;
}

static void on_signal(int sig)
{
    if (running != NULL)
        server_request_stop(running);
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : fallback;
}

int main(int argc, char **argv)
{
    enum {
        OPT_ADDR = 256,
        OPT_CERT,
        OPT_KEY,
        OPT_MAX_BODY,
        OPT_REQUEST_TIMEOUT,
        OPT_HANDSHAKE_TIMEOUT,
        OPT_RELOAD_INTERVAL,
        OPT_SHUTDOWN_DELAY,
        OPT_SHUTDOWN_TIMEOUT,
        OPT_LOG_LEVEL,
        OPT_VERSION,
        OPT_HELP,
    };
    static const struct option options[] = {
        {"addr", required_argument, NULL, OPT_ADDR},
        {"cert", required_argument, NULL, OPT_CERT},
        {"key", required_argument, NULL, OPT_KEY},
        {"max-body-bytes", required_argument, NULL, OPT_MAX_BODY},
        {"request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT},
        {"handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT},
        {"reload-interval", required_argument, NULL, OPT_RELOAD_INTERVAL},
        {"shutdown-delay", required_argument, NULL, OPT_SHUTDOWN_DELAY},
        {"shutdown-timeout", required_argument, NULL, OPT_SHUTDOWN_TIMEOUT},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    struct server_config cfg = {
        .addr = env_or("RAYGATE_WEBHOOK_ADDR", ":9443"),
        .cert_path = env_or("RAYGATE_WEBHOOK_CERT", NULL),
        .key_path = env_or("RAYGATE_WEBHOOK_KEY", NULL),
        /* An AdmissionReview holds at most a 3 MiB object (the apiserver's request limit) and its old version
           (1.5 MiB in etcd): 8 MiB is room enough, and bounds memory (a 16 MiB body peaked at 80 MiB RSS). */
        .max_body_bytes = 8u << 20,
        .request_timeout_ms = 10000,
        .handshake_timeout_ms = 5000,
        .reload_interval_ms = 1000,
        .shutdown_delay_ms = 0,
        .shutdown_timeout_ms = 10000,
    };
    const char *level = env_or("RAYGATE_WEBHOOK_LOG_LEVEL", NULL);
    if (level != NULL && set_log_level(level) != 0)
        return 2;

    opterr = 0;
    int c, bad = 0;
    while (!bad && (c = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case OPT_ADDR:
            cfg.addr = optarg;
            break;
        case OPT_CERT:
            cfg.cert_path = optarg;
            break;
        case OPT_KEY:
            cfg.key_path = optarg;
            break;
        case OPT_MAX_BODY:
            bad = parse_size("--max-body-bytes", optarg, &cfg.max_body_bytes);
            break;
        case OPT_REQUEST_TIMEOUT:
            bad = parse_duration("--request-timeout", optarg, &cfg.request_timeout_ms);
            break;
        case OPT_HANDSHAKE_TIMEOUT:
            bad = parse_duration("--handshake-timeout", optarg, &cfg.handshake_timeout_ms);
            break;
        case OPT_RELOAD_INTERVAL:
            bad = parse_duration("--reload-interval", optarg, &cfg.reload_interval_ms);
            break;
        case OPT_SHUTDOWN_DELAY:
            bad = parse_duration("--shutdown-delay", optarg, &cfg.shutdown_delay_ms);
            break;
        case OPT_SHUTDOWN_TIMEOUT:
            bad = parse_duration("--shutdown-timeout", optarg, &cfg.shutdown_timeout_ms);
            break;
        case OPT_LOG_LEVEL:
            bad = set_log_level(optarg);
            break;
        case OPT_VERSION:
            puts("raygate-webhook " RAYGATE_VERSION);
            return 0;
        case OPT_HELP:
            usage(stdout);
            return 0;
        default:
            log_errorf("unknown or incomplete option \"%s\" (see --help)", argv[optind - 1]);
            bad = 1;
        }
    }
    if (bad)
        return 2;
    if (optind != argc) {
        log_errorf("unexpected argument \"%s\" (see --help)", argv[optind]);
        return 2;
    }
    if (cfg.cert_path == NULL || cfg.key_path == NULL) {
        log_errorf("--cert and --key (or RAYGATE_WEBHOOK_CERT and RAYGATE_WEBHOOK_KEY) are required");
        return 2;
    }
    if (cfg.request_timeout_ms == 0 || cfg.handshake_timeout_ms == 0 || cfg.reload_interval_ms == 0) {
        log_errorf("--request-timeout, --handshake-timeout and --reload-interval must be positive");
        return 2;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    raise_fd_limit();

    if ((running = server_create(&cfg)) == NULL)
        return 1;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int rc = server_run(running);
    struct server *s = running;
    running = NULL;
    server_destroy(s);
    log_infof("exiting");
    return rc == 0 ? 0 : 1;
}
