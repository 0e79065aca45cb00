#include "status.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eventpost.h"
#include "events.h"
#include "jsonpatch.h"
#include "log.h"
#include "names.h"
#include "podgroup.h"
#include "preempthold.h"
#include "qtree.h"
#include "queuemetrics.h"
#include "util.h"

struct status {
    struct statuswriter *writer;
    struct queuemetrics *qmetrics;
    statuswriter_may_write_fn may_write;
    status_changed_fn changed;
    void *arg; /* of may_write and changed */

    pthread_mutex_t mu;          /* guards everything below (lock order: status.h) */
    int full;                    /* the next sync looks at every gang and queue */
    json_t *pgs;                 /* "ns/name" -> trimmed PodGroup (podgroup_trim), from the watch and our writes */
    json_t *pg_expected;         /* "ns/name" -> {"seq": n, "obj": trimmed PodGroup as our queued write leaves it} */
    json_t *pg_dirty;            /* "ns/name" -> {"ns", "name"}: the PodGroup changed; look at its gang at the next sync */
    json_t *pg_compared;         /* "ns/name" -> the gang's podgroup_gang_fingerprint when its PodGroup was last compared */
    json_t *queue_status;        /* queue name -> {"rv": resourceVersion, "status": {...}} */
    json_t *queue_expected;      /* queue name -> {"seq": n, "status": {...}} */
    const struct native *native; /* Kubernetes' own PodGroups (native.h), read under the controller's lock; NULL: none */
};

static const char *obj_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

/*
 * Whether resourceVersion a is older than b. They are etcd revisions in
 * practice; what does not parse as one is never older (the newer copy wins).
 */
static int rv_older(const char *a, const char *b)
{
    if (a == NULL || b == NULL || a[0] == '\0' || b[0] == '\0')
        return 0;
    char *ea, *eb;
    unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
    return *ea == '\0' && *eb == '\0' && x < y;
}

/* A PodGroup (borrowed); under the status lock. */
static void record_podgroup(struct status *s, enum kube_watch_event ev, const json_t *obj)
{
    const char *ns = obj_str(obj, "namespace"), *name = obj_str(obj, "name");
    char *cluster = names_podgroup_cluster(name);
    if (cluster == NULL || ns == NULL) {
        free(cluster);
        return;
    }
    free(cluster);
    char *key = util_strdupf("%s/%s", ns, name);
    json_t *old = json_object_get(s->pgs, key);
    if (ev == KUBE_WATCH_DELETED) {
        /* Not the deletion of an older object of that name that our copy has replaced. */
        const char *uid = obj_str(obj, "uid"), *old_uid = obj_str(old, "uid");
        if (old != NULL && (uid == NULL || old_uid == NULL || strcmp(uid, old_uid) == 0)) {
            json_object_del(s->pgs, key);
            json_object_del(s->pg_expected, key); /* what we expected of it is moot: compare with nothing */
        }
    } else if (old == NULL || !rv_older(obj_str(obj, "resourceVersion"), obj_str(old, "resourceVersion"))) {
        json_object_set_new(s->pgs, key, podgroup_trim(obj));
    }
    json_object_set_new(s->pg_dirty, key, json_pack("{s:s,s:s}", "ns", ns, "name", name));
    free(key);
}

/* A Queue's status (obj borrowed); under the status lock. */
static void record_queue(struct status *s, enum kube_watch_event ev, const json_t *obj)
{
    const char *name = obj_str(obj, "name");
    if (name == NULL)
        return;
    if (ev == KUBE_WATCH_DELETED) {
        json_object_del(s->queue_status, name);
        json_object_del(s->queue_expected, name);
        return;
    }
    const char *rv = obj_str(obj, "resourceVersion");
    json_t *old = json_object_get(s->queue_status, name);
    if (old != NULL && rv_older(rv, json_string_value(json_object_get(old, "rv"))))
        return;
    json_t *st = json_object_get(obj, "status");
    json_object_set_new(s->queue_status, name,
                        json_pack("{s:s?,s:o}", "rv", rv, "status", st != NULL ? json_deep_copy(st) : json_null()));
}

void status_record_podgroup(struct status *s, enum kube_watch_event ev, const json_t *obj)
{
    pthread_mutex_lock(&s->mu);
    record_podgroup(s, ev, obj);
    pthread_mutex_unlock(&s->mu);
}

void status_record_queue(struct status *s, enum kube_watch_event ev, const json_t *obj)
{
    pthread_mutex_lock(&s->mu);
    record_queue(s, ev, obj);
    pthread_mutex_unlock(&s->mu);
}

void status_touch_podgroup(struct status *s, const char *ns, const char *name)
{
    char *key = util_strdupf("%s/%s", ns, name);
    pthread_mutex_lock(&s->mu);
    json_object_set_new(s->pg_dirty, key, json_pack("{s:s,s:s}", "ns", ns, "name", name));
    pthread_mutex_unlock(&s->mu);
    free(key);
}

void status_set_native(struct status *s, const struct native *n)
{
    s->native = n;
}

void status_podgroups_synced(struct status *s)
{
    pthread_mutex_lock(&s->mu);
    s->full = 1;
    pthread_mutex_unlock(&s->mu);
}

/*
 * What our write of key (in map, seq) is expected to leave: forgotten once the
 * write is done (the API's answer or the watch say what is there), or, after a
 * failure, kept and marked failed, so that the same write is not tried again
 * at every pass but at the next resync (drop_failed).
 */
static void expected_done(json_t *map, const char *key, uint64_t seq, int failed)
{
    json_t *exp = json_object_get(map, key);
    if (exp == NULL || (uint64_t)json_integer_value(json_object_get(exp, "seq")) != seq)
        return; /* a later write of key is queued */
    if (failed)
        json_object_set_new(exp, "failed", json_true());
    else
        json_object_del(map, key);
}

static void drop_failed(json_t *map)
{
    const char *key;
    json_t *exp, *tmp;
    json_object_foreach_safe(map, tmp, key, exp)
    {
        if (json_is_true(json_object_get(exp, "failed")))
            json_object_del(map, key);
    }
}

/* A Queue status write's outcome; under the status lock. */
static void queue_written(struct status *s, const struct statuswriter_result *r)
{
    const char *name = r->key->name;
    int ok = r->rc == 0 && json_is_object(r->body);
    expected_done(s->queue_expected, name, r->seq, !ok);
    if (ok) {
        record_queue(s, KUBE_WATCH_MODIFIED, r->body);
        log_debugf("wrote Queue %s status", name);
    } else {
        log_warnf("Queue %s status not written: %s", name, r->message);
    }
}

/* A PodGroup write's outcome; under the status lock. Returns 1 when the PodGroup was gone: a pass should look again. */
static int podgroup_written(struct status *s, const struct statuswriter_result *r)
{
    char *key = util_strdupf("%s/%s", r->key->namespace_, r->key->name);
    int post = strcmp(r->method, "POST") == 0;
    int ok = r->rc == 0 && json_is_object(r->body);
    int gone = r->status == 404 && !post;
    int exists = r->status == 409 && post;
    int terminating = r->status == 403 && eventpost_namespace_terminating(r->body);
    expected_done(s->pg_expected, key, r->seq, !ok && !gone && !exists && !terminating);
    if (ok) {
        record_podgroup(s, KUBE_WATCH_MODIFIED, r->body);
        log_debugf("wrote PodGroup %s (%s)", key, post ? "created" : "patched");
    } else if (gone) {
        json_object_del(s->pgs, key);
        json_object_set_new(s->pg_dirty, key, json_pack("{s:s,s:s}", "ns", r->key->namespace_, "name", r->key->name));
    } else if (exists) {
        log_debugf("PodGroup %s exists already: the watch will show it", key);
    } else if (terminating) {
        log_debugf("PodGroup %s not written: its namespace is being deleted", key);
    } else {
        log_warnf("PodGroup %s not written: %s", key, r->message);
    }
    free(key);
    return gone;
}

/*
 * The outcome of a status write (the writer's thread, no lock held). Success:
 * the answer is what the API shows now. A PodGroup gone under a patch is
 * created again; one that already exists on create arrives by the watch; none
 * is created in a namespace being deleted. Other failures are logged and
 * tried again at the next resync.
 */
static void on_written(void *arg, const struct statuswriter_result *r)
{
    struct status *s = arg;
    int again = 0;
    pthread_mutex_lock(&s->mu);
    if (r->key->kind == STATUSWRITER_QUEUE)
        queue_written(s, r);
    else
        again = podgroup_written(s, r);
    pthread_mutex_unlock(&s->mu);
    if (again && s->changed != NULL)
        s->changed(s->arg); /* after the status lock: the controller takes its own */
}

/* The writer's may_write (its arg is the status): the caller's, with the caller's arg. */
static int writer_may_write(void *arg)
{
    struct status *s = arg;
    return s->may_write == NULL || s->may_write(s->arg);
}

struct status *status_create(struct kube_client *client, struct metrics_registry *reg, statuswriter_may_write_fn may_write,
                             status_changed_fn changed, void *arg)
{
    struct status *s = util_calloc(1, sizeof(*s));
    s->may_write = may_write;
    s->changed = changed;
    s->arg = arg;
    pthread_mutex_init(&s->mu, NULL);
    s->pgs = json_object();
    s->pg_expected = json_object();
    s->pg_dirty = json_object();
    s->pg_compared = json_object();
    s->queue_status = json_object();
    s->queue_expected = json_object();
    s->qmetrics = queuemetrics_create(reg);
    s->writer = statuswriter_create(client, writer_may_write, on_written, s);
    if (s->writer == NULL) {
        status_destroy(s);
        return NULL;
    }
    return s;
}

void status_destroy(struct status *s)
{
    if (s == NULL)
        return;
    statuswriter_destroy(s->writer); /* first: its thread may be in on_written */
    queuemetrics_destroy(s->qmetrics);
    json_decref(s->pgs);
    json_decref(s->pg_expected);
    json_decref(s->pg_dirty);
    json_decref(s->pg_compared);
    json_decref(s->queue_status);
    json_decref(s->queue_expected);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ------------------------------------------------------------------ sync */

struct sync_ctx {
    struct status *s;
    struct cache *cache;
    const struct admit *admit;
    unsigned crds;
    char now[32];
    struct qtree tree;                   /* the queue tree now, alloc and demand added, deserved derived */
    unsigned char *synced;               /* by tree index: the queue's status was compared at this sync */
    size_t npodgroups, nqueues, nwrites; /* compared, and writes queued (for the debug log) */
    int compare_all;                     /* a resync: every PodGroup compared, changed or not */
};

/* Queues a PodGroup patch (body stolen) of observed; status in its subresource when the CRD has one. Returns the last seq. */
static uint64_t patch_podgroup(struct sync_ctx *x, const struct cache_gang *g, const char *name, json_t *body)
{
    struct statuswriter_key key = {STATUSWRITER_PODGROUP, g->namespace_, name};
    char *path = util_strdupf(STATUS_VOLCANO_API "/namespaces/%s/podgroups/%s", g->namespace_, name);
    const char *merge = kube_patch_content_type(KUBE_PATCH_MERGE);
    uint64_t seq = 0;
    if ((x->crds & PODGROUP_CRD_PODGROUPS_STATUS) && json_object_get(body, "status") != NULL) {
        /* A PodGroup CRD with a status subresource takes status only there. */
        struct statuswriter_key skey = {STATUSWRITER_PODGROUP_STATUS, g->namespace_, name};
        char *spath = util_strdupf("%s/status", path);
        seq = statuswriter_submit_new(x->s->writer, &skey, "PATCH", spath, merge,
                                      json_pack("{s:O}", "status", json_object_get(body, "status")));
        json_object_del(body, "status");
        free(spath);
    }
    if (json_object_size(body) > 0)
        seq = statuswriter_submit_new(x->s->writer, &key, "PATCH", path, merge, body);
    else
        json_decref(body);
    free(path);
    return seq;
}

/*
 * Brings gang g's PodGroup up to date (under both locks): a write is queued only when something differs. Skipped
 * (unless force) while g is unchanged since its last comparison (model_gang_shown), nothing the pass holds for it
 * (a preemption's victims) and no native PodGroup (kube-scheduler's word, not the gang's) shown: the same answer.
 */
static void sync_podgroup(struct sync_ctx *x, struct cache_gang *g, int force)
{
    struct status *s = x->s;
    const struct preempthold_item *held = admit_held(x->admit, g);
    int memo = held == NULL && !native_enabled(s->native);
    if (memo && !force && !x->compare_all && model_gang_shown(g))
        return;
    model_gang_set_shown(g, memo);
    char *name = names_podgroup(cache_gang_group(g));
    char *key = util_strdupf("%s/%s", g->namespace_, name);
    json_t *exp = json_object_get(json_object_get(s->pg_expected, key), "obj");
    const json_t *observed = exp != NULL ? exp : json_object_get(s->pgs, key);
    struct podgroup_gang pg;
    podgroup_gang_from_cache(g, &pg);
    pg.preempting = held != NULL && held->victims_remain ? held->victims : NULL;
    char *native = native_describe(s->native, g, name);
    pg.native = native;
    /* Nothing it shows moved since the last comparison, nor the PodGroup (that would have made it dirty): same answer. */
    json_int_t fp = (json_int_t)podgroup_gang_fingerprint(&pg, g->resource_version);
    json_t *last = json_object_get(s->pg_compared, key);
    if (last != NULL && json_integer_value(last) == fp) {
        free(key);
        free(name);
        free(native);
        return;
    }
    json_object_set_new(s->pg_compared, key, json_integer(fp));
    json_t *body = NULL, *expect = NULL;
    enum podgroup_write w = podgroup_sync(&pg, observed, x->now, &body);
    x->npodgroups++;
    uint64_t seq = 0;
    if (w == PODGROUP_WRITE_CREATE) {
        expect = podgroup_trim(body);
        struct statuswriter_key wkey = {STATUSWRITER_PODGROUP, g->namespace_, name};
        char *path = util_strdupf(STATUS_VOLCANO_API "/namespaces/%s/podgroups", g->namespace_);
        seq = statuswriter_submit_new(s->writer, &wkey, "POST", path, NULL, body);
        free(path);
    } else if (w == PODGROUP_WRITE_PATCH) {
        expect = jsonpatch_merge_apply(observed, body);
        seq = patch_podgroup(x, g, name, body);
    } else if (w == PODGROUP_WRITE_FOREIGN) {
        log_debugf("PodGroup %s belongs to an earlier RayCluster %s: left to the garbage collector", key, g->name);
    }
    if (expect != NULL) {
        x->nwrites++;
        json_object_set_new(s->pg_expected, key, json_pack("{s:I,s:o}", "seq", (json_int_t)seq, "obj", expect));
    }
    free(key);
    free(name);
    free(native);
}

/* Queue q's status, written when it differs from what the API shows or our writes will leave. */
static void sync_queue_status(struct sync_ctx *x, const struct cache_queue *q, const struct podgroup_queue_status *st)
{
    struct status *s = x->s;
    json_t *exp = json_object_get(s->queue_expected, q->name);
    const json_t *observed =
        exp != NULL ? json_object_get(exp, "status") : json_object_get(json_object_get(s->queue_status, q->name), "status");
    json_t *patch = podgroup_queue_patch(observed, st);
    if (patch == NULL)
        return;
    json_t *expect = jsonpatch_merge_apply(observed, json_object_get(patch, "status"));
    struct statuswriter_key key = {STATUSWRITER_QUEUE, NULL, q->name};
    char *path = util_strdupf(STATUS_VOLCANO_API "/queues/%s%s", q->name, (x->crds & PODGROUP_CRD_QUEUES_STATUS) ? "/status" : "");
    uint64_t seq = statuswriter_submit_new(s->writer, &key, "PATCH", path, kube_patch_content_type(KUBE_PATCH_MERGE), patch);
    json_object_set_new(s->queue_expected, q->name, json_pack("{s:I,s:o}", "seq", (json_int_t)seq, "status", expect));
    x->nwrites++;
    free(path);
}

/*
 * One queue: with whole set (a queue the pass evaluated, or every queue),
 * its gangs' PodGroups, its counts and allocation; always, its place in the
 * tree (deserved, share, a parent's allocation), which any queue's change
 * may move. Then its status and gauges.
 */
static void sync_queue(struct sync_ctx *x, struct cache_queue *q, int whole)
{
    for (struct cache_gang *g = q->gangs; whole && (x->crds & PODGROUP_CRD_PODGROUPS) && g != NULL; g = g->queue_next) {
        if (podgroup_wanted(g))
            sync_podgroup(x, g, 0);
    }
    struct podgroup_queue_status st;
    struct error err;
    podgroup_queue_status_init(&st);
    if (whole && podgroup_queue_status(x->cache, q, &st, &err) != 0) {
        log_warnf("queue %s: status not computed: %s", q->name, err.message);
        podgroup_queue_status_finish(&st);
        return;
    }
    size_t i = qtree_index(&x->tree, q);
    if (i != QUEUETREE_ROOT) {
        podgroup_queue_tree(&x->tree, i, x->cache, &st);
        x->synced[i] = 1;
    }
    queuemetrics_queue(x->s->qmetrics, x->cache, q, &st);
    x->nqueues += whole;
    if ((x->crds & PODGROUP_CRD_QUEUES) && q->present)
        sync_queue_status(x, q, &st);
    podgroup_queue_status_finish(&st);
}

/* The gangs of the PodGroups that changed since the last sync. */
static void sync_dirty(struct sync_ctx *x)
{
    const char *key;
    json_t *v;
    json_object_foreach(x->s->pg_dirty, key, v)
    {
        const char *ns = json_string_value(json_object_get(v, "ns"));
        char *cluster = names_podgroup_cluster(json_string_value(json_object_get(v, "name")));
        struct cache_gang *g = cluster != NULL ? cache_gang_get(x->cache, ns, cluster) : NULL;
        json_object_del(x->s->pg_compared, key); /* the PodGroup changed: compare again */
        if ((x->crds & PODGROUP_CRD_PODGROUPS) && g != NULL && podgroup_wanted(g))
            sync_podgroup(x, g, 1);
        free(cluster);
    }
    json_object_clear(x->s->pg_dirty);
}

void status_sync(struct status *s, struct cache *cache, const struct admit *admit, const struct admit_result *res, unsigned crds,
                 int resync)
{
    struct sync_ctx x = {.s = s, .cache = cache, .admit = admit, .crds = crds, .compare_all = resync || s->full};
    events_timestamp(time(NULL), x.now, sizeof(x.now));
    pthread_mutex_lock(&s->mu);
    if (resync || s->full) { /* writes that failed are tried again; every PodGroup is compared (and gone gangs forgotten) */
        drop_failed(s->pg_expected);
        drop_failed(s->queue_expected);
        json_object_clear(s->pg_compared);
    }
    qtree_init(&x.tree);
    qtree_fill(&x.tree, cache);
    x.synced = util_calloc(x.tree.n + 1, 1);
    struct cache_queue *q;
    if (s->full) {
        cache_queue_for_each(q, cache)
            sync_queue(&x, q, 1);
    } else {
        for (size_t i = 0; i < res->queues_evaluated; i++) {
            if ((q = cache_queue_get(cache, res->queues[i])) != NULL)
                sync_queue(&x, q, 1);
        }
        for (size_t i = 0; i < x.tree.n; i++) { /* the others' place in the tree */
            if (!x.synced[i])
                sync_queue(&x, x.tree.queues[i].q, 0);
        }
    }
    sync_dirty(&x);
    queuemetrics_sweep(s->qmetrics, cache);
    if (crds & PODGROUP_CRD_PODGROUPS)
        s->full = 0;
    pthread_mutex_unlock(&s->mu);
    free(x.synced);
    qtree_finish(&x.tree);
    if (x.npodgroups > 0 || x.nqueues > 0)
        log_debugf("status: %zu PodGroups and %zu queues compared, %zu writes queued", x.npodgroups, x.nqueues, x.nwrites);
}
