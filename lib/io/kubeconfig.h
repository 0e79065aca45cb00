/*
 * kubeconfig: where the Kubernetes API server is and how to authenticate to
 * it, from a kubeconfig file or from a pod's service account.
 *
 * From a kubeconfig (parsed with libyaml): current-context (or a named
 * context) -> context -> cluster + user. Cluster: server,
 * certificate-authority, certificate-authority-data, insecure-skip-tls-verify.
 * User: token, tokenFile, client-certificate, client-key and their -data
 * forms. Relative file paths are resolved against the kubeconfig's folder.
 * Precedence follows client-go: -data beats the file form; a readable
 * tokenFile beats token (the client re-reads it). exec and auth-provider
 * plugins and basic auth are refused with a message; other fields
 * (tls-server-name, proxy-url, extensions, preferences) are ignored.
 *
 * In-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with
 * the service account's token file and ca.crt.
 *
 * kubeconfig_parse() is pure (no I/O, no environment): fuzzers and tests call
 * it on a buffer. The loaders do the I/O around it.
 */
#ifndef RAYGATE_KUBECONFIG_H
#define RAYGATE_KUBECONFIG_H

#include <stddef.h>

#include "error.h"

#define KUBECONFIG_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Largest kubeconfig file the loader reads. */
#define KUBECONFIG_MAX_BYTES (4u << 20)

/*
 * A resolved configuration. All strings are owned (NUL-terminated); NULL when
 * absent. The -data fields hold the decoded bytes (PEM text) with their length
 * (also NUL-terminated for convenience).
 */
struct kubeconfig {
    char *context;   /* context used; NULL in-cluster */
    char *cluster;   /* cluster entry's name; NULL in-cluster */
    char *user;      /* user entry's name; NULL in-cluster */
    char *namespace; /* the context's namespace, or the service account's; may be NULL */

    char *server; /* "https://host:port" (scheme required), no trailing '/' */
    char *ca_file;
    char *ca_data;
    size_t ca_data_len;
    int insecure_skip_tls_verify;

    char *token;      /* literal bearer token */
    char *token_file; /* re-read by the client; takes precedence when readable */
    char *client_cert_file;
    char *client_cert_data;
    size_t client_cert_data_len;
    char *client_key_file;
    char *client_key_data;
    size_t client_key_data_len;
};

/* Initialises an empty configuration in caller-owned storage. */
void kubeconfig_init(struct kubeconfig *cfg);

/* Releases cfg's memory (wiping tokens and keys) and leaves it empty; cfg may be NULL. */
void kubeconfig_finish(struct kubeconfig *cfg);

/* Deep-copies src into dst (initialised, overwritten). */
void kubeconfig_copy(struct kubeconfig *dst, const struct kubeconfig *src);

/*
 * Parses a kubeconfig document of len bytes (need not be NUL-terminated).
 * context: the context to use, or NULL for current-context. base_dir: folder
 * relative paths are resolved against, or NULL to keep them as written.
 * out must be initialised; it is overwritten. Returns 0, or -1 with err (out
 * left empty). Pure: reads no file and no environment.
 */
int kubeconfig_parse(const char *buf, size_t len, const char *base_dir, const char *context, struct kubeconfig *out,
                     struct error *err);

/*
 * Reads the kubeconfig file at path and parses it with base_dir set to the
 * file's folder. Returns 0, or -1 with err.
 */
int kubeconfig_load_file(const char *path, const char *context, struct kubeconfig *out, struct error *err);

/*
 * In-cluster configuration from KUBERNETES_SERVICE_HOST/PORT and sa_dir (NULL
 * means KUBECONFIG_SA_DIR), which must hold a readable "token" and "ca.crt";
 * "namespace" is read if present. Returns 0, or -1 with err.
 */
int kubeconfig_load_incluster(const char *sa_dir, struct kubeconfig *out, struct error *err);

/*
 * The programs' rule: path if not NULL, else $KUBECONFIG (the first entry of a
 * ':'-separated list), else in-cluster. Returns 0, or -1 with err.
 */
int kubeconfig_load(const char *path, const char *context, struct kubeconfig *out, struct error *err);

#endif
