#include "statuswriter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpatch.h"
#include "util.h"

struct item {
    enum statuswriter_kind kind;
    char *ns; /* NULL for a Queue */
    char *name;
    char *method;
    char *path;
    const char *content_type; /* a constant */
    json_t *body;             /* owned */
    uint64_t seq;
};

struct statuswriter {
    struct kube_client *client;
    statuswriter_may_write_fn may_write;
    statuswriter_done_fn done;
    void *arg;
    pthread_t thread;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t cond;
    int stopping;
    uint64_t seq;
    struct item *queued;
    size_t len, cap;
};

static void item_finish(struct item *it)
{
    free(it->ns);
    free(it->name);
    free(it->method);
    free(it->path);
    json_decref(it->body);
}

static void *run(void *arg)
{
    struct statuswriter *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->len == 0 && !w->stopping)
            pthread_cond_wait(&w->cond, &w->mu);
        if (w->stopping)
            break;
        struct item *batch = w->queued;
        size_t n = w->len;
        w->queued = NULL;
        w->len = w->cap = 0;
        pthread_mutex_unlock(&w->mu);

        struct kube_batch_item *items = util_calloc(n, sizeof(*items));
        for (size_t i = 0; i < n; i++) {
            items[i] = (struct kube_batch_item){
                .method = batch[i].method,
                .path = batch[i].path,
                .content_type = batch[i].content_type,
                .body = batch[i].body,
            };
        }
        if (w->may_write == NULL || w->may_write(w->arg)) {
            kube_batch(w->client, items, n, 32);
        } else {
            for (size_t i = 0; i < n; i++) {
                items[i].rc = -1;
                snprintf(items[i].resp.message, sizeof(items[i].resp.message), "not leading: write dropped");
            }
        }
        for (size_t i = 0; i < n; i++) {
            struct statuswriter_key key = {batch[i].kind, batch[i].ns, batch[i].name};
            struct statuswriter_result r = {
                .key = &key,
                .method = batch[i].method,
                .seq = batch[i].seq,
                .rc = items[i].rc,
                .status = items[i].resp.status,
                .body = items[i].resp.body,
                .message = items[i].resp.message,
            };
            w->done(w->arg, &r);
            kube_response_finish(&items[i].resp);
            item_finish(&batch[i]);
        }
        free(items);
        free(batch);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct statuswriter *statuswriter_create(struct kube_client *client, statuswriter_may_write_fn may_write, statuswriter_done_fn done,
                                         void *arg)
{
    struct statuswriter *w = util_calloc(1, sizeof(*w));
    w->client = client;
    w->may_write = may_write;
    w->done = done;
    w->arg = arg;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cond, NULL);
    if (pthread_create(&w->thread, NULL, run, w) != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

/* Whether two strings, either of which may be NULL, are the same. */
static int same(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int statuswriter_key_equal(const struct statuswriter_key *a, const struct statuswriter_key *b)
{
    return a->kind == b->kind && same(a->namespace_, b->namespace_) && same(a->name, b->name);
}

uint64_t statuswriter_submit_new(struct statuswriter *w, const struct statuswriter_key *key, const char *method, const char *path,
                                 const char *content_type, json_t *body)
{
    struct item it = {
        .kind = key->kind,
        .ns = util_strdup(key->namespace_),
        .name = util_strdup(key->name),
        .method = util_strdup(method),
        .path = util_strdup(path),
        .content_type = content_type,
        .body = body,
    };
    pthread_mutex_lock(&w->mu);
    it.seq = ++w->seq;
    size_t i = 0;
    for (; i < w->len; i++) {
        struct statuswriter_key queued = {w->queued[i].kind, w->queued[i].ns, w->queued[i].name};
        if (statuswriter_key_equal(&queued, key))
            break;
    }
    if (i < w->len && strcmp(w->queued[i].method, "POST") == 0 && strcmp(method, "PATCH") == 0) {
        /* The object is not created yet: create it as patched (a patch alone would find nothing). */
        json_t *merged = jsonpatch_merge_apply(w->queued[i].body, body);
        item_finish(&it);
        it = w->queued[i];
        json_decref(it.body);
        it.body = merged;
        it.seq = w->seq;
    } else if (i < w->len) {
        item_finish(&w->queued[i]);
    } else {
        if (w->len == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 16;
            w->queued = util_realloc(w->queued, w->cap * sizeof(*w->queued));
        }
        w->len++;
    }
    w->queued[i] = it;
    uint64_t seq = it.seq;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mu);
    return seq;
}

void statuswriter_destroy(struct statuswriter *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    for (size_t i = 0; i < w->len; i++)
        item_finish(&w->queued[i]);
    free(w->queued);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
