#include "view.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dracache.h"
#include "log.h"
#include "names.h"
#include "rayjob.h"
#include "util.h"

/*
 * The collections a view lists, in the order dispatchview_refresh lists them: the DRA objects first (where
 * resource.k8s.io/v1 is served; a 404 lists none), so that pods and RayClusters are priced as they come.
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

#define VIEW_DRA(kind) ((kind) < VIEW_NODES)

static const char *const view_paths[VIEW_N] = {
    "/apis/resource.k8s.io/v1/deviceclasses",
    "/apis/resource.k8s.io/v1/resourceslices",
    "/apis/resource.k8s.io/v1/resourceclaims",
    "/apis/resource.k8s.io/v1/resourceclaimtemplates",
    "/api/v1/nodes",
    "/api/v1/pods",
    "/apis/scheduling.volcano.sh/v1beta1/queues",
    "/apis/ray.io/v1/rayclusters",
    "/apis/ray.io/v1/rayjobs",
};

/* The kinds the view keeps (keys of v->keys), for VIEW_CLASSES..VIEW_RAYCLUSTERS. */
static const char *const view_kinds[VIEW_RAYJOBS] = {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
                                                     "Node",        "Pod",           "Queue",         "RayCluster"};

/* The draset kind of a DRA collection. */
static const enum draset_kind view_dra[VIEW_NODES] = {DRASET_CLASS, DRASET_SLICE, DRASET_CLAIM, DRASET_TEMPLATE};

void dispatchview_init(struct dispatchview *v)
{
    memset(v, 0, sizeof(*v));
    v->cache = cache_create();
    v->dra = draset_create();
    dracache_use(v->cache, v->dra);
    v->admit = admit_create(v->cache);
    v->keys = json_object();
    v->copies = json_object();
}

void dispatchview_finish(struct dispatchview *v)
{
    admit_destroy(v->admit);
    cache_destroy(v->cache);
    draset_destroy(v->dra);
    json_decref(v->keys);
    json_decref(v->copies);
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

/* Removes the object of kind under key ("ns/name" or "name") from the cache. */
static void delete_key(struct cache *c, int kind, const char *key)
{
    const char *slash = strchr(key, '/');
    char *ns = slash != NULL ? util_memdup(key, (size_t)(slash - key)) : NULL;
    const char *name = slash != NULL ? slash + 1 : key;
    if (VIEW_DRA(kind)) {
        json_t *obj = json_pack("{s:{s:s,s:s?}}", "metadata", "name", name, "namespace", ns);
        struct error err;
        dracache_record(c, view_dra[kind], 1, obj, &err);
        json_decref(obj);
        free(ns);
        return;
    }
    switch (kind) {
    case VIEW_NODES:
        cache_delete_node(c, name);
        break;
    case VIEW_PODS:
        cache_delete_pod(c, ns, name);
        break;
    case VIEW_QUEUES:
        cache_delete_queue(c, name);
        break;
    default:
        cache_delete_raycluster(c, ns, name);
        break;
    }
    free(ns);
}

/* Upserts the items of one kind, and records their keys in seen. */
static void apply_items(struct dispatchview *v, int kind, const json_t *items, json_t *seen)
{
    size_t i;
    json_t *obj;
    json_array_foreach(items, i, obj)
    {
        struct error err = {{0}};
        char *key = object_key(obj);
        if (key == NULL || upsert(v->cache, kind, obj, &err) != 0)
            log_debugf("view: %s ignored: %s", view_kinds[kind], key != NULL ? err.message : "no name");
        else
            json_object_set_new(seen, key, json_true());
        free(key);
    }
}

/* Deletes what the last list of kind had and this one (seen, stolen) lacks; seen becomes the kind's keys. */
static void drop_unseen(struct dispatchview *v, int kind, json_t *seen)
{
    const char *key;
    json_t *val;
    json_object_foreach(json_object_get(v->keys, view_kinds[kind]), key, val)
    {
        if (json_object_get(seen, key) == NULL)
            delete_key(v->cache, kind, key);
    }
    json_object_set_new(v->keys, view_kinds[kind], seen);
}

/* Adds the items of kind labelled dispatched-from=cluster_name to copies, as "Kind/ns/name". */
static void add_copies(json_t *copies, const char *kind, const json_t *items, const char *cluster_name)
{
    size_t i;
    json_t *obj;
    json_array_foreach(items, i, obj)
    {
        const char *from = label_of(obj, NAMES_LABEL_DISPATCHED_FROM);
        char *key = object_key(obj);
        if (from != NULL && strcmp(from, cluster_name) == 0 && key != NULL) {
            char *ck = util_strdupf("%s/%s", kind, key);
            json_t *copy = json_copy(obj);
            json_object_set_new(copy, "kind", json_string(kind)); /* list items carry no kind */
            json_object_set_new(copy, "apiVersion", json_string("ray.io/v1"));
            json_object_set_new(copies, ck, copy);
            free(ck);
        }
        free(key);
    }
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

/* One collection of a refresh being listed: where its pages go. */
struct view_listing {
    struct dispatchview *v;
    int kind;                 /* VIEW_NODES..VIEW_RAYJOBS */
    json_t *seen;             /* the keys of the kind listed so far (a cache kind) */
    json_t *copies;           /* this manager's copies listed so far */
    const char *cluster_name; /* borrowed */
};

/* kube_list_pages' handler: one page into the view (the cache) and the copies, before the next page is read. */
static void view_page(const json_t *items, void *arg)
{
    struct view_listing *l = arg;
    if (l->kind < VIEW_RAYJOBS)
        apply_items(l->v, l->kind, items, l->seen);
    if (l->kind == VIEW_RAYCLUSTERS || l->kind == VIEW_RAYJOBS)
        add_copies(l->copies, l->kind == VIEW_RAYJOBS ? "RayJob" : "RayCluster", items, l->cluster_name);
}

/* Gives the heap the lists' pages left free back to the system (glibc keeps it otherwise). */
static void view_trim(void)
{
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

int dispatchview_refresh(struct dispatchview *v, struct kube_client *k, const char *cluster_name, struct error *err)
{
    /* A copy's dispatch lease is seen now (dispatchlease.h): else every lease would look first seen at time 0, and the
       simulation would take the worker's dispatched gangs for expired. */
    cache_set_clock(v->cache, clock_wall_ms());
    struct kube_list_options opts = {.limit = DISPATCHVIEW_PAGE};
    struct view_listing l = {.v = v, .copies = json_object(), .cluster_name = cluster_name};
    int rc = 0;
    for (l.kind = 0; l.kind < VIEW_N && rc == 0; l.kind++) {
        struct kube_response resp;
        kube_client_response_init(&resp);
        l.seen = json_object();
        rc = kube_list_pages(k, view_paths[l.kind], &opts, view_page, &l, NULL, &resp);
        if (rc != 0 && VIEW_DRA(l.kind) && (resp.status == 404 || resp.status == 403))
            rc = 0; /* resource.k8s.io/v1 not served there (before 1.34), or not granted (an older worker-rbac.yaml) */
        else if (rc != 0)
            error_setf(err, "%s", resp.message);
        if (rc == 0 && l.kind < VIEW_RAYJOBS)
            drop_unseen(v, l.kind, l.seen);
        else
            json_decref(l.seen);
        kube_client_response_finish(&resp);
    }
    if (rc == 0) {
        json_decref(v->copies);
        v->copies = l.copies;
        v->refreshed = 1;
    } else {
        json_decref(l.copies);
    }
    view_trim();
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
