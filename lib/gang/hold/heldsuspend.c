/* heldsuspend: a RayCluster held suspended until its gang is admitted (heldsuspend.h). */
#include "heldsuspend.h"

#include <stdlib.h>
#include <string.h>

#include "jsonpatch.h"
#include "names.h"
#include "topology.h"
#include "util.h"

static const json_t *annotation(const json_t *cluster, const char *key)
{
    return json_object_get(json_object_get(json_object_get(cluster, "metadata"), "annotations"), key);
}

static int nonempty(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 0;
}

int heldsuspend_marked(const json_t *cluster)
{
    const char *v = json_string_value(annotation(cluster, NAMES_ANNOTATION_HELD));
    return v != NULL && strcmp(v, "true") == 0;
}

static int release_is(const json_t *cluster, const char *value)
{
    const char *v = json_string_value(annotation(cluster, NAMES_ANNOTATION_HELD_RELEASE));
    return v != NULL && strcmp(v, value) == 0;
}

int heldsuspend_released(const json_t *cluster)
{
    return heldsuspend_marked(cluster) && release_is(cluster, NAMES_HELD_RELEASE_DONE);
}

int heldsuspend_release_on_wait(const json_t *cluster)
{
    return heldsuspend_marked(cluster) && release_is(cluster, NAMES_HELD_RELEASE_ON_WAIT);
}

json_t *heldsuspend_release_patch(void)
{
    json_t *p = json_pack("{s:{s:{s:s}}, s:{s:b}}", "metadata", "annotations", NAMES_ANNOTATION_HELD_RELEASE,
                          NAMES_HELD_RELEASE_DONE, "spec", "suspend", 0);
    if (p == NULL)
        abort();
    return p;
}

int heldsuspend_admitted(const json_t *cluster)
{
    return nonempty(annotation(cluster, NAMES_ANNOTATION_ADMITTED));
}

int heldsuspend_suspended(const json_t *cluster)
{
    return json_is_true(json_object_get(json_object_get(cluster, "spec"), "suspend"));
}

int heldsuspend_born_ungated(const json_t *cluster)
{
    if (!heldsuspend_marked(cluster) || !heldsuspend_admitted(cluster) || heldsuspend_released(cluster))
        return 0;
    const char *want = json_string_value(annotation(cluster, NAMES_ANNOTATION_HELD_GENERATION));
    const json_t *have = json_object_get(json_object_get(cluster, "metadata"), "generation");
    if (want == NULL || want[0] == '\0' || !json_is_integer(have))
        return 0;
    int64_t v;
    return util_parse_int64(want, &v) == 0 && v == json_integer_value(have);
}

/* Whether a RayCluster CREATE of cluster (borrowed) is held: heldsuspend.h's rule. */
static int qualifies(const json_t *cluster)
{
    const json_t *meta = json_object_get(cluster, "metadata");
    const json_t *owners = json_object_get(meta, "ownerReferences");
    if (!nonempty(json_object_get(json_object_get(meta, "labels"), NAMES_LABEL_QUEUE)))
        return 0;
    if (json_array_size(owners) > 0 || (owners != NULL && !json_is_array(owners) && !json_is_null(owners)))
        return 0;
    if (heldsuspend_suspended(cluster) || heldsuspend_admitted(cluster) || annotation(cluster, NAMES_ANNOTATION_DISPATCH_SUSPENDED))
        return 0;
    /* Admitted from its declaration, a held gang's pods are placed by kube-scheduler alone: a domain to keep is gated. */
    return !topology_constrained(cluster);
}

int heldsuspend_ops(const json_t *cluster, int update, enum heldsuspend_mode mode, json_t *patch)
{
    const json_t *spec = json_object_get(cluster, "spec");
    if (!json_is_object(spec))
        return 0;
    if (update) {
        if (!heldsuspend_marked(cluster) || heldsuspend_admitted(cluster) || heldsuspend_suspended(cluster) ||
            heldsuspend_released(cluster))
            return 0;
        jsonpatch_append_new(patch, "add", "/spec/suspend", json_true());
        return 1;
    }
    if (mode == HELDSUSPEND_OFF || !qualifies(cluster))
        return 0;
    jsonpatch_append_new(patch, "add", "/spec/suspend", json_true());
    char *path = jsonpatch_pointer_join("/metadata/annotations", NAMES_ANNOTATION_HELD);
    jsonpatch_append_new(patch, "add", path, json_string("true"));
    free(path);
    if (mode != HELDSUSPEND_DECIDE)
        return 2;
    path = jsonpatch_pointer_join("/metadata/annotations", NAMES_ANNOTATION_HELD_RELEASE);
    jsonpatch_append_new(patch, "add", path, json_string(NAMES_HELD_RELEASE_ON_WAIT));
    free(path);
    return 3;
}
