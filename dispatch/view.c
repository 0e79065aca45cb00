#include "view.h"

#include <errno.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "dracache.h"
#include "log.h"
#include "names.h"
#include "rayjob.h"
#include "util.h"

/*
 * The collections a view watches, in the order they are started: the DRA objects first (where resource.k8s.io/v1 is
 * served), so that pods and RayClusters are priced as they come.
 */
enum {
    VIEW_CLASSES,
    VIEW_SLICES,
    VIEW_CLAIMS,
    VIEW_TEMPLATES,
    VIEW_NODES,
    VIEW_PODS,
    VIEW_QUEUES,
    VIEW_RAYCLUSTERS,
    VIEW_RAYJOBS,
    VIEW_N
};

_Static_assert(VIEW_N == DISPATCHVIEW_COLLECTIONS, "view.h counts the collections");

#define VIEW_DRA(kind) ((kind) < VIEW_NODES)
#define VIEW_ALL ((1u << VIEW_N) - 1)

static const struct {
    const char *name; /* for logs and the watch metrics */
    const char *path;
} view_watches[VIEW_N] = {
    {"deviceclasses", "/apis/resource.k8s.io/v1/deviceclasses"},
    {"resourceslices", "/apis/resource.k8s.io/v1/resourceslices"},
    {"resourceclaims", "/apis/resource.k8s.io/v1/resourceclaims"},
    {"resourceclaimtemplates", "/apis/resource.k8s.io/v1/resourceclaimtemplates"},
    {"nodes", "/api/v1/nodes"},
    {"pods", "/api/v1/pods"},
    {"queues", "/apis/scheduling.volcano.sh/v1beta1/queues"},
    {"rayclusters", "/apis/ray.io/v1/rayclusters"},
    {"rayjobs", "/apis/ray.io/v1/rayjobs"},
};

/* The kinds the view keeps (keys of v->keys), for VIEW_CLASSES..VIEW_RAYCLUSTERS. */
static const char *const view_kinds[VIEW_RAYJOBS] = {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
                                                     "Node",        "Pod",           "Queue",         "RayCluster"};

/* The draset kind of a DRA collection. */
static const enum draset_kind view_dra[VIEW_NODES] = {DRASET_CLASS, DRASET_SLICE, DRASET_CLAIM, DRASET_TEMPLATE};

/* The argument of one collection's watch callbacks. */
struct dispatchview_watch {
    struct dispatchview *v;
    int kind;
};

void dispatchview_init(struct dispatchview *v)
{
    memset(v, 0, sizeof(*v));
    pthread_mutex_init(&v->mu, NULL);
    pthread_cond_init(&v->cond, NULL);
    v->cache = cache_create();
    v->dra = draset_create();
    dracache_use(v->cache, v->dra);
    v->admit = admit_create(v->cache);
    v->keys = json_object();
    v->live = json_object();
    v->created = json_object();
    v->created_ttl_ms = DISPATCHVIEW_CREATED_TTL_MS;
    v->copies = json_object();
}

void dispatchview_finish(struct dispatchview *v)
{
    kube_watch_destroy(v->watcher); /* its thread gone, nothing else touches the view */
    free(v->watches);
    admit_destroy(v->admit);
    cache_destroy(v->cache);
    draset_destroy(v->dra);
    json_decref(v->keys);
    json_decref(v->live);
    json_decref(v->created);
    json_decref(v->copies);
    free(v->cluster_name);
    pthread_cond_destroy(&v->cond);
    pthread_mutex_destroy(&v->mu);
    memset(v, 0, sizeof(*v));
}

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static const char *label_of(const json_t *obj, const char *label)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), label));
}

/* "ns/name" (cluster-scoped: "name"), new string; NULL when the object has no name. */
static char *object_key(const json_t *obj)
{
    const char *name = meta_str(obj, "name"), *ns = meta_str(obj, "namespace");
    if (name == NULL)
        return NULL;
    return ns != NULL ? util_strdupf("%s/%s", ns, name) : util_strdup(name);
}

/* ------------------------------------------------ the watcher's side (under mu) */

static int upsert(struct cache *c, int kind, const json_t *obj, struct error *err)
{
    if (VIEW_DRA(kind)) {
        dracache_record(c, view_dra[kind], 0, obj, err); /* an object that does not parse is kept, as invalid */
        return 0;
    }
    switch (kind) {
    case VIEW_NODES:
        return cache_upsert_node(c, obj, err);
    case VIEW_PODS:
        return cache_upsert_pod(c, obj, err);
    case VIEW_QUEUES:
        return cache_upsert_queue(c, obj, err);
    default:
        return cache_upsert_raycluster(c, obj, err);
    }
}

/* Removes the object of kind named by obj (borrowed: at least its metadata) from the cache. */
static void delete_obj(struct cache *c, int kind, const json_t *obj)
{
    const char *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name");
    if (VIEW_DRA(kind)) {
        struct error err;
        dracache_record(c, view_dra[kind], 1, obj, &err);
        return;
    }
    switch (kind) {
    case VIEW_NODES:
        cache_delete_node(c, name);
        break;
    case VIEW_PODS:
        cache_delete_pod(c, ns != NULL ? ns : "", name);
        break;
    case VIEW_QUEUES:
        cache_delete_queue(c, name);
        break;
    default:
        cache_delete_raycluster(c, ns != NULL ? ns : "", name);
        break;
    }
}

/* One object's change (obj borrowed) into the cache and the keys. */
static void apply_cache(struct dispatchview *v, int kind, enum kube_watch_event ev, const json_t *obj, const char *key)
{
    json_t *keys = json_object_get(v->keys, view_kinds[kind]);
    if (keys == NULL) {
        keys = json_object();
        json_object_set_new(v->keys, view_kinds[kind], keys);
    }
    if (ev == KUBE_WATCH_DELETED) {
        delete_obj(v->cache, kind, obj);
        json_object_del(keys, key);
        return;
    }
    struct error err = {{0}};
    if (upsert(v->cache, kind, obj, &err) != 0) {
        log_debugf("view: %s %s ignored: %s", view_kinds[kind], key, err.message);
        return;
    }
    json_object_set_new(keys, key, json_true());
}

/* One RayCluster's or RayJob's change (obj borrowed) into the copies, as "Kind/ns/name". */
static void apply_copy(struct dispatchview *v, int kind, enum kube_watch_event ev, const json_t *obj, const char *key)
{
    const char *k = kind == VIEW_RAYJOBS ? "RayJob" : "RayCluster";
    char *ck = util_strdupf("%s/%s", k, key);
    const char *from = label_of(obj, NAMES_LABEL_DISPATCHED_FROM);
    json_object_del(v->created, ck); /* named by a watch now: the live copy (or its absence) is the truth */
    if (ev == KUBE_WATCH_DELETED || from == NULL || strcmp(from, v->cluster_name) != 0) {
        json_object_del(v->live, ck);
    } else {
        /* A copy of its own: the event's object is the watcher's, freed after this call. */
        json_t *copy = json_deep_copy(obj);
        json_object_set_new(copy, "kind", json_string(k)); /* list items carry no kind */
        json_object_set_new(copy, "apiVersion", json_string("ray.io/v1"));
        json_object_set_new(v->live, ck, copy);
    }
    free(ck);
}

/* kube_watch_fn: runs on the watcher's thread. obj borrowed. */
static void on_event(void *arg, enum kube_watch_event ev, json_t *obj)
{
    struct dispatchview_watch *x = arg;
    struct dispatchview *v = x->v;
    unsigned bit = 1u << x->kind;
    pthread_mutex_lock(&v->mu);
    if (ev == KUBE_WATCH_SYNCED) {
        v->synced |= bit;
        v->relisting &= ~bit;
        v->failing &= ~bit;
        v->lists++;
        pthread_cond_broadcast(&v->cond);
    } else {
        char *key = object_key(obj);
        /* A copy's dispatch lease is seen now (dispatchlease.h), as the worker's gate sees it. */
        if (!VIEW_DRA(x->kind))
            cache_set_clock(v->cache, clock_wall_ms());
        if (key != NULL && x->kind < VIEW_RAYJOBS)
            apply_cache(v, x->kind, ev, obj, key);
        if (key != NULL && (x->kind == VIEW_RAYCLUSTERS || x->kind == VIEW_RAYJOBS))
            apply_copy(v, x->kind, ev, obj, key);
        free(key);
    }
    pthread_mutex_unlock(&v->mu);
}

/* kube_watch_trouble_fn: runs on the watcher's thread. */
static long on_trouble(void *arg, enum kube_watch_trouble t, long status, const char *message)
{
    struct dispatchview_watch *x = arg;
    struct dispatchview *v = x->v;
    unsigned bit = 1u << x->kind;
    long delay = 0;
    pthread_mutex_lock(&v->mu);
    if (t == KUBE_WATCH_RELISTING) {
        v->relisting |= bit;
    } else if (VIEW_DRA(x->kind) && (status == 404 || status == 403)) {
        /* resource.k8s.io/v1 not served there (before 1.34), or not granted (an older worker-rbac.yaml): no devices. */
        v->synced |= bit;
        v->failing &= ~bit;
        delay = DISPATCHVIEW_DRA_RETRY_MS;
    } else {
        v->failing |= bit;
        util_format(v->why[x->kind], sizeof(v->why[x->kind]), "%s", message);
    }
    pthread_cond_broadcast(&v->cond);
    pthread_mutex_unlock(&v->mu);
    return delay;
}

/* ------------------------------------------------ the loop's side */

/* Starts the watcher and every collection's watch. Returns 0, or -1 with err. */
static int start(struct dispatchview *v, struct kube_client *k, const char *worker, struct error *err)
{
    v->watcher = kube_watch_create(k, err);
    if (v->watcher == NULL)
        return -1;
    v->watches = util_calloc(VIEW_N, sizeof(*v->watches));
    for (int kind = 0; kind < VIEW_N; kind++) {
        v->watches[kind] = (struct dispatchview_watch){.v = v, .kind = kind};
        char *name = util_strdupf("%s/%s", worker, view_watches[kind].name);
        struct kube_watch_spec spec = {
            .name = name,
            .path = view_watches[kind].path,
            .fn = on_event,
            .trouble = on_trouble,
            .arg = &v->watches[kind],
            .relist_on_error = 1,
        };
        int rc = kube_watch_start(v->watcher, &spec, err);
        free(name);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Under mu: waits until pending(v) is false, or ms have passed. */
static void wait_while(struct dispatchview *v, int (*pending)(const struct dispatchview *), long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (pending(v))
        if (pthread_cond_timedwait(&v->cond, &v->mu, &until) == ETIMEDOUT)
            break;
}

/* The first lists: some collection neither listed nor failing. */
static int first_pending(const struct dispatchview *v)
{
    return (v->synced | v->failing) != VIEW_ALL && v->failing == 0;
}

/* A relist after an expiry is under way, and nothing failed. */
static int relist_pending(const struct dispatchview *v)
{
    return v->relisting != 0 && v->failing == 0;
}

/* Under mu: whether the view is whole; if not, why into err. */
static int whole(const struct dispatchview *v, struct error *err)
{
    for (int kind = 0; kind < VIEW_N; kind++)
        if (v->failing & (1u << kind)) {
            error_setf(err, "%s", v->why[kind]);
            return 0;
        }
    for (int kind = 0; kind < VIEW_N; kind++)
        if (!(v->synced & (1u << kind))) {
            error_setf(err, "not listed yet: %s", view_watches[kind].name);
            return 0;
        }
    return 1;
}

/*
 * Under mu: the copies the loop reads until the next sync: live, and created
 * ones not forgotten yet (values shared: never modified).
 */
static void snapshot(struct dispatchview *v)
{
    json_t *copies = json_copy(v->live);
    int64_t now = clock_mono_ms();
    const char *key;
    json_t *c;
    void *tmp;
    json_object_foreach_safe(v->created, tmp, key, c)
    {
        if (now - json_integer_value(json_object_get(c, "at")) >= v->created_ttl_ms)
            json_object_del(v->created, key);
        else
            json_object_set(copies, key, json_object_get(c, "object"));
    }
    json_decref(v->copies);
    v->copies = copies;
}

/* Gives the heap the lists' pages left free back to the system (glibc keeps it otherwise). */
static void view_trim(void)
{
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

int dispatchview_sync(struct dispatchview *v, struct kube_client *k, const char *worker, const char *cluster_name,
                      struct error *err)
{
    int first = v->watcher == NULL;
    if (first) {
        v->cluster_name = util_strdup(cluster_name); /* before the watcher thread reads it */
        if (start(v, k, worker, err) != 0)
            return -1;
    }
    pthread_mutex_lock(&v->mu);
    if (first)
        wait_while(v, first_pending, DISPATCHVIEW_FIRST_WAIT_MS);
    else
        wait_while(v, relist_pending, DISPATCHVIEW_RELIST_WAIT_MS);
    int ok = whole(v, err);
    if ((v->synced & VIEW_ALL) == VIEW_ALL)
        v->refreshed = 1;
    snapshot(v);
    uint64_t lists = v->lists;
    pthread_mutex_unlock(&v->mu);
    if (lists != v->trimmed) {
        v->trimmed = lists;
        view_trim();
    }
    return ok ? 0 : -1;
}

int dispatchview_sim(struct dispatchview *v, const json_t *obj, int64_t now_ms, struct dispatch_verdict *out, struct error *err)
{
    pthread_mutex_lock(&v->mu);
    int rc = dispatch_sim(v->cache, v->admit, obj, v->copies, now_ms, out, err);
    pthread_mutex_unlock(&v->mu);
    return rc;
}

int dispatchview_has_queue(struct dispatchview *v, const char *name)
{
    pthread_mutex_lock(&v->mu);
    const struct cache_queue *q = cache_queue_get(v->cache, name);
    int has = q != NULL && q->present;
    pthread_mutex_unlock(&v->mu);
    return has;
}

void dispatchview_created(struct dispatchview *v, const char *kind, const json_t *copy)
{
    char *key = object_key(copy);
    if (key == NULL)
        return;
    char *ck = util_strdupf("%s/%s", kind, key);
    json_t *c = json_deep_copy(copy);
    json_object_set_new(c, "kind", json_string(kind));
    json_object_set(v->copies, ck, c);
    pthread_mutex_lock(&v->mu);
    json_object_set_new(v->created, ck, json_pack("{s:O,s:I}", "object", c, "at", (json_int_t)clock_mono_ms()));
    pthread_mutex_unlock(&v->mu);
    json_decref(c);
    free(ck);
    free(key);
}

int dispatchview_list(struct kube_client *k, const char *const *paths, size_t n, struct kube_list_result *res, struct error *err)
{
    for (size_t i = 0; i < n; i++)
        kube_list_result_init(&res[i]);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct kube_response resp;
        kube_client_response_init(&resp);
        if (kube_list(k, paths[i], NULL, &res[i], &resp) != 0) {
            error_setf(err, "%s", resp.message);
            rc = -1;
        }
        kube_client_response_finish(&resp);
    }
    return rc;
}

const json_t *dispatchview_copy(const struct dispatchview *v, const char *kind, const char *namespace_, const char *name)
{
    char *key = util_strdupf("%s/%s/%s", kind, namespace_, name);
    const json_t *obj = json_object_get(v->copies, key);
    free(key);
    return obj;
}

const json_t *dispatchview_rayjob_cluster(const struct dispatchview *v, const char *namespace_, const char *job)
{
    const char *key;
    json_t *obj;
    json_object_foreach(v->copies, key, obj)
    {
        const char *owner = NULL, *uid = NULL, *ns = meta_str(obj, "namespace");
        if (strncmp(key, "RayCluster/", 11) == 0 && ns != NULL && strcmp(ns, namespace_) == 0 &&
            rayjob_owner_of(obj, &owner, &uid) && strcmp(owner, job) == 0)
            return obj;
    }
    return NULL;
}
