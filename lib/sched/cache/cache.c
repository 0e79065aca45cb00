#include "cache.h"
#include "devices.h"
#include "legacy.h"
#include "rayjob.h"
#include "submitter.h"
#include "table.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

const char *cache_resource_name(const struct cache *c, uint32_t id)
{
    return id < c->shapes.nresources ? c->shapes.resource_names[id] : NULL;
}

/* ---- lifecycle ---- */

struct cache *cache_create(void)
{
    struct cache *c = util_calloc(1, sizeof(*c));
    shape_pool_init(&c->shapes);
    table_init(&c->nodes);
    table_init(&c->pods);
    table_init(&c->pods_uid);
    table_init(&c->gangs);
    table_init(&c->queues);
    c->capacity_changed = 1;
    c->nodes_changed = 1;
    return c;
}

static uint64_t key_hash(const char *ns, const char *name)
{
    return table_hash_str(table_hash_str(TABLE_HASH_SEED, ns != NULL ? ns : ""), name);
}

/* A gang's or a pod's key (table_find): NULL ns is "". */
struct ns_name {
    const char *ns, *name;
};

/* ---- nodes ---- */

static int node_is(const struct table_node *n, const void *name)
{
    return strcmp(TABLE_CONTAINER_OF(n, struct cache_node, by_name)->name, name) == 0;
}

struct cache_node *cache_node_get(const struct cache *c, const char *name)
{
    struct table_node *n = table_find(&c->nodes, key_hash(NULL, name), node_is, name);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct cache_node, by_name) : NULL;
}

static struct cache_node *node_ref(struct cache *c, const char *name)
{
    struct cache_node *node = cache_node_get(c, name);
    if (node != NULL)
        return node;
    node = util_calloc(1, sizeof(*node));
    node->name = shape_intern(&c->shapes, name);
    node->alloc_pods = INT64_MAX;
    node->by_name.hash = key_hash(NULL, name);
    table_insert(&c->nodes, &node->by_name);
    return node;
}

/* Frees node and what it holds alone; what links to it is gone or going too (cache_destroy). */
static void node_free(struct cache *c, struct cache_node *node)
{
    model_node_clear(&c->shapes, node);
    shape_release(&c->shapes, node->name);
    free(node->used);
    free(node->foreign);
    free(node);
}

/* Frees node when neither its object nor any pod refers to it. */
static void node_maybe_free(struct cache *c, struct cache_node *node)
{
    if (node->present || node->bound > 0)
        return;
    table_remove(&c->nodes, &node->by_name);
    node_free(c, node);
}

static const json_t *metadata_name(const json_t *obj, const char **ns, const char **name, struct error *err)
{
    const json_t *meta = json_object_get(obj, "metadata");
    *name = json_string_value(json_object_get(meta, "name"));
    *ns = json_string_value(json_object_get(meta, "namespace"));
    if (*name == NULL || (*name)[0] == '\0') {
        error_setf(err, "metadata.name: must be a non-empty string");
        return NULL;
    }
    return meta;
}

int cache_upsert_node(struct cache *c, const json_t *obj, struct error *err)
{
    const char *ns, *name;
    const json_t *meta = metadata_name(obj, &ns, &name, err);
    if (meta == NULL)
        return -1;
    struct cache_node *node = node_ref(c, name);
    struct cache_node fresh;
    model_node_parse(&c->shapes, &fresh, obj);

    int changed = !node->present || !model_node_same(node, &fresh);
    model_node_clear(&c->shapes, node);
    node->labels = fresh.labels;
    node->nlabels = fresh.nlabels;
    node->taints = fresh.taints;
    node->ntaints = fresh.ntaints;
    node->allocatable = fresh.allocatable;
    node->alloc_pods = fresh.alloc_pods;
    node->ready = fresh.ready;
    node->unschedulable = fresh.unschedulable;
    if (!node->present)
        c->nnodes_present++;
    node->present = 1;
    if (changed) {
        c->nodes_changed = 1;
        c->capacity_changed = 1;
        c->generation++;
        c->nodes_gen++;
    }
    return 0;
}

void cache_delete_node(struct cache *c, const char *name)
{
    struct cache_node *node = cache_node_get(c, name);
    if (node == NULL || !node->present)
        return;
    node->present = 0;
    c->nnodes_present--;
    model_node_clear(&c->shapes, node);
    c->nodes_changed = 1;
    c->capacity_changed = 1;
    c->generation++;
    c->nodes_gen++;
    node_maybe_free(c, node);
}

/* ---- queues ---- */

static int queue_is(const struct table_node *n, const void *name)
{
    return strcmp(TABLE_CONTAINER_OF(n, struct cache_queue, by_name)->name, name) == 0;
}

struct cache_queue *cache_queue_get(const struct cache *c, const char *name)
{
    struct table_node *n = table_find(&c->queues, key_hash(NULL, name), queue_is, name);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct cache_queue, by_name) : NULL;
}

static struct cache_queue *queue_ref(struct cache *c, const char *name)
{
    struct cache_queue *q = cache_queue_get(c, name);
    if (q != NULL)
        return q;
    q = util_calloc(1, sizeof(*q));
    q->memo = util_calloc(1, sizeof(*q->memo));
    q->name = shape_intern(&c->shapes, name);
    q->dirty = 1;
    q->reclaimable = 1;
    q->weight = 1;
    q->by_name.hash = key_hash(NULL, name);
    table_insert(&c->queues, &q->by_name);
    return q;
}

/* Frees q and what it holds alone (its tree's references included); its gangs are gone or going too. */
static void queue_free(struct cache *c, struct cache_queue *q)
{
    shape_release(&c->shapes, q->name);
    shape_release(&c->shapes, q->state);
    model_queue_release(&c->shapes, q);
    free(q);
}

static void queue_maybe_free(struct cache *c, struct cache_queue *q)
{
    if (q->present || q->ngangs > 0)
        return;
    table_remove(&c->queues, &q->by_name);
    queue_free(c, q);
}

static void queue_dirty(struct cache *c, struct cache_queue *q)
{
    if (q != NULL) {
        q->dirty = 1;
        q->version++; /* also when a gang joins or leaves it (gang_set_queue) */
    }
    c->generation++;
}

/* A change of gang g (or of its pods): its queue's decisions may change, and what was computed from it. */
void cache_gang_mark_changed(struct cache *c, struct cache_gang *g)
{
    model_gang_touch(g);
    queue_dirty(c, g->queue);
    model_gang_early_link(&c->early, g);
}

int cache_upsert_queue(struct cache *c, const json_t *obj, struct error *err)
{
    const char *ns, *name;
    if (metadata_name(obj, &ns, &name, err) == NULL)
        return -1;
    struct cache_queue *q = queue_ref(c, name);
    const json_t *spec = json_object_get(obj, "spec");
    struct resources cap;
    struct error rerr;
    resources_init(&cap);
    const struct shape_rl *capability = NULL;
    if (resources_parse(&cap, json_object_get(spec, "capability"), "spec.capability", 0, &rerr) == 0)
        capability = shape_rl_intern(&c->shapes, &cap, 1, NULL);
    resources_finish(&cap);
    uint8_t dequeue = util_streq(json_string_value(json_object_get(spec, "dequeueStrategy")), "fifo") ? CACHE_DEQUEUE_FIFO
                                                                                                      : CACHE_DEQUEUE_TRAVERSE;
    const char *state = shape_member(&c->shapes, json_object_get(obj, "status"), "state");

    int changed = !q->present || q->capability != capability || q->dequeue != dequeue || q->state != state;
    changed |= model_queue_parse_preemption(&c->shapes, q, obj);
    if (model_queue_parse_tree(&c->shapes, q, obj))
        cache_mark_all_dirty(c); /* the tree changed: every queue's room may have */
    model_queue_set_timeouts(q, json_object_get(json_object_get(obj, "metadata"), "annotations"));
    shape_rl_release(&c->shapes, q->capability);
    shape_release(&c->shapes, q->state);
    q->capability = capability;
    q->state = state;
    q->dequeue = dequeue;
    q->present = 1;
    if (changed)
        queue_dirty(c, q);
    return 0;
}

void cache_delete_queue(struct cache *c, const char *name)
{
    struct cache_queue *q = cache_queue_get(c, name);
    if (q == NULL || !q->present)
        return;
    q->present = 0;
    shape_rl_release(&c->shapes, q->capability);
    q->capability = NULL;
    shape_release(&c->shapes, q->state);
    q->state = NULL;
    model_queue_parse_preemption(&c->shapes, q, NULL);
    if (model_queue_parse_tree(&c->shapes, q, NULL))
        cache_mark_all_dirty(c);
    model_queue_set_timeouts(q, NULL);
    queue_dirty(c, q);
    queue_maybe_free(c, q);
}

/* ---- gangs ---- */

static int gang_is(const struct table_node *n, const void *key)
{
    const struct cache_gang *g = TABLE_CONTAINER_OF(n, struct cache_gang, by_name);
    const struct ns_name *k = key;
    return strcmp(g->name, k->name) == 0 && util_streq(g->namespace_, k->ns != NULL ? k->ns : "");
}

struct cache_gang *cache_gang_get(const struct cache *c, const char *namespace_, const char *name)
{
    const struct ns_name k = {namespace_, name};
    struct table_node *n = table_find(&c->gangs, key_hash(namespace_, name), gang_is, &k);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct cache_gang, by_name) : NULL;
}

static struct cache_gang *gang_ref(struct cache *c, const char *ns, const char *name)
{
    struct cache_gang *g = cache_gang_get(c, ns, name);
    if (g != NULL)
        return g;
    g = util_calloc(1, sizeof(*g));
    g->namespace_ = shape_intern(&c->shapes, ns != NULL ? ns : "");
    g->name = shape_intern(&c->shapes, name);
    g->preemptable = 1;
    g->memo = util_calloc(1, sizeof(*g->memo));
    resources_init(&g->min_resources);
    g->by_name.hash = key_hash(ns, name);
    table_insert(&c->gangs, &g->by_name);
    g->all_next = c->all_gangs;
    if (c->all_gangs != NULL)
        c->all_gangs->all_prev = g;
    c->all_gangs = g;
    return g;
}

void cache_gang_set_node_wait(struct cache *c, struct cache_gang *g, int on)
{
    if ((on != 0) == g->node_wait)
        return;
    if (on) {
        g->nw_prev = NULL;
        g->nw_next = c->node_waiters;
        if (c->node_waiters != NULL)
            c->node_waiters->nw_prev = g;
        c->node_waiters = g;
        if (g->queue != NULL)
            g->queue->node_waiters++;
    } else {
        if (g->nw_prev != NULL)
            g->nw_prev->nw_next = g->nw_next;
        else
            c->node_waiters = g->nw_next;
        if (g->nw_next != NULL)
            g->nw_next->nw_prev = g->nw_prev;
        g->nw_prev = g->nw_next = NULL;
        if (g->queue != NULL)
            g->queue->node_waiters--;
    }
    g->node_wait = on != 0;
}

static void gang_set_queue(struct cache *c, struct cache_gang *g, struct cache_queue *q)
{
    if (g->queue == q)
        return;
    cache_gang_set_node_wait(c, g, 0); /* a verdict in another queue says nothing here */
    struct cache_queue *old = g->queue;
    if (old != NULL) {
        if (g->queue_prev != NULL)
            g->queue_prev->queue_next = g->queue_next;
        else
            old->gangs = g->queue_next;
        if (g->queue_next != NULL)
            g->queue_next->queue_prev = g->queue_prev;
        g->queue_prev = g->queue_next = NULL;
        old->ngangs--;
        queue_dirty(c, old);
    }
    g->queue = q;
    if (q != NULL) {
        g->queue_next = q->gangs;
        if (q->gangs != NULL)
            q->gangs->queue_prev = g;
        q->gangs = g;
        q->ngangs++;
        queue_dirty(c, q);
    }
    if (old != NULL)
        queue_maybe_free(c, old);
}

/* Sets g->preempted_by to by_new (steals; NULL: none), keeping c->preempted the list of the gangs that have one. */
static void gang_set_preempted_by(struct cache *c, struct cache_gang *g, char *by_new)
{
    int was = g->preempted_by != NULL;
    free(g->preempted_by);
    g->preempted_by = by_new;
    if (was && by_new == NULL) {
        if (g->pre_prev != NULL)
            g->pre_prev->pre_next = g->pre_next;
        else
            c->preempted = g->pre_next;
        if (g->pre_next != NULL)
            g->pre_next->pre_prev = g->pre_prev;
        g->pre_prev = g->pre_next = NULL;
    } else if (!was && by_new != NULL) {
        g->pre_prev = NULL;
        g->pre_next = c->preempted;
        if (c->preempted != NULL)
            c->preempted->pre_prev = g;
        c->preempted = g;
    }
}

/* Forgets what g's RayCluster said, but preempted_by: that keeps c->preempted, gang_set_preempted_by's. */
static void gang_clear_cluster(struct cache *c, struct cache_gang *g)
{
    free(g->uid);
    free(g->resource_version);
    free(g->spec_error);
    free(g->record_error);
    g->record_error = NULL;
    shape_release(&c->shapes, g->priority_class);
    shape_release(&c->shapes, g->owner_name);
    free(g->owner_uid);
    g->preemptable = 1;
    g->uid = g->resource_version = g->spec_error = g->owner_uid = NULL;
    g->priority_class = g->owner_name = NULL;
}

/* Frees g and what it holds alone, touching no other gang: its lists are unlinked, or go with the cache. */
static void gang_free(struct cache *c, struct cache_gang *g)
{
    gang_clear_cluster(c, g);
    free(g->preempted_by);
    dispatchlease_drop(&g->lease);
    model_gang_clear_admitted(g);
    free(g->admit_mark_rv);
    free(g->evict_mark_rv);
    free(g->last_message);
    free(g->tail_message);
    model_gang_clear_groups(&c->shapes, g);
    resources_finish(&g->min_resources);
    shape_rl_release(&c->shapes, g->min_rl);
    shape_release(&c->shapes, g->namespace_);
    shape_release(&c->shapes, g->name);
    model_gang_memo_free(g);
    free(g);
}

static void gang_maybe_free(struct cache *c, struct cache_gang *g)
{
    if (g->present || g->npods > 0)
        return;
    cache_gang_set_node_wait(c, g, 0);
    model_gang_early_unlink(&c->early, g);
    gang_set_queue(c, g, NULL);
    gang_set_preempted_by(c, g, NULL);
    table_remove(&c->gangs, &g->by_name);
    if (g->all_prev != NULL)
        g->all_prev->all_next = g->all_next;
    else
        c->all_gangs = g->all_next;
    if (g->all_next != NULL)
        g->all_next->all_prev = g->all_prev;
    c->shared_gangs -= (size_t)devices_gang_shares(g);
    c->carried_gangs -= g->carried;
    gang_free(c, g);
}

/* ---- pods ---- */

int cache_pod_live(const struct cache_pod *pod)
{
    return model_pod_live(pod);
}

int cache_pod_gated(const struct cache_pod *pod)
{
    return (pod->flags & CACHE_POD_GATED) && !(pod->flags & CACHE_POD_MARKED_UNGATED);
}

/* A pod the scheduler has yet to bind that this controller admitted: it holds room on some node. */
static int pod_should_reserve(const struct cache_pod *pod)
{
    return pod->gang != NULL && pod->gang->admitted && cache_pod_live(pod) && !cache_pod_gated(pod) && pod->node == NULL;
}

static void reserving_remove(struct cache *c, struct cache_pod *pod)
{
    struct cache_pod *last = c->reserving[--c->nreserving];
    c->reserving[pod->resv_at] = last;
    last->resv_at = pod->resv_at;
    pod->resv_at = 0;
    pod->reserving = 0;
    /* A reservation released (bound or gone) may leave room somewhere else. */
    c->capacity_changed = 1;
}

static void update_reserving(struct cache *c, struct cache_pod *pod)
{
    int want = pod_should_reserve(pod);
    if (want == pod->reserving)
        return;
    if (!want) {
        reserving_remove(c, pod);
        return;
    }
    if (c->nreserving == c->reserving_cap) {
        c->reserving_cap = c->reserving_cap != 0 ? 2 * c->reserving_cap : 64;
        c->reserving = util_realloc(c->reserving, c->reserving_cap * sizeof(*c->reserving));
    }
    pod->resv_at = c->nreserving;
    c->reserving[c->nreserving++] = pod;
    pod->reserving = 1;
}

static int pod_is(const struct table_node *n, const void *key)
{
    const struct cache_pod *p = TABLE_CONTAINER_OF(n, struct cache_pod, by_name);
    const struct ns_name *k = key;
    return strcmp(p->name, k->name) == 0 && util_streq(p->namespace_, k->ns != NULL ? k->ns : "");
}

struct cache_pod *cache_pod_get(const struct cache *c, const char *namespace_, const char *name)
{
    const struct ns_name k = {namespace_, name};
    struct table_node *n = table_find(&c->pods, key_hash(namespace_, name), pod_is, &k);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct cache_pod, by_name) : NULL;
}

static int pod_uid_is(const struct table_node *n, const void *uid)
{
    return strcmp(TABLE_CONTAINER_OF(n, struct cache_pod, by_uid)->uid, uid) == 0;
}

struct cache_pod *cache_pod_by_uid(const struct cache *c, const char *uid)
{
    struct table_node *n = table_find(&c->pods_uid, table_hash_str(TABLE_HASH_SEED, uid), pod_uid_is, uid);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct cache_pod, by_uid) : NULL;
}

/* Removes pod's contributions to node usage and its gang, leaving its fields; an emptied gang is freed, or kept (upsert). */
static void pod_detach(struct cache *c, struct cache_pod *pod, struct cache_gang **kept)
{
    if (pod->reserving)
        reserving_remove(c, pod);
    if (pod->counted != NULL) {
        model_node_account(pod->counted, pod->request, -1, pod->queue == NULL);
        c->nodes_gen += pod->queue == NULL;
        pod->counted = NULL;
    }
    if (pod->node != NULL) {
        struct cache_node *node = pod->node;
        node->bound--;
        pod->node = NULL;
        node_maybe_free(c, node);
    }
    if (pod->gang != NULL) {
        struct cache_gang *g = pod->gang;
        model_gang_remove_pod(g, pod);
        model_gang_short_update(g, c->clock_ms);
        g->npods--;
        pod->gang = NULL;
        cache_gang_mark_changed(c, g);
        kept != NULL ? (void)(*kept = g) : gang_maybe_free(c, g);
    }
}

/* What an upsert keeps of a pod's previous version. */
struct pod_prev {
    struct cache_node *counted;     /* the node its usage was counted on, or NULL */
    const struct shape_rl *request; /* its request while counted: a reference, released by pod_attach() */
    int keep_mark;                  /* CACHE_POD_MARKED_UNGATED stands: the version marked */
    int told;                       /* CACHE_POD_TOLD stands: the same pod (uid) */
    struct cache_gang *gang;        /* its gang, not freed (a gone RayCluster's keeps its queue share): pod_attach */
};

/* The pod cached as ns/name, detached and emptied (what stands of it in *prev), else a new one. */
static struct cache_pod *pod_reuse(struct cache *c, const char *ns, const char *name, const char *uid, const char *rv,
                                   struct pod_prev *prev)
{
    memset(prev, 0, sizeof(*prev));
    struct cache_pod *pod = cache_pod_get(c, ns, name);
    if (pod != NULL) {
        prev->told = (pod->flags & CACHE_POD_TOLD) && strcmp(pod->uid, uid) == 0;
        prev->counted = pod->counted;
        if (prev->counted != NULL && pod->request != NULL) {
            prev->request = pod->request;
            shape_rl_ref(prev->request); /* compared by pod_attach() */
        }
        /* Our gate, once removed, cannot come back (the API only lets scheduling gates be removed after creation): a
           version that still shows it is older than our patch, delivered late (our patch followed a 409 and a re-read),
           and must not make the pod gated again, which would drop its share from its queue until the next event. */
        prev->keep_mark = (pod->flags & CACHE_POD_MARKED_UNGATED) && strcmp(pod->uid, uid) == 0;
        pod_detach(c, pod, &prev->gang);
        table_remove(&c->pods_uid, &pod->by_uid);
        model_pod_release(&c->shapes, pod);
    } else {
        pod = util_calloc_lines(sizeof(*pod)); /* its first line is what a pass reads (model.h) */
        pod->by_name.hash = key_hash(ns, name);
        table_insert(&c->pods, &pod->by_name);
    }
    return pod;
}

/* Sets pod's name, uid and resourceVersion (one allocation) and indexes it by uid. */
static void pod_set_names(struct cache *c, struct cache_pod *pod, const char *name, const char *uid, const char *rv)
{
    size_t ln = strlen(name), lu = strlen(uid), lr = strlen(rv);
    pod->strings = util_malloc(ln + lu + lr + 3);
    memcpy(pod->strings, name, ln + 1);
    memcpy(pod->strings + ln + 1, uid, lu + 1);
    memcpy(pod->strings + ln + lu + 2, rv, lr + 1);
    pod->name = pod->strings;
    pod->uid = pod->strings + ln + 1;
    pod->resource_version = pod->strings + ln + lu + 2;
    pod->by_uid.hash = table_hash_str(TABLE_HASH_SEED, pod->uid);
    table_insert(&c->pods_uid, &pod->by_uid);
}

/* Binds pod to its node (spec.nodeName, obj borrowed), counting its usage there, and to its gang. */
static void pod_attach(struct cache *c, struct cache_pod *pod, const char *ns, const json_t *obj, struct pod_prev *prev)
{
    const char *node_name = json_string_value(json_object_get(json_object_get(obj, "spec"), "nodeName"));
    if (node_name != NULL && node_name[0] != '\0') {
        pod->node = node_ref(c, node_name);
        pod->node->bound++;
        if (pod->phase != CACHE_PHASE_SUCCEEDED && pod->phase != CACHE_PHASE_FAILED) {
            pod->counted = pod->node;
            model_node_account(pod->counted, pod->request, 1, pod->queue == NULL);
            c->nodes_gen += pod->queue == NULL;
        }
    }
    /* Usage that went down or moved may make room for a waiting gang. */
    if (prev->counted != NULL && (prev->counted != pod->counted || prev->request != pod->request))
        c->capacity_changed = 1;
    shape_rl_release(&c->shapes, prev->request);
    prev->request = NULL;

    if (pod->cluster != NULL) {
        struct cache_gang *g = gang_ref(c, ns, pod->cluster);
        pod->gang = g;
        model_gang_insert_pod(g, pod);
        model_gang_short_update(g, c->clock_ms);
        g->npods++;
        cache_gang_mark_changed(c, g);
    }
    if (prev->gang != NULL && prev->gang != pod->gang)
        gang_maybe_free(c, prev->gang);
    update_reserving(c, pod);
}

int cache_upsert_pod(struct cache *c, const json_t *obj, struct error *err)
{
    const char *ns, *name;
    const json_t *meta = metadata_name(obj, &ns, &name, err);
    if (meta == NULL)
        return -1;
    if (ns == NULL)
        ns = "";
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    if (uid == NULL)
        uid = "";
    if (rv == NULL)
        rv = "";

    struct pod_prev prev;
    struct cache_pod *pod = pod_reuse(c, ns, name, uid, rv, &prev);
    pod_set_names(c, pod, name, uid, rv);
    model_pod_parse_meta(&c->shapes, pod, ns, meta,
                         (uint8_t)((prev.keep_mark ? CACHE_POD_MARKED_UNGATED : 0) | (prev.told ? CACHE_POD_TOLD : 0)));
    model_pod_parse_spec(&c->shapes, pod, obj);
    devices_pod_parse(&c->shapes, c->dra, pod, obj);
    pod_attach(c, pod, ns, obj, &prev);
    c->generation++;
    return 0;
}

void cache_delete_pod(struct cache *c, const char *namespace_, const char *name)
{
    struct cache_pod *pod = cache_pod_get(c, namespace_, name);
    if (pod == NULL)
        return;
    if (pod->counted != NULL)
        c->capacity_changed = 1;
    pod_detach(c, pod, NULL);
    table_remove(&c->pods, &pod->by_name);
    table_remove(&c->pods_uid, &pod->by_uid);
    model_pod_release(&c->shapes, pod);
    free(pod);
    c->generation++;
}

void cache_pod_mark_told(struct cache_pod *pod)
{
    pod->flags |= CACHE_POD_TOLD;
}

void cache_pod_mark_ungated(struct cache *c, struct cache_pod *pod)
{
    pod->flags |= CACHE_POD_MARKED_UNGATED;
    if (pod->gang != NULL) {
        model_gang_count_open(pod->gang, pod);
        cache_gang_mark_changed(c, pod->gang);
    }
    update_reserving(c, pod);
}

/* ---- RayClusters ---- */

static void gang_update_reserving(struct cache *c, struct cache_gang *g)
{
    for (struct cache_pod *p = g->pods; p != NULL; p = p->gang_next)
        update_reserving(c, p);
}

int cache_preemptable(const char *label, const char *annotation)
{
    /* Volcano reads the value as a boolean; "false" is what users write. */
    return !(label != NULL && strcmp(label, "false") == 0) && !(annotation != NULL && strcmp(annotation, "false") == 0);
}

/* What preemption reads of a RayCluster's metadata (borrowed): volcano.sh/preemptable, raygate.io/preempted-by. */
static void gang_parse_preemption(struct cache *c, struct cache_gang *g, const json_t *meta)
{
    const json_t *labels = json_object_get(meta, "labels"), *annotations = json_object_get(meta, "annotations");
    g->preemptable = (uint8_t)cache_preemptable(json_string_value(json_object_get(labels, NAMES_LABEL_PREEMPTABLE)),
                                                json_string_value(json_object_get(annotations, NAMES_LABEL_PREEMPTABLE)));
    gang_set_preempted_by(c, g, util_strdup(json_string_value(json_object_get(annotations, NAMES_ANNOTATION_PREEMPTED_BY))));
}

int cache_upsert_raycluster(struct cache *c, const json_t *obj, struct error *err)
{
    const char *ns, *name;
    const json_t *meta = metadata_name(obj, &ns, &name, err);
    if (meta == NULL)
        return -1;
    if (ns == NULL)
        ns = "";
    struct cache_gang *g = gang_ref(c, ns, name);
    const json_t *labels = json_object_get(meta, "labels");
    model_gang_parse_admitted(g, meta);

    /* A preemption marked (cache_gang_mark_preempted) stands as long as the eviction it was marked with. */
    char *marked_by = g->evict_mark_rv != NULL ? util_strdup(g->preempted_by) : NULL;
    gang_clear_cluster(c, g);
    model_gang_parse_eviction(g, meta);
    g->uid = util_strdup(json_string_value(json_object_get(meta, "uid")));
    g->resource_version = util_strdup(json_string_value(json_object_get(meta, "resourceVersion")));
    g->priority_class = shape_member(&c->shapes, labels, NAMES_LABEL_PRIORITY);
    const char *owner, *owner_uid;
    if (rayjob_owner_of(obj, &owner, &owner_uid)) {
        g->owner_name = shape_intern(&c->shapes, owner);
        g->owner_uid = util_strdup(owner_uid);
    }
    g->created = model_parse_time(json_string_value(json_object_get(meta, "creationTimestamp")));
    gang_parse_preemption(c, g, meta);
    if (g->evict_mark_rv != NULL && g->preempted_by == NULL) {
        gang_set_preempted_by(c, g, marked_by);
        marked_by = NULL;
    }
    free(marked_by);
    c->shared_gangs -= (size_t)devices_gang_shares(g);
    model_gang_parse_spec(&c->shapes, g, obj);
    devices_gang_parse(&c->shapes, c->dra, g, obj);
    c->shared_gangs += (size_t)devices_gang_shares(g);
    model_gang_short_update(g, c->clock_ms);
    c->lease_news |= (uint8_t)dispatchlease_observe(&g->lease, meta, c->clock_ms);

    const char *queue = json_string_value(json_object_get(labels, NAMES_LABEL_QUEUE));
    gang_set_queue(c, g, queue != NULL && queue[0] != '\0' ? queue_ref(c, queue) : NULL);
    g->present = 1;
    uint8_t admitted = g->admitted_at != NULL;
    if (admitted != g->admitted) {
        g->admitted = admitted;
        if (!admitted)
            c->capacity_changed = 1; /* its reservations are gone */
        gang_update_reserving(c, g);
    }
    cache_gang_mark_changed(c, g);
    return 0;
}

void cache_gang_mark_admitted(struct cache *c, struct cache_gang *g, const char *at)
{
    free(g->evict_mark_rv);
    g->evict_mark_rv = NULL;
    free(g->admit_mark_rv);
    g->admit_mark_rv = util_strdup(g->resource_version != NULL ? g->resource_version : "");
    model_gang_set_admitted(g, at != NULL ? at : "");
    g->admitted = 1;
    gang_update_reserving(c, g);
    cache_gang_mark_changed(c, g);
}

void cache_gang_mark_placed(struct cache_gang *g, const char *placed)
{
    model_gang_set_placed(g, placed);
}

void cache_gang_mark_evicted(struct cache *c, struct cache_gang *g, const struct evict_record *rec)
{
    free(g->evict_mark_rv);
    g->evict_mark_rv = util_strdup(g->resource_version != NULL ? g->resource_version : "");
    free(g->admit_mark_rv);
    g->admit_mark_rv = NULL;
    model_gang_clear_admitted(g);
    g->record = *rec;
    if (g->held && rec->generation > g->generation) /* its record's suspend: a spec change, before the watch shows it */
        g->generation = rec->generation;
    if (g->admitted) {
        g->admitted = 0;
        c->capacity_changed = 1; /* its reservations are gone */
        gang_update_reserving(c, g);
    }
    cache_gang_mark_changed(c, g);
}

void cache_gang_mark_preempted(struct cache *c, struct cache_gang *g, const char *by)
{
    gang_set_preempted_by(c, g, util_strdup(by));
    cache_gang_mark_changed(c, g);
}

void cache_delete_raycluster(struct cache *c, const char *namespace_, const char *name)
{
    struct cache_gang *g = cache_gang_get(c, namespace_, name);
    if (g == NULL || !g->present)
        return;
    /* queue, admitted and minResources stay: the gang holds its queue share until its pods are gone. */
    g->present = 0;
    gang_clear_cluster(c, g);
    gang_set_preempted_by(c, g, NULL);
    dispatchlease_drop(&g->lease);
    free(g->admit_mark_rv);
    g->admit_mark_rv = NULL;
    cache_gang_mark_changed(c, g);
    gang_maybe_free(c, g);
}

void cache_set_clock(struct cache *c, int64_t now_ms)
{
    c->clock_ms = now_ms;
}

void cache_mark_all_dirty(struct cache *c)
{
    struct cache_queue *q;
    cache_queue_for_each(q, c)
        q->dirty = 1;
    for (struct cache_gang *g = c->all_gangs; g != NULL; g = g->all_next)
        model_gang_touch(g); /* pods' requests or minResources may have been priced again (dracache.h) */
    c->capacity_changed = 1;
}

unsigned cache_take_changes(struct cache *c)
{
    unsigned changes = (c->capacity_changed ? CACHE_CHANGED_CAPACITY : 0u) | (c->nodes_changed ? CACHE_CHANGED_NODES : 0u);
    c->capacity_changed = 0;
    c->nodes_changed = 0;
    return changes;
}

void cache_queue_mark_clean(struct cache *c, struct cache_queue *q)
{
    (void)c;
    q->dirty = 0;
}

void cache_gang_set_reason(struct cache *c, struct cache_gang *g, int tail, int reason, const char *message)
{
    (void)c;
    if (!tail && (reason != g->last_reason || !util_streq(message, g->last_message)))
        model_gang_touch(g); /* its PodGroup shows it */
    char *copy = util_strdup(message);
    if (tail) {
        g->tail_reason = reason;
        free(g->tail_message);
        g->tail_message = copy;
    } else {
        g->last_reason = reason;
        free(g->last_message);
        g->last_message = copy;
    }
}

void cache_gang_clear_told(struct cache *c, struct cache_gang *g)
{
    (void)c;
    struct cache_pod *p;
    cache_gang_for_each_pod(p, g)
        p->flags &= (uint8_t)~CACHE_POD_TOLD;
}

void cache_gang_set_complete_ms(struct cache *c, struct cache_gang *g, int64_t ms)
{
    (void)c;
    g->complete_ms = ms;
}

void cache_destroy(struct cache *c)
{
    if (c == NULL)
        return;
    /* Each object frees what it holds and nothing else: the links and the counts between them go with the cache. */
    struct table_node *n, *next;
    for (n = table_next(&c->pods, NULL); n != NULL; n = next) {
        next = table_next(&c->pods, n); /* read before n is freed */
        struct cache_pod *pod = TABLE_CONTAINER_OF(n, struct cache_pod, by_name);
        model_pod_release(&c->shapes, pod);
        free(pod);
    }
    for (struct cache_gang *g = c->all_gangs, *gnext; g != NULL; g = gnext) {
        gnext = g->all_next;
        gang_free(c, g);
    }
    for (n = table_next(&c->queues, NULL); n != NULL; n = next) {
        next = table_next(&c->queues, n);
        queue_free(c, TABLE_CONTAINER_OF(n, struct cache_queue, by_name));
    }
    for (n = table_next(&c->nodes, NULL); n != NULL; n = next) {
        next = table_next(&c->nodes, n);
        node_free(c, TABLE_CONTAINER_OF(n, struct cache_node, by_name));
    }
    shape_pool_finish(&c->shapes);
    table_finish(&c->nodes);
    table_finish(&c->pods);
    table_finish(&c->pods_uid);
    table_finish(&c->gangs);
    table_finish(&c->queues);
    free(c->reserving);
    free(c);
}
