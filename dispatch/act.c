#include "act.h"

#include <stdlib.h>
#include <string.h>

#include "dispatchcopy.h"
#include "gang.h"
#include "jsonpatch.h"
#include "names.h"
#include "podgroup.h"
#include "util.h"

static const json_t *meta(const json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(meta(obj), field));
}

char *dispatchact_path(const json_t *obj)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name");
    if (kind == NULL || ns == NULL || name == NULL)
        return NULL;
    const char *plural = strcmp(kind, "RayJob") == 0 ? "rayjobs" : "rayclusters";
    return util_strdupf("/apis/ray.io/v1/namespaces/%s/%s/%s", ns, plural, name);
}

/* Sends one request; on failure err gets the answer. *updated (may be NULL) takes the body, kind and apiVersion of obj set. */
static int send(struct kube_client *k, const char *method, const char *path, enum kube_patch_type type, json_t *body,
                const json_t *obj, json_t **updated, struct error *err)
{
    struct kube_response resp;
    kube_client_response_init(&resp);
    int rc;
    if (strcmp(method, "PATCH") == 0)
        rc = kube_patch(k, path, type, body, &resp);
    else if (strcmp(method, "POST") == 0)
        rc = kube_create(k, path, body, &resp);
    else
        rc = kube_delete(k, path, body, &resp);
    if (rc != 0) {
        error_setf(err, "%s", resp.message);
    } else if (updated != NULL && json_is_object(resp.body)) {
        *updated = json_incref(resp.body);
        if (json_object_get(obj, "kind") != NULL)
            json_object_set(*updated, "kind", json_object_get(obj, "kind"));
        if (json_object_get(obj, "apiVersion") != NULL)
            json_object_set(*updated, "apiVersion", json_object_get(obj, "apiVersion"));
    }
    if (rc != 0 && resp.status == 404 && strcmp(method, "DELETE") == 0)
        rc = 0; /* gone already */
    kube_client_response_finish(&resp);
    return rc;
}

/*
 * Sends body (stolen) to obj's path. *updated (may be NULL), for a PATCH: obj
 * with the patch applied and the answer's resourceVersion (the object as the
 * API now holds it, without trusting the answer to carry all of it).
 */
static int send_obj(struct kube_client *k, const char *method, const json_t *obj, const char *suffix, json_t *body,
                    json_t **updated, struct error *err)
{
    char *base = dispatchact_path(obj);
    if (base == NULL) {
        json_decref(body);
        error_setf(err, "object without kind, namespace or name");
        return -1;
    }
    char *path = util_strdupf("%s%s", base, suffix);
    json_t *answer = NULL;
    int rc = send(k, method, path, KUBE_PATCH_MERGE, body, obj, updated != NULL ? &answer : NULL, err);
    if (rc == 0 && updated != NULL && strcmp(method, "PATCH") == 0) {
        json_t *meta_patch = json_object_get(body, "metadata");
        json_object_del(meta_patch, "resourceVersion"); /* a precondition, not a change */
        *updated = jsonpatch_merge_apply(obj, body);
        const char *rv = meta_str(answer, "resourceVersion");
        if (rv != NULL)
            json_object_set_new(json_object_get(*updated, "metadata"), "resourceVersion", json_string(rv));
    }
    json_decref(answer);
    free(path);
    free(base);
    json_decref(body);
    return rc;
}

int dispatchact_finalizer(struct kube_client *k, const json_t *obj, int add, json_t **updated, struct error *err)
{
    json_t *list = json_array();
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(meta(obj), "finalizers"), i, f)
    {
        if (!json_is_string(f) || strcmp(json_string_value(f), NAMES_FINALIZER_DISPATCH) != 0)
            json_array_append(list, f);
    }
    if (add)
        json_array_append_new(list, json_string(NAMES_FINALIZER_DISPATCH));
    json_t *patch = json_pack("{s:{s:o}}", "metadata", "finalizers", list);
    const char *rv = meta_str(obj, "resourceVersion");
    if (rv != NULL)
        json_object_set_new(json_object_get(patch, "metadata"), "resourceVersion", json_string(rv));
    return send_obj(k, "PATCH", obj, "", patch, updated, err);
}

int dispatchact_annotate(struct kube_client *k, const json_t *obj, const json_t *annotations, json_t **updated, struct error *err)
{
    json_t *patch = json_pack("{s:{s:O}}", "metadata", "annotations", annotations);
    return send_obj(k, "PATCH", obj, "", patch, updated, err);
}

int dispatchact_create_copy(struct kube_client *w, const json_t *copy, struct error *err)
{
    char *path = dispatchact_path(copy);
    if (path == NULL) {
        error_setf(err, "copy without kind, namespace or name");
        return -1;
    }
    *strrchr(path, '/') = '\0'; /* the collection */
    int rc = send(w, "POST", path, KUBE_PATCH_MERGE, (json_t *)copy, copy, NULL, err);
    free(path);
    return rc;
}

int dispatchact_delete_copy(struct kube_client *w, const json_t *worker_obj, struct error *err)
{
    const char *uid = meta_str(worker_obj, "uid");
    json_t *opts = json_pack("{s:s,s:s,s:s}", "apiVersion", "v1", "kind", "DeleteOptions", "propagationPolicy", "Foreground");
    if (uid != NULL)
        json_object_set_new(opts, "preconditions", json_pack("{s:s}", "uid", uid));
    return send_obj(w, "DELETE", worker_obj, "", opts, NULL, err);
}

int dispatchact_renew(struct kube_client *w, const json_t *worker_obj, struct error *err)
{
    json_t *patch = dispatch_copy_renew_patch(worker_obj, err);
    if (patch == NULL)
        return -1;
    return send_obj(w, "PATCH", worker_obj, "", patch, NULL, err);
}

int dispatchact_mirror(struct kube_client *k, const json_t *obj, const json_t *status, struct error *err)
{
    return send_obj(k, "PATCH", obj, "/status", json_pack("{s:O}", "status", status), NULL, err);
}

/* The condition of type Dispatched in a PodGroup (borrowed), or NULL. */
static const json_t *pg_condition(const json_t *pg)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pg, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type != NULL && strcmp(type, DISPATCHACT_CONDITION) == 0)
            return c;
    }
    return NULL;
}

static int str_is(const json_t *v, const char *s)
{
    return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* Whether pg shows cond already (status, reason and message). */
static int pg_shows(const json_t *pg, const json_t *cond)
{
    const json_t *c = pg_condition(pg);
    return c != NULL && json_equal(json_object_get(c, "status"), json_object_get(cond, "status")) &&
           json_equal(json_object_get(c, "reason"), json_object_get(cond, "reason")) &&
           json_equal(json_object_get(c, "message"), json_object_get(cond, "message"));
}

/* A new PodGroup for obj, without status. */
static json_t *pg_new(const json_t *obj, const char *name)
{
    const json_t *labels = json_object_get(meta(obj), "labels");
    json_t *owner = json_pack("{s:s,s:O,s:s,s:s,s:b,s:b}", "apiVersion", "ray.io/v1", "kind", json_object_get(obj, "kind"), "name",
                              meta_str(obj, "name"), "uid", meta_str(obj, "uid") != NULL ? meta_str(obj, "uid") : "", "controller",
                              1, "blockOwnerDeletion", 0);
    json_t *pg = json_pack("{s:s,s:s,s:{s:s,s:s,s:[o]},s:{}}", "apiVersion", PODGROUP_GROUP_VERSION, "kind", "PodGroup", "metadata",
                           "name", name, "namespace", meta_str(obj, "namespace"), "ownerReferences", owner, "spec");
    json_t *spec = json_object_get(pg, "spec");
    const char *queue = json_string_value(json_object_get(labels, NAMES_LABEL_QUEUE));
    if (queue != NULL)
        json_object_set_new(spec, "queue", json_string(queue));
    struct gang_spec g;
    gang_spec_init(&g);
    struct error err = {{0}};
    const json_t *cluster = obj;
    if (str_is(json_object_get(obj, "kind"), "RayJob"))
        cluster = json_pack("{s:O}", "spec", json_object_get(json_object_get(obj, "spec"), "rayClusterSpec"));
    if (gang_from_raycluster(cluster, &g, &err) == 0)
        json_object_set_new(spec, "minMember", json_integer(g.min_member));
    if (cluster != obj)
        json_decref((json_t *)cluster);
    gang_spec_finish(&g);
    return pg;
}

/* The conditions pg (NULL: none) shows with cond in place of its Dispatched one (new array). */
static json_t *pg_conditions(const json_t *pg, json_t *cond)
{
    json_t *list = json_array();
    const json_t *old = pg != NULL ? pg_condition(pg) : NULL;
    if (old != NULL && json_equal(json_object_get(old, "status"), json_object_get(cond, "status")))
        json_object_set(cond, "lastTransitionTime", json_object_get(old, "lastTransitionTime"));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pg, "status"), "conditions"), i, c)
    {
        if (c != old)
            json_array_append(list, c);
    }
    json_array_append(list, cond);
    return list;
}

/* Writes status.conditions (stolen) to the PodGroup at path: the object, then its status subresource if the object kept none. */
static int pg_write(struct kube_client *k, const char *path, json_t *conditions, const json_t *cond, struct error *err)
{
    json_t *patch = json_pack("{s:{s:o}}", "status", "conditions", conditions);
    json_t *got = NULL;
    int rc = send(k, "PATCH", path, KUBE_PATCH_MERGE, patch, patch, &got, err);
    if (rc == 0 && !pg_shows(got, cond)) {
        char *spath = util_strdupf("%s/status", path);
        rc = send(k, "PATCH", spath, KUBE_PATCH_MERGE, patch, patch, NULL, err);
        free(spath);
    }
    json_decref(got);
    json_decref(patch);
    return rc;
}

int dispatchact_podgroup(struct kube_client *k, const json_t *obj, const char *status, const char *reason, const char *message,
                         const char *now, struct error *err)
{
    char *name = names_podgroup(meta_str(obj, "name"));
    char *path = util_strdupf("/apis/" PODGROUP_GROUP_VERSION "/namespaces/%s/podgroups/%s", meta_str(obj, "namespace"), name);
    json_t *cond = json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", DISPATCHACT_CONDITION, "status", status, "reason", reason, "message",
                             message, "lastTransitionTime", now);
    struct kube_response resp;
    kube_client_response_init(&resp);
    int rc = kube_get(k, path, &resp);
    json_t *pg = rc == 0 ? json_incref(resp.body) : NULL;
    if (rc != 0 && resp.status == 404) {
        json_t *body = pg_new(obj, name);
        char *coll = util_strdup(path);
        *strrchr(coll, '/') = '\0';
        rc = send(k, "POST", coll, KUBE_PATCH_MERGE, body, body, &pg, err);
        free(coll);
        json_decref(body);
    } else if (rc != 0) {
        error_setf(err, "%s", resp.message);
    }
    if (rc == 0 && !pg_shows(pg, cond))
        rc = pg_write(k, path, pg_conditions(pg, cond), cond, err);
    kube_client_response_finish(&resp);
    json_decref(pg);
    json_decref(cond);
    free(path);
    free(name);
    return rc;
}
