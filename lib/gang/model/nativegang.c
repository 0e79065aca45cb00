#include "nativegang.h"

#include <inttypes.h>
#include <string.h>

#include "util.h"

/* The metadata both objects share: name, namespace, the gang's controller. New reference. */
static json_t *metadata(const struct nativegang_spec *s)
{
    json_t *meta = json_pack("{s:s, s:s, s:{s:s}}", "name", s->name, "namespace", s->namespace_, "labels",
                             "app.kubernetes.io/managed-by", "raygate");
    if (s->owner_uid != NULL && s->owner_uid[0] != '\0')
        json_object_set_new(meta, "ownerReferences",
                            json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", s->owner_api_version, "kind", s->owner_kind,
                                      "name", s->owner_name, "uid", s->owner_uid, "controller", 1));
    return meta;
}

static json_t *gang_policy(int64_t min_count)
{
    return json_pack("{s:{s:I}}", "gang", "minCount", (json_int_t)min_count);
}

json_t *nativegang_workload(const struct nativegang_spec *s)
{
    /* The controller's API group: its apiVersion without the version ("ray.io", "cluster.ray.io"). */
    const char *slash = strchr(s->owner_api_version, '/');
    int group_len = slash != NULL ? (int)(slash - s->owner_api_version) : 0;
    return json_pack("{s:s, s:s, s:o, s:{s:{s:s#, s:s, s:s}, s:[{s:s, s:o}]}}", "apiVersion", NATIVEGANG_API_VERSION, "kind",
                     "Workload", "metadata", metadata(s), "spec", "controllerRef", "apiGroup", s->owner_api_version,
                     (size_t)group_len, "kind", s->owner_kind, "name", s->owner_name, "podGroupTemplates", "name",
                     NATIVEGANG_TEMPLATE, "schedulingPolicy", gang_policy(s->min_count));
}

json_t *nativegang_podgroup(const struct nativegang_spec *s)
{
    return json_pack("{s:s, s:s, s:o, s:{s:{s:s, s:s}, s:o, s:s*, s:{s:{}}}}", "apiVersion", NATIVEGANG_API_VERSION, "kind",
                     "PodGroup", "metadata", metadata(s), "spec", "workloadRef", "workloadName", s->name, "templateName",
                     NATIVEGANG_TEMPLATE, "schedulingPolicy", gang_policy(s->min_count), "priorityClassName", s->priority_class,
                     "disruptionMode", "all");
}

json_t *nativegang_min_count_patch(int64_t min_count)
{
    return json_pack("{s:{s:o}}", "spec", "schedulingPolicy", gang_policy(min_count));
}

void nativegang_seen_parse(const json_t *pg, struct nativegang_seen *out)
{
    const json_t *gang = json_object_get(json_object_get(json_object_get(pg, "spec"), "schedulingPolicy"), "gang");
    json_int_t min = json_integer_value(json_object_get(gang, "minCount"));
    out->min_count = min > 0 ? (int64_t)min : 0;
    out->scheduled = -1;
    out->message = NULL;
    size_t i;
    const json_t *cond;
    json_array_foreach(json_object_get(json_object_get(pg, "status"), "conditions"), i, cond)
    {
        if (!util_streq(json_string_value(json_object_get(cond, "type")), NATIVEGANG_CONDITION))
            continue;
        const char *status = json_string_value(json_object_get(cond, "status"));
        out->scheduled = util_streq(status, "True") ? 1 : util_streq(status, "False") ? 0 : -1;
        out->message = json_string_value(json_object_get(cond, "message"));
    }
}

enum nativegang_op nativegang_op(const struct nativegang_seen *seen, int64_t min_count)
{
    if (seen == NULL || seen->min_count == 0)
        return NATIVEGANG_CREATE;
    return seen->min_count == min_count ? NATIVEGANG_NONE : NATIVEGANG_PATCH;
}

char *nativegang_describe(const struct nativegang_seen *seen, int64_t bound)
{
    if (seen == NULL || seen->min_count == 0)
        return util_strdup("kube-scheduler: no PodGroup yet");
    if (seen->scheduled == 0)
        return util_strdupf("kube-scheduler: cannot place the group whole: %s",
                            seen->message != NULL && seen->message[0] != '\0' ? seen->message : "no reason given");
    if (bound >= seen->min_count)
        return util_strdup("kube-scheduler: placed");
    return util_strdupf("kube-scheduler: waiting for %" PRId64 " of %" PRId64 " pods", seen->min_count - bound, seen->min_count);
}
