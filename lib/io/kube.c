/*
 * kube: requests (one, a list page by page, or a batch), all run as a batch
 * on a multi handle from the client's pool.
 */
#include "kube.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "clock.h"
#include "kubeclient_internal.h"
#include "log.h"
#include "util.h"

#define DEFAULT_CONCURRENCY 64

const char *kube_patch_content_type(enum kube_patch_type type)
{
    switch (type) {
    case KUBE_PATCH_MERGE:
        return "application/merge-patch+json";
    case KUBE_PATCH_JSON:
        return "application/json-patch+json";
    case KUBE_PATCH_STRATEGIC:
        return "application/strategic-merge-patch+json";
    }
    return "application/merge-patch+json";
}

static const char *verb_of(const char *method)
{
    if (strcmp(method, "GET") == 0)
        return "get";
    if (strcmp(method, "POST") == 0)
        return "create";
    if (strcmp(method, "PUT") == 0)
        return "update";
    if (strcmp(method, "PATCH") == 0)
        return "patch";
    if (strcmp(method, "DELETE") == 0)
        return "delete";
    return "other";
}

enum slot_state { SLOT_FRESH, SLOT_RUNNING, SLOT_WAITING, SLOT_DONE };

struct slot {
    struct kube_xfer x;
    enum slot_state state;
    unsigned attempts;
    int auth_retried;
    int64_t not_before;
};

/* A batch under way: the items, their slots, and how many are in each state. */
struct batch {
    struct kube_client *c;
    CURLM *m;
    struct kube_batch_item *items;
    const char *const *verbs; /* the items' metric verbs, or NULL: from the method */
    struct slot *slots;
    size_t n, concurrency;
    uint64_t rng;
    size_t next_fresh, running, waiting, done, failed;
};

static void slot_start(struct batch *b, size_t i)
{
    struct kube_batch_item *it = &b->items[i];
    struct slot *s = &b->slots[i];
    const char *verb = b->verbs != NULL ? b->verbs[i] : NULL;
    char *payload = NULL;
    if (it->body != NULL && (payload = json_dumps(it->body, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
        abort();
    kube_client_xfer_prepare(&s->x, it->method, verb != NULL ? verb : verb_of(it->method), it->path, it->content_type, payload,
                             b->c->opt.request_timeout_ms);
    s->x.drop_ok_body = it->status_only;
    if (curl_multi_add_handle(b->m, s->x.easy) != CURLM_OK)
        abort();
    s->state = SLOT_RUNNING;
    b->running++;
}

/* Fills free places: retries whose time has come first, then fresh items. */
static void batch_start_due(struct batch *b)
{
    int64_t now = clock_mono_ms();
    for (size_t i = 0; b->waiting > 0 && b->running < b->concurrency && i < b->next_fresh; i++) {
        if (b->slots[i].state == SLOT_WAITING && b->slots[i].not_before <= now) {
            slot_start(b, i);
            b->waiting--;
        }
    }
    while (b->running < b->concurrency && b->next_fresh < b->n)
        slot_start(b, b->next_fresh++);
}

/* A finished transfer: its item is done, or waits for a retry. */
static void batch_finish_one(struct batch *b, CURL *easy, CURLcode cc)
{
    struct kube_xfer *x;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    struct slot *s = (struct slot *)x; /* x is the slot's first member */
    struct kube_batch_item *it = &b->items[s - b->slots];
    curl_multi_remove_handle(b->m, x->easy);
    b->running--;
    kube_client_xfer_result(x, cc, it->path, &it->resp);
    long delay = cc == CURLE_OK ? kube_client_xfer_retry_delay(x, &s->attempts, &s->auth_retried, &b->rng) : -1;
    if (delay >= 0) {
        log_debugf("%s %s: %ld, retrying in %ld ms", x->method, it->path, x->status, delay);
        s->state = SLOT_WAITING;
        s->not_before = clock_mono_ms() + delay;
        b->waiting++;
    } else {
        s->state = SLOT_DONE;
        it->rc = it->resp.status >= 200 && it->resp.status <= 299 ? 0 : -1;
        b->failed += it->rc != 0;
        b->done++;
    }
    kube_client_xfer_reset(x);
}

/* How long the next poll may sleep: until the earliest retry is due, at most a second. */
static long batch_wait_ms(const struct batch *b)
{
    long timeout = 1000;
    if (b->waiting > 0) {
        int64_t now = clock_mono_ms();
        for (size_t i = 0; i < b->next_fresh; i++)
            if (b->slots[i].state == SLOT_WAITING && b->slots[i].not_before - now < timeout)
                timeout = b->slots[i].not_before - now > 0 ? (long)(b->slots[i].not_before - now) : 0;
    }
    return timeout;
}

static size_t run_batch(struct kube_client *c, struct kube_batch_item *items, const char *const *verbs, size_t n,
                        size_t concurrency)
{
    if (n == 0)
        return 0;
    struct batch b = {.c = c, .items = items, .verbs = verbs, .n = n};
    b.concurrency = concurrency != 0 ? concurrency : DEFAULT_CONCURRENCY;
    b.m = kube_client_pool_get(c);
    b.slots = util_calloc(n, sizeof(*b.slots));
    b.rng = kube_client_rng_seed(b.slots);
    for (size_t i = 0; i < n; i++) {
        b.slots[i].x.c = c;
        kube_client_response_init(&items[i].resp);
        items[i].rc = -1;
    }
    while (b.done < n) {
        batch_start_due(&b);
        int still;
        curl_multi_perform(b.m, &still);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(b.m, &left)) != NULL)
            if (msg->msg == CURLMSG_DONE)
                batch_finish_one(&b, msg->easy_handle, msg->data.result);
        if (b.done == n)
            break;
        /* A slot freed up and fresh items wait: start them now, not after the next poll wakes. */
        if (b.running < b.concurrency && b.next_fresh < n)
            continue;
        long timeout = batch_wait_ms(&b);
        if (b.running > 0 || timeout > 0)
            curl_multi_poll(b.m, NULL, 0, (int)timeout, NULL);
    }
    free(b.slots);
    kube_client_pool_put(c, b.m);
    return b.failed;
}

size_t kube_batch(struct kube_client *c, struct kube_batch_item *items, size_t n, size_t concurrency)
{
    return run_batch(c, items, NULL, n, concurrency);
}

static int request_verb(struct kube_client *c, const char *verb, const char *method, const char *path, const char *content_type,
                        json_t *body, struct kube_response *resp)
{
    struct kube_batch_item it = {.method = method, .path = path, .content_type = content_type, .body = body};
    const char *verbs[] = {verb};
    run_batch(c, &it, verb != NULL ? verbs : NULL, 1, 1);
    kube_client_response_finish(resp);
    *resp = it.resp;
    return it.rc;
}

int kube_request(struct kube_client *c, const char *method, const char *path, const char *content_type, json_t *body,
                 struct kube_response *resp)
{
    return request_verb(c, NULL, method, path, content_type, body, resp);
}

int kube_get(struct kube_client *c, const char *path, struct kube_response *resp)
{
    return kube_request(c, "GET", path, NULL, NULL, resp);
}

int kube_create(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp)
{
    return kube_request(c, "POST", path, NULL, body, resp);
}

int kube_update(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp)
{
    return kube_request(c, "PUT", path, NULL, body, resp);
}

int kube_patch(struct kube_client *c, const char *path, enum kube_patch_type type, json_t *patch, struct kube_response *resp)
{
    return kube_request(c, "PATCH", path, kube_patch_content_type(type), patch, resp);
}

int kube_delete(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp)
{
    return kube_request(c, "DELETE", path, NULL, body, resp);
}

void kube_list_result_init(struct kube_list_result *r)
{
    memset(r, 0, sizeof(*r));
}

void kube_list_result_finish(struct kube_list_result *r)
{
    if (r == NULL)
        return;
    json_decref(r->items);
    free(r->resource_version);
    kube_list_result_init(r);
}

int kube_list_pages(struct kube_client *c, const char *path, const struct kube_list_options *opts, kube_list_page_fn fn, void *arg,
                    char **resource_version, struct kube_response *resp)
{
    static const struct kube_list_options none = {0};
    if (opts == NULL)
        opts = &none;
    char *cont = NULL, *rv = NULL;
    int rc = -1;
    for (;;) {
        char *url = kube_client_list_url(path, opts->limit != 0 ? opts->limit : c->opt.list_page_size, cont, opts->label_selector,
                                         opts->field_selector);
        int r = request_verb(c, "list", "GET", url, NULL, NULL, resp);
        free(url);
        if (r != 0)
            break;
        json_t *page = json_object_get(resp->body, "items");
        json_t *meta = json_object_get(resp->body, "metadata");
        if (!json_is_array(page) && !json_is_null(page) && page != NULL) {
            util_format(resp->message, sizeof(resp->message), "GET %.160s: the answer is not a list", path);
            break;
        }
        if (json_array_size(page) > 0)
            fn(page, arg);
        const char *v = json_string_value(json_object_get(meta, "resourceVersion"));
        const char *next = json_string_value(json_object_get(meta, "continue"));
        free(rv);
        rv = v != NULL ? util_strdup(v) : NULL;
        free(cont);
        cont = next != NULL && next[0] != '\0' ? util_strdup(next) : NULL;
        /* This page is handled: drop it before the next one is read. */
        json_decref(resp->body);
        resp->body = NULL;
        if (cont == NULL) {
            rc = 0;
            break;
        }
    }
    free(cont);
    if (rc == 0 && resource_version != NULL)
        *resource_version = rv;
    else
        free(rv);
    return rc;
}

/* kube_list's page handler: appends the page's items to the array arg. */
static void list_append(const json_t *items, void *arg)
{
    json_array_extend(arg, (json_t *)items);
}

int kube_list(struct kube_client *c, const char *path, const struct kube_list_options *opts, struct kube_list_result *out,
              struct kube_response *resp)
{
    kube_list_result_finish(out);
    json_t *items = json_array();
    int rc = kube_list_pages(c, path, opts, list_append, items, &out->resource_version, resp);
    if (rc == 0)
        out->items = items;
    else
        json_decref(items);
    return rc;
}
