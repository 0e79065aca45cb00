/* heldresume: KubeRay told at once that a held RayCluster is resumed (heldresume.h). */
#include "heldresume.h"

#include <inttypes.h>
#include <string.h>

#include "heldsuspend.h"
#include "names.h"
#include "util.h"

/* The status of cluster's condition of type, or NULL when it has none. */
static const char *condition_status(const json_t *cluster, const char *type)
{
    const json_t *conditions = json_object_get(json_object_get(cluster, "status"), "conditions");
    size_t i;
    const json_t *c;
    json_array_foreach(conditions, i, c)
    {
        if (util_streq(json_string_value(json_object_get(c, "type")), type))
            return json_string_value(json_object_get(c, "status"));
    }
    return NULL;
}

int heldresume_due(const json_t *cluster, size_t pods, int64_t *generation)
{
    if (pods > 0)
        return 0; /* KubeRay is making them: it took the resume in at once */
    if (!heldsuspend_born_ungated(cluster) || heldsuspend_suspended(cluster))
        return 0; /* not held, not admitted, or not at its admission's generation; or suspended again */
    if (!util_streq(condition_status(cluster, "RayClusterSuspended"), "False"))
        return 0; /* KubeRay has not taken the resume in yet (or never marked it: nothing to wait for) */
    const json_t *annotations = json_object_get(json_object_get(cluster, "metadata"), "annotations");
    const char *held = json_string_value(json_object_get(annotations, NAMES_ANNOTATION_HELD_GENERATION));
    if (util_streq(json_string_value(json_object_get(annotations, NAMES_ANNOTATION_HELD_RESUMED)), held))
        return 0; /* nudged at this admission already */
    return util_parse_int64(held, generation) == 0;
}

json_t *heldresume_patch(int64_t generation)
{
    return json_pack("{s:{s:{s:o}}}", "metadata", "annotations", NAMES_ANNOTATION_HELD_RESUMED,
                     json_sprintf("%" PRId64, generation));
}
