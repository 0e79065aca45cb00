#include "submitter.h"

#include <string.h>

#include "names.h"
#include "util.h"

int submitter_of_cluster(const json_t *raycluster, struct resources *out, struct error *err)
{
    const json_t *meta = json_object_get(raycluster, "metadata");
    const char *origin = json_string_value(json_object_get(json_object_get(meta, "labels"), NAMES_LABEL_ORIGIN_CRD));
    const char *text = json_string_value(json_object_get(json_object_get(meta, "annotations"), NAMES_ANNOTATION_SUBMITTER));
    json_error_t jerr;
    int rc;

    resources_finish(out);
    if (origin == NULL || strcmp(origin, "RayJob") != 0 || text == NULL)
        return 0;
    json_t *list = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(list)) {
        json_decref(list);
        error_setf(err, "metadata.annotations[%s]: must be a JSON object of quantities", NAMES_ANNOTATION_SUBMITTER);
        return -1;
    }
    rc = resources_parse(out, list, "metadata.annotations[" NAMES_ANNOTATION_SUBMITTER "]", RESOURCES_NONNEGATIVE, err);
    json_decref(list);
    if (rc != 0) {
        util_one_line(err->message);
        resources_finish(out);
    }
    return rc;
}

int submitter_cluster_gang(const json_t *raycluster, struct gang_spec *out, struct error *err)
{
    struct resources submitter;
    struct error rerr;
    int rc = -1;

    resources_init(&submitter);
    if (gang_from_raycluster(raycluster, out, err) != 0)
        goto out;
    if (submitter_of_cluster(raycluster, &submitter, err) != 0)
        goto out;
    if (resources_add_scaled(&out->min_resources, &submitter, 1, &rerr) != 0) {
        error_setf(err, "minResources.%s", rerr.message);
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        gang_spec_finish(out);
    resources_finish(&submitter);
    return rc;
}
