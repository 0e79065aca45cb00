/*
 * incluster: the few Kubernetes API calls raygate-certs makes, over libcurl.
 *
 * Deliberately small and local to certs/: it should move to lib/ (and be
 * replaced by it) once the shared Kubernetes client exists there.
 *
 * By default it talks to the API server a pod sees: https://$KUBERNETES_SERVICE_HOST:
 * $KUBERNETES_SERVICE_PORT with the service account's token and CA from
 * /var/run/secrets/kubernetes.io/serviceaccount/. Each may be overridden
 * (for running against a cluster from outside). The token is never logged.
 */
#ifndef RAYGATE_INCLUSTER_H
#define RAYGATE_INCLUSTER_H

#include <jansson.h>

#define INCLUSTER_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct incluster_error {
    char message[256]; /* one line */
};

struct incluster;

/* Overrides; NULL fields take the in-cluster defaults. Strings are borrowed. */
struct incluster_options {
    const char *server;     /* "https://host:port" */
    const char *token_file; /* file holding a bearer token */
    const char *ca_file;    /* PEM bundle that verifies the API server */
};

/*
 * Reads the token and checks the configuration. Returns a new client
 * (incluster_destroy), or NULL with err.
 */
struct incluster *incluster_create(const struct incluster_options *opts, struct incluster_error *err);

/* Frees the client (and wipes the token). Accepts NULL. */
void incluster_destroy(struct incluster *c);

/*
 * Sends method path (e.g. "GET", "/api/v1/namespaces/x/secrets/y") with body
 * (borrowed, may be NULL) encoded as JSON under content_type (NULL means
 * "application/json"). On any HTTP answer returns 0, sets *status and
 * *response to the decoded JSON body (new reference, caller decrefs; NULL if
 * the body was not JSON). Returns -1 with err when no answer was received.
 */
int incluster_request(struct incluster *c, const char *method, const char *path, const char *content_type, json_t *body,
                      long *status, json_t **response, struct incluster_error *err);

#endif
