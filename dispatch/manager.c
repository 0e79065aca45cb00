#include "manager.h"

#include <stdlib.h>
#include <string.h>

#include "dispatchplan.h"
#include "gang.h"
#include "log.h"
#include "names.h"
#include "rayjob.h"
#include "util.h"
#include "view.h"

void dispatchmanager_init(struct dispatchmanager *m)
{
    memset(m, 0, sizeof(*m));
    m->objects = json_array();
}

static void queues_free(struct dispatchmanager_queue *qs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(qs[i].name);
        dispatch_pick_to_finish(&qs[i].to);
        free(qs[i].to_error);
        resources_finish(&qs[i].cap);
        resources_finish(&qs[i].used);
    }
    free(qs);
}

void dispatchmanager_finish(struct dispatchmanager *m)
{
    queues_free(m->queues, m->nqueues);
    json_decref(m->objects);
    memset(m, 0, sizeof(*m));
}

struct dispatchmanager_queue *dispatchmanager_queue(const struct dispatchmanager *m, const char *name)
{
    for (size_t i = 0; name != NULL && i < m->nqueues; i++)
        if (strcmp(m->queues[i].name, name) == 0)
            return &m->queues[i];
    return NULL;
}

struct dispatchmanager_queue *dispatchmanager_queue_of(const struct dispatchmanager *m, const json_t *obj)
{
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    return dispatchmanager_queue(m, json_string_value(json_object_get(labels, NAMES_LABEL_QUEUE)));
}

int dispatchmanager_min_resources(const json_t *obj, struct resources *out, struct error *err)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (kind != NULL && strcmp(kind, "RayJob") == 0) {
        struct rayjob_gang g;
        rayjob_gang_init(&g);
        int rc = rayjob_gang_from(obj, &g, err);
        if (rc == 0)
            resources_copy(out, &g.min_resources);
        rayjob_gang_finish(&g);
        return rc;
    }
    struct gang_spec g;
    gang_spec_init(&g);
    int rc = gang_from_raycluster(obj, &g, err);
    if (rc == 0)
        resources_copy(out, &g.min_resources);
    gang_spec_finish(&g);
    return rc;
}

int dispatchmanager_quota_room(const struct dispatchmanager_queue *q, const json_t *obj)
{
    if (!q->has_cap)
        return 1;
    struct resources want;
    resources_init(&want);
    struct error err = {{0}};
    int room = dispatchmanager_min_resources(obj, &want, &err) == 0 && resources_add_scaled(&want, &q->used, 1, &err) == 0;
    for (size_t i = 0; room && i < want.len; i++) {
        const struct quantity *cap = resources_get(&q->cap, want.items[i].name);
        /* A resource the capability does not list is not capped (as a Volcano Queue's capability). */
        if (cap != NULL && want.items[i].quantity.value > cap->value)
            room = 0;
    }
    resources_finish(&want);
    return room;
}

void dispatchmanager_quota_take(struct dispatchmanager_queue *q, const json_t *obj)
{
    struct resources r;
    resources_init(&r);
    struct error err = {{0}};
    if (dispatchmanager_min_resources(obj, &r, &err) == 0 && resources_add_scaled(&q->used, &r, 1, &err) != 0)
        log_warnf("queue %s: dispatched total: %s", q->name, err.message);
    resources_finish(&r);
}

/* One manager Queue (borrowed) into q (zeroed). */
static void queue_read(struct dispatchmanager_queue *q, const json_t *queue)
{
    const json_t *meta = json_object_get(queue, "metadata");
    q->name = util_strdup(json_string_value(json_object_get(meta, "name")));
    dispatch_pick_to_init(&q->to);
    resources_init(&q->cap);
    resources_init(&q->used);
    struct error err = {{0}};
    const char *to = json_string_value(json_object_get(json_object_get(meta, "annotations"), NAMES_ANNOTATION_DISPATCH_TO));
    if (dispatch_pick_to_parse(to, &q->to, &err) != 0)
        q->to_error = util_strdup(err.message);
    const json_t *cap = json_object_get(json_object_get(queue, "spec"), "capability");
    if (json_object_size(cap) > 0) {
        if (resources_parse(&q->cap, cap, "spec.capability", RESOURCES_NONNEGATIVE, &err) == 0)
            q->has_cap = 1;
        else
            log_warnf("queue %s: %s: not capping what is dispatched", q->name, err.message);
    }
}

/* Appends the items (borrowed) to objects, each a copy with kind and apiVersion set (list items carry neither). */
static void add_objects(json_t *objects, const json_t *items, const char *kind)
{
    size_t i;
    json_t *obj;
    json_array_foreach(items, i, obj)
    {
        json_t *o = json_copy((json_t *)obj);
        json_object_set_new(o, "kind", json_string(kind));
        json_object_set_new(o, "apiVersion", json_string("ray.io/v1"));
        json_array_append_new(objects, o);
    }
}

/* Counts every dispatched, not finished object into its Queue's used quota. */
static void count_used(struct dispatchmanager *m)
{
    size_t i;
    json_t *obj;
    json_array_foreach(m->objects, i, obj)
    {
        struct dispatchmanager_queue *q = dispatchmanager_queue_of(m, obj);
        struct dispatch_state st;
        dispatch_plan_state_init(&st);
        struct error err = {{0}};
        if (q != NULL && q->has_cap && dispatch_plan_state_parse(obj, &st, &err) == 0 && st.dispatched_to != NULL && !st.terminal)
            dispatchmanager_quota_take(q, obj);
        dispatch_plan_state_finish(&st);
    }
}

void dispatchmanager_apply(struct dispatchmanager *m, const json_t *queues, const json_t *rayclusters, const json_t *rayjobs)
{
    dispatchmanager_finish(m);
    dispatchmanager_init(m);
    m->queues = util_calloc(json_array_size(queues) + 1, sizeof(*m->queues));
    size_t i;
    json_t *queue;
    json_array_foreach(queues, i, queue)
    {
        if (json_string_value(json_object_get(json_object_get(queue, "metadata"), "name")) != NULL)
            queue_read(&m->queues[m->nqueues++], queue);
    }
    add_objects(m->objects, rayclusters, "RayCluster");
    add_objects(m->objects, rayjobs, "RayJob");
    count_used(m);
}

int dispatchmanager_list(struct dispatchmanager *m, struct kube_client *k, struct error *err)
{
    static const char *const paths[3] = {
        "/apis/scheduling.volcano.sh/v1beta1/queues",
        "/apis/ray.io/v1/rayclusters",
        "/apis/ray.io/v1/rayjobs",
    };
    struct kube_list_result res[3];
    int rc = dispatchview_list(k, paths, 3, res, err);
    if (rc == 0)
        dispatchmanager_apply(m, res[0].items, res[1].items, res[2].items);
    for (int i = 0; i < 3; i++)
        kube_list_result_finish(&res[i]);
    return rc;
}
