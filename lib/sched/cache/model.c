#include "model.h"
#include "queuetree.h"

#include <stdlib.h>
#include <string.h>

#include "gang.h"
#include "legacy.h"
#include "names.h"
#include "submitter.h"
#include "util.h"

int64_t model_parse_time(const char *s)
{
    int64_t t;
    return util_parse_time(s, &t) == 0 ? t : 0;
}

void model_node_clear(struct shape_pool *p, struct cache_node *node)
{
    for (uint32_t i = 0; i < node->nlabels; i++) {
        shape_release(p, node->labels[i].key);
        shape_release(p, node->labels[i].value);
    }
    free(node->labels);
    node->labels = NULL;
    node->nlabels = 0;
    for (uint32_t i = 0; i < node->ntaints; i++) {
        shape_release(p, node->taints[i].key);
        shape_release(p, node->taints[i].value);
    }
    free(node->taints);
    node->taints = NULL;
    node->ntaints = 0;
    shape_rl_release(p, node->allocatable);
    node->allocatable = NULL;
    node->alloc_pods = INT64_MAX;
    node->ready = 0;
    node->unschedulable = 0;
}

int model_node_same(const struct cache_node *a, const struct cache_node *b)
{
    if (a->ready != b->ready || a->unschedulable != b->unschedulable || a->allocatable != b->allocatable ||
        a->alloc_pods != b->alloc_pods || a->nlabels != b->nlabels || a->ntaints != b->ntaints)
        return 0;
    for (uint32_t i = 0; i < a->nlabels; i++) {
        if (a->labels[i].key != b->labels[i].key || a->labels[i].value != b->labels[i].value)
            return 0;
    }
    for (uint32_t i = 0; i < a->ntaints; i++) {
        if (a->taints[i].key != b->taints[i].key || a->taints[i].value != b->taints[i].value ||
            a->taints[i].effect != b->taints[i].effect)
            return 0;
    }
    return 1;
}

/* A node's labels (metadata.labels, borrowed) into fresh, sorted by key: the comparison with the previous version is then
 * order-independent. */
static void node_parse_labels(struct shape_pool *p, struct cache_node *fresh, const json_t *labels)
{
    const char *k;
    const json_t *v;
    fresh->labels = util_calloc(json_object_size(labels), sizeof(*fresh->labels));
    const char **keys = util_calloc(json_object_size(labels), sizeof(*keys));
    size_t nkeys = 0;
    json_object_foreach((json_t *)labels, k, v)
    {
        if (json_is_string(v))
            keys[nkeys++] = k;
    }
    for (size_t i = 1; i < nkeys; i++) {
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    }
    for (size_t i = 0; i < nkeys; i++) {
        fresh->labels[i].key = shape_intern(p, keys[i]);
        fresh->labels[i].value = shape_intern(p, json_string_value(json_object_get(labels, keys[i])));
    }
    fresh->nlabels = (uint32_t)nkeys;
    free(keys);
}

/* spec.unschedulable and the NoSchedule/NoExecute taints, from spec (borrowed). */
static void node_parse_spec(struct shape_pool *p, struct cache_node *fresh, const json_t *spec)
{
    fresh->unschedulable = json_is_true(json_object_get(spec, "unschedulable"));
    const json_t *taints = json_object_get(spec, "taints");
    fresh->taints = util_calloc(json_array_size(taints), sizeof(*fresh->taints));
    for (size_t i = 0; i < json_array_size(taints); i++) {
        const json_t *t = json_array_get(taints, i);
        uint8_t effect = shape_effect(json_string_value(json_object_get(t, "effect")));
        const char *key = json_string_value(json_object_get(t, "key"));
        if (effect == SHAPE_EFFECT_ANY || key == NULL)
            continue; /* PreferNoSchedule does not keep a pod off */
        struct shape_taint *taint = &fresh->taints[fresh->ntaints++];
        taint->key = shape_intern(p, key);
        taint->value = shape_member(p, t, "value");
        taint->effect = effect;
    }
}

/* Allocatable (with its "pods") and the Ready condition, from status (borrowed). */
static void node_parse_status(struct shape_pool *p, struct cache_node *fresh, const json_t *status)
{
    struct resources alloc;
    struct error rerr;
    resources_init(&alloc);
    if (resources_parse(&alloc, json_object_get(status, "allocatable"), "status.allocatable", 0, &rerr) == 0) {
        const struct quantity *pods = resources_get(&alloc, "pods");
        if (pods != NULL)
            fresh->alloc_pods = pods->value;
        fresh->allocatable = shape_rl_intern(p, &alloc, 0, "pods");
    }
    resources_finish(&alloc);
    const json_t *conds = json_object_get(status, "conditions");
    for (size_t i = 0; i < json_array_size(conds); i++) {
        const json_t *cond = json_array_get(conds, i);
        if (util_streq(json_string_value(json_object_get(cond, "type")), "Ready"))
            fresh->ready = util_streq(json_string_value(json_object_get(cond, "status")), "True");
    }
}

static void node_grow_used(struct cache_node *node, uint32_t n)
{
    if (node->nused >= n)
        return;
    node->used = util_realloc(node->used, n * sizeof(*node->used));
    memset(node->used + node->nused, 0, (n - node->nused) * sizeof(*node->used));
    node->foreign = util_realloc(node->foreign, n * sizeof(*node->foreign));
    memset(node->foreign + node->nused, 0, (n - node->nused) * sizeof(*node->foreign));
    node->nused = n;
}

void model_node_parse(struct shape_pool *p, struct cache_node *fresh, const json_t *obj)
{
    memset(fresh, 0, sizeof(*fresh));
    fresh->alloc_pods = INT64_MAX;
    node_parse_labels(p, fresh, json_object_get(json_object_get(obj, "metadata"), "labels"));
    node_parse_spec(p, fresh, json_object_get(obj, "spec"));
    node_parse_status(p, fresh, json_object_get(obj, "status"));
}

void model_node_account(struct cache_node *node, const struct shape_rl *req, int sign, int foreign)
{
    if (req != NULL) {
        for (uint32_t i = 0; i < req->len; i++) {
            node_grow_used(node, req->items[i].id + 1);
            node->used[req->items[i].id] += sign * req->items[i].value;
            if (foreign)
                node->foreign[req->items[i].id] += sign * req->items[i].value;
        }
    }
    node->used_pods += sign;
    node->room_gen++;
}

/* The interned resource list of v (borrowed; NULL: absent), or NULL when absent, invalid or (nonempty) empty. */
static const struct shape_rl *parse_rl(struct shape_pool *p, const json_t *v, const char *field, int nonempty)
{
    struct resources res;
    struct error rerr;
    resources_init(&res);
    const struct shape_rl *rl = NULL;
    if (v != NULL && resources_parse(&res, v, field, 0, &rerr) == 0 && (!nonempty || res.len > 0))
        rl = shape_rl_intern(p, &res, 1, NULL);
    resources_finish(&res);
    return rl;
}

int model_queue_parse_preemption(struct shape_pool *p, struct cache_queue *q, const json_t *obj)
{
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *annotations = json_object_get(json_object_get(obj, "metadata"), "annotations");
    const struct shape_rl *deserved = parse_rl(p, json_object_get(spec, "deserved"), "spec.deserved", 0);
    uint8_t reclaimable = !json_is_false(json_object_get(spec, "reclaimable"));
    const char *preemption = shape_member(p, annotations, NAMES_ANNOTATION_PREEMPTION);
    const char *by_weight = json_string_value(json_object_get(annotations, NAMES_ANNOTATION_RECLAIM_BY_WEIGHT));
    uint8_t reclaim_by_weight = by_weight != NULL && strcmp(by_weight, "true") == 0;
    int changed = q->deserved != deserved || q->reclaimable != reclaimable || q->preemption != preemption ||
                  q->reclaim_by_weight != reclaim_by_weight;
    shape_rl_release(p, q->deserved);
    shape_release(p, q->preemption);
    q->deserved = deserved;
    q->reclaimable = reclaimable;
    q->preemption = preemption;
    q->reclaim_by_weight = reclaim_by_weight;
    return changed;
}

void model_queue_release(struct shape_pool *p, struct cache_queue *q)
{
    shape_rl_release(p, q->capability);
    model_queue_parse_tree(p, q, NULL);
    shape_rl_release(p, q->deserved);
    shape_release(p, q->preemption);
    free(q->placement_timeout);
    free(q->pods_ready_timeout);
    if (q->memo != NULL) {
        free(q->memo->alloc);
        free(q->memo->demand);
        free(q->memo);
    }
}

struct cache_queue_memo *model_queue_memo(const struct cache_queue *q, uint32_t nres, int *valid)
{
    struct cache_queue_memo *mm = q->memo;
    if (mm->nres != nres || mm->alloc == NULL) {
        mm->alloc = util_realloc(mm->alloc, (nres > 0 ? nres : 1) * sizeof(*mm->alloc));
        mm->demand = util_realloc(mm->demand, (nres > 0 ? nres : 1) * sizeof(*mm->demand));
        mm->nres = nres;
        mm->valid = 0;
    }
    *valid = mm->valid && mm->version == q->version;
    return mm;
}

void model_queue_memo_done(const struct cache_queue *q, int keep)
{
    q->memo->version = q->version;
    q->memo->valid = (uint8_t)(keep != 0);
}

int model_queue_parse_tree(struct shape_pool *p, struct cache_queue *q, const json_t *obj)
{
    const json_t *spec = json_object_get(obj, "spec");
    const char *parent = json_string_value(json_object_get(spec, "parent"));
    parent = queuetree_parent_is_root(parent) ? NULL : shape_intern(p, parent);
    const json_t *g = json_object_get(json_object_get(spec, "guarantee"), "resource");
    const struct shape_rl *guarantee = parse_rl(p, g, "spec.guarantee.resource", 1);
    const json_t *w = json_object_get(spec, "weight");
    uint32_t weight = json_is_integer(w) && json_integer_value(w) >= 0 && json_integer_value(w) <= UINT32_MAX
                          ? (uint32_t)json_integer_value(w)
                          : 1;
    int changed = q->parent != parent || q->guarantee != guarantee || q->weight != weight;
    shape_release(p, q->parent);
    shape_rl_release(p, q->guarantee);
    q->parent = parent;
    q->guarantee = guarantee;
    q->weight = weight;
    return changed;
}

void model_queue_set_timeouts(struct cache_queue *q, const json_t *annotations)
{
    free(q->placement_timeout);
    free(q->pods_ready_timeout);
    q->placement_timeout = util_strdup(json_string_value(json_object_get(annotations, EVICT_ANNOTATION_PLACEMENT_TIMEOUT)));
    q->pods_ready_timeout = util_strdup(json_string_value(json_object_get(annotations, EVICT_ANNOTATION_PODS_READY_TIMEOUT)));
}

void model_devices_free(struct shape_pool *p, struct cache_devices **dev)
{
    if (*dev == NULL)
        return;
    gangclaims_finish(&(*dev)->claims);
    shape_rl_release(p, (*dev)->bare);
    shape_rl_release(p, (*dev)->fit);
    shape_rl_release(p, (*dev)->carry);
    resources_finish(&(*dev)->bare_res);
    free((*dev)->wait);
    free(*dev);
    *dev = NULL;
}

void model_gang_clear_groups(struct shape_pool *p, struct cache_gang *g)
{
    model_devices_free(p, &g->dev);
    for (uint32_t i = 0; i < g->ngroups; i++)
        shape_release(p, g->groups[i].name);
    free(g->groups);
    g->groups = NULL;
    g->ngroups = 0;
    topology_request_finish(g->topo);
    free(g->topo);
    g->topo = NULL;
}

void model_gang_parse_admitted(struct cache_gang *g, const json_t *meta)
{
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    const json_t *annotations = json_object_get(meta, "annotations");
    const char *admitted_at = json_string_value(json_object_get(annotations, NAMES_ANNOTATION_ADMITTED));
    if (admitted_at != NULL && admitted_at[0] == '\0')
        admitted_at = NULL;
    const char *held = json_string_value(json_object_get(annotations, NAMES_ANNOTATION_HELD));
    const char *release = json_string_value(json_object_get(annotations, NAMES_ANNOTATION_HELD_RELEASE));
    g->held = held != NULL && strcmp(held, "true") == 0 && !util_streq(release, NAMES_HELD_RELEASE_DONE);
    g->release_on_wait = g->held && util_streq(release, NAMES_HELD_RELEASE_ON_WAIT);
    if (admitted_at == NULL && g->admit_mark_rv != NULL && rv != NULL && strcmp(g->admit_mark_rv, rv) == 0 &&
        g->admitted_at != NULL)
        return; /* our own admission, not seen yet: it stands, and where it placed the gang */
    free(g->admit_mark_rv);
    g->admit_mark_rv = NULL;
    model_gang_set_admitted(g, admitted_at);
    /* A record outlives its admission only on the object (an eviction may leave it): it counts while admitted. */
    const char *placed = json_string_value(json_object_get(annotations, TOPOLOGY_PLACED));
    model_gang_set_placed(g, admitted_at != NULL && placed != NULL && placed[0] != '\0' ? placed : NULL);
}

void model_gang_set_admitted(struct cache_gang *g, const char *at)
{
    char *copy = util_strdup(at);
    free(g->admitted_at);
    g->admitted_at = copy;
}

void model_gang_set_placed(struct cache_gang *g, const char *placed)
{
    char *copy = util_strdup(placed);
    free(g->topo_placed);
    g->topo_placed = copy;
}

void model_gang_clear_admitted(struct cache_gang *g)
{
    model_gang_set_admitted(g, NULL);
    model_gang_set_placed(g, NULL);
}

void model_gang_parse_eviction(struct cache_gang *g, const json_t *meta)
{
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    g->generation = json_integer_value(json_object_get(meta, "generation"));
    if (g->evict_mark_rv != NULL && rv != NULL && strcmp(g->evict_mark_rv, rv) == 0) {
        model_gang_clear_admitted(g);
        return;
    }
    free(g->evict_mark_rv);
    g->evict_mark_rv = NULL;
    struct error err = {{0}};
    if (evict_record_parse(json_object_get(meta, "annotations"), &g->record, &err) != 0)
        g->record_error = util_strdup(err.message);
}

/* g's topology request (topology.h); one that does not parse makes the spec invalid (the webhook denies it first). */
static void gang_parse_topology(struct cache_gang *g, const json_t *obj)
{
    struct topo_request r;
    struct error err;
    topology_request_init(&r);
    if (g->legacy || topology_request_parse(obj, &r, &err) != 0) {
        if (!g->legacy) {
            g->spec_ok = 0;
            g->spec_error = util_strdup(err.message);
        }
        return;
    }
    if (!topology_request_any(&r)) {
        topology_request_finish(&r);
        return;
    }
    g->topo = util_calloc(1, sizeof(*g->topo));
    *g->topo = r;
}

void model_gang_parse_spec(struct shape_pool *p, struct cache_gang *g, const json_t *obj)
{
    struct gang_spec spec;
    struct error gerr;
    gang_spec_init(&spec);
    shape_rl_release(p, g->min_rl);
    g->min_rl = NULL;
    resources_finish(&g->min_resources);
    model_gang_clear_groups(p, g);
    g->legacy = (uint8_t)legacy_is_raycluster(obj);
    /* A RayJob's submitter included; the legacy operator's gang from its pod types. */
    if ((g->legacy ? legacy_gang_from_raycluster(obj, &spec, &gerr) : submitter_cluster_gang(obj, &spec, &gerr)) == 0) {
        g->spec_ok = 1;
        g->min_member = spec.min_member;
        g->native_count = spec.native_count;
        g->groups = util_calloc(spec.ngroups, sizeof(*g->groups));
        for (size_t i = 0; i < spec.ngroups; i++) {
            if (spec.groups[i].pods == 0)
                continue;
            const char *gname = spec.groups[i].name;
            g->groups[g->ngroups].name = gname != NULL && gname[0] != '\0' ? shape_intern(p, gname) : NULL;
            g->groups[g->ngroups].pods = spec.groups[i].pods;
            g->ngroups++;
        }
        resources_copy(&g->min_resources, &spec.min_resources);
        g->min_rl = shape_rl_intern(p, &spec.min_resources, 0, NULL);
        gang_parse_topology(g, obj);
    } else {
        g->spec_ok = 0;
        g->min_member = 0;
        g->native_count = 0;
        g->spec_error = util_strdup(gerr.message);
    }
    gang_spec_finish(&spec);
}

/* Creation order, then name: the order admission takes a gang's pods in. */
static int pod_before(const struct cache_pod *a, const struct cache_pod *b)
{
    if (a->created != b->created)
        return a->created < b->created;
    return strcmp(a->name, b->name) < 0;
}

/*
 * Links pod into g's list in order. Pods mostly arrive in creation order, so
 * the place is found walking back from the newest: the decision pass then
 * reads every gang in order without sorting it.
 */
int model_pod_live(const struct cache_pod *pod)
{
    return !(pod->flags & CACHE_POD_DELETING) && pod->phase != CACHE_PHASE_SUCCEEDED && pod->phase != CACHE_PHASE_FAILED;
}

void model_gang_short_update(struct cache_gang *g, int64_t now_ms)
{
    if ((int64_t)g->nlive >= g->min_member)
        g->short_since_ms = 0;
    else if (g->short_since_ms == 0)
        g->short_since_ms = now_ms;
}

void model_gang_count_open(struct cache_gang *g, struct cache_pod *pod)
{
    int open = model_pod_live(pod) && (!(pod->flags & CACHE_POD_GATED) || (pod->flags & CACHE_POD_MARKED_UNGATED));
    if (open && !(pod->flags & CACHE_POD_OPEN)) {
        pod->flags |= CACHE_POD_OPEN;
        g->nopen++;
    }
}

void model_gang_insert_pod(struct cache_gang *g, struct cache_pod *pod)
{
    model_gang_touch(g);
    if (model_pod_live(pod) && pod->node == NULL) {
        pod->flags |= CACHE_POD_UNBOUND;
        g->nunbound++;
    } else if (model_pod_live(pod) && !pod->ready) {
        pod->flags |= CACHE_POD_UNREADY;
        g->nunready++;
    }
    model_gang_count_open(g, pod);
    g->nlive += model_pod_live(pod) != 0;
    g->ndev += pod->dev != NULL;
    struct cache_pod *after = g->pods_tail;
    while (after != NULL && pod_before(pod, after))
        after = after->gang_prev;
    pod->gang_prev = after;
    pod->gang_next = after != NULL ? after->gang_next : g->pods;
    if (pod->gang_next != NULL)
        pod->gang_next->gang_prev = pod;
    else
        g->pods_tail = pod;
    if (after != NULL)
        after->gang_next = pod;
    else
        g->pods = pod;
}

void model_gang_touch(struct cache_gang *g)
{
    g->version++;
    if (g->queue != NULL)
        g->queue->version++;
}

void model_gang_early_link(struct cache_gang **head, struct cache_gang *g)
{
    if (g->on_early)
        return;
    g->on_early = 1;
    g->early_prev = NULL;
    g->early_next = *head;
    if (*head != NULL)
        (*head)->early_prev = g;
    *head = g;
}

void model_gang_early_unlink(struct cache_gang **head, struct cache_gang *g)
{
    if (!g->on_early)
        return;
    if (g->early_prev != NULL)
        g->early_prev->early_next = g->early_next;
    else
        *head = g->early_next;
    if (g->early_next != NULL)
        g->early_next->early_prev = g->early_prev;
    g->early_prev = g->early_next = NULL;
    g->on_early = 0;
}

void model_gang_early_prune(struct cache_gang **head, int (*keep)(const struct cache_gang *g))
{
    struct cache_gang *next;
    for (struct cache_gang *g = *head; g != NULL; g = next) {
        next = g->early_next;
        if (!keep(g))
            model_gang_early_unlink(head, g);
    }
}

void model_gang_memo_free(struct cache_gang *g)
{
    if (g->memo != NULL) {
        free(g->memo->held);
        free(g->memo->ungated);
        resources_finish(&g->memo->resources);
        free(g->memo);
        g->memo = NULL;
    }
}

/* g's memo, emptied when g changed since it was filled (its version moved). */
static struct cache_gang_memo *memo_current(const struct cache_gang *g)
{
    struct cache_gang_memo *mm = g->memo;
    if (mm->version != g->version) {
        mm->version = g->version;
        mm->have_held = mm->have_ungated = mm->have_phase = mm->have_resources = 0;
    }
    return mm;
}

int64_t *model_gang_memo(const struct cache_gang *g, uint32_t nres, enum model_memo_sum which, int *valid)
{
    struct cache_gang_memo *mm = memo_current(g);
    if (mm->nres != nres) {
        mm->held = util_realloc(mm->held, (nres > 0 ? nres : 1) * sizeof(*mm->held));
        mm->ungated = util_realloc(mm->ungated, (nres > 0 ? nres : 1) * sizeof(*mm->ungated));
        mm->nres = nres;
        mm->have_held = mm->have_ungated = 0;
    }
    *valid = which == MODEL_MEMO_HELD ? mm->have_held : mm->have_ungated;
    return which == MODEL_MEMO_HELD ? mm->held : mm->ungated;
}

int model_gang_memo_phase(const struct cache_gang *g, int *phase)
{
    struct cache_gang_memo *mm = memo_current(g);
    *phase = mm->phase;
    return mm->have_phase;
}

void model_gang_memo_set_phase(const struct cache_gang *g, int phase)
{
    struct cache_gang_memo *mm = memo_current(g);
    mm->phase = phase;
    mm->have_phase = 1;
}

const struct resources *model_gang_memo_resources(const struct cache_gang *g)
{
    struct cache_gang_memo *mm = memo_current(g);
    return mm->have_resources ? &mm->resources : NULL;
}

void model_gang_memo_set_resources(const struct cache_gang *g, const struct resources *r)
{
    struct cache_gang_memo *mm = memo_current(g);
    resources_copy(&mm->resources, r);
    mm->have_resources = 1;
}

void model_gang_memo_done(const struct cache_gang *g, enum model_memo_sum which)
{
    if (which == MODEL_MEMO_HELD)
        g->memo->have_held = 1;
    else
        g->memo->have_ungated = 1;
}

int model_gang_shown(const struct cache_gang *g)
{
    return g->memo != NULL && g->memo->have_shown && g->memo->shown == g->version;
}

void model_gang_set_shown(const struct cache_gang *g, int shown)
{
    if (g->memo != NULL) {
        g->memo->shown = g->version;
        g->memo->have_shown = (uint8_t)(shown != 0);
    }
}

void model_gang_remove_pod(struct cache_gang *g, struct cache_pod *pod)
{
    model_gang_touch(g);
    g->nunbound -= (pod->flags & CACHE_POD_UNBOUND) != 0;
    g->nunready -= (pod->flags & CACHE_POD_UNREADY) != 0;
    g->nopen -= (pod->flags & CACHE_POD_OPEN) != 0;
    g->nlive -= model_pod_live(pod) != 0;
    g->ndev -= pod->dev != NULL;
    pod->flags &= (uint8_t) ~(CACHE_POD_UNBOUND | CACHE_POD_UNREADY | CACHE_POD_OPEN);
    if (pod->gang_prev != NULL)
        pod->gang_prev->gang_next = pod->gang_next;
    else
        g->pods = pod->gang_next;
    if (pod->gang_next != NULL)
        pod->gang_next->gang_prev = pod->gang_prev;
    else
        g->pods_tail = pod->gang_prev;
    pod->gang_prev = pod->gang_next = NULL;
}

void model_pod_release(struct shape_pool *p, struct cache_pod *pod)
{
    shape_release(p, pod->namespace_);
    shape_release(p, pod->cluster);
    shape_release(p, pod->queue);
    shape_release(p, pod->node_type);
    shape_release(p, pod->group);
    shape_release(p, pod->replica);
    shape_release(p, pod->sched_group);
    for (uint32_t i = 0; i < pod->nforeign_gates; i++)
        shape_release(p, pod->foreign_gates[i]);
    free(pod->foreign_gates);
    shape_release(p, pod->unschedulable);
    pod->unschedulable = NULL;
    shape_rl_release(p, pod->request);
    model_devices_free(p, &pod->dev);
    shape_sched_release(p, pod->sched);
    free(pod->strings);
    pod->namespace_ = pod->cluster = pod->queue = pod->node_type = pod->group = pod->replica = pod->sched_group = NULL;
    pod->foreign_gates = NULL;
    pod->nforeign_gates = 0;
    pod->request = NULL;
    pod->sched = NULL;
    pod->strings = NULL;
}

static uint8_t parse_phase(const char *s)
{
    if (util_streq(s, "Running"))
        return CACHE_PHASE_RUNNING;
    if (util_streq(s, "Succeeded"))
        return CACHE_PHASE_SUCCEEDED;
    if (util_streq(s, "Failed"))
        return CACHE_PHASE_FAILED;
    return CACHE_PHASE_PENDING;
}

/* What eviction (evict.h) reads of a pod's conditions: Ready, and PodScheduled's time or the scheduler's message. */
static void pod_conditions(struct shape_pool *p, struct cache_pod *pod, const json_t *conditions)
{
    pod->ready = pod->refused = 0;
    pod->ready_changed = pod->scheduled_at = 0;
    size_t i;
    const json_t *cond;
    json_array_foreach(conditions, i, cond)
    {
        const char *type = json_string_value(json_object_get(cond, "type"));
        const char *status = json_string_value(json_object_get(cond, "status"));
        int64_t at = model_parse_time(json_string_value(json_object_get(cond, "lastTransitionTime")));
        if (util_streq(type, "Ready")) {
            pod->ready = util_streq(status, "True");
            pod->ready_changed = at;
        } else if (util_streq(type, "PodScheduled") && util_streq(status, "True")) {
            pod->scheduled_at = at;
        } else if (util_streq(type, "PodScheduled") && util_streq(status, "False") && pod->unschedulable == NULL) {
            pod->unschedulable = shape_member(p, cond, "message");
            pod->refused = util_streq(json_string_value(json_object_get(cond, "reason")), "Unschedulable");
        }
    }
}

void model_pod_parse_meta(struct shape_pool *p, struct cache_pod *pod, const char *ns, const json_t *meta, uint8_t keep)
{
    pod->namespace_ = shape_intern(p, ns);
    const json_t *labels = json_object_get(meta, "labels");
    pod->cluster = shape_member(p, labels, NAMES_LABEL_CLUSTER);
    pod->queue = shape_member(p, labels, NAMES_LABEL_QUEUE);
    pod->node_type = shape_member(p, labels, NAMES_LABEL_NODE_TYPE);
    pod->group = shape_member(p, labels, NAMES_LABEL_GROUP);
    pod->replica = shape_member(p, labels, TOPOLOGY_REPLICA_LABEL);
    const char *cluster, *kind, *type;
    if (pod->cluster == NULL && legacy_pod_labels(labels, &cluster, &kind, &type)) { /* the legacy operator's pod */
        pod->cluster = shape_intern(p, cluster);
        pod->node_type = kind != NULL ? shape_intern(p, kind) : NULL;
        pod->group = type != NULL ? shape_intern(p, type) : NULL;
    }
    pod->created = model_parse_time(json_string_value(json_object_get(meta, "creationTimestamp")));
    pod->flags = 0;
    if (json_object_get(meta, "deletionTimestamp") != NULL && !json_is_null(json_object_get(meta, "deletionTimestamp")))
        pod->flags |= CACHE_POD_DELETING;
    pod->flags |= keep;
}

void model_pod_parse_spec(struct shape_pool *p, struct cache_pod *pod, const json_t *obj)
{
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *gates = json_object_get(spec, "schedulingGates");
    for (size_t i = 0; i < json_array_size(gates); i++) {
        const char *gate = json_string_value(json_object_get(json_array_get(gates, i), "name"));
        if (gate == NULL)
            continue;
        if (strcmp(gate, NAMES_GATE) == 0) {
            pod->flags |= CACHE_POD_GATED;
        } else {
            pod->foreign_gates = util_realloc(pod->foreign_gates, (pod->nforeign_gates + 1) * sizeof(*pod->foreign_gates));
            pod->foreign_gates[pod->nforeign_gates++] = shape_intern(p, gate);
        }
    }
    pod->sched_group = shape_member(p, json_object_get(spec, "schedulingGroup"), "podGroupName");
    json_int_t prio = json_integer_value(json_object_get(spec, "priority"));
    pod->priority = prio > INT32_MAX ? INT32_MAX : prio < INT32_MIN ? INT32_MIN : (int32_t)prio;
    pod->phase = parse_phase(json_string_value(json_object_get(json_object_get(obj, "status"), "phase")));
    pod_conditions(p, pod, json_object_get(json_object_get(obj, "status"), "conditions"));

    struct resources req;
    struct error gerr;
    resources_init(&req);
    if (gang_pod_request(spec, &req, &gerr) == 0)
        pod->request = shape_rl_intern(p, &req, 0, NULL);
    else
        pod->flags |= CACHE_POD_BAD_REQUEST;
    resources_finish(&req);
    pod->sched = shape_sched_intern(p, spec);
}

const struct shape_rl *model_pod_fit_request(const struct cache_pod *pod)
{
    if (pod->dev == NULL)
        return pod->request;
    return pod->dev->carry != NULL ? pod->dev->carry : pod->dev->fit != NULL ? pod->dev->fit : pod->request;
}
