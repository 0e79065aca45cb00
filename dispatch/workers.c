#include "workers.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "names.h"
#include "table.h"
#include "notify.h"
#include "util.h"

/* Largest kubeconfig a worker Secret may carry (decoded). */
#define WORKER_KUBECONFIG_MAX (1u << 20)

int dispatchworkers_name_ok(const char *s)
{
    size_t n = 0;
    if (s == NULL)
        return 0;
    for (const char *p = s; *p != '\0'; p++, n++) {
        char c = *p;
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && c != '_' && c != '.')
            return 0;
        if (!alnum && (p == s || p[1] == '\0'))
            return 0;
    }
    return n > 0 && n <= 63;
}

static const json_t *meta(const json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(meta(obj), field));
}

int dispatchworkers_parse_secret(const json_t *secret, char **name, struct kubeconfig *cfg, struct error *err)
{
    *name = NULL;
    const char *label = json_string_value(json_object_get(json_object_get(meta(secret), "labels"), NAMES_LABEL_WORKER_CLUSTER));
    if (!dispatchworkers_name_ok(label)) {
        error_setf(err, "label %s: \"%s\" is not a worker name (1-63 of a-z, A-Z, 0-9, '-', '_', '.')", NAMES_LABEL_WORKER_CLUSTER,
                   label != NULL ? label : "");
        return -1;
    }
    *name = util_strdup(label);
    const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), NAMES_SECRET_KUBECONFIG_KEY));
    if (b64 == NULL) {
        error_setf(err, "data.%s: missing (the worker's whole kubeconfig, credentials inline)", NAMES_SECRET_KUBECONFIG_KEY);
        return -1;
    }
    size_t len = 0;
    char *text = util_base64_decode(b64, strlen(b64), &len);
    if (text == NULL) {
        error_setf(err, "data.%s: not base64", NAMES_SECRET_KUBECONFIG_KEY);
        return -1;
    }
    int rc = 0;
    if (len == 0 || len > WORKER_KUBECONFIG_MAX) {
        error_setf(err, "data.%s: %s", NAMES_SECRET_KUBECONFIG_KEY, len == 0 ? "empty" : "larger than 1 MiB");
        rc = -1;
    } else if (kubeconfig_parse(text, len, NULL, NULL, cfg, err) != 0) {
        char why[sizeof(err->message)];
        util_format(why, sizeof(why), "%s", err->message);
        error_setf(err, "data.%s: %s", NAMES_SECRET_KUBECONFIG_KEY, why);
        rc = -1;
    }
    util_wipe_free(text, len);
    return rc;
}

void dispatchworkers_init(struct dispatchworkers *ws, const struct dispatch_options *cfg, struct kube_client *manager,
                          struct metrics_registry *reg)
{
    static const char *const labels[] = {"cluster"};
    memset(ws, 0, sizeof(*ws));
    ws->cfg = cfg;
    ws->manager = manager;
    static const char *const worker[] = {"worker"};
    if (reg == NULL)
        return;
    ws->up =
        metrics_gauge_create(reg, "raygate_worker_up",
                             "Whether the dispatcher reaches a worker cluster (1) or not (0: its Secret says why).", 1, labels);
    ws->requests = metrics_counter_create(
        reg, "raygate_dispatch_worker_requests_total",
        "Requests the dispatcher sent to a worker's API server (each answer, list page and ended watch stream).", 1, worker);
}

static void worker_destroy(struct dispatch_worker *w)
{
    if (w == NULL)
        return;
    dispatchview_finish(&w->view); /* its watcher uses the client */
    kube_client_destroy(w->client);
    free(w->name);
    free(w->secret_name);
    free(w->secret_uid);
    free(w->reported);
    free(w);
}

void dispatchworkers_finish(struct dispatchworkers *ws)
{
    for (size_t i = 0; i < ws->len; i++)
        worker_destroy(ws->items[i]);
    free(ws->items);
    memset(ws, 0, sizeof(*ws));
}

struct dispatch_worker *dispatchworkers_get(const struct dispatchworkers *ws, const char *name)
{
    for (size_t i = 0; name != NULL && i < ws->len; i++)
        if (strcmp(ws->items[i]->name, name) == 0)
            return ws->items[i];
    return NULL;
}

/*
 * Drops what changes from one failed attempt to the next in libcurl's
 * messages (" after 3001 ms"), so that a worker that stays down keeps one
 * status: its Secret's annotation and Events change only when the reason does.
 */
static void steady(char *s)
{
    char *p = s;
    while ((p = strstr(p, " after ")) != NULL) {
        char *q = p + 7;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > p + 7 && strncmp(q, " ms", 3) == 0)
            memmove(p, q + 3, strlen(q + 3) + 1);
        else
            p += 7;
    }
}

void dispatchworkers_set_state(struct dispatchworkers *ws, struct dispatch_worker *w, int up, const char *why)
{
    char now[DISPATCHWORKERS_STATUS_MAX];
    util_format(now, sizeof(now), "%s", up ? (why != NULL ? why : "up") : why);
    steady(now);
    if (w->up != up || strcmp(w->status, now) != 0) {
        if (up)
            log_infof("worker %s is %s", w->name, now);
        else
            log_warnf("worker %s is down: %s", w->name, now);
    }
    w->up = up;
    util_format(w->status, sizeof(w->status), "%s", now);
    const char *labels[] = {w->name};
    metrics_gauge_set(ws->up, labels, up ? 1 : 0);
}

/*
 * A worker that does not answer must not hold up the pass (the renewals of
 * the other workers' leases wait for it): short timeouts, one retry.
 */
static const struct kube_client_options worker_client_options = {
    .connect_timeout_ms = 3000,
    .request_timeout_ms = 15000,
    .backoff_max_ms = 2000,
    .max_retries = 1,
    .list_page_size = DISPATCHVIEW_PAGE,
};

/* What decides whether a Secret must be parsed again: its data.kubeconfig. */
static uint64_t secret_hash(const json_t *secret)
{
    const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), NAMES_SECRET_KUBECONFIG_KEY));
    return table_hash_str(TABLE_HASH_SEED, b64 != NULL ? b64 : "");
}

/* A new worker for secret (borrowed) named name (stolen): a client when its kubeconfig parsed, else down with why. */
static struct dispatch_worker *worker_create(struct dispatchworkers *ws, const json_t *secret, char *name,
                                             const struct kubeconfig *cfg, const struct error *perr)
{
    struct dispatch_worker *w = util_calloc(1, sizeof(*w));
    w->name = name;
    w->secret_name = util_strdup(meta_str(secret, "name") != NULL ? meta_str(secret, "name") : "");
    w->secret_uid = util_strdup(meta_str(secret, "uid"));
    w->secret_hash = secret_hash(secret);
    const char *reported =
        json_string_value(json_object_get(json_object_get(meta(secret), "annotations"), DISPATCHWORKERS_ANNOTATION_STATUS));
    w->reported = util_strdup(reported);
    dispatchview_init(&w->view);
    struct kube_client_options opts = worker_client_options;
    opts.client_requests = ws->requests;
    opts.client_name = name;
    util_format(w->status, sizeof(w->status), "%s", "not reached yet"); /* no log line for a worker not tried yet */
    struct error err = {{0}};
    if (perr != NULL) {
        dispatchworkers_set_state(ws, w, 0, perr->message);
    } else if ((w->client = kube_client_create(cfg, &opts, &err)) == NULL) {
        dispatchworkers_set_state(ws, w, 0, err.message);
    } else {
        dispatchworkers_set_state(ws, w, 0, "not reached yet");
    }
    return w;
}

/* Puts w in place of the worker at index i (i == len: appends). */
static void worker_put(struct dispatchworkers *ws, size_t i, struct dispatch_worker *w)
{
    if (i < ws->len) {
        worker_destroy(ws->items[i]);
        ws->items[i] = w;
        return;
    }
    if (ws->len == ws->cap) {
        ws->cap = ws->cap != 0 ? ws->cap * 2 : 4;
        ws->items = util_realloc(ws->items, ws->cap * sizeof(*ws->items));
    }
    ws->items[ws->len++] = w;
}

static size_t index_of(const struct dispatchworkers *ws, const char *name)
{
    size_t i = 0;
    while (i < ws->len && strcmp(ws->items[i]->name, name) != 0)
        i++;
    return i;
}

struct dispatch_worker *dispatchworkers_apply_secret(struct dispatchworkers *ws, const json_t *secret)
{
    const char *sname = meta_str(secret, "name");
    struct kubeconfig cfg;
    kubeconfig_init(&cfg);
    char *name = NULL;
    struct error err = {{0}};
    int rc = dispatchworkers_parse_secret(secret, &name, &cfg, &err);
    struct dispatch_worker *w = NULL;
    if (name == NULL) {
        log_warnf("Secret %s/%s: %s", ws->cfg->namespace_, sname != NULL ? sname : "?", err.message);
        goto out;
    }
    size_t i = index_of(ws, name);
    w = i < ws->len ? ws->items[i] : NULL;
    if (w != NULL && w->seen && sname != NULL && strcmp(w->secret_name, sname) != 0) {
        log_warnf("Secret %s/%s: worker %s is registered by Secret %s already: ignored", ws->cfg->namespace_, sname, name,
                  w->secret_name);
        w = NULL;
        goto out;
    }
    if (w == NULL || w->secret_hash != secret_hash(secret) || strcmp(w->secret_name, sname != NULL ? sname : "") != 0) {
        w = worker_create(ws, secret, name, &cfg, rc == 0 ? NULL : &err);
        name = NULL;
        worker_put(ws, i, w);
    }
    w->seen = 1;
out:
    free(name);
    kubeconfig_finish(&cfg);
    return w;
}

/* Drops the workers whose Secret the last list lacked. */
static void drop_unseen(struct dispatchworkers *ws)
{
    size_t kept = 0;
    for (size_t i = 0; i < ws->len; i++) {
        struct dispatch_worker *w = ws->items[i];
        if (w->seen) {
            ws->items[kept++] = w;
            continue;
        }
        log_infof("worker %s: its Secret %s is gone: dropped", w->name, w->secret_name);
        const char *labels[] = {w->name};
        metrics_remove(ws->up, labels);
        metrics_remove(ws->requests, labels);
        worker_destroy(w);
    }
    ws->len = kept;
}

int dispatchworkers_sync(struct dispatchworkers *ws, struct error *err)
{
    char *path = util_strdupf("/api/v1/namespaces/%s/secrets", ws->cfg->namespace_);
    struct kube_list_options lo = {.label_selector = NAMES_LABEL_WORKER_CLUSTER};
    struct kube_list_result res;
    struct kube_response resp;
    kube_list_result_init(&res);
    kube_client_response_init(&resp);
    int rc = kube_list(ws->manager, path, &lo, &res, &resp);
    if (rc != 0) {
        error_setf(err, "worker Secrets: %s", resp.message);
    } else {
        for (size_t i = 0; i < ws->len; i++)
            ws->items[i]->seen = 0;
        size_t i;
        json_t *secret;
        json_array_foreach(res.items, i, secret)
        {
            dispatchworkers_apply_secret(ws, secret);
        }
        drop_unseen(ws);
    }
    kube_client_response_finish(&resp);
    kube_list_result_finish(&res);
    free(path);
    return rc;
}

/* Writes w's state on its Secret (annotation, then an Event); returns 0 when the annotation was written. */
static int report_one(struct dispatchworkers *ws, struct dispatch_worker *w, const char *now)
{
    char *path = util_strdupf("/api/v1/namespaces/%s/secrets/%s", ws->cfg->namespace_, w->secret_name);
    json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", DISPATCHWORKERS_ANNOTATION_STATUS, w->status);
    struct kube_response resp;
    kube_client_response_init(&resp);
    int rc = kube_patch(ws->manager, path, KUBE_PATCH_MERGE, patch, &resp);
    if (rc != 0)
        log_warnf("worker %s: cannot write its state on Secret %s: %s", w->name, w->secret_name, resp.message);
    kube_client_response_finish(&resp);
    json_decref(patch);
    free(path);
    if (rc != 0)
        return -1;
    struct events_object obj = {"v1", "Secret", ws->cfg->namespace_, w->secret_name, w->secret_uid};
    char msg[DISPATCHWORKERS_STATUS_MAX + 64];
    if (w->up && strcmp(w->status, "up") == 0)
        util_format(msg, sizeof(msg), "worker %s is reachable", w->name);
    else if (w->up)
        util_format(msg, sizeof(msg), "worker %s is reachable, with a problem: %s", w->name, w->status);
    else
        util_format(msg, sizeof(msg), "worker %s is down: %s", w->name, w->status);
    int fine = w->up && strcmp(w->status, "up") == 0;
    dispatchnotify_event(ws->manager, &obj, fine ? "Normal" : "Warning",
                         w->up ? DISPATCHWORKERS_REASON_UP : DISPATCHWORKERS_REASON_DOWN, msg, now);
    return 0;
}

void dispatchworkers_report(struct dispatchworkers *ws, const char *now)
{
    for (size_t i = 0; i < ws->len; i++) {
        struct dispatch_worker *w = ws->items[i];
        if (strcmp(w->status, "not reached yet") == 0)
            continue;
        if (w->reported != NULL && strcmp(w->reported, w->status) == 0)
            continue;
        if (report_one(ws, w, now) == 0) {
            free(w->reported);
            w->reported = util_strdup(w->status);
        }
    }
}
