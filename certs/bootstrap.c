#include "bootstrap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/x509.h>

#include "certfiles.h"
#include "error.h"
#include "kube.h"
#include "kubeconfig.h"
#include "log.h"
#include "util.h"

#define ATTEMPTS 5

/* Names end up in URL paths: allow only what Kubernetes allows (DNS-1123 subdomain). */
static int valid_object_name(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    if (n == 0 || n > 253)
        return 0;
    for (const char *p = s; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
            return 0;
    }
    return 1;
}

/*
 * One API call: 0 with *status and *response (new, may be NULL) whenever the
 * apiserver answered, whatever the code; -1 (logged) when it did not.
 */
static int api_call(struct kube_client *api, const char *method, const char *path, const char *content_type, json_t *body,
                    long *status, json_t **response)
{
    struct kube_response r;
    kube_client_response_init(&r);
    kube_request(api, method, path, content_type, body, &r);
    *status = r.status;
    *response = r.body;
    r.body = NULL;
    if (r.status == 0)
        log_errorf("%s", r.message);
    kube_client_response_finish(&r);
    return *status != 0 ? 0 : -1;
}

/* The apiserver's Status message, or a placeholder. Borrowed from response. */
static const char *status_message(json_t *response)
{
    const char *m = json_string_value(json_object_get(response, "message"));
    return m != NULL ? m : "(no message)";
}

/* data[key] of a Secret, base64-decoded into a new string (caller frees), or NULL. */
static char *secret_value(json_t *secret, const char *key)
{
    const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), key));
    size_t len;
    return b64 != NULL ? util_base64_decode(b64, strlen(b64), &len) : NULL;
}

/* Returns 0 if the Secret's four values exist and are usable per opts; fills *set in any case that returns 0. */
static int secret_usable(json_t *secret, const struct bootstrap_options *opts, struct certfiles_set *set, struct error *err)
{
    int rc = -1;
    X509 *cert = NULL, *ca = NULL;
    EVP_PKEY *key = NULL;

    set->ca_crt = secret_value(secret, "ca.crt");
    set->ca_key = secret_value(secret, "ca.key");
    set->tls_crt = secret_value(secret, "tls.crt");
    set->tls_key = secret_value(secret, "tls.key");
    if (set->ca_crt == NULL || set->ca_key == NULL || set->tls_crt == NULL || set->tls_key == NULL) {
        error_setf(err, "Secret lacks one of ca.crt, ca.key, tls.crt, tls.key");
        goto out;
    }
    cert = certgen_cert_from_pem(set->tls_crt, strlen(set->tls_crt));
    key = certgen_key_from_pem(set->tls_key, strlen(set->tls_key));
    ca = certgen_cert_from_pem(set->ca_crt, strlen(set->ca_crt));
    if (cert == NULL || key == NULL || ca == NULL) {
        error_setf(err, "Secret holds unparseable PEM");
        goto out;
    }
    rc = certgen_check(cert, key, ca, &opts->req, time(NULL), opts->refresh_seconds, err);
out:
    X509_free(cert);
    X509_free(ca);
    EVP_PKEY_free(key);
    return rc;
}

/* Reuses the CA in set when it is valid and outlives the refresh window by the serving validity; else makes a new one. */
static int generate(const struct bootstrap_options *opts, const struct certfiles_set *old, struct certfiles_set *set)
{
    struct certgen_pair ca = {0}, serving = {0};
    struct error err = {{0}};
    int rc = -1;

    if (old != NULL && old->ca_crt != NULL && old->ca_key != NULL) {
        ca.cert = certgen_cert_from_pem(old->ca_crt, strlen(old->ca_crt));
        ca.key = certgen_key_from_pem(old->ca_key, strlen(old->ca_key));
        time_t until = time(NULL) + opts->refresh_seconds + (time_t)opts->req.days * 86400;
        if (ca.cert == NULL || ca.key == NULL || X509_check_private_key(ca.cert, ca.key) != 1 ||
            X509_cmp_time(X509_get0_notAfter(ca.cert), &until) <= 0) {
            certgen_pair_finish(&ca);
        } else {
            log_infof("keeping the existing CA");
        }
    }
    if (ca.cert == NULL && certgen_ca_create("raygate-webhook-ca", opts->ca_days, &ca, &err) != 0)
        goto out;
    if (certgen_serving_create(&ca, &opts->req, &serving, &err) != 0 || certfiles_set_from_pairs(&ca, &serving, set, &err) != 0)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        log_errorf("generating certificates: %s", err.message);
    certgen_pair_finish(&ca);
    certgen_pair_finish(&serving);
    return rc;
}

/* Sets data of secret (borrowed) from set. */
static void secret_set_data(json_t *secret, const struct certfiles_set *set)
{
    json_t *data = json_object();
    const char *keys[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
    const char *values[] = {set->ca_crt, set->ca_key, set->tls_crt, set->tls_key};
    for (size_t i = 0; i < 4; i++) {
        char *b64 = util_base64_encode(values[i], strlen(values[i]));
        json_object_set_new(data, keys[i], json_string(b64));
        free(b64);
    }
    json_object_set_new(secret, "data", data);
}

/* Step 1: makes sure the Secret holds a usable set, and returns it in *set. */
static int ensure_secret(struct kube_client *api, const struct bootstrap_options *opts, struct certfiles_set *set)
{
    char path[1024];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", opts->namespace_, opts->secret);

    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
        struct error cerr = {{0}};
        json_t *secret = NULL, *answer = NULL;
        struct certfiles_set old = {0};
        long status = 0;
        int done = 0, fatal = 0;

        if (api_call(api, "GET", path, NULL, NULL, &status, &secret) != 0) {
            return -1;
        }
        if (status == 200 && secret_usable(secret, opts, &old, &cerr) == 0) {
            log_infof("Secret %s/%s holds a usable certificate", opts->namespace_, opts->secret);
            *set = old;
            json_decref(secret);
            return 0;
        }
        if (status == 200) {
            log_infof("Secret %s/%s needs new certificates: %s", opts->namespace_, opts->secret, cerr.message);
        } else if (status == 404) {
            log_infof("Secret %s/%s does not exist; creating it", opts->namespace_, opts->secret);
        } else {
            log_errorf("GET Secret %s/%s: HTTP %ld: %s", opts->namespace_, opts->secret, status, status_message(secret));
            json_decref(secret);
            certfiles_set_finish(&old);
            return -1;
        }
        if (generate(opts, status == 200 ? &old : NULL, set) != 0) {
            json_decref(secret);
            certfiles_set_finish(&old);
            return -1;
        }
        certfiles_set_finish(&old);

        const char *method;
        char post_path[1024];
        if (status == 404) {
            json_decref(secret);
            secret = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:s}", "apiVersion", "v1", "kind", "Secret", "metadata", "name",
                               opts->secret, "namespace", opts->namespace_, "labels", "app.kubernetes.io/managed-by",
                               "raygate-certs", "type", "kubernetes.io/tls");
            snprintf(post_path, sizeof(post_path), "/api/v1/namespaces/%s/secrets", opts->namespace_);
            method = "POST";
        } else {
            /* PUT the object as read: its metadata.resourceVersion makes a concurrent writer fail with 409. */
            snprintf(post_path, sizeof(post_path), "%s", path);
            method = "PUT";
        }
        secret_set_data(secret, set);
        if (api_call(api, method, post_path, NULL, secret, &status, &answer) != 0) {
            fatal = 1;
        } else if (status == 200 || status == 201) {
            log_infof("%s Secret %s/%s: stored new certificates", method, opts->namespace_, opts->secret);
            done = 1;
        } else if (status == 409) {
            log_infof("%s Secret %s/%s: conflict (another writer); retrying", method, opts->namespace_, opts->secret);
        } else {
            log_errorf("%s Secret %s/%s: HTTP %ld: %s", method, opts->namespace_, opts->secret, status, status_message(answer));
            fatal = 1;
        }
        json_decref(answer);
        json_decref(secret);
        if (done)
            return 0;
        certfiles_set_finish(set);
        if (fatal)
            return -1;
    }
    log_errorf("Secret %s/%s: still conflicting after %d attempts", opts->namespace_, opts->secret, ATTEMPTS);
    return -1;
}

/* A webhook configuration's kind and resource. */
struct webhook_kind {
    const char *kind, *resource;
    int optional; /* absent (404): nothing to do */
};

/* Step 2: every webhook's clientConfig.caBundle = base64(ca.crt), in the configuration of kind k. */
static int patch_ca_bundle(struct kube_client *api, const struct bootstrap_options *opts, const struct webhook_kind *k,
                           const char *ca_crt)
{
    char path[1024];
    snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/%s/%s", k->resource, opts->webhook_config);
    char *bundle = util_base64_encode(ca_crt, strlen(ca_crt));
    int rc = -1;

    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
        json_t *config = NULL, *answer = NULL;
        long status = 0;

        if (api_call(api, "GET", path, NULL, NULL, &status, &config) != 0) {
            goto out;
        }
        if (status == 404 && k->optional) {
            log_infof("no %s %s: nothing to patch", k->kind, opts->webhook_config);
            json_decref(config);
            rc = 0;
            goto out;
        }
        if (status != 200) {
            log_errorf("GET %s %s: HTTP %ld: %s", k->kind, opts->webhook_config, status, status_message(config));
            json_decref(config);
            goto out;
        }
        const char *rv = json_string_value(json_object_get(json_object_get(config, "metadata"), "resourceVersion"));
        json_t *webhooks = json_object_get(config, "webhooks");
        json_t *patch = json_array();
        json_array_append_new(
            patch, json_pack("{s:s, s:s, s:s}", "op", "test", "path", "/metadata/resourceVersion", "value", rv != NULL ? rv : ""));
        size_t changed = 0, i;
        json_t *wh;
        json_array_foreach(webhooks, i, wh)
        {
            const char *name = json_string_value(json_object_get(wh, "name"));
            const char *have = json_string_value(json_object_get(json_object_get(wh, "clientConfig"), "caBundle"));
            if (name == NULL || (have != NULL && strcmp(have, bundle) == 0))
                continue;
            char p[128];
            snprintf(p, sizeof(p), "/webhooks/%zu/name", i);
            json_array_append_new(patch, json_pack("{s:s, s:s, s:s}", "op", "test", "path", p, "value", name));
            snprintf(p, sizeof(p), "/webhooks/%zu/clientConfig/caBundle", i);
            json_array_append_new(patch, json_pack("{s:s, s:s, s:s}", "op", "add", "path", p, "value", bundle));
            changed++;
        }
        size_t total = json_array_size(webhooks);
        json_decref(config); /* webhooks was borrowed from it */
        if (changed == 0) {
            log_infof("%s %s: caBundle of its %zu webhooks already up to date", k->kind, opts->webhook_config, total);
            json_decref(patch);
            rc = 0;
            goto out;
        }
        int sent = api_call(api, "PATCH", path, "application/json-patch+json", patch, &status, &answer);
        json_decref(patch);
        if (sent != 0) {
            goto out;
        }
        if (status == 200) {
            log_infof("%s %s: caBundle set on %zu webhooks", k->kind, opts->webhook_config, changed);
            json_decref(answer);
            rc = 0;
            goto out;
        }
        /* A failed "test" (the object changed since we read it) comes back as 409, 422 or 500 depending on the version. */
        log_infof("PATCH %s %s: HTTP %ld: %s; retrying", k->kind, opts->webhook_config, status, status_message(answer));
        json_decref(answer);
        if (status != 409 && status != 422 && status != 500)
            goto out;
    }
    log_errorf("%s %s: caBundle not set after %d attempts", k->kind, opts->webhook_config, ATTEMPTS);
out:
    free(bundle);
    return rc;
}

int bootstrap_run(const struct bootstrap_options *opts)
{
    struct certfiles_set set = {0};
    struct kube_client *api = NULL;
    struct kubeconfig cfg;
    struct error kerr = {{0}};
    struct error kube_err = {{0}};
    int rc = -1;

    if (!valid_object_name(opts->namespace_) || !valid_object_name(opts->secret) || !valid_object_name(opts->webhook_config)) {
        log_errorf("bootstrap: --namespace, --secret and --webhook-config must be Kubernetes object names");
        return -1;
    }
    kubeconfig_init(&cfg);
    if (opts->api.server != NULL) {
        cfg.server = util_strdup(opts->api.server);
        cfg.token_file = util_strdup(opts->api.token_file != NULL ? opts->api.token_file : KUBECONFIG_SA_DIR "/token");
        cfg.ca_file = util_strdup(opts->api.ca_file != NULL ? opts->api.ca_file : KUBECONFIG_SA_DIR "/ca.crt");
    } else if (kubeconfig_load_incluster(NULL, &cfg, &kerr) != 0) {
        log_errorf("bootstrap: %s (outside a pod, use --server)", kerr.message);
        return -1;
    } else {
        if (opts->api.token_file != NULL) {
            free(cfg.token_file);
            cfg.token_file = util_strdup(opts->api.token_file);
        }
        if (opts->api.ca_file != NULL) {
            free(cfg.ca_file);
            cfg.ca_file = util_strdup(opts->api.ca_file);
        }
    }
    api = kube_client_create(&cfg, NULL, &kube_err);
    kubeconfig_finish(&cfg);
    if (api == NULL) {
        log_errorf("bootstrap: %s", kube_err.message);
        return -1;
    }
    if (ensure_secret(api, opts, &set) != 0)
        goto out;
    if (opts->dir != NULL) {
        struct error err = {{0}};
        if (certfiles_write(opts->dir, &set, &err) != 0) {
            log_errorf("bootstrap: %s", err.message);
            goto out;
        }
        log_infof("wrote ca.crt, ca.key, tls.crt, tls.key to %s", opts->dir);
    }
    /* The Queue validating webhook shares the name; a configuration from before it has none (optional). */
    static const struct webhook_kind mutating = {"MutatingWebhookConfiguration", "mutatingwebhookconfigurations", 0};
    static const struct webhook_kind validating = {"ValidatingWebhookConfiguration", "validatingwebhookconfigurations", 1};
    if (patch_ca_bundle(api, opts, &mutating, set.ca_crt) != 0 || patch_ca_bundle(api, opts, &validating, set.ca_crt) != 0)
        goto out;
    rc = 0;
out:
    certfiles_set_finish(&set);
    kube_client_destroy(api);
    return rc;
}
