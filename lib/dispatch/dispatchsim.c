#include "dispatchsim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "declare.h"
#include "dispatchcopy.h"
#include "dracache.h"
#include "evict.h"
#include "gang.h"
#include "jsonpatch.h"
#include "mutate.h"
#include "rayjob.h"
#include "rayjobmutate.h"
#include "submitter.h"
#include "util.h"

void dispatch_sim_verdict_init(struct dispatch_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->reason = ADMIT_REASON_INVALID;
    v->stranded = DISPATCH_PPM;
}

void dispatch_sim_verdict_finish(struct dispatch_verdict *v)
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
    /* NULL options: no DRA objects here, so the annotation counts no device. */
    if (mutate_raycluster(cluster, NULL, &m, err) == 0)
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
    if (rayjob_mutate(obj, NULL, &m, err) == 0)
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
    if (dispatch_copy_kind_of(obj, &kind, err) != 0)
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
    const char *suffix;         /* after "-head" and "-worker" in the pods' names: "" for the weighed gang */
    int own_cluster;            /* the RayCluster was inserted too: removed with the pods */
    char **pods;                /* names of the pods inserted */
    size_t npods;
};

/* A gated, unbound, Pending pod of template (borrowed) for member index i of the cluster (declare.h). New reference. */
static json_t *member_pod(struct sim *s, const json_t *template, const char *type, const char *group, size_t i)
{
    const struct declare_names n = {.ns = s->ns,
                                    .cluster = s->cluster,
                                    .queue = s->queue,
                                    .created = s->created,
                                    .suffix = s->suffix,
                                    .uid_prefix = "dispatch-sim/",
                                    .cluster_spec = s->cluster_spec,
                                    .gated = 1};
    json_t *pod = declare_member_pod(&n, template, type, group, i);
    s->pods = util_realloc(s->pods, (s->npods + 1) * sizeof(*s->pods));
    s->pods[s->npods++] = util_strdup(json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")));
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

/*
 * Upserts the head and each worker group's counted pods of cluster (borrowed)
 * that the worker does not hold yet (gang g's live pods; g NULL: all of them).
 */
static int insert_members(struct sim *s, const json_t *cluster, const struct cache_gang *g, struct error *err)
{
    struct gang_spec spec;
    gang_spec_init(&spec);
    int rc = submitter_cluster_gang(cluster, &spec, err);
    int64_t *have = util_calloc(spec.ngroups + 1, sizeof(*have));
    const json_t *cspec = json_object_get(cluster, "spec");
    s->cluster_spec = cspec;
    if (rc == 0)
        declare_count_live(g, &spec, have);
    if (rc == 0 && have[0] == 0)
        rc = insert_member(s, json_object_get(json_object_get(cspec, "headGroupSpec"), "template"), "head", "headgroup", err);
    const json_t *groups = json_object_get(cspec, "workerGroupSpecs");
    for (size_t i = 0; rc == 0 && i < spec.ngroups; i++) {
        const json_t *template = json_object_get(json_array_get(groups, i), "template");
        for (int64_t k = have[1 + i]; rc == 0 && k < spec.groups[i].pods; k++)
            rc = insert_member(s, template, "worker", spec.groups[i].name != NULL ? spec.groups[i].name : "", err);
    }
    free(have);
    gang_spec_finish(&spec);
    return rc;
}

/* Removes what was inserted: the pods, then the cluster if it was inserted (its gang and a queue only it named go with it). */
static void remove_all(struct sim *s)
{
    for (size_t i = 0; i < s->npods; i++) {
        cache_delete_pod(s->c, s->ns, s->pods[i]);
        free(s->pods[i]);
    }
    free(s->pods);
    s->pods = NULL;
    s->npods = 0;
    if (s->own_cluster)
        cache_delete_raycluster(s->c, s->ns, s->cluster);
}

/* ------------------------------------------------ copies whose pods are not all made yet */

/* The pending copies' simulations (struct sim each, their strings owned). */
struct fills {
    struct sim *items;
    char **strings; /* owned names and namespaces the sims point to */
    size_t len, nstrings;
};

static const char *fills_keep(struct fills *f, const char *s)
{
    f->strings = util_realloc(f->strings, (f->nstrings + 1) * sizeof(*f->strings));
    return f->strings[f->nstrings++] = util_strdup(s != NULL ? s : "");
}

static struct sim *fills_add(struct fills *f, struct cache *c, const json_t *cluster, int64_t now_ms)
{
    const json_t *meta = json_object_get(cluster, "metadata");
    f->items = util_realloc(f->items, (f->len + 1) * sizeof(*f->items));
    struct sim *s = &f->items[f->len++];
    *s = (struct sim){
        .c = c,
        .ns = fills_keep(f, json_string_value(json_object_get(meta, "namespace"))),
        .cluster = fills_keep(f, json_string_value(json_object_get(meta, "name"))),
        .queue = fills_keep(f, json_string_value(json_object_get(json_object_get(meta, "labels"), NAMES_LABEL_QUEUE))),
        .suffix = "-pending",
    };
    evict_format_time(now_ms, s->created, sizeof(s->created));
    return s;
}

/* Whether copies (borrowed) hold the RayCluster KubeRay made for RayJob job (borrowed). */
static int job_has_cluster(const json_t *copies, const json_t *job)
{
    const json_t *jmeta = json_object_get(job, "metadata");
    const char *key;
    json_t *o;
    json_object_foreach((json_t *)copies, key, o)
    {
        const json_t *meta = json_object_get(o, "metadata"), *labels = json_object_get(meta, "labels");
        if (strncmp(key, "RayCluster/", 11) == 0 &&
            util_streq(json_string_value(json_object_get(meta, "namespace")),
                       json_string_value(json_object_get(jmeta, "namespace"))) &&
            util_streq(json_string_value(json_object_get(labels, NAMES_LABEL_ORIGIN_CRD)), "RayJob") &&
            util_streq(json_string_value(json_object_get(labels, RAYJOB_LABEL_ORIGIN_NAME)),
                       json_string_value(json_object_get(jmeta, "name"))))
            return 1;
    }
    return 0;
}

/* A RayJob copy KubeRay has made no RayCluster for yet: not started (no status, New or Initializing), none in copies. */
static int job_pending(const json_t *copies, const json_t *job)
{
    const char *st = json_string_value(json_object_get(json_object_get(job, "status"), "jobDeploymentStatus"));
    if (st != NULL && st[0] != '\0' && strcmp(st, "New") != 0 && strcmp(st, "Initializing") != 0)
        return 0;
    return !job_has_cluster(copies, job);
}

/*
 * A copy (borrowed) whose RayCluster name the view's cache does not hold yet:
 * a RayCluster just created (no watch event for it so far), or a RayJob's
 * cluster KubeRay is about to make. Filled as the whole RayCluster the
 * worker's webhook makes of it, with all its members, a second before the
 * weighed gang (creation times are in seconds: the older, it goes first in
 * the pass, as on the worker).
 */
static void fill_created(struct fills *f, struct cache *c, const json_t *copy, const char *name, int64_t now_ms)
{
    struct error err = {{0}};
    json_t *cluster = dispatch_sim_cluster(copy, name, now_ms - 1000, &err);
    if (cluster != NULL) {
        struct sim *s = fills_add(f, c, cluster, now_ms);
        s->own_cluster = 1;
        if (insert_members(s, cluster, NULL, &err) == 0)
            cache_upsert_raycluster(c, cluster, &err);
    }
    json_decref(cluster);
}

/* A RayCluster copy (borrowed): held by the worker, not admitted: the members it lacks; not held yet: all of it. */
static void fill_cluster(struct fills *f, struct cache *c, const json_t *copy, int64_t now_ms)
{
    const json_t *meta = json_object_get(copy, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    const struct cache_gang *g = name != NULL ? cache_gang_get(c, ns != NULL ? ns : "", name) : NULL;
    struct error err = {{0}};
    if (name != NULL && g == NULL)
        fill_created(f, c, copy, name, now_ms);
    else if (g != NULL && g->present && !g->admitted && g->spec_ok)
        insert_members(fills_add(f, c, copy, now_ms), copy, g, &err);
}

/* A RayJob copy (borrowed) with no RayCluster yet: the whole RayCluster KubeRay is about to make, with all its members. */
static void fill_job(struct fills *f, struct cache *c, const json_t *copy, int64_t now_ms)
{
    const json_t *meta = json_object_get(copy, "metadata");
    const char *job = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    char *name = util_strdupf("%s-pending", job != NULL ? job : "");
    if (job != NULL && cache_gang_get(c, ns != NULL ? ns : "", name) == NULL)
        fill_created(f, c, copy, name, now_ms);
    free(name);
}

/*
 * Every copy of copies (borrowed, may be NULL: the view's, dispatchview.h)
 * but the weighed gang's own, whose pods KubeRay has not all made yet, into
 * the cache at its full demand, as it will be on the worker in a moment.
 * Copies that cannot be sized are left out: their errors are not the weighed
 * gang's.
 */
static void fill_copies(struct fills *f, const struct sim *weighed, const json_t *copies, int64_t now_ms)
{
    const char *key;
    json_t *copy;
    json_object_foreach((json_t *)copies, key, copy)
    {
        const json_t *meta = json_object_get(copy, "metadata");
        struct cache *c = weighed->c;
        if (util_streq(json_string_value(json_object_get(meta, "name")), weighed->cluster) &&
            util_streq(json_string_value(json_object_get(meta, "namespace")), weighed->ns))
            continue; /* the weighed object's own copy: never its own rival */
        if (json_object_get(meta, "deletionTimestamp") != NULL)
            continue; /* withdrawn or deleted: it is leaving, not about to fill the worker */
        if (strncmp(key, "RayCluster/", 11) == 0)
            fill_cluster(f, c, copy, now_ms);
        else if (strncmp(key, "RayJob/", 7) == 0 && job_pending(copies, copy))
            fill_job(f, c, copy, now_ms);
    }
}

/* Removes every fill, last first, and frees f. */
static void fills_remove(struct fills *f)
{
    for (size_t i = f->len; i-- > 0;)
        remove_all(&f->items[i]);
    for (size_t i = 0; i < f->nstrings; i++)
        free(f->strings[i]);
    free(f->strings);
    free(f->items);
    memset(f, 0, sizeof(*f));
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
    for (size_t i = 0; i < c->nreserving; i++) {
        const struct cache_pod *p = c->reserving[i];
        for (uint32_t k = 0; p->request != NULL && k < p->request->len; k++)
            if (p->request->items[k].id == id)
                used = util_sat_add(used, p->request->items[k].value);
    }
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
            out->message = util_strdup(d->message != NULL ? d->message : admit_result_reason_name(d->reason));
            return 0;
        }
    }
    error_setf(err, "the admission pass decided nothing on %s/%s", s->ns, s->cluster);
    return -1;
}

/* The pending copies and the cluster inserted with their members, one full pass, the verdict read. */
static int run(struct sim *s, struct admit *a, const json_t *cluster, const json_t *copies, int64_t now_ms,
               struct dispatch_verdict *out, struct error *err)
{
    if (cache_gang_get(s->c, s->ns, s->cluster) != NULL) {
        /* Nothing inserted: nothing of the worker's to remove either. */
        error_setf(err, "a RayCluster %s/%s exists on the worker already", s->ns, s->cluster);
        return -1;
    }
    struct fills f = {0};
    fill_copies(&f, s, copies, now_ms);
    /* Pods first: the gang is complete when its RayCluster arrives, as after a resync. */
    int rc = insert_members(s, cluster, NULL, err);
    if (rc == 0)
        rc = cache_upsert_raycluster(s->c, cluster, err);
    if (rc == 0) {
        struct admit_result r;
        admit_result_init(&r);
        admit_set_now(a, now_ms);
        dracache_prepare(s->c); /* the worker's devices, and the inserted members' claims */
        admit_pass(a, ADMIT_PASS_FULL, &r);
        rc = read_verdict(s, &r, out, err);
        admit_result_finish(&r);
    }
    remove_all(s);
    fills_remove(&f);
    return rc;
}

int dispatch_sim(struct cache *c, struct admit *a, const json_t *obj, const json_t *copies, int64_t now_ms,
                 struct dispatch_verdict *out, struct error *err)
{
    dispatch_sim_verdict_finish(out);
    dispatch_sim_verdict_init(out);
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
            .suffix = "",
            .own_cluster = 1,
        };
        evict_format_time(now_ms, s.created, sizeof(s.created));
        rc = run(&s, a, cluster, copies, now_ms, out, err);
        json_decref(cluster);
    }
    if (rc != 0) {
        out->fits = 0;
        out->reason = ADMIT_REASON_INVALID;
        out->message = util_strdup(err->message);
    }
    return rc;
}
