/*
 * kube: raygate's Kubernetes API client (libcurl + jansson).
 *
 * A client holds a resolved kubeconfig (kubeconfig.h): the server, TLS trust
 * (CA file or in-memory data, or insecure), client certificate and bearer
 * token. The token file is re-read at least every minute and after a 401
 * (bound service-account tokens expire); the token is never logged.
 *
 * Three ways to talk to the API server:
 * - synchronous helpers (kube_get, kube_list, kube_create, kube_patch,
 *   kube_update, kube_delete, kube_request): one request, the caller blocks;
 * - a batch (kube_batch): N requests run concurrently on one curl multi
 *   handle, at most `concurrency` in flight, multiplexed over HTTP/2 when the
 *   server speaks it (the API server does, over TLS);
 * - a watcher (kube_watcher_create, kube_watch_start): list then watch any
 *   number of collections from ONE thread driven by one curl multi handle.
 *
 * Retries: a 401 re-reads the token file and retries once if the token
 * changed; a 429, or a 5xx carrying Retry-After, is retried (up to
 * max_retries) after Retry-After seconds or an exponential backoff with
 * jitter. Transport errors are not retried by the request helpers (they are
 * by the watcher).
 *
 * THREADING CONTRACT
 * - A kube_client is thread-safe: any thread may call the synchronous helpers
 *   and kube_batch concurrently. Each call blocks its caller and runs on a
 *   multi handle taken from the client's pool (connections are reused).
 *   kube_client_destroy must not race any call.
 * - A kube_watcher owns one thread. kube_watch_start may be called from any
 *   thread, before or after watches are running; it hands the watch to the
 *   watcher thread and wakes it (curl_multi_wakeup: the multi handle's wakeup
 *   socketpair). All callbacks of all watches of one watcher run on that
 *   thread, one at a time, never concurrently: callbacks need no lock among
 *   themselves, only against the caller's other threads. A callback may call
 *   the synchronous helpers and kube_batch (they do not use the watcher's
 *   thread) but must not call kube_watcher_destroy, and should return quickly
 *   (every watch of the watcher waits for it).
 * - kube_watcher_destroy stops the thread (closing the streams) and returns
 *   once no callback is running and none will run again.
 */
#ifndef RAYGATE_KUBE_H
#define RAYGATE_KUBE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kubeconfig.h"
#include "metrics.h"
#include "errors.h"

struct kube_client;
struct kube_watcher;

/*
 * Metric families the client updates, created with kube_metrics_register():
 *   raygate_kube_requests_total{verb,code}          counter; code "0" = no answer
 *   raygate_kube_watch_restarts_total{watch,reason} counter; reason one of
 *       "timeout" (stream ended), "expired" (410: relist), "error"
 */
struct kube_metrics {
    struct metrics_family *requests;
    struct metrics_family *watch_restarts;
};

/* Creates the families in reg (once per registry). Returns 0, or -1 (out untouched) if they exist or reg is NULL. */
int kube_metrics_register(struct metrics_registry *reg, struct kube_metrics *out);

/* Tuning; zero fields take the defaults in brackets. */
struct kube_client_options {
    long request_timeout_ms;   /* [30000] whole request, not watches */
    long connect_timeout_ms;   /* [10000] */
    long backoff_base_ms;      /* [500] first retry delay; doubles per attempt */
    long backoff_max_ms;       /* [30000] */
    long retry_after_max_ms;   /* [60000] cap on an honoured Retry-After */
    unsigned max_retries;      /* [5] for 429/5xx in request helpers and batches */
    long token_reread_ms;      /* [60000] */
    size_t max_response_bytes; /* [256 MiB] */
    size_t max_event_bytes;    /* [16 MiB] one watch event */
    long watch_timeout_min_s;  /* [300] watch timeoutSeconds is drawn uniformly from [min, max] */
    long watch_timeout_max_s;  /* [600] */
    unsigned list_page_size;   /* [500] limit= of lists */
    const char *user_agent;    /* ["raygate/<version>"]; copied */
    const struct kube_metrics *metrics; /* NULL: no metrics; copied (the families are borrowed) */
};

/*
 * Creates a client for cfg (copied; the caller keeps its own). Reads the token
 * file now to fail early. opts may be NULL. Returns a new client, or NULL with err.
 */
struct kube_client *kube_client_create(const struct kubeconfig *cfg, const struct kube_client_options *opts,
                                       struct error *err);

/* Frees the client and its connections. Accepts NULL. Destroy watchers first. */
void kube_client_destroy(struct kube_client *c);

/* --- requests ---------------------------------------------------------------- */

/* The outcome of one request. */
struct kube_response {
    long status;       /* HTTP status of the last attempt; 0 when no answer was received */
    json_t *body;      /* new: the decoded JSON body, or NULL (empty or not JSON) */
    char message[320]; /* when not 2xx: "PATCH /api/v1/...: 409 Conflict: <Status message>" or the transport error */
};

void kube_response_init(struct kube_response *r);
/* Drops r->body and clears r; r may be NULL. */
void kube_response_finish(struct kube_response *r);

enum kube_patch_type {
    KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    KUBE_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
    KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds only) */
};

/* The Content-Type of a patch type. */
const char *kube_patch_content_type(enum kube_patch_type type);

/*
 * Sends method to path (absolute API path, may carry a query: "/api/v1/pods?
 * labelSelector=a%3Db") with body (borrowed, may be NULL) encoded as JSON
 * under content_type (NULL: "application/json"). resp must be initialised; it
 * is overwritten. Returns 0 when the final answer is 2xx, else -1 (resp holds
 * the status, body and message).
 */
int kube_request(struct kube_client *c, const char *method, const char *path, const char *content_type, json_t *body,
                 struct kube_response *resp);

/* The verbs, as kube_request with their method and content type. body/patch borrowed. */
int kube_get(struct kube_client *c, const char *path, struct kube_response *resp);
int kube_create(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp);
int kube_update(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp);
int kube_patch(struct kube_client *c, const char *path, enum kube_patch_type type, json_t *patch, struct kube_response *resp);
/* body: DeleteOptions, or NULL. */
int kube_delete(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp);

struct kube_list_options {
    const char *label_selector; /* raw, e.g. "ray.io/cluster in (a,b)"; escaped here; NULL: none */
    const char *field_selector; /* NULL: none */
    unsigned limit;             /* page size; 0: the client's list_page_size */
};

struct kube_list_result {
    json_t *items;          /* new: every item of every page (a JSON array) */
    char *resource_version; /* owned: the list's metadata.resourceVersion, to watch from */
};

void kube_list_result_init(struct kube_list_result *r);
void kube_list_result_finish(struct kube_list_result *r);

/*
 * Lists the collection at path (no query) page by page (limit/continue, one
 * consistent snapshot). opts may be NULL. out must be initialised; it is
 * overwritten. Returns 0, or -1 with resp describing the failed page (a 410
 * means the continue token expired: list again).
 */
int kube_list(struct kube_client *c, const char *path, const struct kube_list_options *opts, struct kube_list_result *out,
              struct kube_response *resp);

/* --- batches --------------------------------------------------------------- */

/* One request of a batch: inputs (borrowed) and its result. */
struct kube_batch_item {
    const char *method;
    const char *path;
    const char *content_type; /* NULL: "application/json" */
    json_t *body;             /* borrowed, may be NULL */
    struct kube_response resp; /* out: initialised by kube_batch; finish it */
    int rc;                    /* out: 0 when the final answer was 2xx, else -1 */
};

/*
 * Runs the n items concurrently, at most concurrency at a time (0: 64), on one
 * multi handle (HTTP/2 multiplexing when available), with the same retries as
 * kube_request. Returns once every item is done; the number of items with
 * rc -1 (0 when all succeeded).
 */
size_t kube_batch(struct kube_client *c, struct kube_batch_item *items, size_t n, size_t concurrency);

/* --- watches ---------------------------------------------------------------- */

enum kube_watch_event {
    KUBE_WATCH_ADDED,
    KUBE_WATCH_MODIFIED,
    KUBE_WATCH_DELETED,
    /*
     * The list is complete: every object that exists was delivered. Sent after
     * the initial list and again after every relist (which delivers ADDED,
     * MODIFIED and DELETED for what changed while the watch was down).
     */
    KUBE_WATCH_SYNCED,
};

/*
 * A watch callback. object is borrowed (json_incref to keep it); NULL for
 * SYNCED. A DELETED synthesised by a relist carries only metadata (namespace,
 * name, uid, resourceVersion). Runs on the watcher's thread.
 */
typedef void (*kube_watch_fn)(void *arg, enum kube_watch_event event, json_t *object);

struct kube_watch_spec {
    const char *name;           /* for logs and metrics, e.g. "pods" */
    const char *path;           /* the collection, e.g. "/api/v1/pods", "/apis/ray.io/v1/rayclusters" */
    const char *label_selector; /* NULL: none */
    const char *field_selector; /* NULL: none */
    kube_watch_fn fn;
    void *arg;
};

/*
 * Creates a watcher on c (which must outlive it) and starts its thread.
 * Returns it, or NULL with err.
 */
struct kube_watcher *kube_watcher_create(struct kube_client *c, struct error *err);

/*
 * Adds a watch (spec's strings are copied): list, deliver, SYNCED, then watch
 * from the list's resourceVersion with bookmarks and a jittered timeout; on a
 * stream's end it re-watches from the last resourceVersion seen; on 410 Gone it
 * relists; on errors and 429 it backs off with jitter (honouring Retry-After).
 * Any thread. Returns 0, or -1 with err (invalid spec).
 */
int kube_watch_start(struct kube_watcher *w, const struct kube_watch_spec *spec, struct error *err);

/* Stops and frees the watcher (see the threading contract). Accepts NULL. */
void kube_watcher_destroy(struct kube_watcher *w);

/* --- pure helpers (exposed for tests) --------------------------------------- */

/*
 * Retry delay for attempt (0-based): d = min(max_ms, base_ms * 2^attempt), then
 * jittered into [d/2, d] by rnd.
 */
long kube_backoff_ms(unsigned attempt, long base_ms, long max_ms, uint64_t rnd);

/* A Retry-After value in delay-seconds form, in ms; -1 if absent or not that form. */
long kube_retry_after_ms(const char *value);

#endif
