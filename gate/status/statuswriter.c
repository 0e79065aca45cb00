#include "statuswriter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
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
    long long due_ms; /* not sent before (CLOCK_MONOTONIC ms): its key's last write plus the window */
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
    long long window_ms;
    json_t *sent; /* key name (item_key) -> when a write of it last went out (ms), within the last window */
    struct item *queued;
    size_t len, cap;
};

/* The string a write's key is remembered by in sent. */
static char *item_key(enum statuswriter_kind kind, const char *ns, const char *name)
{
    return util_strdupf("%d/%s/%s", (int)kind, ns != NULL ? ns : "", name);
}

/* Sleeps on the condition until woken or, due_ms >= 0, until then (CLOCK_MONOTONIC). Under w->mu. */
static void wait_until(struct statuswriter *w, long long due_ms)
{
    if (due_ms < 0) {
        pthread_cond_wait(&w->cond, &w->mu);
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)(due_ms / 1000), .tv_nsec = (long)(due_ms % 1000) * 1000000L};
    pthread_cond_timedwait(&w->cond, &w->mu, &ts);
}

/*
 * Under w->mu: moves the queued writes due by now into *batch (their count
 * returned), in the order they were queued, remembering when each key went
 * out; *next: when the earliest write left queued is due (-1: none).
 */
static size_t take_due(struct statuswriter *w, long long now, struct item **batch, long long *next)
{
    size_t n = 0, kept = 0;
    *batch = util_calloc(w->len + 1, sizeof(**batch));
    *next = -1;
    const char *k;
    json_t *v, *tmp;
    json_object_foreach_safe(w->sent, tmp, k, v)
    {
        if (json_integer_value(v) + w->window_ms <= now)
            json_object_del(w->sent, k); /* its window is over: a write of it goes out at once */
    }
    for (size_t i = 0; i < w->len; i++) {
        struct item *it = &w->queued[i];
        if (it->due_ms > now) {
            if (*next < 0 || it->due_ms < *next)
                *next = it->due_ms;
            w->queued[kept++] = *it;
            continue;
        }
        char *key = item_key(it->kind, it->ns, it->name);
        json_object_set_new(w->sent, key, json_integer(now));
        free(key);
        (*batch)[n++] = *it;
    }
    w->len = kept;
    return n;
}

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
        struct item *batch = NULL;
        size_t n = 0;
        long long next = -1;
        while (!w->stopping && (n = take_due(w, clock_mono_ms(), &batch, &next)) == 0) {
            free(batch);
            batch = NULL;
            wait_until(w, next);
        }
        if (w->stopping) {
            for (size_t i = 0; i < n; i++)
                item_finish(&batch[i]);
            free(batch);
            break;
        }
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
            kube_client_response_finish(&items[i].resp);
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
    w->window_ms = STATUSWRITER_WINDOW_MS;
    w->sent = json_object();
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the timed wait is on clock_mono_ms's clock */
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&w->thread, NULL, run, w) != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->mu);
        json_decref(w->sent);
        free(w);
        return NULL;
    }
    return w;
}

/* Whether two strings, either of which may be NULL, are the same. */
int statuswriter_key_equal(const struct statuswriter_key *a, const struct statuswriter_key *b)
{
    return a->kind == b->kind && util_streq(a->namespace_, b->namespace_) && util_streq(a->name, b->name);
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
    char *skey = item_key(key->kind, key->namespace_, key->name);
    json_t *last = json_object_get(w->sent, skey);
    it.due_ms = last != NULL ? json_integer_value(last) + w->window_ms : 0;
    free(skey);
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
        if (strcmp(w->queued[i].method, "PATCH") == 0 && strcmp(method, "PATCH") == 0) {
            /* Each patch says what changed since the one before it: together, both changes. */
            json_t *both = jsonpatch_merge_compose(w->queued[i].body, body);
            json_decref(it.body);
            it.body = both;
        }
        it.due_ms = w->queued[i].due_ms; /* the write waiting longest sets when they go */
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

void statuswriter_set_window(struct statuswriter *w, long long window_ms)
{
    pthread_mutex_lock(&w->mu);
    w->window_ms = window_ms;
    pthread_mutex_unlock(&w->mu);
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
    json_decref(w->sent);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
