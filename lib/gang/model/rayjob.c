#include "rayjob.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpatch.h"
#include "names.h"
#include "util.h"

void rayjob_gang_init(struct rayjob_gang *g)
{
    g->mode = RAYJOB_MODE_K8S_JOB;
    g->selector = 0;
    g->suspended = 0;
    gang_spec_init(&g->cluster);
    g->has_submitter = 0;
    resources_init(&g->submitter);
    g->min_member = 0;
    resources_init(&g->min_resources);
}

void rayjob_gang_finish(struct rayjob_gang *g)
{
    if (g == NULL)
        return;
    gang_spec_finish(&g->cluster);
    resources_finish(&g->submitter);
    resources_finish(&g->min_resources);
    rayjob_gang_init(g);
}

static const char *nonempty_string(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL && s[0] != '\0' ? s : NULL;
}

/*
 * A message of gang.h about a RayCluster ("spec.headGroupSpec...") or a pod
 * spec ("spec.containers...") as a path in the RayJob: "spec." becomes prefix.
 */
static int fail_under(struct error *err, const char *prefix, const char *message)
{
    if (strncmp(message, "spec.", 5) == 0)
        error_setf(err, "%s.%s", prefix, message + 5);
    else if (strncmp(message, "spec:", 5) == 0)
        error_setf(err, "%s%s", prefix, message + 4);
    else
        error_setf(err, "%s: %s", prefix, message);
    util_one_line(err->message); /* field names come from the object: a key may hold a newline */
    return -1;
}

json_t *rayjob_submitter_container(const char *image)
{
    json_t *c = json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}}", "name", RAYJOB_SUBMITTER_CONTAINER, "resources", "limits", "cpu",
                          "1", "memory", "1Gi", "requests", "cpu", "500m", "memory", "200Mi");
    if (c == NULL)
        abort();
    if (image != NULL)
        json_object_set_new(c, "image", json_string(image));
    return c;
}

const char *rayjob_head_image(const json_t *cluster_spec)
{
    const json_t *spec = json_object_get(json_object_get(json_object_get(cluster_spec, "headGroupSpec"), "template"), "spec");
    return nonempty_string(json_array_get(json_object_get(spec, "containers"), 0), "image");
}

static int read_mode(const json_t *spec, enum rayjob_mode *out, struct error *err)
{
    static const char *const names[] = {"K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode"};
    const json_t *v = json_object_get(spec, "submissionMode");
    *out = RAYJOB_MODE_K8S_JOB;
    if (v == NULL || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0))
        return 0;
    if (!json_is_string(v)) {
        error_setf(err, "spec.submissionMode: must be a string");
        return -1;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(json_string_value(v), names[i]) == 0) {
            *out = (enum rayjob_mode)i;
            return 0;
        }
    }
    error_setf(err, "spec.submissionMode: must be one of K8sJobMode, HTTPMode, InteractiveMode, SidecarMode");
    return -1;
}

/*
 * The RayCluster KubeRay makes of spec.rayClusterSpec (borrowed) as a new
 * object {"spec": ...} sharing what it does not change: in SidecarMode the
 * submitter container appended to the head's containers.
 */
static json_t *cluster_of(const json_t *cluster_spec, enum rayjob_mode mode)
{
    json_t *cluster = json_object();
    json_object_set_new(cluster, "spec", json_copy((json_t *)cluster_spec));
    if (mode != RAYJOB_MODE_SIDECAR)
        return cluster;
    json_t *spec = json_object_get(cluster, "spec");
    json_t *head = json_object_get(spec, "headGroupSpec");
    json_t *template = json_object_get(head, "template");
    json_t *pod = json_object_get(template, "spec");
    if (!json_is_object(head) || !json_is_object(template) || !json_is_object(pod))
        return cluster; /* gang_from_raycluster names what is wrong */
    pod = jsonpatch_own_object(jsonpatch_own_object(jsonpatch_own_object(spec, "headGroupSpec"), "template"), "spec");
    json_t *containers = json_object_get(pod, "containers");
    containers = json_is_array(containers) ? json_copy(containers) : json_array();
    json_array_append_new(containers, rayjob_submitter_container(rayjob_head_image(cluster_spec)));
    json_object_set_new(pod, "containers", containers);
    return cluster;
}

/* The submitter pod's request in K8sJobMode: spec.submitterPodTemplate's, else the default container's. */
static int submitter_request(const json_t *spec, struct resources *out, struct error *err)
{
    struct error gerr;
    const json_t *template = json_object_get(spec, "submitterPodTemplate");
    json_t *pod_spec;
    int rc;

    if (template == NULL || json_is_null(template)) {
        pod_spec = json_pack("{s:[o]}", "containers", rayjob_submitter_container(NULL));
    } else if (!json_is_object(template)) {
        error_setf(err, "spec.submitterPodTemplate: must be an object");
        return -1;
    } else {
        pod_spec = json_incref(json_object_get(template, "spec"));
        if (!json_is_object(pod_spec)) {
            json_decref(pod_spec);
            error_setf(err, "spec.submitterPodTemplate.spec: must be an object");
            return -1;
        }
    }
    rc = gang_pod_request(pod_spec, out, &gerr);
    json_decref(pod_spec);
    if (rc != 0)
        return fail_under(err, "spec.submitterPodTemplate.spec", gerr.message);
    return 0;
}

int rayjob_gang_from(const json_t *rayjob, struct rayjob_gang *out, struct error *err)
{
    struct error gerr;
    struct error rerr;
    const json_t *spec = json_object_get(rayjob, "spec");
    const json_t *selector, *cluster_spec;
    json_t *cluster;
    int rc;

    rayjob_gang_finish(out);
    if (!json_is_object(spec)) {
        error_setf(err, "spec: must be an object");
        return -1;
    }
    if (read_mode(spec, &out->mode, err) != 0)
        return -1;
    out->suspended = json_is_true(json_object_get(spec, "suspend"));
    selector = json_object_get(spec, "clusterSelector");
    if (selector != NULL && !json_is_null(selector) && !json_is_object(selector)) {
        error_setf(err, "spec.clusterSelector: must be an object");
        return -1;
    }
    if (json_object_size(selector) > 0) {
        out->selector = 1;
        return 0;
    }
    cluster_spec = json_object_get(spec, "rayClusterSpec");
    if (!json_is_object(cluster_spec)) {
        error_setf(err, "spec.rayClusterSpec: must be an object (or spec.clusterSelector set)");
        return -1;
    }
    cluster = cluster_of(cluster_spec, out->mode);
    rc = gang_from_raycluster(cluster, &out->cluster, &gerr);
    json_decref(cluster);
    if (rc != 0)
        goto fail_cluster;
    out->min_member = out->cluster.min_member;
    resources_copy(&out->min_resources, &out->cluster.min_resources);
    if (out->mode == RAYJOB_MODE_K8S_JOB) {
        out->has_submitter = 1;
        if (submitter_request(spec, &out->submitter, err) != 0)
            goto fail;
        if (resources_add_scaled(&out->min_resources, &out->submitter, 1, &rerr) != 0) {
            error_setf(err, "minResources.%s", rerr.message);
            goto fail;
        }
    }
    return 0;

fail_cluster:
    fail_under(err, "spec.rayClusterSpec", gerr.message);
fail:
    rayjob_gang_finish(out);
    return -1;
}

int rayjob_owner_of(const json_t *raycluster, const char **name, const char **uid)
{
    const json_t *meta = json_object_get(raycluster, "metadata");
    const json_t *labels = json_object_get(meta, "labels"), *ref;
    const char *origin = json_string_value(json_object_get(labels, NAMES_LABEL_ORIGIN_CRD));
    const char *job = nonempty_string(labels, RAYJOB_LABEL_ORIGIN_NAME);
    size_t i;

    *name = *uid = NULL;
    if (origin == NULL || strcmp(origin, "RayJob") != 0 || job == NULL)
        return 0;
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, ref)
    {
        const char *kind = json_string_value(json_object_get(ref, "kind"));
        const char *api = json_string_value(json_object_get(ref, "apiVersion"));
        const char *ref_name = json_string_value(json_object_get(ref, "name"));
        const char *ref_uid = nonempty_string(ref, "uid");
        if (!json_is_true(json_object_get(ref, "controller")) || kind == NULL || strcmp(kind, "RayJob") != 0 || api == NULL ||
            strcmp(api, "ray.io/v1") != 0 || ref_name == NULL || strcmp(ref_name, job) != 0 || ref_uid == NULL)
            continue;
        *name = job;
        *uid = ref_uid;
        return 1;
    }
    return 0;
}

static const char *status_of(const json_t *rayjob)
{
    const char *s = json_string_value(json_object_get(json_object_get(rayjob, "status"), "jobDeploymentStatus"));
    return s != NULL ? s : "";
}

int rayjob_can_rerun(const json_t *rayjob, struct error *why)
{
    const json_t *spec = json_object_get(rayjob, "spec");
    const char *status = status_of(rayjob);
    if (!json_is_true(json_object_get(spec, "shutdownAfterJobFinishes"))) {
        error_setf(why, "spec.shutdownAfterJobFinishes is not true: KubeRay does not suspend such a RayJob");
        return 0;
    }
    if (json_object_size(json_object_get(spec, "clusterSelector")) > 0) {
        error_setf(why, "spec.clusterSelector is set: the job runs on a RayCluster of its own");
        return 0;
    }
    if (strcmp(status, "Running") != 0 && strcmp(status, "Initializing") != 0) {
        error_setf(why, "status.jobDeploymentStatus is \"%s\": KubeRay suspends only a Running or Initializing RayJob", status);
        util_one_line(why->message);
        return 0;
    }
    return 1;
}

json_t *rayjob_rerun_patch(const json_t *rayjob, const char *stamp, const json_t *record)
{
    const json_t *meta = json_object_get(rayjob, "metadata");
    /* A label value: the stamp's letters, digits, '-', '_' and '.' ("2024-05-01T10:00:00Z" -> "2024-05-01T100000Z"). */
    char value[64];
    size_t n = 0;
    for (const char *p = stamp; *p != '\0' && n + 1 < sizeof(value); p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.')
            value[n++] = *p;
    }
    value[n] = '\0';
    json_t *m = json_pack("{s:{s:s}}", "labels", RAYJOB_LABEL_RERUN, n > 0 ? value : "evicted");
    const char *uid = nonempty_string(meta, "uid"), *rv = nonempty_string(meta, "resourceVersion");
    if (uid != NULL)
        json_object_set_new(m, "uid", json_string(uid));
    if (rv != NULL)
        json_object_set_new(m, "resourceVersion", json_string(rv));
    if (json_is_object(record) && json_object_size(record) > 0)
        json_object_set_new(m, "annotations", json_deep_copy(record));
    json_t *patch = json_pack("{s:o, s:{s:b}}", "metadata", m, "spec", "suspend", 1);
    if (patch == NULL)
        abort();
    return patch;
}

json_t *rayjob_resume_patch(const json_t *rayjob)
{
    const char *stamp =
        json_string_value(json_object_get(json_object_get(json_object_get(rayjob, "metadata"), "labels"), RAYJOB_LABEL_RERUN));
    const json_t *suspend = json_object_get(json_object_get(rayjob, "spec"), "suspend");
    if (stamp == NULL)
        return NULL;
    char *label = jsonpatch_pointer_join("/metadata/labels", RAYJOB_LABEL_RERUN);
    json_t *patch = json_array();
    jsonpatch_append_new(patch, "test", label, json_string(stamp));
    if (json_is_true(suspend)) {
        if (strcmp(status_of(rayjob), "Suspended") != 0) {
            json_decref(patch);
            free(label);
            return NULL; /* KubeRay is still suspending it */
        }
        jsonpatch_append_new(patch, "test", "/spec/suspend", json_true());
        jsonpatch_append_new(patch, "replace", "/spec/suspend", json_false());
    }
    jsonpatch_append_new(patch, "remove", label, NULL);
    free(label);
    return patch;
}

const char *rayjob_submitter_of(const json_t *pod)
{
    const json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
    const char *marker = json_string_value(json_object_get(labels, RAYJOB_LABEL_SUBMITTER));
    if (marker == NULL || strcmp(marker, "true") != 0)
        return NULL;
    return nonempty_string(labels, RAYJOB_LABEL_JOB_NAME);
}
