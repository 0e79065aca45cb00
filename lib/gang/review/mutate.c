#include "mutate.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang.h"
#include "gangclaims.h"
#include "jsonpatch.h"
#include "legacy.h"
#include "names.h"
#include "submitter.h"
#include "util.h"

void mutate_result_init(struct mutate_result *r)
{
    r->patch = NULL;
    r->warnings = NULL;
}

void mutate_result_finish(struct mutate_result *r)
{
    if (r == NULL)
        return;
    json_decref(r->patch);
    json_decref(r->warnings);
    mutate_result_init(r);
}

/* A member's string value when it is a non-empty string, else NULL. */
static const char *nonempty_string(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL && s[0] != '\0' ? s : NULL;
}

/* Copy on write: each object on the way to a change is copied shallowly. */
static void add_warning(struct mutate_result *out, const char *text)
{
    if (out->warnings == NULL)
        out->warnings = json_array();
    json_array_append_new(out->warnings, json_string(text));
}

/* Pods of one gang must sit in one queue: a template (borrowed) labelled with another gets the owner's, with a warning. */
static void warn_queue(const json_t *template, const char *path, const char *owner, const char *queue, struct mutate_result *out)
{
    const json_t *labels = json_object_get(json_object_get(template, "metadata"), "labels");
    const char *have = json_string_value(json_object_get(labels, NAMES_LABEL_QUEUE));
    if (have != NULL && strcmp(have, queue) != 0) {
        char text[320];
        util_format(text, sizeof(text), "%s: queue label \"%s\" replaced by the %s's queue \"%s\"", path, have, owner, queue);
        util_one_line(text);
        add_warning(out, text);
    }
}

/*
 * The changes a gang makes to a pod template, written once for both ways of
 * making them (mutate_pod_template() in a tree, patch_template() as patch
 * operations): the member key of the map named map (labels and annotations
 * in the template's metadata, or the template's spec) set to value, unless
 * keep_set and the map has a non-empty string there already.
 */
struct template_edit {
    const char *map;
    const char *key;
    const char *value;
    int keep_set;
};

#define TEMPLATE_EDITS_MAX 4

/*
 * The template's changes for queue, group, member (the gang-member mark,
 * "true" or "false") and priority (each may be NULL but queue) into edits;
 * returns how many.
 */
static size_t template_edits(const char *queue, const char *group, const char *member, const char *priority,
                             struct template_edit *edits)
{
    size_t n = 0;
    edits[n++] = (struct template_edit){"labels", NAMES_LABEL_QUEUE, queue, 0};
    if (group != NULL)
        edits[n++] = (struct template_edit){"annotations", NAMES_ANNOTATION_GROUP, group, 0};
    if (member != NULL)
        edits[n++] = (struct template_edit){"annotations", NAMES_ANNOTATION_GANG_MEMBER, member, 0};
    /* The apiserver resolves a pod's priority before webhooks see the pod: it must come from the template. */
    if (priority != NULL)
        edits[n++] = (struct template_edit){"spec", "priorityClassName", priority, 1};
    return n;
}

static int edit_in_spec(const struct template_edit *e)
{
    return strcmp(e->map, "spec") == 0;
}

void mutate_pod_template(json_t *template, const char *path, const char *owner, const char *queue, const char *group,
                         const char *member, const char *priority, struct mutate_result *out)
{
    struct template_edit edits[TEMPLATE_EDITS_MAX];
    size_t n = template_edits(queue, group, member, priority, edits);
    warn_queue(template, path, owner, queue, out);
    json_t *meta = jsonpatch_own_object(template, "metadata");
    for (size_t i = 0; i < n; i++) {
        json_t *map = edit_in_spec(&edits[i]) ? jsonpatch_own_object(template, "spec") : jsonpatch_own_object(meta, edits[i].map);
        if (!edits[i].keep_set || nonempty_string(map, edits[i].key) == NULL)
            json_object_set_new(map, edits[i].key, json_string(edits[i].value));
    }
}

const char *mutate_member_mark(const struct gang_spec *gang, size_t i)
{
    return i < gang->ngroups && gang->groups[i].all_members ? "true" : "false";
}

void mutate_cluster_templates(json_t *spec, const char *path, const char *owner, const char *queue, const char *group,
                              const struct gang_spec *gang, const char *priority, struct mutate_result *out)
{
    char p[192];
    util_format(p, sizeof(p), "%s.headGroupSpec.template", path);
    mutate_pod_template(jsonpatch_own_object(jsonpatch_own_object(spec, "headGroupSpec"), "template"), p, owner, queue, group,
                        "true", priority, out);
    json_t *workers = json_object_get(spec, "workerGroupSpecs");
    if (json_is_array(workers)) {
        workers = json_copy(workers);
        json_object_set_new(spec, "workerGroupSpecs", workers);
    }
    for (size_t i = 0; i < json_array_size(workers); i++) {
        json_t *worker = json_copy(json_array_get(workers, i));
        json_array_set_new(workers, i, worker);
        util_format(p, sizeof(p), "%s.workerGroupSpecs[%zu].template", path, i);
        mutate_pod_template(jsonpatch_own_object(worker, "template"), p, owner, queue, group, mutate_member_mark(gang, i), priority,
                            out);
    }
}

/* The legacy operator's templates: every pod type's podConfig (a whole Pod: metadata and spec, as a template). */
static void mutate_pod_types(json_t *spec, const char *queue, const char *group, const struct gang_spec *gang, const char *priority,
                             struct mutate_result *out)
{
    json_t *types = json_copy(json_object_get(spec, "podTypes"));
    json_object_set_new(spec, "podTypes", types);
    for (size_t i = 0; i < json_array_size(types); i++) {
        char path[64];
        json_t *type = json_copy(json_array_get(types, i));
        json_array_set_new(types, i, type);
        util_format(path, sizeof(path), "spec.podTypes[%zu].podConfig", i);
        mutate_pod_template(jsonpatch_own_object(type, "podConfig"), path, "RayCluster", queue, group, mutate_member_mark(gang, i),
                            priority, out);
    }
}

/* Whether v is the string text (of any length: a string holding a NUL is another). */
static int string_equals(const json_t *v, const char *text)
{
    size_t n = strlen(text);
    return json_is_string(v) && json_string_length(v) == n && memcmp(json_string_value(v), text, n) == 0;
}

/*
 * The operations under base (a pointer to parent, borrowed) that give the map
 * parent[name] the members keys[i]: values[i] (NULL values skipped), in place
 * of copying the object and diffing it: a map that is absent or not an object
 * is added whole, else each member that differs is added or replaced, as
 * jsonpatch_diff() words it. Nothing else in the map changes.
 */
static void patch_map(json_t *patch, const char *base, const json_t *parent, const char *name, const char *const *keys,
                      const char *const *values, size_t n)
{
    const json_t *map = json_object_get(parent, name);
    char *path = jsonpatch_pointer_join(base, name);
    if (!json_is_object(map)) {
        json_t *whole = json_object();
        for (size_t i = 0; i < n; i++)
            if (values[i] != NULL)
                json_object_set_new(whole, keys[i], json_string(values[i]));
        jsonpatch_append_new(patch, map != NULL ? "replace" : "add", path, whole);
    } else {
        for (size_t i = 0; i < n; i++) {
            const json_t *have = json_object_get(map, keys[i]);
            if (values[i] == NULL || string_equals(have, values[i]))
                continue;
            char *member = jsonpatch_pointer_join(path, keys[i]);
            jsonpatch_append_new(patch, have != NULL ? "replace" : "add", member, json_string(values[i]));
            free(member);
        }
    }
    free(path);
}

/* Orders edits as jsonpatch_diff() words their operations: by map name (annotations, labels, spec), then key. */
static int edit_cmp(const void *a, const void *b)
{
    const struct template_edit *x = a, *y = b;
    int c = strcmp(x->map, y->map);
    return c != 0 ? c : strcmp(x->key, y->key);
}

/*
 * mutate_pod_template()'s changes to the template (borrowed) at pointer base,
 * as operations appended to patch, each where it differs: a metadata that is
 * absent or not an object is added whole.
 */
static void patch_template(json_t *patch, const char *base, const json_t *template, const char *path, const char *queue,
                           const char *group, const char *member, const char *priority, struct mutate_result *out)
{
    struct template_edit edits[TEMPLATE_EDITS_MAX];
    size_t n = template_edits(queue, group, member, priority, edits);
    const json_t *meta = json_object_get(template, "metadata");
    char *meta_path = jsonpatch_pointer_join(base, "metadata");

    warn_queue(template, path, "RayCluster", queue, out);
    if (!json_is_object(meta)) {
        json_t *whole = json_object();
        for (size_t i = 0; i < n; i++)
            if (!edit_in_spec(&edits[i]))
                json_object_set_new(jsonpatch_own_object(whole, edits[i].map), edits[i].key, json_string(edits[i].value));
        jsonpatch_append_new(patch, meta != NULL ? "replace" : "add", meta_path, whole);
    }
    qsort(edits, n, sizeof(*edits), edit_cmp);
    /* One patch_map() per map: an absent map is added once, whole, with all its keys. */
    for (size_t i = 0, run; i < n; i += run) {
        const char *keys[TEMPLATE_EDITS_MAX], *values[TEMPLATE_EDITS_MAX];
        int in_spec = edit_in_spec(&edits[i]);
        const json_t *parent = in_spec ? template : meta;
        for (run = 0; i + run < n && strcmp(edits[i + run].map, edits[i].map) == 0; run++) {
            const struct template_edit *e = &edits[i + run];
            keys[run] = e->key;
            values[run] = e->keep_set && nonempty_string(json_object_get(parent, e->map), e->key) != NULL ? NULL : e->value;
        }
        if (!in_spec && !json_is_object(meta))
            continue;
        patch_map(patch, in_spec ? base : meta_path, parent, edits[i].map, keys, values, run);
    }
    free(meta_path);
}

/*
 * The patch of a (KubeRay) RayCluster, written as operations: the cluster's
 * annotations (keys[i]: values[i]) and every template's changes. The same
 * object as mutate_cluster_templates() on a copy and jsonpatch_diff(), without
 * copying the object, comparing it and sorting its keys.
 */
static json_t *cluster_patch(const json_t *raycluster, const char *const *keys, const char *const *values, size_t n,
                             const char *queue, const char *group, const struct gang_spec *gang, const char *priority,
                             struct mutate_result *out)
{
    json_t *patch = json_array();
    const json_t *meta = json_object_get(raycluster, "metadata"), *spec = json_object_get(raycluster, "spec");
    patch_map(patch, "/metadata", meta, "annotations", keys, values, n); /* metadata is an object: it holds the queue label */
    /* The gang arithmetic checked that spec, the head and every worker and its template are objects. */
    patch_template(patch, "/spec/headGroupSpec/template", json_object_get(json_object_get(spec, "headGroupSpec"), "template"),
                   "spec.headGroupSpec.template", queue, group, "true", priority, out);
    const json_t *workers = json_object_get(spec, "workerGroupSpecs");
    for (size_t i = 0; i < json_array_size(workers); i++) {
        char base[64], path[64];
        util_format(base, sizeof(base), "/spec/workerGroupSpecs/%zu/template", i);
        util_format(path, sizeof(path), "spec.workerGroupSpecs[%zu].template", i);
        patch_template(patch, base, json_object_get(json_array_get(workers, i), "template"), path, queue, group,
                       mutate_member_mark(gang, i), priority, out);
    }
    return patch;
}

/* The patch of a legacy RayCluster (new): its annotations (keys[i]: values[i]) and pod types, by copy and diff. */
static json_t *legacy_patch(const json_t *raycluster, const char *const *keys, const char *const *values, size_t n,
                            const char *queue, const char *group, const struct gang_spec *gang, const char *priority,
                            struct mutate_result *out)
{
    json_t *copy = json_copy((json_t *)raycluster); /* shallow: see jsonpatch_own_object() */
    json_t *annotations = jsonpatch_own_object(jsonpatch_own_object(copy, "metadata"), "annotations");
    for (size_t i = 0; i < n; i++)
        if (values[i] != NULL)
            json_object_set_new(annotations, keys[i], json_string(values[i]));
    mutate_pod_types(jsonpatch_own_object(copy, "spec"), queue, group, gang, priority, out);
    json_t *patch = jsonpatch_diff(raycluster, copy);
    json_decref(copy);
    return patch;
}

int mutate_add_devices(const json_t *raycluster, const struct gang_spec *gang, const struct draset *s, struct resources *min,
                       struct mutate_result *out, struct error *err)
{
    struct gangclaims gc;
    struct error why = {{0}};
    json_t *skipped = NULL; /* owned: the reasons left out */
    const char *ns = nonempty_string(json_object_get(raycluster, "metadata"), "namespace");
    char text[sizeof(why.message) + 96];
    int rc = 0;

    if (gangclaims_from_raycluster(raycluster, gang, &gc, &why) != 0) {
        util_format(text, sizeof(text), "%s: raygate.io/min-resources counts no device", why.message);
        util_one_line(text);
        add_warning(out, text);
        return 0;
    }
    if (gc.n > 0 && ns == NULL) {
        add_warning(out, "metadata.namespace: not set: raygate.io/min-resources counts no device");
    } else if (gc.n > 0) {
        rc = gangclaims_price_known(&gc, s, ns, min, &skipped, err);
        for (size_t i = 0; rc == 0 && i < json_array_size(skipped); i++) {
            util_format(text, sizeof(text), "raygate.io/min-resources counts no device for %s: the gang waits for it",
                        json_string_value(json_array_get(skipped, i)));
            util_one_line(text);
            add_warning(out, text);
        }
    }
    json_decref(skipped);
    gangclaims_finish(&gc);
    return rc;
}

int mutate_raycluster(const json_t *raycluster, const struct mutate_options *opts, struct mutate_result *out, struct error *err)
{
    static const char *const keys[] = {NAMES_ANNOTATION_MIN_MEMBER, NAMES_ANNOTATION_MIN_RESOURCES, NAMES_ANNOTATION_GROUP};
    struct gang_spec gang;
    const json_t *labels = json_object_get(json_object_get(raycluster, "metadata"), "labels");
    const char *queue = nonempty_string(labels, NAMES_LABEL_QUEUE);
    char *group = NULL, *min_resources = NULL;
    int rc = -1;

    if (queue == NULL)
        return 0;
    gang_spec_init(&gang);
    int legacy = legacy_is_raycluster(raycluster);
    if ((legacy ? legacy_gang_from_raycluster(raycluster, &gang, err) : submitter_cluster_gang(raycluster, &gang, err)) != 0) {
        util_one_line(err->message); /* field names come from the object: a key may hold a newline */
        goto out;
    }
    if (!legacy && opts != NULL && opts->dra != NULL &&
        mutate_add_devices(raycluster, &gang, opts->dra, &gang.min_resources, out, err) != 0)
        goto out;

    const char *name = nonempty_string(json_object_get(raycluster, "metadata"), "name");
    if (name != NULL) {
        /* With generateName only, the name (and so the group) is not known yet. */
        group = names_podgroup(name);
    }
    const char *priority = nonempty_string(labels, NAMES_LABEL_PRIORITY);
    char member[24];
    util_format(member, sizeof(member), "%" PRId64, gang.min_member);
    min_resources = resources_to_string(&gang.min_resources);
    const char *values[] = {member, min_resources, group};

    out->patch = (legacy ? legacy_patch : cluster_patch)(raycluster, keys, values, 3, queue, group, &gang, priority, out);
    if (json_array_size(out->patch) == 0) {
        json_decref(out->patch);
        out->patch = NULL;
    }
    rc = 0;

out:
    free(min_resources);
    free(group);
    gang_spec_finish(&gang);
    return rc;
}

/*
 * The operation that gates the pod (spec borrowed, an object), appended to
 * patch unless the pod has our gate already. Returns 0, or -1 with err when
 * spec.schedulingGates is not a list.
 */
static int patch_gate(json_t *patch, const json_t *spec, struct error *err)
{
    const json_t *gates = json_object_get(spec, "schedulingGates");
    if (gates == NULL || json_is_null(gates)) {
        json_t *list = json_array();
        json_array_append_new(list, json_pack("{s:s}", "name", NAMES_GATE));
        jsonpatch_append_new(patch, "add", "/spec/schedulingGates", list);
        return 0;
    }
    if (!json_is_array(gates)) {
        error_setf(err, "spec.schedulingGates: must be a list");
        return -1;
    }
    size_t i;
    const json_t *gate;
    int present = 0;
    json_array_foreach(gates, i, gate)
    {
        const char *name = json_string_value(json_object_get(gate, "name"));
        present |= name != NULL && strcmp(name, NAMES_GATE) == 0;
    }
    if (!present)
        jsonpatch_append_new(patch, "add", "/spec/schedulingGates/-", json_pack("{s:s}", "name", NAMES_GATE));
    return 0;
}

/*
 * The operation that gives the pod (metadata meta, borrowed) the group-name
 * annotation group, appended to patch when the pod has none (a pod of a
 * RayJob's RayCluster has its RayJob's). Returns the pod's group after the
 * patch (borrowed from meta or group), or NULL when its annotation is not a
 * string.
 */
static const char *patch_group_annotation(json_t *patch, const json_t *meta, const char *group, size_t *len)
{
    const json_t *annotations = json_object_get(meta, "annotations");
    const json_t *have = json_object_get(annotations, NAMES_ANNOTATION_GROUP);
    if (!json_is_object(annotations)) {
        jsonpatch_append_new(patch, "add", "/metadata/annotations", json_pack("{s:s}", NAMES_ANNOTATION_GROUP, group));
    } else if (have == NULL) {
        char *path = jsonpatch_pointer_join("/metadata/annotations", NAMES_ANNOTATION_GROUP);
        jsonpatch_append_new(patch, "add", path, json_string(group));
        free(path);
    } else {
        *len = json_string_length(have);
        return json_string_value(have);
    }
    *len = strlen(group);
    return group;
}

/*
 * Kubernetes' gang scheduling (mutate_options.native_gang): the operation
 * that names the pod's PodGroup, group[0..len) (may be NULL), in
 * spec.schedulingGroup (spec borrowed), appended to patch. The field is
 * immutable, so it is set at CREATE or never. A pod that has one (any value
 * but null: KubeRay's kubernetes-was backend sets it, or a user) keeps it. A
 * group that is not a DNS subdomain (a cluster label with capitals or '_',
 * an annotation written by hand, a name over 253 bytes) can name no PodGroup,
 * and the apiserver would refuse the pod: it gets no schedulingGroup, and the
 * gate works as before.
 */
static void patch_scheduling_group(json_t *patch, const json_t *spec, const char *group, size_t len)
{
    const json_t *have = json_object_get(spec, "schedulingGroup");
    if ((have != NULL && !json_is_null(have)) || group == NULL || !names_dns_subdomain(group, len))
        return;
    jsonpatch_append_new(patch, "add", "/spec/schedulingGroup", json_pack("{s:s%}", "podGroupName", group, len));
}

int mutate_pod_is_member(const json_t *pod)
{
    const json_t *annotations = json_object_get(json_object_get(pod, "metadata"), "annotations");
    return string_equals(json_object_get(annotations, NAMES_ANNOTATION_GANG_MEMBER), "true");
}

int mutate_pod(const json_t *pod, const struct mutate_options *opts, struct mutate_result *out, struct error *err)
{
    return mutate_pod_ns(pod, NULL, opts, out, err);
}

/* Whether the pod of cluster in namespace ns (NULL: the pod's meta's) belongs to an admitted held RayCluster. */
static int held_admitted(const struct mutate_options *opts, const json_t *meta, const char *ns, const char *cluster)
{
    if (opts == NULL || opts->held == NULL)
        return 0;
    if (ns == NULL)
        ns = json_string_value(json_object_get(meta, "namespace"));
    if (ns == NULL)
        ns = "";
    return heldset_admitted(opts->held, ns, strlen(ns), cluster, strlen(cluster));
}

int mutate_pod_ns(const json_t *pod, const char *ns, const struct mutate_options *opts, struct mutate_result *out,
                  struct error *err)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const json_t *labels = json_object_get(meta, "labels");
    const json_t *spec = json_object_get(pod, "spec");
    const char *cluster = nonempty_string(labels, NAMES_LABEL_CLUSTER);
    int kuberay = cluster != NULL; /* only KubeRay's RayClusters are held (heldsuspend.h) */
    if (cluster == NULL)
        cluster = nonempty_string(labels, LEGACY_LABEL_CLUSTER); /* a pod of the legacy operator's node provider */
    const char *scheduler = json_string_value(json_object_get(spec, "schedulerName"));

    if (cluster == NULL || nonempty_string(labels, NAMES_LABEL_QUEUE) == NULL || !json_is_object(spec))
        return 0;
    if (nonempty_string(spec, "nodeName") != NULL)
        return 0; /* already bound: a gate could never be lifted by a scheduler */
    if (scheduler != NULL && scheduler[0] != '\0' && strcmp(scheduler, "default-scheduler") != 0)
        return 0;

    json_t *patch = json_array();
    /* Only a member is born ungated: an autoscaler's tail is weighed by the gate (heldset.h). */
    int born_ungated = kuberay && mutate_pod_is_member(pod) && held_admitted(opts, meta, ns, cluster);
    if (!born_ungated && patch_gate(patch, spec, err) != 0) {
        json_decref(patch);
        return -1;
    }
    /* The whole name, however long: a cut one would name another group than the RayCluster's. */
    char *group = names_podgroup(cluster);
    size_t len;
    const char *pod_group = patch_group_annotation(patch, meta, group, &len);
    if (opts != NULL && opts->native_gang && mutate_pod_is_member(pod))
        patch_scheduling_group(patch, spec, pod_group, len);
    free(group);

    if (json_array_size(patch) == 0)
        json_decref(patch);
    else
        out->patch = patch;
    return 0;
}
