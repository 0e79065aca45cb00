#include "dispatchsim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatchcopy.h"
#include "evict.h"
#include "gang.h"
#include "jsonpatch.h"
#include "mutate.h"
#include "rayjob.h"
#include "submitter.h"
#include "util.h"

void dispatch_verdict_init(struct dispatch_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->reason = ADMIT_REASON_INVALID;
    v->stranded = DISPATCH_PPM;
}

void dispatch_verdict_finish(struct dispatch_verdict *v)
{
    if (v == NULL)
        return;
    free(v->message);
    v->message = NULL;
}

/* ------------------------------------------------ the RayCluster the worker would hold */

/* doc with the webhook's patch (new reference from a result's patch, borrowed doc), or a new copy when none. */
static json_t *patched(const json_t *doc, struct mutate_result *m, struct error *err)
{
    if (m->patch == NULL)
        return json_deep_copy(doc);
    return jsonpatch_apply(doc, m->patch, err);
}

/* The webhook's RayCluster decision applied to cluster (steals). */
static json_t *mutate_cluster_new(json_t *cluster, struct error *err)
{
    struct mutate_result m;
    mutate_result_init(&m);
    json_t *out = NULL;
    if (mutate_raycluster(cluster, &m, err) == 0)
        out = patched(cluster, &m, err);
    mutate_result_finish(&m);
    json_decref(cluster);
    return out;
}

/* The RayCluster KubeRay makes for rayjob (borrowed, mutated by the webhook already), named name. New reference. */
static json_t *cluster_of_rayjob(const json_t *rayjob, const char *name)
{
    const json_t *meta = json_object_get(rayjob, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    json_t *annotations = json_object_get(meta, "annotations");
    labels = json_is_object(labels) ? json_deep_copy(labels) : json_object();
    annotations = json_is_object(annotations) ? json_deep_copy(annotations) : json_object();
    const char *job = json_string_value(json_object_get(meta, "name"));
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    json_object_set_new(labels, NAMES_LABEL_ORIGIN_CRD, json_string("RayJob"));
    json_object_set_new(labels, RAYJOB_LABEL_ORIGIN_NAME, json_string(job != NULL ? job : ""));
    json_t *owner = json_pack("[{s:s,s:s,s:s,s:s,s:b}]", "apiVersion", "ray.io/v1", "kind", "RayJob", "name",
                              job != NULL ? job : "", "uid", uid != NULL ? uid : "dispatch-sim", "controller", 1);
    json_t *spec = json_object_get(json_object_get(rayjob, "spec"), "rayClusterSpec");
    return json_pack("{s:s,s:s,s:{s:s,s:O,s:o,s:o,s:o},s:O}", "apiVersion", "ray.io/v1", "kind", "RayCluster", "metadata", "name",
                     name, "namespace", json_object_get(meta, "namespace"), "labels", labels, "annotations", annotations,
                     "ownerReferences", owner, "spec", json_is_object(spec) ? spec : json_null());
}

static json_t *rayjob_cluster(const json_t *obj, const char *name, struct error *err)
{
    struct mutate_result m;
    mutate_result_init(&m);
    json_t *job = NULL, *cluster = NULL;
    if (rayjob_mutate(obj, &m, err) == 0)
        job = patched(obj, &m, err);
    mutate_result_finish(&m);
    if (job == NULL)
        return NULL;
    if (!json_is_object(json_object_get(json_object_get(job, "spec"), "rayClusterSpec")))
        error_setf(err, "spec.rayClusterSpec: missing (a RayJob on an existing cluster is not dispatched)");
    else
        cluster = mutate_cluster_new(cluster_of_rayjob(job, name), err);
    json_decref(job);
    return cluster;
}

json_t *dispatch_sim_cluster(const json_t *obj, const char *name, int64_t now_ms, struct error *err)
{
    enum dispatch_kind kind;
    if (dispatch_kind_of(obj, &kind, err) != 0)
        return NULL;
    const char *ns = json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
    const char *queue =
        json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), NAMES_LABEL_QUEUE));
    if (ns == NULL || queue == NULL || queue[0] == '\0') {
        error_setf(err, ns == NULL ? "metadata.namespace: missing" : "metadata.labels." NAMES_LABEL_QUEUE ": missing");
        return NULL;
    }
    json_t *cluster;
    if (kind == DISPATCH_KIND_RAYJOB) {
        cluster = rayjob_cluster(obj, name, err);
    } else {
        json_t *c = json_deep_copy(obj);
        json_object_set_new(json_object_get(c, "metadata"), "name", json_string(name));
        json_object_del(c, "status");
        /* The manager's gate, if any, never admits a dispatched object; a stray mark must not pass for the worker's. */
        json_object_del(json_object_get(json_object_get(c, "metadata"), "annotations"), NAMES_ANNOTATION_ADMITTED);
        cluster = mutate_cluster_new(c, err);
    }
    if (cluster == NULL)
        return NULL;
    char at[32];
    json_t *meta = json_object_get(cluster, "metadata");
    json_object_set_new(meta, "creationTimestamp", json_string(evict_format_time(now_ms, at, sizeof(at))));
    json_object_set_new(meta, "uid", json_string("dispatch-sim"));
    json_object_set_new(meta, "resourceVersion", json_string("1"));
    return cluster;
}

/* ------------------------------------------------ its member pods */

struct sim {
    struct cache *c;
    const char *ns;
    const char *cluster;
    const char *queue;
    char created[32];
    const json_t *cluster_spec; /* borrowed: the RayCluster's spec, for the head's autoscaler sidecar */
    char **pods;                /* names of the pods inserted */
    size_t npods;
};

/* A gated, unbound, Pending pod of template (borrowed) for member index i of the cluster. New reference. */
static json_t *member_pod(struct sim *s, const json_t *template, const char *type, const char *group, size_t i)
{
    const json_t *tmeta = json_object_get(template, "metadata");
    json_t *labels = json_object_get(tmeta, "labels");
    labels = json_is_object(labels) ? json_deep_copy(labels) : json_object();
    json_object_set_new(labels, NAMES_LABEL_CLUSTER, json_string(s->cluster));
    json_object_set_new(labels, NAMES_LABEL_NODE_TYPE, json_string(type));
    json_object_set_new(labels, NAMES_LABEL_GROUP, json_string(group));
    json_object_set_new(labels, NAMES_LABEL_QUEUE, json_string(s->queue));
    json_t *spec = json_object_get(template, "spec");
    spec = json_is_object(spec) ? json_deep_copy(spec) : json_object();
    json_object_del(spec, "nodeName");
    json_t *gates = json_object_get(spec, "schedulingGates");
    if (!json_is_array(gates)) {
        gates = json_array();
        json_object_set_new(spec, "schedulingGates", gates);
    }
    json_array_append_new(gates, json_pack("{s:s}", "name", NAMES_GATE));
    json_t *sidecar = strcmp(type, "head") == 0 ? gang_autoscaler_container(s->cluster_spec) : NULL;
    json_t *containers = json_object_get(spec, "containers");
    if (sidecar != NULL && json_is_array(containers))
        json_array_append(containers, sidecar); /* as KubeRay adds it: node fit counts it */
    json_decref(sidecar);
    /* Named as KubeRay names them, with an index for its random suffix: messages name pods. */
    char *name =
        strcmp(type, "head") == 0 ? util_strdupf("%s-head", s->cluster) : util_strdupf("%s-%s-worker-%zu", s->cluster, group, i);
    char *uid = util_strdupf("dispatch-sim/%s/%s", s->ns, name);
    json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s,s:o},s:o,s:{s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            "name", name, "namespace", s->ns, "uid", uid, "resourceVersion", "1", "creationTimestamp", s->created,
                            "labels", labels, "spec", spec, "status", "phase", "Pending");
    free(uid);
    s->pods = util_realloc(s->pods, (s->npods + 1) * sizeof(*s->pods));
    s->pods[s->npods++] = name;
    return pod;
}

/* Upserts one member pod; returns 0, or -1 with err. */
static int insert_member(struct sim *s, const json_t *template, const char *type, const char *group, struct error *err)
{
    json_t *pod = member_pod(s, template, type, group, s->npods);
    int rc = cache_upsert_pod(s->c, pod, err);
    json_decref(pod);
    return rc;
}

/* Upserts the head and each worker group's counted pods of cluster (borrowed). */
static int insert_members(struct sim *s, const json_t *cluster, struct error *err)
{
    struct gang_spec g;
    gang_spec_init(&g);
    int rc = submitter_cluster_gang(cluster, &g, err);
    const json_t *spec = json_object_get(cluster, "spec");
    s->cluster_spec = spec;
    if (rc == 0)
        rc = insert_member(s, json_object_get(json_object_get(spec, "headGroupSpec"), "template"), "head", "headgroup", err);
    const json_t *groups = json_object_get(spec, "workerGroupSpecs");
    for (size_t i = 0; rc == 0 && i < g.ngroups; i++) {
        const json_t *template = json_object_get(json_array_get(groups, i), "template");
        for (int64_t k = 0; rc == 0 && k < g.groups[i].pods; k++)
            rc = insert_member(s, template, "worker", g.groups[i].name != NULL ? g.groups[i].name : "", err);
    }
    gang_spec_finish(&g);
    return rc;
}

/* Removes what was inserted: the pods, then the cluster (its gang and a queue only it named go with them). */
static void remove_all(struct sim *s)
{
    for (size_t i = 0; i < s->npods; i++) {
        cache_delete_pod(s->c, s->ns, s->pods[i]);
        free(s->pods[i]);
    }
    free(s->pods);
    s->pods = NULL;
    s->npods = 0;
    cache_delete_raycluster(s->c, s->ns, s->cluster);
}

/* ------------------------------------------------ the verdict */

/* num * DISPATCH_PPM / den, for 0 <= num <= den, den > 0, without overflow. */
static int64_t ppm(int64_t num, int64_t den)
{
    while (den > INT64_MAX / DISPATCH_PPM) {
        num /= 2;
        den /= 2;
    }
    return num * DISPATCH_PPM / den;
}

/* The room left in resource id on the eligible nodes, after the gang's want: allocatable less bound and reserved requests. */
static int64_t stranded_in(const struct cache *c, uint32_t id, int64_t want)
{
    int64_t alloc = 0, used = 0;
    const struct cache_node *n;
    cache_node_for_each(n, c) {
        if (!n->present || !n->ready || n->unschedulable || n->allocatable == NULL)
            continue;
        for (uint32_t k = 0; k < n->allocatable->len; k++)
            if (n->allocatable->items[k].id == id)
                alloc = util_sat_add(alloc, n->allocatable->items[k].value);
        if (id < n->nused)
            used = util_sat_add(used, n->used[id]);
    }
    for (const struct cache_pod *p = c->reserving; p != NULL; p = p->resv_next)
        for (uint32_t k = 0; p->request != NULL && k < p->request->len; k++)
            if (p->request->items[k].id == id)
                used = util_sat_add(used, p->request->items[k].value);
    if (alloc <= 0)
        return 0;
    int64_t room = alloc - util_sat_add(used, want);
    if (room <= 0)
        return 0;
    return ppm(room, alloc);
}

/* The largest stranded fraction over the resources gang g asks for (positive minResources). */
static int64_t stranded_of(const struct cache *c, const struct cache_gang *g)
{
    int64_t worst = 0;
    for (uint32_t k = 0; g->min_rl != NULL && k < g->min_rl->len; k++) {
        if (g->min_rl->items[k].value <= 0)
            continue;
        int64_t s = stranded_in(c, g->min_rl->items[k].id, g->min_rl->items[k].value);
        if (s > worst)
            worst = s;
    }
    return worst;
}

/* The verdict from the pass's decision on the simulated gang, read before it is removed. */
static int read_verdict(struct sim *s, const struct admit_result *r, struct dispatch_verdict *out, struct error *err)
{
    for (size_t i = 0; i < r->len; i++) {
        const struct admit_decision *d = &r->items[i];
        if (strcmp(d->namespace_, s->ns) != 0 || strcmp(d->cluster, s->cluster) != 0)
            continue;
        if (d->action == ADMIT_ACTION_ADMIT) {
            const struct cache_gang *g = cache_gang_get(s->c, s->ns, s->cluster);
            out->fits = 1;
            out->reason = ADMIT_REASON_NONE;
            out->stranded = g != NULL ? stranded_of(s->c, g) : 0;
            return 0;
        }
        if (d->action == ADMIT_ACTION_WAIT) {
            out->reason = d->reason;
            out->message = util_strdup(d->message != NULL ? d->message : admit_reason_name(d->reason));
            return 0;
        }
    }
    error_setf(err, "the admission pass decided nothing on %s/%s", s->ns, s->cluster);
    return -1;
}

/* The cluster inserted with its members, one full pass, the verdict read. */
static int run(struct sim *s, struct admit *a, const json_t *cluster, int64_t now_ms, struct dispatch_verdict *out,
               struct error *err)
{
    if (cache_gang_get(s->c, s->ns, s->cluster) != NULL) {
        /* Nothing inserted: nothing of the worker's to remove either. */
        error_setf(err, "a RayCluster %s/%s exists on the worker already", s->ns, s->cluster);
        return -1;
    }
    /* Pods first: the gang is complete when its RayCluster arrives, as after a resync. */
    int rc = insert_members(s, cluster, err);
    if (rc == 0)
        rc = cache_upsert_raycluster(s->c, cluster, err);
    if (rc == 0) {
        struct admit_result r;
        admit_result_init(&r);
        admit_set_now(a, now_ms);
        admit_pass(a, ADMIT_PASS_FULL, &r);
        rc = read_verdict(s, &r, out, err);
        admit_result_finish(&r);
    }
    remove_all(s);
    return rc;
}

int dispatch_sim(struct cache *c, struct admit *a, const json_t *obj, int64_t now_ms, struct dispatch_verdict *out,
                 struct error *err)
{
    dispatch_verdict_finish(out);
    dispatch_verdict_init(out);
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    int rc = -1;
    json_t *cluster = name != NULL ? dispatch_sim_cluster(obj, name, now_ms, err) : NULL;
    if (name == NULL)
        error_setf(err, "metadata.name: missing");
    if (cluster != NULL) {
        const json_t *cmeta = json_object_get(cluster, "metadata");
        struct sim s = {
            .c = c,
            .ns = json_string_value(json_object_get(cmeta, "namespace")),
            .cluster = name,
            .queue = json_string_value(json_object_get(json_object_get(cmeta, "labels"), NAMES_LABEL_QUEUE)),
        };
        evict_format_time(now_ms, s.created, sizeof(s.created));
        rc = run(&s, a, cluster, now_ms, out, err);
        json_decref(cluster);
    }
    if (rc != 0) {
        out->fits = 0;
        out->reason = ADMIT_REASON_INVALID;
        out->message = util_strdup(err->message);
    }
    return rc;
}
