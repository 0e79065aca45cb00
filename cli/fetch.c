/*
 * fetch: the snapshot `kubectl raygate` shows, read from the API server (see fetch.h).
 */
#include "fetch.h"
#include "names.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "nativegang.h"
#include "util.h"

#define VOLCANO "/apis/scheduling.volcano.sh/v1beta1"

enum missing {
    MISSING_FAILS, /* any failure is an error */
    MISSING_EMPTY, /* 404 (no such CRD): empty; 403: a warning, empty */
    MISSING_NULL,  /* 404/403: null, with a warning */
};

static void warn(json_t *snapshot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(json_t *snapshot, const char *fmt, ...)
{
    struct util_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    util_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    json_array_append_new(json_object_get(snapshot, "warnings"), json_string(b.data));
    util_buf_finish(&b);
}

/* "/apis/<gv>/namespaces/<ns>/<res>" or "/apis/<gv>/<res>" (new). */
static char *collection(const char *prefix, const char *ns, const char *resource)
{
    return ns != NULL ? util_strdupf("%s/namespaces/%s/%s", prefix, ns, resource) : util_strdupf("%s/%s", prefix, resource);
}

/*
 * Lists path into a new array appended to snapshot[key] (created as an array
 * first). Returns 0; 1 when it was left out as missing allows (with a
 * warning where it matters); -1 with err.
 */
static int list_into(struct kube_client *c, json_t *snapshot, const char *key, const char *path, const char *selector,
                     enum missing missing, struct error *err)
{
    /* Terminated pods hold no room: the field selector kubectl describe node uses. */
    struct kube_list_options lo = {.label_selector = selector,
                                   .field_selector =
                                       strcmp(key, "nodePods") == 0 ? "status.phase!=Succeeded,status.phase!=Failed" : NULL};
    struct kube_list_result lr;
    struct kube_response resp;
    int rc = 0;
    kube_list_result_init(&lr);
    kube_client_response_init(&resp);
    if (json_object_get(snapshot, key) == NULL)
        json_object_set_new(snapshot, key, json_array());
    if (kube_list(c, path, &lo, &lr, &resp) == 0) {
        json_array_extend(json_object_get(snapshot, key), lr.items);
    } else if (missing != MISSING_FAILS && (resp.status == 404 || resp.status == 403)) {
        rc = 1;
        if (resp.status == 403)
            warn(snapshot, "cannot list %s (forbidden)", path);
        if (missing == MISSING_NULL)
            json_object_set_new(snapshot, key, json_null());
    } else {
        error_setf(err, "%s", resp.message);
        rc = -1;
    }
    kube_list_result_finish(&lr);
    kube_client_response_finish(&resp);
    return rc;
}

static int fetch_gangs(struct kube_client *c, json_t *snap, const char *ns, struct error *err)
{
    static const struct {
        const char *prefix, *resource;
    } owners[] = {{"/apis/ray.io/v1", "rayclusters"}, {"/apis/ray.io/v1", "rayjobs"}, {"/apis/cluster.ray.io/v1", "rayclusters"}};
    /* Every namespace's PodGroups when allowed: a position counts the whole queue. */
    int rc = list_into(c, snap, "podGroups", VOLCANO "/podgroups", NULL, ns != NULL ? MISSING_EMPTY : MISSING_FAILS, err);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        warn(snap, "cannot list PodGroups in every namespace: positions count the gangs of namespace %s only", ns);
        char *path = collection(VOLCANO, ns, "podgroups");
        rc = list_into(c, snap, "podGroups", path, NULL, MISSING_FAILS, err);
        free(path);
        if (rc < 0)
            return -1;
    }
    for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++) {
        char *path = collection(owners[i].prefix, ns, owners[i].resource);
        rc = list_into(c, snap, "owners", path, NULL, MISSING_EMPTY, err);
        free(path);
        if (rc < 0)
            return -1;
    }
    char *path = collection("/api/v1", ns, "pods");
    rc = list_into(c, snap, "pods", path, NAMES_LABEL_QUEUE, MISSING_NULL, err);
    free(path);
    if (rc < 0)
        return -1;
    if (rc == 1)
        warn(snap, "PODS counts the running pods the PodGroups report, not the bound ones");
    rc = list_into(c, snap, "priorityClasses", "/apis/scheduling.k8s.io/v1/priorityclasses", NULL, MISSING_NULL, err);
    return rc < 0 ? -1 : 0;
}

int fetch_native(struct kube_client *c, json_t *snapshot, const char *ns, struct error *err)
{
    char *path = collection(NATIVEGANG_API, ns, "podgroups");
    int rc = list_into(c, snapshot, "nativePodGroups", path, NULL, MISSING_EMPTY, err);
    free(path);
    return rc < 0 ? -1 : 0;
}

int fetch_room(struct kube_client *c, json_t *snapshot, struct error *err)
{
    if (list_into(c, snapshot, "nodes", "/api/v1/nodes", NULL, MISSING_FAILS, err) != 0 ||
        list_into(c, snapshot, "nodePods", "/api/v1/pods", NULL, MISSING_FAILS, err) != 0)
        return -1;
    return list_into(c, snapshot, "hyperNodes", "/apis/topology.volcano.sh/v1alpha1/hypernodes", NULL, MISSING_EMPTY, err) < 0 ? -1
                                                                                                                               : 0;
}

/* What `domains` counts (fetch_room), and the RayClusters that ask and were placed. */
static int fetch_nodes(struct kube_client *c, json_t *snap, struct error *err)
{
    if (fetch_room(c, snap, err) != 0)
        return -1;
    return list_into(c, snap, "owners", "/apis/ray.io/v1/rayclusters", NULL, MISSING_EMPTY, err) < 0 ? -1 : 0;
}

json_t *fetch_snapshot(struct kube_client *c, const struct fetch_scope *scope, struct error *err)
{
    json_t *snap = json_pack("{s:[],s:[],s:[],s:[],s:[]}", "warnings", "queues", "podGroups", "owners", "events");
    if ((scope->what & FETCH_QUEUES) && list_into(c, snap, "queues", VOLCANO "/queues", NULL, MISSING_FAILS, err) != 0)
        goto fail;
    if ((scope->what & FETCH_NODES) && fetch_nodes(c, snap, err) != 0)
        goto fail;
    if ((scope->what & FETCH_GANGS) && fetch_gangs(c, snap, scope->namespace_, err) != 0)
        goto fail;
    return snap;
fail:
    json_decref(snap);
    return NULL;
}

int fetch_events(struct kube_client *c, json_t *snapshot, const char *ns, const char *name)
{
    struct kube_list_options lo = {0};
    struct kube_list_result lr;
    struct kube_response resp;
    char *path = collection("/api/v1", ns, "events"), *field = util_strdupf("involvedObject.name=%s", name);
    int rc = 0;
    lo.field_selector = field;
    kube_list_result_init(&lr);
    kube_client_response_init(&resp);
    if (json_object_get(snapshot, "events") == NULL)
        json_object_set_new(snapshot, "events", json_array());
    if (kube_list(c, path, &lo, &lr, &resp) == 0) {
        json_array_extend(json_object_get(snapshot, "events"), lr.items);
    } else {
        warn(snapshot, "cannot list the events of %s: %s", name, resp.message);
        rc = -1;
    }
    kube_list_result_finish(&lr);
    kube_client_response_finish(&resp);
    free(path);
    free(field);
    return rc;
}
