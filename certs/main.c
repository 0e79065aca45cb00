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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "bootstrap.h"
#include "certfiles.h"
#include "certgen.h"
#include "flags.h"
#include "log.h"
#include "util.h"
#include "version.h"

#define MAX_NAMES 32

extern char **environ;

struct args {
    const char *dir, *namespace_, *secret, *webhook_config, *service;
    const char *dns[MAX_NAMES], *ips[MAX_NAMES];
    size_t ndns, nips;
    int64_t days, ca_days, refresh_days;
    int new_ca, log_level;
    const char *api_server, *api_token_file, *api_ca_file;
};

/* What each command requires; returns -1 to go on, else the exit status (2). */
static int check_command(const struct flags_program *p, const char *cmd, const struct args *a)
{
    if (cmd == NULL)
        return flags_fail(p, "a command is required: generate, ca-bundle or bootstrap (see --help)");
    if (strcmp(cmd, "generate") == 0) {
        if (a->dir == NULL || a->ndns + a->nips == 0)
            return flags_fail(p, "generate: --dir and at least one --dns or --ip are required");
    } else if (strcmp(cmd, "ca-bundle") == 0) {
        if (a->dir == NULL)
            return flags_fail(p, "ca-bundle: --dir is required");
    } else if (strcmp(cmd, "bootstrap") == 0) {
        if (a->namespace_ == NULL || a->secret == NULL || a->webhook_config == NULL)
            return flags_fail(p, "bootstrap: --namespace, --secret and --webhook-config are required");
        if (a->refresh_days >= a->days)
            return flags_fail(p,
                              "bootstrap: --refresh-days (%" PRId64 ") must be less than --days (%" PRId64 "), or every run renews",
                              a->refresh_days, a->days);
    } else {
        return flags_fail(p, "unknown command \"%s\" (generate, ca-bundle, bootstrap)", cmd);
    }
    return -1;
}

/*
 * Parses the flags after the command cmd (NULL if there is none; argv[0] is
 * cmd or the program's name) into a, which holds the defaults. Returns -1 to
 * go on, else the exit status.
 */
static int parse_flags(const char *cmd, int argc, char **argv, struct args *a)
{
    const struct flag table[] = {
        FLAG_STRING("dir", "DIR", &a->dir, "where ca.crt, ca.key, tls.crt and tls.key are"),
        FLAG_LIST("dns", "NAME", a->dns, &a->ndns, "a DNS name of the serving certificate"),
        FLAG_LIST("ip", "ADDR", a->ips, &a->nips, "an IP address of the serving certificate"),
        FLAG_INT("days", "N", &a->days, 1, 100000, "the serving certificate's validity in days"),
        FLAG_INT("ca-days", "N", &a->ca_days, 1, 100000, "the CA's validity in days"),
        FLAG_INT("refresh-days", "N", &a->refresh_days, 0, 100000, "bootstrap: renew when fewer days are left"),
        FLAG_BOOL("new-ca", &a->new_ca, "generate: replace a valid CA already in DIR"),
        FLAG_STRING("namespace", "NS", &a->namespace_, "bootstrap: the Secret's namespace"),
        FLAG_STRING("secret", "NAME", &a->secret, "bootstrap: the TLS Secret"),
        FLAG_STRING("webhook-config", "NAME", &a->webhook_config, "bootstrap: the MutatingWebhookConfiguration"),
        FLAG_STRING("service", "NAME", &a->service, "bootstrap: the webhook's Service (its names are the default --dns)"),
        FLAG_STRING("server", "URL", &a->api_server, "bootstrap: the API server (default: in-cluster)"),
        FLAG_STRING("token-file", "FILE", &a->api_token_file, "bootstrap: a bearer token (default: the service account's)"),
        FLAG_STRING("ca-file", "FILE", &a->api_ca_file, "bootstrap: the API server's CA (default: the service account's)"),
        FLAG_CHOICE("log-level", "LEVEL", log_level_names, &a->log_level, "error, warn, info or debug"),
    };
    const struct flags_program p = {
        .name = "raygate-certs",
        .synopsis =
            "raygate-certs COMMAND [flags]   (certificates for the webhook)\n"
            "  raygate-certs generate --dir DIR --dns NAME... [--ip ADDR...] [--days N] [--ca-days N] [--new-ca]\n"
            "      writes ca.crt, ca.key, tls.crt, tls.key (EC P-256); keeps a valid CA already in DIR unless --new-ca\n"
            "  raygate-certs ca-bundle --dir DIR\n"
            "      prints base64(DIR/ca.crt) on one line, for a webhook's clientConfig.caBundle\n"
            "  raygate-certs bootstrap --namespace NS --secret NAME --webhook-config NAME [--service NAME]\n"
            "                          [--dns NAME...] [--ip ADDR...] [--days N] [--ca-days N] [--refresh-days N] [--dir DIR]\n"
            "                          [--server URL] [--token-file FILE] [--ca-file FILE]\n"
            "      in a pod: creates or renews the TLS Secret and patches caBundle of every webhook in the\n"
            "      MutatingWebhookConfiguration\n"
            "flags:",
        .flags = table,
        .nflags = sizeof(table) / sizeof(table[0]),
    };
    if (cmd != NULL && strcmp(cmd, "help") == 0) {
        flags_usage(&p, stdout);
        return 0;
    }
    int rc = flags_handle(&p, RAYGATE_VERSION, argc, argv, environ);
    if (rc >= 0)
        return rc;
    log_set_level((enum log_level)a->log_level);
    return check_command(&p, cmd, a);
}

static int cmd_generate(struct args *a)
{
    struct certgen_pair ca = {0}, serving = {0};
    struct error err = {{0}};
    struct certfiles_set set = {0};
    struct certgen_request req = {a->dns, a->ndns, a->ips, a->nips, (int)a->days};
    int rc = 1;

    if (!a->new_ca && certfiles_load_ca(a->dir, &ca, &err) == 0) {
        time_t until = time(NULL) + (time_t)a->days * 86400;
        if (X509_cmp_time(X509_get0_notAfter(ca.cert), &until) > 0) {
            log_infof("reusing the CA in %s (--new-ca to replace it)", a->dir);
        } else {
            log_infof("the CA in %s expires before the new certificate would; creating a new CA", a->dir);
            certgen_pair_finish(&ca);
        }
    }
    if (ca.cert == NULL && certgen_ca_create("raygate-webhook-ca", (int)a->ca_days, &ca, &err) != 0)
        goto fail;
    if (certgen_serving_create(&ca, &req, &serving, &err) != 0 || certfiles_set_from_pairs(&ca, &serving, &set, &err) != 0 ||
        certfiles_write(a->dir, &set, &err) != 0)
        goto fail;
    log_infof("wrote ca.crt, ca.key, tls.crt, tls.key to %s (%zu DNS names, %zu IPs, %" PRId64 " days)", a->dir, a->ndns, a->nips,
              a->days);
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
        .req = {a->dns, a->ndns, a->ips, a->nips, (int)a->days},
        .ca_days = (int)a->ca_days,
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
    const char *cmd = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
    struct args a = {.days = 365, .ca_days = 3650, .refresh_days = 90, .service = "raygate-webhook", .log_level = LOG_LEVEL_INFO};
    int rc = cmd != NULL ? parse_flags(cmd, argc - 1, argv + 1, &a) : parse_flags(NULL, argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (strcmp(cmd, "generate") == 0)
        return cmd_generate(&a);
    if (strcmp(cmd, "ca-bundle") == 0)
        return cmd_ca_bundle(&a);
    return cmd_bootstrap(&a);
}
