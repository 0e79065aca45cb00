/* declare: a gang's members made from its RayCluster's declaration (declare.h). */
#include "declare.h"

#include <stdlib.h>
#include <string.h>

#include "heldsuspend.h"
#include "names.h"
#include "prioclass.h"
#include "submitter.h"
#include "util.h"

/* The name of member i of role type: as KubeRay names them, with an index for its random suffix (messages name pods). */
static char *member_name(const char *cluster, const char *suffix, const char *type, const char *group, size_t i)
{
    return strcmp(type, "head") == 0 ? util_strdupf("%s-head%s", cluster, suffix)
                                     : util_strdupf("%s-%s-worker%s-%zu", cluster, group, suffix, i);
}

/* KubeRay's wait-gcs-ready init container appended to a worker's spec (owned), as KubeRay adds it: node fit counts it. */
static void add_init_container(json_t *spec)
{
    json_t *inits = json_object_get(spec, "initContainers");
    if (!json_is_array(inits)) {
        inits = json_array();
        json_object_set_new(spec, "initContainers", inits);
    }
    json_array_append_new(inits, gang_worker_init_container());
}

json_t *declare_member_pod(const struct declare_names *n, const json_t *template, const char *type, const char *group, size_t i)
{
    const json_t *tmeta = json_object_get(template, "metadata");
    json_t *labels = json_object_get(tmeta, "labels");
    labels = json_is_object(labels) ? json_deep_copy(labels) : json_object();
    json_object_set_new(labels, NAMES_LABEL_CLUSTER, json_string(n->cluster));
    json_object_set_new(labels, NAMES_LABEL_NODE_TYPE, json_string(type));
    json_object_set_new(labels, NAMES_LABEL_GROUP, json_string(group));
    json_object_set_new(labels, NAMES_LABEL_QUEUE, json_string(n->queue));
    json_t *spec = json_object_get(template, "spec");
    spec = json_is_object(spec) ? json_deep_copy(spec) : json_object();
    json_object_del(spec, "nodeName");
    json_t *gates = json_object_get(spec, "schedulingGates");
    if (!json_is_array(gates)) {
        gates = json_array();
        json_object_set_new(spec, "schedulingGates", gates);
    }
    if (n->gated)
        json_array_append_new(gates, json_pack("{s:s}", "name", NAMES_GATE));
    json_t *sidecar = strcmp(type, "head") == 0 ? gang_autoscaler_container(n->cluster_spec) : NULL;
    json_t *containers = json_object_get(spec, "containers");
    if (sidecar != NULL && json_is_array(containers))
        json_array_append(containers, sidecar); /* as KubeRay adds it: node fit counts it */
    json_decref(sidecar);
    if (strcmp(type, "worker") == 0)
        add_init_container(spec);
    char *name = member_name(n->cluster, n->suffix, type, group, i);
    char *uid = util_strdupf("%s%s/%s", n->uid_prefix, n->ns, name);
    json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s,s:o},s:o,s:{s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            "name", name, "namespace", n->ns, "uid", uid, "resourceVersion", "1", "creationTimestamp", n->created,
                            "labels", labels, "spec", spec, "status", "phase", "Pending");
    free(uid);
    free(name);
    return pod;
}

/* p's role in a gang whose groups are names[0..n): 0 the head, 1 + i group i, -1 none. */
static int role_of(const struct cache_pod *p, const char *const *names, size_t n)
{
    if (p->node_type != NULL && strcmp(p->node_type, "head") == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (p->group != NULL && names[i] != NULL && strcmp(p->group, names[i]) == 0)
            return 1 + (int)i;
    return -1;
}

int declare_uid_is(const char *uid)
{
    return uid != NULL && strncmp(uid, DECLARE_UID_PREFIX, strlen(DECLARE_UID_PREFIX)) == 0;
}

int declare_pod_is(const struct cache_pod *p)
{
    return declare_uid_is(p->uid);
}

int32_t declare_pod_priority(const struct cache *c, const struct cache_pod *p)
{
    return declare_pod_is(p) && p->gang != NULL ? prioclass_value(c, p->gang->priority_class) : p->priority;
}

/* The live real pods (declared 0) or the declared pods (declared 1) of g per role of groups names[0..n): counts[0..n]. */
static void count_roles(const struct cache_gang *g, const char *const *names, size_t n, int declared, int64_t *counts)
{
    memset(counts, 0, (n + 1) * sizeof(*counts));
    const struct cache_pod *p;
    for (p = g != NULL ? g->pods : NULL; p != NULL; p = p->gang_next) {
        if (declare_pod_is(p) != declared || (!declared && !cache_pod_live(p)))
            continue;
        int r = role_of(p, names, n);
        if (r >= 0)
            counts[r]++;
    }
}

void declare_count_live(const struct cache_gang *g, const struct gang_spec *spec, int64_t *have)
{
    const char **names = util_calloc(spec->ngroups + 1, sizeof(*names));
    for (size_t i = 0; i < spec->ngroups; i++)
        names[i] = spec->groups[i].name;
    count_roles(g, names, spec->ngroups, 0, have);
    free(names);
}

/* ------------------------------------------------ the gate's declared pods */

static const char declared_suffix[] = "-declared";

/* Whether the gate's declared pod of cluster ns/cluster, role type/group index i, is in c. */
static struct cache_pod *declared_get(const struct cache *c, const char *ns, const char *cluster, const char *type,
                                      const char *group, size_t i)
{
    char *name = member_name(cluster, declared_suffix, type, group, i);
    struct cache_pod *p = cache_pod_get(c, ns, name);
    free(name);
    return p != NULL && declare_pod_is(p) ? p : NULL;
}

/* Makes declared pod i of a role present and gated (want 1) or absent (want 0). Returns 0, or -1 with err. */
static int declared_set(struct cache *c, const struct declare_names *n, const json_t *template, const char *type, const char *group,
                        size_t i, int want, struct error *err)
{
    struct cache_pod *p = declared_get(c, n->ns, n->cluster, type, group, i);
    if (p != NULL && want && cache_pod_gated(p))
        return 0;
    if (p != NULL)
        cache_delete_pod(c, n->ns, p->name); /* gone, or ungated by an admission since taken back: made again */
    if (!want)
        return 0;
    json_t *pod = declare_member_pod(n, template, type, group, i);
    int rc = cache_upsert_pod(c, pod, err);
    json_decref(pod);
    return rc;
}

/*
 * The declared pods of a held, suspended, unadmitted RayCluster's gang spec:
 * all its members. Its real pods do not count: KubeRay deletes them all while
 * it is suspended (an eviction's leftovers, evictscan.h), and the watch may
 * tell of their deletion after the suspend.
 */
static int declared_fill(struct cache *c, const struct declare_names *n, const json_t *cluster, const struct gang_spec *spec,
                         struct error *err)
{
    const json_t *cspec = json_object_get(cluster, "spec");
    int rc =
        declared_set(c, n, json_object_get(json_object_get(cspec, "headGroupSpec"), "template"), "head", "headgroup", 0, 1, err);
    const json_t *groups = json_object_get(cspec, "workerGroupSpecs");
    for (size_t i = 0; rc == 0 && i < spec->ngroups; i++) {
        const json_t *template = json_object_get(json_array_get(groups, i), "template");
        const char *group = spec->groups[i].name != NULL ? spec->groups[i].name : "";
        for (int64_t k = 0; rc == 0 && k < spec->groups[i].pods; k++)
            rc = declared_set(c, n, template, "worker", group, (size_t)k, 1, err);
    }
    return rc;
}

int declare_sync_cluster(struct cache *c, const json_t *cluster, struct error *err)
{
    const json_t *meta = json_object_get(cluster, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (name == NULL)
        return 0;
    ns = ns != NULL ? ns : "";
    if (!heldsuspend_marked(cluster) || (!heldsuspend_admitted(cluster) && !heldsuspend_suspended(cluster))) {
        declare_drop(c, ns, name);
        return 0;
    }
    if (heldsuspend_admitted(cluster)) {
        declare_sync_gang(c, ns, name);
        return 0;
    }
    struct gang_spec spec;
    gang_spec_init(&spec);
    const char *queue = json_string_value(json_object_get(json_object_get(meta, "labels"), NAMES_LABEL_QUEUE));
    const char *created = json_string_value(json_object_get(meta, "creationTimestamp"));
    const struct declare_names n = {.ns = ns,
                                    .cluster = name,
                                    .queue = queue != NULL ? queue : "",
                                    .created = created != NULL ? created : "",
                                    .suffix = declared_suffix,
                                    .uid_prefix = DECLARE_UID_PREFIX,
                                    .cluster_spec = json_object_get(cluster, "spec"),
                                    .gated = 1};
    int rc = submitter_cluster_gang(cluster, &spec, err);
    if (rc == 0)
        rc = declared_fill(c, &n, cluster, &spec, err);
    if (rc != 0)
        declare_drop(c, ns, name);
    gang_spec_finish(&spec);
    return rc;
}

/* Whether gang g may have declared pods: its head's, or the first of a group's (the last to go), is in c. */
static int any_declared(const struct cache *c, const struct cache_gang *g)
{
    if (declared_get(c, g->namespace_, g->name, "head", "headgroup", 0) != NULL)
        return 1;
    for (uint32_t i = 0; i < g->ngroups; i++)
        if (declared_get(c, g->namespace_, g->name, "worker", g->groups[i].name != NULL ? g->groups[i].name : "", 0) != NULL)
            return 1;
    return 0;
}

/* Deletes the declared pods of g that a role has more of than real live pods leave room for (highest index first). */
static void declared_trim(struct cache *c, struct cache_gang *g)
{
    size_t n = g->ngroups;
    const char **names = util_calloc(n + 1, sizeof(*names));
    int64_t *real = util_calloc(n + 1, sizeof(*real)), *decl = util_calloc(n + 1, sizeof(*decl));
    for (size_t i = 0; i < n; i++)
        names[i] = g->groups[i].name;
    count_roles(g, names, n, 0, real);
    count_roles(g, names, n, 1, decl);
    const char *ns = g->namespace_, *cluster = g->name; /* interned: they outlive g's pods */
    for (size_t r = 0; r <= n; r++) {
        int64_t room = (r == 0 ? 1 : g->groups[r - 1].pods) - real[r];
        const char *type = r == 0 ? "head" : "worker", *group = r == 0 ? "headgroup" : names[r - 1] != NULL ? names[r - 1] : "";
        for (int64_t k = (r == 0 ? 1 : g->groups[r - 1].pods) - 1; k >= 0 && decl[r] > (room > 0 ? room : 0); k--) {
            struct cache_pod *p = declared_get(c, ns, cluster, type, group, (size_t)k);
            if (p != NULL) {
                cache_delete_pod(c, ns, p->name);
                decl[r]--;
            }
        }
    }
    free(names);
    free(real);
    free(decl);
}

void declare_sync_gang(struct cache *c, const char *ns, const char *cluster)
{
    struct cache_gang *g = cache_gang_get(c, ns, cluster);
    if (g != NULL && any_declared(c, g))
        declared_trim(c, g);
}

void declare_drop(struct cache *c, const char *ns, const char *cluster)
{
    struct cache_gang *g = cache_gang_get(c, ns, cluster);
    if (g == NULL)
        return;
    size_t n = 0;
    char **names = util_calloc(g->npods + 1, sizeof(*names));
    const struct cache_pod *p;
    cache_gang_for_each_pod(p, g) {
        if (declare_pod_is(p))
            names[n++] = util_strdup(p->name);
    }
    for (size_t i = 0; i < n; i++) {
        cache_delete_pod(c, ns, names[i]);
        free(names[i]);
    }
    free(names);
}

int declare_release_wanted(const struct cache_gang *g, const struct admit_decision *d)
{
    if (g == NULL || !g->held || !g->release_on_wait || !g->present || g->admitted || d->action != ADMIT_ACTION_WAIT)
        return 0;
    return d->reason != ADMIT_REASON_EVICTED && d->reason != ADMIT_REASON_DEACTIVATED && d->reason != ADMIT_REASON_INVALID;
}
