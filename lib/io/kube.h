/*
 * kube: raygate's Kubernetes API client (libcurl + jansson).
 *
 * A client holds a resolved kubeconfig (kubeconfig.h): the server, TLS trust
 * (CA file or in-memory data, or insecure), client certificate and bearer
 * token. The token file is re-read at least every minute and after a 401
 * (bound service-account tokens expire); the token is never logged.
 *
 * Three ways to talk to the API server, each in its own file:
 * - synchronous helpers (kube_get, kube_list, kube_create, kube_patch,
 *   kube_update, kube_delete, kube_request; kube.h): one request, the
 *   caller blocks;
 * - a batch (kube_batch, kube.h): N requests run concurrently on one curl
 *   multi handle, at most `concurrency` in flight, multiplexed over HTTP/2
 *   when the server speaks it (the API server does, over TLS);
 * - a watcher (kube_watch_create, kube_watch_start; kubewatch.h): list then
 *   watch any number of collections from ONE thread driven by one curl multi
 *   handle.
 * All three share the client (kubeclient.h): its configuration, token, pooled
 * connections and the one HTTP exchange they are built on. This header is
 * what callers include: it brings in all three.
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
 *   thread) but must not call kube_watch_destroy, and should return quickly
 *   (every watch of the watcher waits for it).
 * - kube_watch_destroy stops the thread (closing the streams) and returns
 *   once no callback is running and none will run again.
 *
 * This file, kube.c, does the requests: one at a time, the caller blocking
 * (kube_request and the verbs), a collection page by page (kube_list), or N
 * at once (kube_batch). A request of one is a batch of one: the same retries
 * everywhere.
 */
#ifndef RAYGATE_KUBE_H
#define RAYGATE_KUBE_H

#include <stddef.h>

#include <jansson.h>

#include "kubeclient.h"
#include "kubewatch.h"

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

/*
 * Called by kube_list_pages with each page's items (borrowed: a JSON array,
 * freed as soon as fn returns, so that a long list is never held whole).
 */
typedef void (*kube_list_page_fn)(const json_t *items, void *arg);

/*
 * Lists the collection at path as kube_list does, handing each page's items
 * to fn (called once per page, in order; a page without items is not
 * handed). Sets *resource_version (owned, may be NULL) when not NULL and the
 * list succeeded. Returns 0, or -1 with resp describing the failed page
 * (pages already handed stay handed).
 */
int kube_list_pages(struct kube_client *c, const char *path, const struct kube_list_options *opts, kube_list_page_fn fn, void *arg,
                    char **resource_version, struct kube_response *resp);

/* --- batches --------------------------------------------------------------- */

/* One request of a batch: inputs (borrowed) and its result. */
struct kube_batch_item {
    const char *method;
    const char *path;
    const char *content_type;  /* NULL: "application/json" */
    json_t *body;              /* borrowed, may be NULL */
    int status_only;           /* a 2xx answer's body is not read (resp.body stays NULL): a batch of n writes then holds
                                  at most `concurrency` answers' bodies, not n parsed objects until the end */
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

#endif
