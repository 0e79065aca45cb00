#include "rayjobmutate.h"

#include <inttypes.h>
#include <stdlib.h>

#include "jsonpatch.h"
#include "names.h"
#include "util.h"

static const char *nonempty_string(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL && s[0] != '\0' ? s : NULL;
}

/* The submitter template of the copy being mutated (K8sJobMode), KubeRay's default written out when absent. */
static int own_submitter_template(json_t *spec, json_t **out, struct error *err)
{
    json_t *template = json_object_get(spec, "submitterPodTemplate");
    if (json_is_object(template)) {
        *out = jsonpatch_own_object(spec, "submitterPodTemplate");
        return 0;
    }
    const char *image = rayjob_head_image(json_object_get(spec, "rayClusterSpec"));
    if (image == NULL) {
        /* KubeRay takes the default submitter's image from there; without one the job could never start. */
        error_setf(err, "spec.rayClusterSpec.headGroupSpec.template.spec.containers[0].image: must be set (the default "
                        "submitter runs the head's image)");
        return -1;
    }
    template = json_pack("{s:{s:[o], s:s}}", "spec", "containers", rayjob_submitter_container(image), "restartPolicy", "Never");
    json_object_set_new(spec, "submitterPodTemplate", template);
    *out = template;
    return 0;
}

/* The annotations on the RayJob (in the copy being mutated). */
static void set_annotations(json_t *copy, const struct rayjob_gang *g, const char *group)
{
    json_t *annotations = jsonpatch_own_object(jsonpatch_own_object(copy, "metadata"), "annotations");
    char member[24];
    util_format(member, sizeof(member), "%" PRId64, g->min_member);
    char *min_resources = resources_to_string(&g->min_resources);
    json_object_set_new(annotations, NAMES_ANNOTATION_MIN_MEMBER, json_string(member));
    json_object_set_new(annotations, NAMES_ANNOTATION_MIN_RESOURCES, json_string(min_resources));
    free(min_resources);
    if (g->has_submitter) {
        char *submitter = resources_to_string(&g->submitter);
        json_object_set_new(annotations, NAMES_ANNOTATION_SUBMITTER, json_string(submitter));
        free(submitter);
    } else {
        json_object_del(annotations, NAMES_ANNOTATION_SUBMITTER);
    }
    if (group != NULL)
        json_object_set_new(annotations, NAMES_ANNOTATION_GROUP, json_string(group));
}

/*
 * Adds what the devices of the RayJob's (borrowed) cluster count as by s to its cluster's and its gang's minResources
 * (mutate_add_devices(): warnings into out). Returns 0, or -1 with err on overflow.
 */
static int add_devices(const json_t *rayjob, struct rayjob_gang *g, const struct draset *s, struct mutate_result *out,
                       struct error *err)
{
    const json_t *meta = json_object_get(rayjob, "metadata");
    json_t *cluster = json_pack("{s:{s:O*}, s:O*}", "metadata", "namespace", json_object_get(meta, "namespace"), "spec",
                                json_object_get(json_object_get(rayjob, "spec"), "rayClusterSpec")); /* owned */
    struct resources dev;
    resources_init(&dev);
    int rc = mutate_add_devices(cluster, &g->cluster, s, &dev, out, err);
    if (rc == 0 && (resources_add_scaled(&g->cluster.min_resources, &dev, 1, err) != 0 ||
                    resources_add_scaled(&g->min_resources, &dev, 1, err) != 0))
        rc = -1;
    resources_finish(&dev);
    json_decref(cluster);
    return rc;
}

int rayjob_mutate(const json_t *rayjob, const struct mutate_options *opts, struct mutate_result *out, struct error *err)
{
    struct rayjob_gang g;
    const json_t *labels = json_object_get(json_object_get(rayjob, "metadata"), "labels");
    const char *queue = nonempty_string(labels, NAMES_LABEL_QUEUE);
    const char *priority = nonempty_string(labels, NAMES_LABEL_PRIORITY);
    const char *name = nonempty_string(json_object_get(rayjob, "metadata"), "name");
    char *group = NULL;
    json_t *copy = NULL;
    int rc = -1;

    if (queue == NULL)
        return 0;
    rayjob_gang_init(&g);
    if (rayjob_gang_from(rayjob, &g, err) != 0)
        goto out;
    if (g.selector) {
        out->warnings = json_pack("[s]", "spec.clusterSelector: this RayJob runs on an existing RayCluster, which raygate gates "
                                         "as its own gang when it has a queue label; the RayJob itself is not gated");
        rc = 0;
        goto out;
    }
    if (opts != NULL && opts->dra != NULL && add_devices(rayjob, &g, opts->dra, out, err) != 0)
        goto out;
    /* With generateName only, the name (and so the group) is not known yet. */
    group = name != NULL ? names_podgroup(name) : NULL;

    copy = json_copy((json_t *)rayjob); /* shallow: see jsonpatch_own_object() */
    set_annotations(copy, &g, group);
    json_t *spec = jsonpatch_own_object(copy, "spec");
    mutate_cluster_templates(jsonpatch_own_object(spec, "rayClusterSpec"), "spec.rayClusterSpec", "RayJob", queue, group,
                             &g.cluster, priority, out);
    if (g.has_submitter) {
        json_t *template;
        if (own_submitter_template(spec, &template, err) != 0)
            goto out;
        /* The submitter is no member (rayjob.h): it carries no mark, and no ray.io/cluster label to be gated by. */
        mutate_pod_template(template, "spec.submitterPodTemplate", "RayJob", queue, group, NULL, priority, out);
        json_object_set_new(jsonpatch_own_object(jsonpatch_own_object(template, "metadata"), "labels"), RAYJOB_LABEL_SUBMITTER,
                            json_string("true"));
    }

    out->patch = jsonpatch_diff(rayjob, copy);
    if (json_array_size(out->patch) == 0) {
        json_decref(out->patch);
        out->patch = NULL;
    }
    rc = 0;

out:
    if (rc != 0) {
        json_decref(out->warnings);
        out->warnings = NULL;
    }
    json_decref(copy);
    free(group);
    rayjob_gang_finish(&g);
    return rc;
}
