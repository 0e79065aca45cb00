/*
 * kubereq: requests to the API server (see kube.h): one at a time, the caller
 * blocking (kube_request and the verbs), a collection page by page
 * (kube_list), or N at once (kube_batch). A request of one is a batch of one:
 * the same retries everywhere. Callers include kube.h.
 */
#ifndef RAYGATE_KUBEREQ_H
#define RAYGATE_KUBEREQ_H

#include <stddef.h>

#include <jansson.h>

#include "kubeclient.h"

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
