/*
 * raygate-certs: certificates for the webhook.
 *
 *   raygate-certs generate --dir DIR --dns NAME... [--ip ADDR...] [--days N] [--ca-days N] [--new-ca]
 *   raygate-certs ca-bundle --dir DIR
 *   raygate-certs bootstrap --namespace NS --secret NAME --webhook-config NAME [--service NAME]
 *                           [--dns NAME...] [--ip ADDR...] [--days N] [--ca-days N] [--refresh-days N] [--dir DIR]
 *                           [--server URL --token-file FILE --ca-file FILE]
 *
 * Logs go to stderr (JSON lines); ca-bundle's base64 goes to stdout.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "bootstrap.h"
#include "certfiles.h"
#include "certgen.h"
#include "log.h"
#include "util.h"

#define MAX_NAMES 32

static void usage(FILE *out)
{
    fputs("usage:\n"
          "  raygate-certs generate --dir DIR --dns NAME... [--ip ADDR...] [--days N] [--ca-days N] [--new-ca]\n"
          "      writes ca.crt, ca.key, tls.crt, tls.key (EC P-256); keeps a valid CA already in DIR unless --new-ca\n"
          "  raygate-certs ca-bundle --dir DIR\n"
          "      prints base64(DIR/ca.crt) on one line, for a webhook's clientConfig.caBundle\n"
          "  raygate-certs bootstrap --namespace NS --secret NAME --webhook-config NAME [--service NAME]\n"
          "                          [--dns NAME...] [--ip ADDR...] [--days N] [--ca-days N] [--refresh-days N] [--dir DIR]\n"
          "                          [--server URL] [--token-file FILE] [--ca-file FILE]\n"
          "      in a pod: creates or renews the TLS Secret and patches caBundle of every webhook in the\n"
          "      MutatingWebhookConfiguration; default DNS names are the Service's (--service, default raygate-webhook)\n"
          "common: --log-level error|warn|info|debug, --version, --help\n"
          "defaults: --days 365, --ca-days 3650, --refresh-days 90\n",
          out);
}

struct args {
    const char *dir, *namespace_, *secret, *webhook_config, *service;
    const char *dns[MAX_NAMES], *ips[MAX_NAMES];
    size_t ndns, nips;
    int days, ca_days, refresh_days, new_ca;
    const char *api_server, *api_token_file, *api_ca_file;
};

static int parse_int(const char *flag, const char *s, int min, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > 100000) {
        log_errorf("%s: want an integer from %d to 100000, got \"%s\"", flag, min, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Parses argv after the subcommand. Returns 0, 1 for --help, or -1. */
static int parse_args(int argc, char **argv, struct args *a)
{
    enum {
        OPT_DIR = 256,
        OPT_DNS,
        OPT_IP,
        OPT_DAYS,
        OPT_CA_DAYS,
        OPT_REFRESH_DAYS,
        OPT_NEW_CA,
        OPT_NAMESPACE,
        OPT_SECRET,
        OPT_WEBHOOK_CONFIG,
        OPT_SERVICE,
        OPT_SERVER,
        OPT_TOKEN_FILE,
        OPT_CA_FILE,
        OPT_LOG_LEVEL,
        OPT_HELP,
    };
    static const struct option options[] = {
        {"dir", required_argument, NULL, OPT_DIR},
        {"dns", required_argument, NULL, OPT_DNS},
        {"ip", required_argument, NULL, OPT_IP},
        {"days", required_argument, NULL, OPT_DAYS},
        {"ca-days", required_argument, NULL, OPT_CA_DAYS},
        {"refresh-days", required_argument, NULL, OPT_REFRESH_DAYS},
        {"new-ca", no_argument, NULL, OPT_NEW_CA},
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"secret", required_argument, NULL, OPT_SECRET},
        {"webhook-config", required_argument, NULL, OPT_WEBHOOK_CONFIG},
        {"service", required_argument, NULL, OPT_SERVICE},
        {"server", required_argument, NULL, OPT_SERVER},
        {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
        {"ca-file", required_argument, NULL, OPT_CA_FILE},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    a->days = 365;
    a->ca_days = 3650;
    a->refresh_days = 90;
    a->service = "raygate-webhook";
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case OPT_DIR:
            a->dir = optarg;
            break;
        case OPT_DNS:
        case OPT_IP: {
            size_t *n = c == OPT_DNS ? &a->ndns : &a->nips;
            if (*n == MAX_NAMES) {
                log_errorf("at most %d --dns and %d --ip", MAX_NAMES, MAX_NAMES);
                return -1;
            }
            (c == OPT_DNS ? a->dns : a->ips)[(*n)++] = optarg;
            break;
        }
        case OPT_DAYS:
            if (parse_int("--days", optarg, 1, &a->days) != 0)
                return -1;
            break;
        case OPT_CA_DAYS:
            if (parse_int("--ca-days", optarg, 1, &a->ca_days) != 0)
                return -1;
            break;
        case OPT_REFRESH_DAYS:
            if (parse_int("--refresh-days", optarg, 0, &a->refresh_days) != 0)
                return -1;
            break;
        case OPT_NEW_CA:
            a->new_ca = 1;
            break;
        case OPT_NAMESPACE:
            a->namespace_ = optarg;
            break;
        case OPT_SECRET:
            a->secret = optarg;
            break;
        case OPT_WEBHOOK_CONFIG:
            a->webhook_config = optarg;
            break;
        case OPT_SERVICE:
            a->service = optarg;
            break;
        case OPT_SERVER:
            a->api_server = optarg;
            break;
        case OPT_TOKEN_FILE:
            a->api_token_file = optarg;
            break;
        case OPT_CA_FILE:
            a->api_ca_file = optarg;
            break;
        case OPT_LOG_LEVEL: {
            enum log_level level;
            if (log_level_parse(optarg, &level) != 0) {
                log_errorf("--log-level: unknown level \"%s\"", optarg);
                return -1;
            }
            log_set_level(level);
            break;
        }
        case OPT_HELP:
            return 1;
        default:
            log_errorf("unknown or incomplete option \"%s\"", argv[optind - 1]);
            return -1;
        }
    }
    if (optind != argc) {
        log_errorf("unexpected argument \"%s\"", argv[optind]);
        return -1;
    }
    return 0;
}

static int cmd_generate(struct args *a)
{
    struct certgen_pair ca = {0}, serving = {0};
    struct certgen_error err = {{0}};
    struct certfiles_set set = {0};
    struct certgen_request req = {a->dns, a->ndns, a->ips, a->nips, a->days};
    int rc = 1;

    if (a->dir == NULL || a->ndns + a->nips == 0) {
        log_errorf("generate: --dir and at least one --dns or --ip are required");
        return 2;
    }
    if (!a->new_ca && certfiles_load_ca(a->dir, &ca, &err) == 0) {
        time_t until = time(NULL) + (time_t)a->days * 86400;
        if (X509_cmp_time(X509_get0_notAfter(ca.cert), &until) > 0) {
            log_infof("reusing the CA in %s (--new-ca to replace it)", a->dir);
        } else {
            log_infof("the CA in %s expires before the new certificate would; creating a new CA", a->dir);
            certgen_pair_finish(&ca);
        }
    }
    if (ca.cert == NULL && certgen_ca_create("raygate-webhook-ca", a->ca_days, &ca, &err) != 0)
        goto fail;
    if (certgen_serving_create(&ca, &req, &serving, &err) != 0 || certfiles_set_from_pairs(&ca, &serving, &set, &err) != 0 ||
        certfiles_write(a->dir, &set, &err) != 0)
        goto fail;
    log_infof("wrote ca.crt, ca.key, tls.crt, tls.key to %s (%zu DNS names, %zu IPs, %d days)", a->dir, a->ndns, a->nips, a->days);
    rc = 0;
    goto out;
fail:
    log_errorf("generate: %s", err.message);
out:
    certfiles_set_finish(&set);
    certgen_pair_finish(&serving);
    certgen_pair_finish(&ca);
    return rc;
}

static int cmd_ca_bundle(struct args *a)
{
    if (a->dir == NULL) {
        log_errorf("ca-bundle: --dir is required");
        return 2;
    }
    size_t len = 0;
    char *pem = certfiles_read(a->dir, "ca.crt", &len);
    X509 *x = pem != NULL ? certgen_cert_from_pem(pem, len) : NULL;
    if (x == NULL) {
        log_errorf("ca-bundle: %s/ca.crt is missing or not a PEM certificate", a->dir);
        free(pem);
        return 1;
    }
    X509_free(x);
    char *b64 = util_base64_encode(pem, len);
    free(pem);
    int rc = puts(b64) >= 0 && fflush(stdout) == 0 ? 0 : 1;
    free(b64);
    return rc;
}

static int cmd_bootstrap(struct args *a)
{
    char names[4][512];
    if (a->namespace_ == NULL || a->secret == NULL || a->webhook_config == NULL) {
        log_errorf("bootstrap: --namespace, --secret and --webhook-config are required");
        return 2;
    }
    if (a->refresh_days >= a->days) {
        log_errorf("bootstrap: --refresh-days (%d) must be less than --days (%d), or every run renews", a->refresh_days, a->days);
        return 2;
    }
    if (a->ndns == 0 && a->nips == 0) {
        /* The names the apiserver may use for a Service-backed webhook. */
        snprintf(names[0], sizeof(names[0]), "%s", a->service);
        snprintf(names[1], sizeof(names[1]), "%s.%s", a->service, a->namespace_);
        snprintf(names[2], sizeof(names[2]), "%s.%s.svc", a->service, a->namespace_);
        snprintf(names[3], sizeof(names[3]), "%s.%s.svc.cluster.local", a->service, a->namespace_);
        for (size_t i = 0; i < 4; i++)
            a->dns[a->ndns++] = names[i];
    }
    struct bootstrap_options opts = {
        .namespace_ = a->namespace_,
        .secret = a->secret,
        .webhook_config = a->webhook_config,
        .req = {a->dns, a->ndns, a->ips, a->nips, a->days},
        .ca_days = a->ca_days,
        .refresh_seconds = (long)a->refresh_days * 86400L,
        .dir = a->dir,
        .api = {a->api_server, a->api_token_file, a->api_ca_file},
    };
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        log_errorf("bootstrap: curl_global_init failed");
        return 1;
    }
    int rc = bootstrap_run(&opts) == 0 ? 0 : 1;
    curl_global_cleanup();
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("raygate-certs " RAYGATE_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    struct args a = {0};
    int rc = parse_args(argc - 1, argv + 1, &a);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc != 0)
        return 2;
    if (strcmp(argv[1], "generate") == 0)
        return cmd_generate(&a);
    if (strcmp(argv[1], "ca-bundle") == 0)
        return cmd_ca_bundle(&a);
    if (strcmp(argv[1], "bootstrap") == 0)
        return cmd_bootstrap(&a);
    log_errorf("unknown command \"%s\" (generate, ca-bundle, bootstrap)", argv[1]);
    return 2;
}
