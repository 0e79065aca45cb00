#include "dispatchsuspend.h"

#include <stdlib.h>
#include <string.h>

#include "jsonpatch.h"
#include "names.h"

static const json_t *meta_map(const json_t *obj, const char *key)
{
    return json_object_get(json_object_get(obj, "metadata"), key);
}

int dispatchsuspend_marked(const json_t *obj)
{
    const char *v = json_string_value(json_object_get(meta_map(obj, "annotations"), NAMES_ANNOTATION_DISPATCH_SUSPENDED));
    return v != NULL && strcmp(v, "true") == 0;
}

/* 1 when spec[key] is true. */
static int spec_true(const json_t *object, const char *key)
{
    return json_is_true(json_object_get(json_object_get(object, "spec"), key));
}

/* 0 when the unmarked object is not to be suspended, 1 when it is, -1 when denied (err). */
static int wants_suspend(const json_t *object, const struct queuecheck_set *queues, struct error *err)
{
    const char *queue = json_string_value(json_object_get(meta_map(object, "labels"), NAMES_LABEL_QUEUE));
    if (queue == NULL)
        return 0;
    if (queues == NULL || !queues->synced) {
        error_setf(err, "the manager's Queues are not listed yet, so whether queue %s dispatches is unknown: try again", queue);
        return -1;
    }
    const struct queuecheck_queue *q = queuecheck_set_get(queues, queue);
    if (q == NULL) {
        /* Created just before it, the Queue may not have reached the watch yet: let it, rather than KubeRay run the object. */
        error_setf(err, "queue %s does not exist on the manager (or is not seen yet): create it first, then try again", queue);
        return -1;
    }
    if (!q->dispatching)
        return 0;
    /* Suspended by the user: theirs to resume, and the worker copy keeps it. */
    return spec_true(object, "suspend") ? 0 : 1;
}

/* The JSON Patch that suspends and marks object (new), or NULL when it shows both already. */
static json_t *suspend_patch(const json_t *object)
{
    json_t *ops = json_array();
    if (!json_is_object(json_object_get(object, "spec")))
        jsonpatch_append_new(ops, "add", "/spec", json_pack("{s:b}", "suspend", 1));
    else if (!spec_true(object, "suspend"))
        jsonpatch_append_new(ops, "add", "/spec/suspend", json_true());
    if (!json_is_object(meta_map(object, "annotations")))
        jsonpatch_append_new(ops, "add", "/metadata/annotations", json_pack("{s:s}", NAMES_ANNOTATION_DISPATCH_SUSPENDED, "true"));
    else if (!dispatchsuspend_marked(object)) {
        char *path = jsonpatch_pointer_join("/metadata/annotations", NAMES_ANNOTATION_DISPATCH_SUSPENDED);
        jsonpatch_append_new(ops, "add", path, json_string("true"));
        free(path);
    }
    if (json_array_size(ops) == 0) {
        json_decref(ops);
        return NULL;
    }
    return ops;
}

int dispatchsuspend_decide(const json_t *request, const json_t *object, int is_job, const struct queuecheck_set *queues,
                           struct mutate_result *out, struct error *err)
{
    if (!dispatchsuspend_marked(object) && !dispatchsuspend_marked(json_object_get(request, "oldObject"))) {
        int want = wants_suspend(object, queues, err);
        if (want <= 0)
            return want < 0;
    }
    if (is_job && !spec_true(object, "shutdownAfterJobFinishes")) {
        error_setf(err, "spec.shutdownAfterJobFinishes: a RayJob dispatched from this manager must set it true: the manager "
                        "suspends it so that its KubeRay runs nothing, and KubeRay suspends no RayJob without it");
        return 1;
    }
    out->patch = suspend_patch(object);
    return 0;
}
