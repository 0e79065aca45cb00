#include "buffers.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "declare.h"
#include "gang.h"
#include "names.h"
#include "util.h"

/* The image of a chunk's container that has none: the autoscaler simulates the pods, it never runs them. */
#define PLACEHOLDER_IMAGE "registry.k8s.io/pause:3.10"

void buffers_request_init(struct buffers_request *r)
{
    *r = (struct buffers_request){0};
}

void buffers_request_finish(struct buffers_request *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++)
        json_decref(r->chunks[i].spec);
    free(r->chunks);
    buffers_request_init(r);
}

/* Of containers (borrowed), what a node is chosen by: each one's name, image and resources. New reference. */
static json_t *slim_containers(const json_t *containers)
{
    json_t *out = json_array();
    size_t i;
    const json_t *c;
    json_array_foreach(containers, i, c)
    {
        const json_t *name = json_object_get(c, "name"), *image = json_object_get(c, "image");
        json_t *slim = json_pack("{s:O?,s:O?}", "name", name, "resources", json_object_get(c, "resources"));
        json_object_set_new(slim, "image", json_is_string(image) ? json_copy((json_t *)image) : json_string(PLACEHOLDER_IMAGE));
        json_array_append_new(out, slim);
    }
    return out;
}

/* Of a member pod's spec (borrowed), what a node is chosen by (buffers.h). New reference. */
static json_t *slim_spec(const json_t *spec)
{
    static const char *const kept[] = {
        "overhead",          "nodeSelector",    "affinity", "tolerations", "topologySpreadConstraints",
        "priorityClassName", "runtimeClassName"};
    json_t *out = json_object();
    for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
        json_t *v = json_object_get(spec, kept[k]);
        if (v != NULL && !json_is_null(v))
            json_object_set_new(out, kept[k], json_deep_copy(v));
    }
    json_object_set_new(out, "containers", slim_containers(json_object_get(spec, "containers")));
    if (json_array_size(json_object_get(spec, "initContainers")) > 0)
        json_object_set_new(out, "initContainers", slim_containers(json_object_get(spec, "initContainers")));
    return out;
}

/* Adds count members of spec (owned, taken) to r: to the chunk of an equal spec, else a new one. */
static void add_members(struct buffers_request *r, json_t *spec, int64_t count)
{
    r->pods += count;
    for (size_t i = 0; i < r->n; i++) {
        if (json_equal(r->chunks[i].spec, spec)) {
            r->chunks[i].count += count;
            json_decref(spec);
            return;
        }
    }
    r->chunks = util_realloc(r->chunks, (r->n + 1) * sizeof(*r->chunks));
    r->chunks[r->n++] = (struct buffers_chunk){.spec = spec, .count = count};
}

/* The slim spec of a member of role type and group made from template (borrowed) as KubeRay makes it. New reference. */
static json_t *member_spec(const json_t *cluster, const json_t *template, const char *type, const char *group)
{
    const json_t *meta = json_object_get(cluster, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    struct declare_names n = {.ns = ns != NULL ? ns : "",
                              .cluster = name != NULL ? name : "",
                              .queue = "",
                              .created = "",
                              .suffix = "",
                              .uid_prefix = "",
                              .cluster_spec = json_object_get(cluster, "spec"),
                              .gated = 0};
    json_t *pod = declare_member_pod(&n, template, type, group, 0); /* owned */
    json_t *spec = slim_spec(json_object_get(pod, "spec"));
    json_decref(pod);
    return spec;
}

int buffers_from_cluster(const json_t *cluster, struct buffers_request *out, struct error *err)
{
    struct gang_spec g;
    gang_spec_init(&g);
    buffers_request_finish(out);
    if (gang_from_raycluster(cluster, &g, err) != 0) {
        gang_spec_finish(&g);
        return -1;
    }
    const json_t *spec = json_object_get(cluster, "spec");
    const json_t *head = json_object_get(json_object_get(spec, "headGroupSpec"), "template");
    add_members(out, member_spec(cluster, head, "head", "headgroup"), 1);
    const json_t *groups = json_object_get(spec, "workerGroupSpecs");
    for (size_t i = 0; i < g.ngroups; i++) {
        if (g.groups[i].pods <= 0)
            continue;
        const json_t *template = json_object_get(json_array_get(groups, i), "template");
        const char *group = g.groups[i].name != NULL ? g.groups[i].name : "";
        add_members(out, member_spec(cluster, template, "worker", group), g.groups[i].pods);
    }
    gang_spec_finish(&g);
    return 0;
}

char *buffers_name(const char *cluster, size_t i)
{
    char suffix[32];
    util_format(suffix, sizeof(suffix), "-rg-%zu", i);
    int room = 63 - (int)strlen(suffix);
    return util_strdupf("%.*s%s", room, cluster, suffix);
}

/* The metadata of chunk i's objects: name, namespace, the gang's label, the RayCluster (borrowed) as controller. New reference. */
static json_t *object_meta(const json_t *cluster, size_t i)
{
    const json_t *meta = json_object_get(cluster, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    char *own = buffers_name(name != NULL ? name : "", i);
    json_t *m = json_pack("{s:s,s:O?,s:{s:s?}}", "name", own, "namespace", json_object_get(meta, "namespace"), "labels",
                          BUFFERS_LABEL_GANG, name);
    free(own);
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    if (name != NULL && uid != NULL)
        json_object_set_new(m, "ownerReferences",
                            json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", "ray.io/v1", "kind", "RayCluster", "name", name,
                                      "uid", uid, "controller", 1, "blockOwnerDeletion", 0));
    return m;
}

json_t *buffers_pod_template(const json_t *cluster, const struct buffers_request *r, size_t i)
{
    if (i >= r->n)
        return NULL;
    json_t *meta = object_meta(cluster, i);
    json_t *labels = json_object_get(meta, "labels");
    return json_pack("{s:s,s:s,s:o,s:{s:{s:O},s:O}}", "apiVersion", "v1", "kind", "PodTemplate", "metadata", meta, "template",
                     "metadata", "labels", labels, "spec", r->chunks[i].spec);
}

json_t *buffers_capacity_buffer(const json_t *cluster, const struct buffers_request *r, size_t i)
{
    if (i >= r->n)
        return NULL;
    json_t *meta = object_meta(cluster, i);
    const char *name = json_string_value(json_object_get(meta, "name"));
    int64_t replicas = r->chunks[i].count < INT32_MAX ? r->chunks[i].count : INT32_MAX;
    return json_pack("{s:s,s:s,s:o,s:{s:s,s:{s:s},s:I}}", "apiVersion", BUFFERS_API_VERSION, "kind", "CapacityBuffer", "metadata",
                     meta, "spec", "provisioningStrategy", BUFFERS_STRATEGY, "podTemplateRef", "name", name, "replicas",
                     (json_int_t)replicas);
}

/* buffer's (borrowed) condition of type (borrowed), when it speaks of the buffer's generation; else NULL. */
static const json_t *condition(const json_t *buffer, const char *type)
{
    const json_t *gen = json_object_get(json_object_get(buffer, "metadata"), "generation");
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(buffer, "status"), "conditions"), i, c)
    {
        if (!util_streq(json_string_value(json_object_get(c, "type")), type))
            continue;
        const json_t *seen = json_object_get(c, "observedGeneration");
        if (json_is_integer(gen) && json_is_integer(seen) && json_integer_value(seen) < json_integer_value(gen))
            return NULL; /* about an older spec */
        return c;
    }
    return NULL;
}

static int status_is(const json_t *c, const char *status)
{
    return c != NULL && util_streq(json_string_value(json_object_get(c, "status")), status);
}

/*
 * The count of chunks that failed, from Provisioning's message "N/M virtual pods required new capacity, K failed":
 * Karpenter v1.14.1 says it nowhere else (a NodePool at its limits sets no LimitedByQuotas). A message of another
 * form reads as none failed: the buffer then counts as provisioning, and the gate's provisioning timeout ends it.
 */
static int64_t failed_chunks(const char *message)
{
    const char *at = message != NULL ? strstr(message, ", ") : NULL;
    int64_t k = 0;
    if (at == NULL)
        return 0;
    at += 2;
    const char *end = strchr(at, ' ');
    if (end == NULL || strcmp(end, " failed") != 0)
        return 0;
    char digits[24];
    util_format(digits, sizeof(digits), "%.*s", (int)(end - at), at);
    return util_parse_int64(digits, &k) == 0 ? k : 0;
}

enum buffers_state buffers_state_of(const json_t *buffer, char *msg, size_t size)
{
    const json_t *ready = condition(buffer, "ReadyForProvisioning"), *prov = condition(buffer, "Provisioning");
    const json_t *quota = condition(buffer, "LimitedByQuotas");
    const json_t *told = NULL;
    enum buffers_state s = BUFFERS_WAITING;
    const char *pmsg = json_string_value(json_object_get(prov, "message"));
    if (status_is(ready, "False"))
        s = BUFFERS_REFUSED, told = ready;
    else if (status_is(quota, "True"))
        s = BUFFERS_LIMITED, told = quota;
    else if (status_is(prov, "True"))
        s = BUFFERS_FITS, told = prov;
    else if (status_is(prov, "False") && util_streq(json_string_value(json_object_get(prov, "reason")), "RequiresNewCapacity"))
        s = failed_chunks(pmsg) > 0 ? BUFFERS_LIMITED : BUFFERS_PROVISIONING, told = prov;
    if (size > 0)
        util_format(msg, size, "%s",
                    told != NULL && json_string_value(json_object_get(told, "message")) != NULL
                        ? json_string_value(json_object_get(told, "message"))
                        : "");
    return s;
}

const char *buffers_state_name(enum buffers_state s)
{
    static const char *const names[] = {"waiting", "provisioning", "fits", "limited", "refused"};
    return (size_t)s < sizeof(names) / sizeof(names[0]) ? names[s] : "waiting";
}

size_t buffers_select(const struct admit_result *res, size_t per_queue, size_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < res->len; i++) {
        const struct admit_decision *d = &res->items[i];
        if (d->action != ADMIT_ACTION_WAIT || d->reason != ADMIT_REASON_NODES)
            continue;
        size_t same = 0;
        for (size_t k = 0; k < n; k++)
            same += util_streq(res->items[out[k]].queue, d->queue);
        if (same < per_queue)
            out[n++] = i;
    }
    return n;
}
