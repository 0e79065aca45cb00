/*
 * bootstrap: in-cluster certificate management for the webhook, the way
 * Kueue's built-in cert management (open-policy-agent/cert-controller) does it:
 *
 *  1. read the TLS Secret; if it is missing, or its certificate does not
 *     verify against its CA, does not cover the requested names, or expires
 *     within the refresh window, generate a new pair (keeping a still-valid CA)
 *     and create or replace the Secret (optimistic concurrency: retried on 409);
 *  2. set clientConfig.caBundle of every webhook in the
 *     MutatingWebhookConfiguration to the Secret's ca.crt (a JSON patch that
 *     tests the resourceVersion it was computed from; retried on conflict),
 *     and likewise in the ValidatingWebhookConfiguration of the same name
 *     (the Queue validation) when it exists.
 *
 * The alternative is cert-manager: a Certificate writing the same Secret and
 * the annotation cert-manager.io/inject-ca-from: <namespace>/<certificate> on
 * the MutatingWebhookConfiguration, in which case this is not run at all.
 */
#ifndef RAYGATE_BOOTSTRAP_H
#define RAYGATE_BOOTSTRAP_H

#include "certgen.h"

struct bootstrap_options {
    const char *namespace_;
    const char *secret;
    const char *webhook_config;
    struct certgen_request req; /* names and days of the serving certificate */
    int ca_days;                /* validity of a new CA */
    long refresh_seconds;       /* regenerate when less validity than this remains */
    const char *dir;            /* if not NULL, also write the four PEM files there */
    /*
     * The API server: in a pod, all NULL (the service account's in-cluster
     * config); elsewhere --server, and the token and CA files if they are not
     * the service account's.
     */
    struct {
        const char *server;
        const char *token_file;
        const char *ca_file;
    } api;
};

/* Runs both steps. Returns 0, or -1 after logging why. */
int bootstrap_run(const struct bootstrap_options *opts);

#endif
