/*
 * legacy: the legacy Ray operator's clusters (see legacy.h). Pure.
 */
#include "legacy.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "resources.h"
#include "util.h"

int legacy_is_raycluster(const json_t *obj)
{
    const char *api = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    return api != NULL && kind != NULL && strncmp(api, LEGACY_GROUP "/", sizeof(LEGACY_GROUP)) == 0 &&
           strcmp(kind, "RayCluster") == 0;
}

size_t legacy_pod_type_count(const json_t *raycluster)
{
    return json_array_size(json_object_get(json_object_get(raycluster, "spec"), "podTypes"));
}

json_t *legacy_pod_config(const json_t *raycluster, size_t i)
{
    json_t *t = json_array_get(json_object_get(json_object_get(raycluster, "spec"), "podTypes"), i);
    json_t *pc = json_object_get(t, "podConfig");
    return json_is_object(pc) ? pc : NULL;
}

int legacy_pod_labels(const json_t *labels, const char **cluster, const char **node_kind, const char **node_type)
{
    *cluster = json_string_value(json_object_get(labels, LEGACY_LABEL_CLUSTER));
    *node_kind = json_string_value(json_object_get(labels, LEGACY_LABEL_NODE_KIND));
    *node_type = json_string_value(json_object_get(labels, LEGACY_LABEL_NODE_TYPE));
    return *cluster != NULL && **cluster != '\0';
}

/* An optional non-negative integer member; absent or null: def. */
static int count(const json_t *obj, const char *key, const char *path, int64_t def, int64_t *out, struct error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = def;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_integer(v)) {
        error_setf(err, "%s.%s: must be an integer", path, key);
        return -1;
    }
    if (json_integer_value(v) < 0) {
        error_setf(err, "%s.%s: must not be negative", path, key);
        return -1;
    }
    *out = json_integer_value(v);
    return 0;
}

/* The effective request of pod type i's podConfig into req. */
static int type_request(const json_t *type, size_t i, struct resources *req, struct error *err)
{
    const json_t *pc = json_object_get(type, "podConfig");
    struct error gerr;
    if (!json_is_object(pc)) {
        error_setf(err, "spec.podTypes[%zu].podConfig: must be an object", i);
        return -1;
    }
    const json_t *spec = json_object_get(pc, "spec");
    if (!json_is_object(spec)) {
        error_setf(err, "spec.podTypes[%zu].podConfig.spec: must be an object", i);
        return -1;
    }
    if (gang_pod_request(spec, req, &gerr) != 0) {
        error_setf(err, "spec.podTypes[%zu].podConfig.%s", i, gerr.message);
        return -1;
    }
    return 0;
}

/*
 * Pod type i: its name (borrowed) and the workers it counts, at most *left
 * (the cluster's maxWorkers left); *all when they are all it may ever run
 * (no autoscaling tail: the count reaches the type's maxWorkers).
 */
static int type_workers(const json_t *type, size_t i, int64_t *left, const char **name, int64_t *workers, int *all,
                        struct error *err)
{
    char path[48];
    int64_t min, max;
    util_format(path, sizeof(path), "spec.podTypes[%zu]", i);
    if (!json_is_object(type)) {
        error_setf(err, "%s: must be an object", path);
        return -1;
    }
    *name = json_string_value(json_object_get(type, "name"));
    if (*name == NULL || **name == '\0') {
        error_setf(err, "%s.name: must be a non-empty string", path);
        return -1;
    }
    if (count(type, "minWorkers", path, 0, &min, err) != 0 || count(type, "maxWorkers", path, INT64_MAX, &max, err) != 0)
        return -1;
    /* maxWorkers takes precedence over minWorkers, and the cluster's maxWorkers over both. */
    *workers = min < max ? min : max;
    *workers = *workers < *left ? *workers : *left;
    *left -= *workers;
    *all = *workers >= max;
    return 0;
}

static int add_pods(struct gang_spec *out, const struct resources *req, int64_t pods, struct error *err)
{
    if (resources_add_scaled(&out->min_resources, req, pods, err) != 0)
        return -1;
    if (out->min_member > INT64_MAX - pods) {
        error_setf(err, "spec.podTypes: the pods overflow");
        return -1;
    }
    out->min_member += pods;
    return 0;
}

/* Adds every pod type's workers, and the head, to out. */
static int add_types(const json_t *types, const char *head, int64_t left, struct gang_spec *out, struct error *err)
{
    struct resources req;
    int found = 0, rc = -1;
    resources_init(&req);
    out->groups = util_calloc(json_array_size(types) + 1, sizeof(*out->groups));
    for (size_t i = 0; i < json_array_size(types); i++) {
        const json_t *type = json_array_get(types, i);
        const char *name = NULL;
        int64_t workers = 0;
        int all = 0;
        if (type_workers(type, i, &left, &name, &workers, &all, err) != 0 || type_request(type, i, &req, err) != 0)
            goto out;
        int is_head = !found && strcmp(name, head) == 0;
        found |= is_head;
        /* The head apart: workers may already be INT64_MAX, and add_pods checks each sum. */
        if (add_pods(out, &req, workers, err) != 0 || (is_head && add_pods(out, &req, 1, err) != 0))
            goto out;
        out->groups[out->ngroups].name = util_strdup(name);
        out->groups[out->ngroups].all_members = all;
        out->groups[out->ngroups++].pods = workers;
        /* A type's podConfig makes its workers and, for the head's type, the head: they name the group together. */
        if (all)
            out->native_count += workers + is_head; /* <= min_member, checked above */
    }
    if (!found) {
        error_setf(err, "spec.headPodType: \"%s\" is not the name of a pod type", head);
        goto out;
    }
    rc = 0;
out:
    resources_finish(&req);
    return rc;
}

int legacy_gang_from_raycluster(const json_t *raycluster, struct gang_spec *out, struct error *err)
{
    const json_t *spec = json_object_get(raycluster, "spec");
    int64_t max;
    gang_spec_finish(out);
    gang_spec_init(out);
    if (!json_is_object(spec)) {
        error_setf(err, "spec: must be an object");
        return -1;
    }
    const json_t *types = json_object_get(spec, "podTypes");
    if (!json_is_array(types) || json_array_size(types) == 0) {
        error_setf(err, "spec.podTypes: must be a non-empty list");
        return -1;
    }
    const char *head = json_string_value(json_object_get(spec, "headPodType"));
    if (head == NULL || *head == '\0') {
        error_setf(err, "spec.headPodType: must name one of spec.podTypes");
        return -1;
    }
    if (count(spec, "maxWorkers", "spec", INT64_MAX, &max, err) != 0 || add_types(types, head, max, out, err) != 0) {
        util_one_line(err->message); /* names come from the object */
        gang_spec_finish(out);
        return -1;
    }
    return 0;
}
