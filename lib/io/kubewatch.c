/*
 * kubewatch: the watcher (see kubewatch.h). One thread per watcher runs every
 * watch's list and watch requests on one multi handle and calls back.
 */
#include "kubewatch.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "clock.h"
#include "kubeclient_internal.h"
#include "log.h"
#include "util.h"
#include "watchstream.h"

enum watch_phase { PHASE_LIST, PHASE_WATCH };

struct watch {
    struct kube_watcher *w;
    struct watch *next;
    char *name, *path, *label_selector, *field_selector;
    kube_watch_fn fn;
    void *arg;
    kube_watch_trouble_fn trouble;
    int relist_on_error;

    enum watch_phase phase;
    int running;
    int64_t not_before;
    unsigned attempts; /* consecutive failures, for the backoff */
    char *rv;          /* the last resourceVersion seen: where a watch resumes */
    char *cont;        /* the list's continue token between pages */
    /*
     * What the caller has been told exists: "namespace/name" -> [rv, uid, gen].
     * A relist compares against it to deliver only changes, and deletions of
     * objects missed while the watch was down (gen: the list that saw it).
     */
    json_t *known;
    json_int_t gen;
    struct kube_xfer x;
    struct watchstream ws;
    int stream_expired, stream_error;
    long stream_code; /* an ERROR event's code */
    unsigned long stream_events;
    char stream_message[200];
};

struct kube_watcher {
    struct kube_client *c;
    CURLM *multi;
    pthread_t thread;
    pthread_mutex_t lock; /* pending, stopping */
    struct watch *pending;
    int stopping;
    struct watch *watches; /* the thread's */
    uint64_t rng;
};

static void set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = src != NULL ? util_strdup(src) : NULL;
}

static void count_restart(struct watch *wt, const char *reason)
{
    struct kube_metrics *m = &wt->w->c->metrics;
    if (m->watch_restarts == NULL)
        return;
    const char *labels[] = {wt->name, reason};
    metrics_counter_add(m->watch_restarts, labels, 1);
}

/* "namespace/name" of an object (namespace "" when cluster-scoped); NULL without a name. */
static char *object_key(json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (name == NULL)
        return NULL;
    if (ns == NULL)
        ns = "";
    return util_strdupf("%s/%s", ns, name);
}

static const char *meta_string(json_t *obj, const char *field)
{
    const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
    return s != NULL ? s : "";
}

static void remember(struct watch *wt, const char *key, json_t *obj)
{
    json_object_set_new(wt->known, key,
                        json_pack("[s,s,I]", meta_string(obj, "resourceVersion"), meta_string(obj, "uid"), wt->gen));
}

/* A minimal object for a deletion a relist discovered: metadata only. New reference. */
static json_t *stub_object(const char *key, json_t *known)
{
    const char *slash = strchr(key, '/');
    json_t *meta = json_pack("{s:s, s:s, s:s}", "name", slash + 1, "uid", json_string_value(json_array_get(known, 1)),
                             "resourceVersion", json_string_value(json_array_get(known, 0)));
    if (slash != key)
        json_object_set_new(meta, "namespace", json_stringn(key, (size_t)(slash - key)));
    return json_pack("{s:o}", "metadata", meta);
}

/* An item of a (re)list: tells the caller what changed since it last heard. */
static void list_item(struct watch *wt, json_t *obj)
{
    char *key = object_key(obj);
    if (key == NULL)
        return;
    json_t *old = json_object_get(wt->known, key);
    if (old == NULL) {
        wt->fn(wt->arg, KUBE_WATCH_ADDED, obj);
    } else if (strcmp(json_string_value(json_array_get(old, 1)), meta_string(obj, "uid")) != 0) {
        /* Deleted and recreated under the same name while we were not watching. */
        json_t *stub = stub_object(key, old);
        wt->fn(wt->arg, KUBE_WATCH_DELETED, stub);
        json_decref(stub);
        wt->fn(wt->arg, KUBE_WATCH_ADDED, obj);
    } else if (strcmp(json_string_value(json_array_get(old, 0)), meta_string(obj, "resourceVersion")) != 0) {
        wt->fn(wt->arg, KUBE_WATCH_MODIFIED, obj);
    }
    remember(wt, key, obj);
    free(key);
}

/* The list is complete: objects not seen in it are gone. */
static void list_complete(struct watch *wt)
{
    const char *key;
    json_t *val;
    void *tmp;
    json_object_foreach_safe(wt->known, tmp, key, val)
    {
        if (json_integer_value(json_array_get(val, 2)) == wt->gen)
            continue;
        json_t *stub = stub_object(key, val);
        wt->fn(wt->arg, KUBE_WATCH_DELETED, stub);
        json_decref(stub);
        json_object_del(wt->known, key);
    }
    wt->fn(wt->arg, KUBE_WATCH_SYNCED, NULL);
}

static int on_stream_event(void *arg, const struct watchstream_event *ev)
{
    struct watch *wt = arg;
    char *key;
    switch (ev->type) {
    case WATCHSTREAM_ADDED:
    case WATCHSTREAM_MODIFIED:
    case WATCHSTREAM_DELETED:
        if ((key = object_key(ev->object)) != NULL) {
            if (ev->type == WATCHSTREAM_DELETED)
                json_object_del(wt->known, key);
            else
                remember(wt, key, ev->object);
            free(key);
        }
        wt->fn(wt->arg,
               ev->type == WATCHSTREAM_ADDED      ? KUBE_WATCH_ADDED
               : ev->type == WATCHSTREAM_MODIFIED ? KUBE_WATCH_MODIFIED
                                                  : KUBE_WATCH_DELETED,
               ev->object);
        break;
    case WATCHSTREAM_BOOKMARK:
        break;
    case WATCHSTREAM_ERROR:
    case WATCHSTREAM_EXPIRED:
        *(ev->type == WATCHSTREAM_EXPIRED ? &wt->stream_expired : &wt->stream_error) = 1;
        wt->stream_code = ev->code;
        util_format(wt->stream_message, sizeof(wt->stream_message), "ERROR event %ld: %.150s", ev->code, ev->message);
        return 1;
    }
    if (ev->resource_version != NULL && ev->resource_version[0] != '\0')
        set_str(&wt->rv, ev->resource_version);
    wt->stream_events++;
    return 0;
}

/* Schedules the next attempt after a failure; retry_after_ms -1 means none given. */
static void backoff(struct watch *wt, long retry_after_ms)
{
    const struct kube_client_options *o = &wt->w->c->opt;
    long d = retry_after_ms >= 0
                 ? retry_after_ms
                 : kube_client_backoff_ms(wt->attempts, o->backoff_base_ms, o->backoff_max_ms, kube_client_rng_next(&wt->w->rng));
    if (d > o->retry_after_max_ms)
        d = o->retry_after_max_ms;
    wt->attempts++;
    wt->not_before = clock_mono_ms() + d;
}

static void start_request(struct watch *wt)
{
    struct kube_client *c = wt->w->c;
    if (wt->phase == PHASE_LIST) {
        if (wt->cont == NULL)
            wt->gen++;
        char *url = kube_client_list_url(wt->path, c->opt.list_page_size, wt->cont, wt->label_selector, wt->field_selector);
        wt->x.ws = NULL;
        kube_client_xfer_prepare(&wt->x, "GET", "list", url, NULL, NULL, c->opt.request_timeout_ms);
        free(url);
    } else {
        long span = c->opt.watch_timeout_max_s - c->opt.watch_timeout_min_s + 1;
        long timeout_s = c->opt.watch_timeout_min_s + (long)(kube_client_rng_next(&wt->w->rng) % (uint64_t)span);
        char ts[24];
        util_format(ts, sizeof(ts), "%ld", timeout_s);
        struct util_buf b = {0};
        util_buf_puts(&b, wt->path);
        kube_client_url_param(&b, "watch", "1");
        kube_client_url_param(&b, "allowWatchBookmarks", "true");
        kube_client_url_param(&b, "resourceVersion", wt->rv);
        kube_client_url_param(&b, "timeoutSeconds", ts);
        kube_client_url_param(&b, "labelSelector", wt->label_selector);
        kube_client_url_param(&b, "fieldSelector", wt->field_selector);
        watchstream_reset(&wt->ws);
        wt->stream_expired = wt->stream_error = 0;
        wt->stream_events = 0;
        wt->stream_message[0] = '\0';
        wt->x.ws = &wt->ws;
        /* The server ends the stream after timeoutSeconds; the margin catches a dead connection. */
        kube_client_xfer_prepare(&wt->x, "GET", "watch", b.data, NULL, NULL, (timeout_s + 30) * 1000);
        free(b.data);
    }
    if (curl_multi_add_handle(wt->w->multi, wt->x.easy) != CURLM_OK)
        abort();
    wt->running = 1;
}

static void relist(struct watch *wt, const char *why)
{
    log_infof("watch %s: %s; relisting", wt->name, why);
    count_restart(wt, "expired");
    wt->phase = PHASE_LIST;
    set_str(&wt->cont, NULL);
    wt->not_before = clock_mono_ms();
    if (wt->trouble != NULL)
        wt->trouble(wt->arg, KUBE_WATCH_RELISTING, 410, why);
}

/*
 * A failed request: the caller told (its delay wins when it names one), else
 * backoff; a failed watch lists again next when relist_on_error.
 */
static void failed(struct watch *wt, long status, const char *message, long retry_after_ms)
{
    if (wt->relist_on_error && wt->phase == PHASE_WATCH) {
        wt->phase = PHASE_LIST;
        set_str(&wt->cont, NULL);
    }
    long delay = wt->trouble != NULL ? wt->trouble(wt->arg, KUBE_WATCH_FAILED, status, message) : 0;
    if (delay > 0) {
        wt->attempts++;
        wt->not_before = clock_mono_ms() + delay;
    } else {
        backoff(wt, retry_after_ms);
    }
}

static void list_done(struct watch *wt, CURLcode cc)
{
    struct kube_response resp;
    kube_client_response_init(&resp);
    kube_client_xfer_result(&wt->x, cc, wt->path, &resp);
    json_t *items = json_object_get(resp.body, "items");
    if (resp.status == 200 && (items == NULL || json_is_array(items))) {
        size_t i;
        json_t *item;
        json_array_foreach(items, i, item) list_item(wt, item);
        json_t *meta = json_object_get(resp.body, "metadata");
        const char *next = json_string_value(json_object_get(meta, "continue"));
        set_str(&wt->rv, json_string_value(json_object_get(meta, "resourceVersion")));
        set_str(&wt->cont, next != NULL && next[0] != '\0' ? next : NULL);
        if (wt->cont == NULL) {
            list_complete(wt);
            wt->phase = PHASE_WATCH;
            wt->attempts = 0;
        }
        wt->not_before = clock_mono_ms();
    } else if (resp.status == 410) { /* the continue token expired: start over */
        relist(wt, resp.message);
    } else if (resp.status == 401 && kube_client_token_refresh_after_401(wt->w->c, wt->x.token)) {
        wt->not_before = clock_mono_ms();
    } else {
        const char *why = resp.status == 200 ? "the answer is not a list" : resp.message;
        log_warnf("watch %s: list failed: %s", wt->name, why);
        failed(wt, resp.status, why, resp.status == 429 || resp.status >= 500 ? wt->x.retry_after_ms : -1);
    }
    kube_client_response_finish(&resp);
}

static void stream_done(struct watch *wt, CURLcode cc)
{
    struct kube_xfer *x = &wt->x;
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        struct kube_response resp;
        kube_client_response_init(&resp);
        kube_client_xfer_result(x, cc, wt->path, &resp);
        if (resp.status == 410) {
            relist(wt, resp.message);
        } else if (resp.status == 401 && kube_client_token_refresh_after_401(wt->w->c, x->token)) {
            count_restart(wt, "error");
            wt->not_before = clock_mono_ms();
        } else {
            log_warnf("watch %s: %s", wt->name, resp.message);
            count_restart(wt, "error");
            failed(wt, resp.status, resp.message, resp.status == 429 || resp.status >= 500 ? x->retry_after_ms : -1);
        }
        kube_client_response_finish(&resp);
        return;
    }
    kube_client_count_request(wt->w->c, "watch", 200);
    struct error werr = {{0}};
    int parse_failed = x->ws_rc < 0;
    if (!parse_failed && x->ws_rc == 0 && cc == CURLE_OK && watchstream_end(&wt->ws, &werr) != 0)
        parse_failed = 1;
    if (wt->stream_expired) {
        relist(wt, wt->stream_message);
    } else if (wt->stream_error || parse_failed || cc != CURLE_OK) {
        const char *why = wt->stream_error       ? wt->stream_message
                          : parse_failed         ? (x->ws_rc < 0 ? x->ws_err.message : werr.message)
                          : x->errbuf[0] != '\0' ? x->errbuf
                                                 : curl_easy_strerror(cc);
        log_warnf("watch %s: stream failed: %s", wt->name, why);
        count_restart(wt, "error");
        failed(wt, wt->stream_error ? wt->stream_code : cc != CURLE_OK ? 0 : 200, why, -1);
    } else if (wt->stream_events == 0) {
        /* Ended without a single event or bookmark: do not spin on a server that hangs up at once. */
        count_restart(wt, "timeout");
        backoff(wt, -1);
    } else {
        log_debugf("watch %s: stream ended after %lu events; resuming at %s", wt->name, wt->stream_events, wt->rv);
        count_restart(wt, "timeout");
        wt->attempts = 0;
        wt->not_before = clock_mono_ms();
    }
}

static void watch_free(struct watch *wt)
{
    if (wt == NULL)
        return;
    if (wt->running)
        curl_multi_remove_handle(wt->w->multi, wt->x.easy);
    kube_client_xfer_reset(&wt->x);
    watchstream_finish(&wt->ws);
    json_decref(wt->known);
    free(wt->name);
    free(wt->path);
    free(wt->label_selector);
    free(wt->field_selector);
    free(wt->rv);
    free(wt->cont);
    free(wt);
}

static void *watcher_main(void *arg)
{
    struct kube_watcher *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        int stopping = w->stopping;
        while (w->pending != NULL) {
            struct watch *wt = w->pending;
            w->pending = wt->next;
            wt->next = w->watches;
            w->watches = wt;
        }
        pthread_mutex_unlock(&w->lock);
        if (stopping)
            break;

        int64_t now = clock_mono_ms();
        for (struct watch *wt = w->watches; wt != NULL; wt = wt->next)
            if (!wt->running && wt->not_before <= now)
                start_request(wt);
        int still;
        curl_multi_perform(w->multi, &still);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(w->multi, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct kube_xfer *x;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            struct watch *wt = (struct watch *)(void *)((char *)x - offsetof(struct watch, x));
            CURLcode cc = msg->data.result;
            curl_multi_remove_handle(w->multi, x->easy);
            wt->running = 0;
            if (wt->phase == PHASE_LIST)
                list_done(wt, cc);
            else
                stream_done(wt, cc);
            kube_client_xfer_reset(x);
        }
        long timeout = 1000;
        now = clock_mono_ms();
        for (struct watch *wt = w->watches; wt != NULL; wt = wt->next)
            if (!wt->running && wt->not_before - now < timeout)
                timeout = wt->not_before - now > 0 ? (long)(wt->not_before - now) : 0;
        curl_multi_poll(w->multi, NULL, 0, (int)timeout, NULL);
    }
    while (w->watches != NULL) {
        struct watch *wt = w->watches;
        w->watches = wt->next;
        watch_free(wt);
    }
    return NULL;
}

struct kube_watcher *kube_watch_create(struct kube_client *c, struct error *err)
{
    struct kube_watcher *w = util_calloc(1, sizeof(*w));
    w->c = c;
    w->multi = kube_client_multi_new();
    w->rng = kube_client_rng_seed(w);
    pthread_mutex_init(&w->lock, NULL);
    int rc = pthread_create(&w->thread, NULL, watcher_main, w);
    if (rc != 0) {
        error_setf(err, "cannot start the watcher thread: %s", strerror(rc));
        curl_multi_cleanup(w->multi);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

int kube_watch_start(struct kube_watcher *w, const struct kube_watch_spec *spec, struct error *err)
{
    if (spec->name == NULL || spec->path == NULL || spec->path[0] != '/' || strchr(spec->path, '?') != NULL || spec->fn == NULL) {
        error_setf(err, "watch: name, fn and a path starting with '/' without a query are required");
        return -1;
    }
    struct watch *wt = util_calloc(1, sizeof(*wt));
    wt->w = w;
    wt->name = util_strdup(spec->name);
    wt->path = util_strdup(spec->path);
    set_str(&wt->label_selector, spec->label_selector);
    set_str(&wt->field_selector, spec->field_selector);
    wt->fn = spec->fn;
    wt->arg = spec->arg;
    wt->trouble = spec->trouble;
    wt->relist_on_error = spec->relist_on_error;
    wt->phase = PHASE_LIST;
    wt->known = json_object();
    wt->x.c = w->c;
    watchstream_init(&wt->ws, w->c->opt.max_event_bytes, on_stream_event, wt);
    if (spec->shape_fn != NULL)
        watchstream_set_shape(&wt->ws, spec->shape, spec->shape_fn);

    pthread_mutex_lock(&w->lock);
    struct watch **tail = &w->pending;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = wt;
    pthread_mutex_unlock(&w->lock);
    curl_multi_wakeup(w->multi);
    return 0;
}

void kube_watch_destroy(struct kube_watcher *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_mutex_unlock(&w->lock);
    curl_multi_wakeup(w->multi);
    pthread_join(w->thread, NULL);
    while (w->pending != NULL) { /* started after the thread's last look */
        struct watch *wt = w->pending;
        w->pending = wt->next;
        watch_free(wt);
    }
    curl_multi_cleanup(w->multi);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
