/*
 * kubeclient_internal: what the client's own files share (kubeclient.c,
 * kube.c, kubewatch.c) and nothing else includes: the client's fields, its
 * pool of multi handles, and one HTTP exchange (struct kube_xfer), the unit
 * the requests, batches and watches are built from. Callers include kube.h.
 */
#ifndef RAYGATE_KUBECLIENT_INTERNAL_H
#define RAYGATE_KUBECLIENT_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include <curl/curl.h>

#include "kubeclient.h"
#include "util.h"
#include "watchstream.h"

#define KUBE_POOL_MAX_IDLE 8

struct kube_client {
    struct kubeconfig cfg;
    struct kube_client_options opt; /* defaults resolved; user_agent owned */
    struct kube_metrics metrics;

    pthread_mutex_t lock; /* token, pool */
    char *token;          /* current bearer token, or NULL */
    int64_t token_read_at;
    CURLM *pool[KUBE_POOL_MAX_IDLE];
    size_t pool_len;
};

/* The next number of a splitmix64 sequence: jitter only, not security. */
uint64_t kube_client_rng_next(uint64_t *state);
/* A seed from the clock, the pid and salt (an address). */
uint64_t kube_client_rng_seed(const void *salt);

/* Appends "?name=value" or "&name=value" (value percent-encoded) to the URL in b; nothing when value is NULL. */
void kube_client_url_param(struct util_buf *b, const char *name, const char *value);
/* path?limit=..&continue=..&labelSelector=..&fieldSelector=.. as a new string (NULL parts left out). */
char *kube_client_list_url(const char *path, unsigned limit, const char *cont, const char *label_selector,
                           const char *field_selector);

/* A new multi handle that multiplexes (HTTP/2); aborts when out of memory. */
CURLM *kube_client_multi_new(void);
/* A multi handle from c's pool (its connections reused), or a new one; give it back with kube_client_pool_put. */
CURLM *kube_client_pool_get(struct kube_client *c);
void kube_client_pool_put(struct kube_client *c, CURLM *m);

/* After a 401 sent with token used: re-reads the token file; returns 1 if the token is now different. */
int kube_client_token_refresh_after_401(struct kube_client *c, const char *used);
/* Counts one answer (status 0: none) in raygate_kube_requests_total, if c has metrics, and in opt.client_requests. */
void kube_client_count_request(struct kube_client *c, const char *verb, long status);

/* One HTTP exchange: its curl handle, what was sent, and what came back. */
struct kube_xfer {
    struct kube_client *c;
    CURL *easy;
    struct curl_slist *headers;
    char *url;
    char *payload;
    char *token; /* the token sent */
    const char *method;
    const char *verb;
    char errbuf[CURL_ERROR_SIZE];

    long status;
    long retry_after_ms;
    struct util_buf body;
    int too_large;
    int drop_ok_body; /* kube_client_xfer_result leaves a 2xx answer's body unread (kube_batch_item.status_only) */

    /* Watch streams: a 200 body goes to ws instead of body. */
    struct watchstream *ws;
    int ws_rc;
    struct error ws_err;
};

/*
 * Prepares x (reset; x->c and x->ws kept) for method url_path (relative to the
 * server) with body text payload (stolen, may be NULL). verb labels the
 * request's metric. timeout_ms bounds the whole transfer. The easy handle's
 * CURLOPT_PRIVATE is x.
 */
void kube_client_xfer_prepare(struct kube_xfer *x, const char *method, const char *verb, const char *url_path,
                              const char *content_type, char *payload, long timeout_ms);

/* Frees what x holds and clears it, keeping x->c and x->ws. */
void kube_client_xfer_reset(struct kube_xfer *x);

/*
 * Records the outcome of a finished request (not a watch stream) into resp
 * (status, body, message) and counts it. path is for the message.
 */
void kube_client_xfer_result(struct kube_xfer *x, CURLcode cc, const char *path, struct kube_response *resp);

/*
 * How long to wait before retrying a finished request; -1: do not retry. A
 * 401 is retried once (*auth_retried) if the token changed; a 429, or a 5xx
 * with Retry-After, up to max_retries (*attempts).
 */
long kube_client_xfer_retry_delay(struct kube_xfer *x, unsigned *attempts, int *auth_retried, uint64_t *rng);

#endif
