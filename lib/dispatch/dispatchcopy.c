#include "dispatchcopy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatchsuspend.h"
#include "util.h"

/* What a copy keeps of the manager object's metadata besides labels and annotations; the rest is the manager's bookkeeping. */
static const char *const kept_metadata[] = {"name", "namespace"};

/*
 * The manager-side dispatch annotations: where and when it was dispatched there, not for the worker; and the
 * worker gate's own record of the lease (dispatchlease.h), which only that gate writes.
 */
static const char *const manager_annotations[] = {
    NAMES_ANNOTATION_DISPATCHED_TO,       NAMES_ANNOTATION_DISPATCHED_AT,      NAMES_ANNOTATION_DISPATCH_RENEWED,
    NAMES_ANNOTATION_DISPATCH_REASONS,    NAMES_ANNOTATION_DISPATCH_SUSPENDED, NAMES_ANNOTATION_DISPATCH_WORKER_STATE,
    NAMES_ANNOTATION_DISPATCH_LEASE_SEEN,
};

int dispatch_copy_kind_of(const json_t *obj, enum dispatch_kind *out, struct error *err)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (kind != NULL && strcmp(kind, "RayCluster") == 0)
        *out = DISPATCH_KIND_RAYCLUSTER;
    else if (kind != NULL && strcmp(kind, "RayJob") == 0)
        *out = DISPATCH_KIND_RAYJOB;
    else {
        error_setf(err, "kind %s: only RayCluster and RayJob are dispatched", kind != NULL ? kind : "(none)");
        return -1;
    }
    return 0;
}

static const char *meta_string(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* obj's metadata[key] copied (an object), or a new {} when absent or not an object. */
static json_t *copied_object(const json_t *meta, const char *key)
{
    json_t *v = json_object_get(meta, key);
    return json_is_object(v) ? json_deep_copy(v) : json_object();
}

static json_t *copy_metadata(const json_t *obj, const char *cluster_name, int64_t lease_seconds)
{
    const json_t *meta = json_object_get(obj, "metadata");
    json_t *out = json_object();
    for (size_t i = 0; i < sizeof(kept_metadata) / sizeof(kept_metadata[0]); i++) {
        json_t *v = json_object_get(meta, kept_metadata[i]);
        if (v != NULL && json_is_string(v))
            json_object_set(out, kept_metadata[i], v);
    }
    json_t *labels = copied_object(meta, "labels");
    json_t *annotations = copied_object(meta, "annotations");
    for (size_t i = 0; i < sizeof(manager_annotations) / sizeof(manager_annotations[0]); i++)
        json_object_del(annotations, manager_annotations[i]);
    json_object_set_new(labels, NAMES_LABEL_DISPATCHED_FROM, json_string(cluster_name));
    json_object_set_new(annotations, NAMES_ANNOTATION_DISPATCH_ORIGIN_UID, json_string(meta_string(obj, "uid")));
    json_object_set_new(annotations, NAMES_ANNOTATION_DISPATCH_LEASE, json_string("1"));
    char secs[24];
    snprintf(secs, sizeof(secs), "%" PRId64, lease_seconds);
    json_object_set_new(annotations, NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS, json_string(secs));
    json_object_set_new(out, "labels", labels);
    json_object_set_new(out, "annotations", annotations);
    return out;
}

int dispatch_copy_suspended(const json_t *obj)
{
    return dispatchsuspend_marked(obj);
}

json_t *dispatch_copy_worker(const json_t *obj, const char *cluster_name, int64_t lease_seconds, struct error *err)
{
    enum dispatch_kind kind;
    if (dispatch_copy_kind_of(obj, &kind, err) != 0)
        return NULL;
    static const char *const required[] = {"name", "namespace", "uid"};
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        const char *v = meta_string(obj, required[i]);
        if (v == NULL || v[0] == '\0') {
            error_setf(err, "metadata.%s: missing", required[i]);
            return NULL;
        }
    }
    json_t *copy = json_object();
    json_object_set(copy, "apiVersion", json_object_get(obj, "apiVersion"));
    json_object_set(copy, "kind", json_object_get(obj, "kind"));
    json_object_set_new(copy, "metadata", copy_metadata(obj, cluster_name, lease_seconds));
    json_t *spec = json_object_get(obj, "spec");
    if (spec != NULL) {
        json_t *s = json_deep_copy(spec);
        /* The manager's webhook suspended it for a KubeRay there; the worker is where it runs. */
        if (dispatch_copy_suspended(obj))
            json_object_del(s, "suspend");
        json_object_set_new(copy, "spec", s);
    }
    return copy;
}

const char *dispatch_copy_origin(const json_t *worker_obj, const char *cluster_name)
{
    const json_t *meta = json_object_get(worker_obj, "metadata");
    const char *from = json_string_value(json_object_get(json_object_get(meta, "labels"), NAMES_LABEL_DISPATCHED_FROM));
    if (from == NULL || cluster_name == NULL || strcmp(from, cluster_name) != 0)
        return NULL;
    const char *uid =
        json_string_value(json_object_get(json_object_get(meta, "annotations"), NAMES_ANNOTATION_DISPATCH_ORIGIN_UID));
    return uid != NULL && uid[0] != '\0' ? uid : NULL;
}

json_t *dispatch_copy_renew_patch(const json_t *worker_obj, struct error *err)
{
    const char *uid = meta_string(worker_obj, "uid");
    if (uid == NULL || uid[0] == '\0') {
        error_setf(err, "metadata.uid: missing");
        return NULL;
    }
    const char *lease = json_string_value(
        json_object_get(json_object_get(json_object_get(worker_obj, "metadata"), "annotations"), NAMES_ANNOTATION_DISPATCH_LEASE));
    uint64_t n = 0;
    if (lease != NULL) {
        char *end;
        unsigned long long v = strtoull(lease, &end, 10);
        /* A counter edited by hand, or at its end, starts again: any change renews. */
        if (end != lease && *end == '\0' && lease[0] != '-' && v < UINT64_MAX)
            n = (uint64_t)v;
    }
    char next[24];
    snprintf(next, sizeof(next), "%" PRIu64, n + 1);
    return json_pack("{s:{s:s,s:{s:s}}}", "metadata", "uid", uid, "annotations", NAMES_ANNOTATION_DISPATCH_LEASE, next);
}

void dispatch_copy_remote_init(struct dispatch_remote *r)
{
    memset(r, 0, sizeof(*r));
}

void dispatch_copy_remote_finish(struct dispatch_remote *r)
{
    if (r == NULL)
        return;
    json_decref(r->status);
    json_decref(r->worker_state);
    r->status = NULL;
    r->worker_state = NULL;
}

static int has_admitted(const json_t *obj)
{
    const char *at = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), NAMES_ANNOTATION_ADMITTED));
    return at != NULL && at[0] != '\0';
}

/* KubeRay's jobDeploymentStatus values after the cluster was admitted and the job submitted. */
int dispatch_copy_remote_started(const char *s)
{
    static const char *const started[] = {"Running", "Complete", "Failed", "Suspending", "Suspended", "Retrying"};
    for (size_t i = 0; s != NULL && i < sizeof(started) / sizeof(started[0]); i++)
        if (strcmp(s, started[i]) == 0)
            return 1;
    return 0;
}

int dispatch_copy_remote_terminal(const char *job_deployment_status)
{
    return job_deployment_status != NULL &&
           (strcmp(job_deployment_status, "Complete") == 0 || strcmp(job_deployment_status, "Failed") == 0);
}

/* status[key] copied into out when it is set. */
static void mirror_field(json_t *out, const json_t *status, const char *key)
{
    json_t *v = json_object_get(status, key);
    if (v != NULL && !json_is_null(v))
        json_object_set(out, key, v);
}

int dispatch_copy_remote_read(const json_t *worker_obj, const json_t *cluster, struct dispatch_remote *out, struct error *err)
{
    enum dispatch_kind kind;
    dispatch_copy_remote_finish(out);
    dispatch_copy_remote_init(out);
    if (dispatch_copy_kind_of(worker_obj, &kind, err) != 0)
        return -1;
    const json_t *status = json_object_get(worker_obj, "status");
    out->status = json_object();
    if (kind == DISPATCH_KIND_RAYCLUSTER) {
        out->admitted = has_admitted(worker_obj);
        mirror_field(out->status, status, "state");
        return 0;
    }
    const char *deployment = json_string_value(json_object_get(status, "jobDeploymentStatus"));
    out->terminal = dispatch_copy_remote_terminal(deployment);
    /* A RayJob's cluster may be gone (shutdownAfterJobFinishes) once the job ran: admitted all the same. */
    out->admitted = (cluster != NULL && has_admitted(cluster)) || dispatch_copy_remote_started(deployment);
    mirror_field(out->status, status, "jobStatus");
    mirror_field(out->status, status, "jobDeploymentStatus");
    /* A KubeRay that finds a RayJob Complete without an endTime dereferences none (a manager with KubeRay). */
    mirror_field(out->status, status, "endTime");
    return 0;
}

void dispatch_copy_remote_for_suspended(const json_t *manager_obj, struct dispatch_remote *r)
{
    enum dispatch_kind kind;
    struct error err;
    if (r->status == NULL || !dispatch_copy_suspended(manager_obj) || dispatch_copy_kind_of(manager_obj, &kind, &err) != 0)
        return;
    const char *key = kind == DISPATCH_KIND_RAYCLUSTER ? "state" : "jobDeploymentStatus";
    json_t *v = json_object_get(r->status, key);
    if (!json_is_string(v))
        return;
    json_decref(r->worker_state);
    r->worker_state = json_incref(v);
    /* KubeRay leaves a terminal RayJob's status alone: that one is shown where users look. */
    if (kind == DISPATCH_KIND_RAYCLUSTER || !dispatch_copy_remote_terminal(json_string_value(v)))
        json_object_del(r->status, key);
}

int dispatch_copy_remote_shown(const json_t *manager_obj, const struct dispatch_remote *r)
{
    const json_t *status = json_object_get(manager_obj, "status");
    const char *key;
    json_t *v;
    json_object_foreach(r->status, key, v)
    {
        if (!json_equal(v, json_object_get(status, key)))
            return 0;
    }
    if (r->worker_state != NULL) {
        const json_t *shown = json_object_get(json_object_get(json_object_get(manager_obj, "metadata"), "annotations"),
                                              NAMES_ANNOTATION_DISPATCH_WORKER_STATE);
        return shown != NULL && json_equal(shown, r->worker_state);
    }
    return 1;
}
