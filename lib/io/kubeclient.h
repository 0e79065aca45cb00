/*
 * kubeclient: the Kubernetes client itself (see kube.h for the whole client
 * and its threading contract): configuration and tuning, the bearer token,
 * metrics, the outcome of one request, and the retry arithmetic. The requests
 * (kube.h) and the watcher (kubewatch.h) are built on it. Callers include
 * kube.h.
 */
#ifndef RAYGATE_KUBECLIENT_H
#define RAYGATE_KUBECLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kubeconfig.h"
#include "metrics.h"
#include "error.h"

struct kube_client;

/*
 * Metric families the client updates, created with kube_client_metrics_register():
 *   raygate_kube_requests_total{verb,code}          counter; code "0" = no answer
 *   raygate_kube_watch_restarts_total{watch,reason} counter; reason one of
 *       "timeout" (stream ended), "expired" (410: relist), "error"
 */
struct kube_metrics {
    struct metrics_family *requests;
    struct metrics_family *watch_restarts;
};

/* Creates the families in reg (once per registry). Returns 0, or -1 (out untouched) if they exist or reg is NULL. */
int kube_client_metrics_register(struct metrics_registry *reg, struct kube_metrics *out);

/* Tuning; zero fields take the defaults in brackets. */
struct kube_client_options {
    long request_timeout_ms;            /* [30000] whole request, not watches */
    long connect_timeout_ms;            /* [10000] */
    long backoff_base_ms;               /* [500] first retry delay; doubles per attempt */
    long backoff_max_ms;                /* [30000] */
    long retry_after_max_ms;            /* [60000] cap on an honoured Retry-After */
    unsigned max_retries;               /* [5] for 429/5xx in request helpers and batches */
    long token_reread_ms;               /* [60000] */
    size_t max_response_bytes;          /* [256 MiB] */
    size_t max_event_bytes;             /* [16 MiB] one watch event */
    long watch_timeout_min_s;           /* [300] watch timeoutSeconds is drawn uniformly from [min, max] */
    long watch_timeout_max_s;           /* [600] */
    unsigned list_page_size;            /* [500] limit= of lists */
    const char *user_agent;             /* ["raygate/<version>"]; copied */
    const struct kube_metrics *metrics; /* NULL: no metrics; copied (the families are borrowed) */
    /*
     * Also counts every answer counted in raygate_kube_requests_total (each
     * attempt, each list page, each watch stream when it ends) in this
     * counter of one label, borrowed, with the value client_name (copied):
     * one client's share, e.g. raygate_dispatch_worker_requests_total{worker}.
     * NULL: none.
     */
    struct metrics_family *client_requests;
    const char *client_name;
};

/*
 * Creates a client for cfg (copied; the caller keeps its own). Reads the token
 * file now to fail early. opts may be NULL. Returns a new client, or NULL with err.
 */
struct kube_client *kube_client_create(const struct kubeconfig *cfg, const struct kube_client_options *opts, struct error *err);

/* Frees the client and its connections. Accepts NULL. Destroy watchers first. */
void kube_client_destroy(struct kube_client *c);

/* The outcome of one request. */
struct kube_response {
    long status;       /* HTTP status of the last attempt; 0 when no answer was received */
    json_t *body;      /* new: the decoded JSON body, or NULL (empty or not JSON) */
    char message[320]; /* when not 2xx: "PATCH /api/v1/...: 409 Conflict: <Status message>" or the transport error */
};

void kube_client_response_init(struct kube_response *r);
/* Drops r->body and clears r; r may be NULL. */
void kube_client_response_finish(struct kube_response *r);

/* --- pure helpers (exposed for tests) --------------------------------------- */

/*
 * Retry delay for attempt (0-based): d = min(max_ms, base_ms * 2^attempt), then
 * jittered into [d/2, d] by rnd.
 */
long kube_client_backoff_ms(unsigned attempt, long base_ms, long max_ms, uint64_t rnd);

/* A Retry-After value in delay-seconds form, in ms; -1 if absent or not that form. */
long kube_client_retry_after_ms(const char *value);

#endif
