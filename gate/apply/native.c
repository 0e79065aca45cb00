#include "native.h"

#include <stdlib.h>
#include <string.h>

#include "legacy.h"
#include "log.h"
#include "names.h"
#include "util.h"

const char *const native_mode_names[] = {"auto", "on", "off", NULL};

struct native {
    enum native_mode mode;
    int enabled;
    json_t *seen; /* "ns/name" -> the PodGroup's spec.schedulingPolicy and status.conditions */
};

struct native *native_create(enum native_mode mode)
{
    struct native *n = util_calloc(1, sizeof(*n));
    n->mode = mode;
    n->seen = json_object();
    return n;
}

void native_destroy(struct native *n)
{
    if (n == NULL)
        return;
    json_decref(n->seen);
    free(n);
}

enum native_mode native_mode(const struct native *n)
{
    return n->mode;
}

int native_enabled(const struct native *n)
{
    return n != NULL && n->enabled;
}

void native_set_enabled(struct native *n)
{
    n->enabled = 1;
}

static char *key_of(const json_t *object)
{
    const json_t *meta = json_object_get(object, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    return name != NULL ? util_strdupf("%s/%s", ns != NULL ? ns : "", name) : NULL;
}

void native_record(struct native *n, enum kube_watch_event ev, const json_t *object)
{
    char *key = key_of(object);
    if (key == NULL)
        return;
    if (ev == KUBE_WATCH_DELETED) {
        json_object_del(n->seen, key);
    } else {
        /* Only what nativegang_seen_parse reads is kept. */
        const json_t *spec = json_object_get(object, "spec"), *status = json_object_get(object, "status");
        json_object_set_new(n->seen, key,
                            json_pack("{s:{s:O*}, s:{s:O*}}", "spec", "schedulingPolicy", json_object_get(spec, "schedulingPolicy"),
                                      "status", "conditions", json_object_get(status, "conditions")));
    }
    free(key);
}

int native_seen(const struct native *n, const char *ns, const char *name, struct nativegang_seen *out)
{
    char *key = util_strdupf("%s/%s", ns, name);
    const json_t *pg = json_object_get(n->seen, key);
    free(key);
    if (pg == NULL)
        return -1;
    nativegang_seen_parse(pg, out);
    return 0;
}

/* ------------------------------------------------------------------ what a decision needs */

/*
 * The group raygate's webhook gives g's pods: its PodGroup name, from the
 * pods' scheduling.k8s.io/group-name: ray-<cluster>-pg, or for a RayJob's
 * cluster ray-<rayjob>-pg (cache_gang_group) or, when the RayCluster's own
 * mutation wrote it on the templates, ray-<cluster>-pg too. Whether name is
 * one of those.
 */
static int group_is_ours(const struct cache_gang *g, const char *name)
{
    char *a = names_podgroup(cache_gang_group(g)), *b = names_podgroup(g->name);
    int ours = strcmp(name, a) == 0 || strcmp(name, b) == 0;
    free(a);
    free(b);
    return ours;
}

/* The group the pods of d name (interned, the cache's), when they all name one of g's own; NULL otherwise. */
static const char *pods_name_group(struct cache *cache, const struct admit_decision *d, const struct cache_gang *g)
{
    const char *group = NULL;
    for (size_t k = 0; k < d->npods; k++) {
        const struct cache_pod *pod = cache_pod_by_uid(cache, d->pods[k].uid);
        if (pod == NULL || pod->sched_group == NULL)
            continue;
        if ((group != NULL && strcmp(pod->sched_group, group) != 0) || !group_is_ours(g, pod->sched_group))
            return NULL; /* another's group (KubeRay's own backend, a user): theirs */
        group = pod->sched_group;
    }
    return group;
}

/* out for gang g and its PodGroup group (steals). */
static void want_of(const struct native *n, const struct cache_gang *g, char *group, struct native_want *out)
{
    int by_rayjob = g->owner_name != NULL && g->owner_uid != NULL;
    out->spec = (struct nativegang_spec){
        .namespace_ = util_strdup(g->namespace_),
        .name = group,
        .min_count = g->native_count, /* the members that name the group: the head's and the fixed groups' */
        .priority_class = g->priority_class != NULL ? util_strdup(g->priority_class) : NULL,
        .owner_api_version = g->legacy ? LEGACY_API_VERSION : "ray.io/v1",
        .owner_kind = by_rayjob ? "RayJob" : "RayCluster",
        .owner_name = util_strdup(by_rayjob ? g->owner_name : g->name),
        .owner_uid = util_strdup(by_rayjob ? g->owner_uid : g->uid),
    };
    struct nativegang_seen seen;
    out->op = nativegang_op(native_seen(n, g->namespace_, group, &seen) == 0 ? &seen : NULL, g->native_count);
}

int native_want(const struct native *n, struct cache *cache, const struct admit_decision *d, struct native_want *out)
{
    memset(out, 0, sizeof(*out));
    if (!native_enabled(n))
        return 0;
    const struct cache_gang *g = cache_gang_get(cache, d->namespace_, d->cluster);
    if (g == NULL || g->native_count < 1)
        return 0;
    const char *group = pods_name_group(cache, d, g);
    if (group == NULL)
        return 0;
    want_of(n, g, util_strdup(group), out);
    return 1;
}

/* The group g's live pods name (interned), when it is one of g's own; NULL otherwise. */
static const char *gang_group(const struct cache_gang *g)
{
    const struct cache_pod *p;
    cache_gang_for_each_pod(p, g) {
        if (cache_pod_live(p) && p->sched_group != NULL)
            return group_is_ours(g, p->sched_group) ? p->sched_group : NULL;
    }
    return NULL;
}

char *native_describe(const struct native *n, const struct cache_gang *g, const char *group)
{
    struct nativegang_seen seen;
    const char *named = gang_group(g); /* a RayJob's cluster's pods may name the cluster's group, not the RayJob's */
    if (!native_enabled(n) || !g->admitted ||
        (native_seen(n, g->namespace_, group, &seen) != 0 && (named == NULL || native_seen(n, g->namespace_, named, &seen) != 0)))
        return NULL;
    int64_t bound = 0; /* of the pods in the group: minCount counts those */
    const struct cache_pod *p;
    cache_gang_for_each_pod(p, g)
        bound += cache_pod_live(p) && p->node != NULL && p->sched_group != NULL;
    return nativegang_describe(&seen, bound);
}

size_t native_drift(const struct native *n, struct cache *cache, struct native_want *out, size_t max)
{
    size_t k = 0;
    if (!native_enabled(n))
        return 0;
    const struct cache_queue *q;
    const struct cache_gang *g;
    cache_queue_for_each(q, cache) {
        cache_queue_for_each_gang(g, q) {
            if (k == max || !g->admitted || g->native_count < 1)
                continue;
            const char *group = gang_group(g);
            struct nativegang_seen seen;
            if (group == NULL ||
                nativegang_op(native_seen(n, g->namespace_, group, &seen) == 0 ? &seen : NULL, g->native_count) == NATIVEGANG_NONE)
                continue;
            want_of(n, g, util_strdup(group), &out[k++]);
        }
    }
    return k;
}

void native_want_finish(struct native_want *w)
{
    free((char *)w->spec.namespace_);
    free((char *)w->spec.name);
    free((char *)w->spec.owner_name);
    free((char *)w->spec.owner_uid);
    free((char *)w->spec.priority_class);
    memset(w, 0, sizeof(*w));
}

/* ------------------------------------------------------------------ writes */

static char *collection(const struct nativegang_spec *s, const char *plural)
{
    return util_strdupf("%s/namespaces/%s/%s", NATIVEGANG_API, s->namespace_, plural);
}

/*
 * One batch: for each i with want[i], method on paths[i] with bodies[i]
 * (borrowed); sets status[i] to the answer's HTTP status (0: not asked).
 */
static void batch(struct kube_client *c, const char *method, const char *content_type, char **paths, json_t **bodies,
                  const int *want, size_t n, long *status)
{
    struct kube_batch_item *items = util_calloc(n + 1, sizeof(*items));
    size_t *index = util_calloc(n + 1, sizeof(*index)), k = 0;
    for (size_t i = 0; i < n; i++) {
        status[i] = 0;
        if (!want[i])
            continue;
        items[k] = (struct kube_batch_item){
            .method = method, .path = paths[i], .content_type = content_type, .body = bodies[i], .status_only = 1};
        index[k++] = i;
    }
    if (k > 0)
        kube_batch(c, items, k, 64);
    for (size_t j = 0; j < k; j++) {
        status[index[j]] = items[j].resp.status;
        if (items[j].rc != 0 && items[j].resp.status != 409)
            log_warnf("native gang: %s %s: %s", method, paths[index[j]], items[j].resp.message);
        kube_client_response_finish(&items[j].resp);
    }
    free(items);
    free(index);
}

static int ok_status(long st)
{
    return st >= 200 && st < 300;
}

/*
 * Creates the Workloads and then the PodGroups of the specs with want[i]; an
 * existing PodGroup (409) is marked for patch. A Workload that could not be
 * written (but 409: it exists) fails its spec: no PodGroup is written for it,
 * so that a later pass, seeing none, writes both again.
 */
static void create(struct kube_client *c, const struct nativegang_spec *specs, size_t n, const int *want, int *patch, int *ok)
{
    char **paths = util_calloc(n + 1, sizeof(*paths));
    json_t **bodies = util_calloc(n + 1, sizeof(*bodies));
    long *st = util_calloc(n + 1, sizeof(*st));
    int *pg = util_calloc(n + 1, sizeof(*pg));
    for (size_t i = 0; i < n; i++) {
        if (!want[i])
            continue;
        paths[i] = collection(&specs[i], "workloads");
        bodies[i] = nativegang_workload(&specs[i]);
    }
    batch(c, "POST", NULL, paths, bodies, want, n, st);
    for (size_t i = 0; i < n; i++) {
        free(paths[i]);
        json_decref(bodies[i]);
        paths[i] = NULL;
        bodies[i] = NULL;
        /* An existing Workload (409) is kept as it is: the template as first written. */
        pg[i] = want[i] && (ok_status(st[i]) || st[i] == 409);
        if (want[i] && !pg[i])
            ok[i] = 0;
        if (!pg[i])
            continue;
        paths[i] = collection(&specs[i], "podgroups");
        bodies[i] = nativegang_podgroup(&specs[i]);
    }
    batch(c, "POST", NULL, paths, bodies, pg, n, st);
    for (size_t i = 0; i < n; i++) {
        free(paths[i]);
        json_decref(bodies[i]);
        if (!pg[i])
            continue;
        ok[i] = ok_status(st[i]);
        patch[i] = st[i] == 409;
    }
    free(paths);
    free(bodies);
    free(st);
    free(pg);
}

static void patch_min_count(struct kube_client *c, const struct nativegang_spec *specs, size_t n, const int *want, int *ok)
{
    char **paths = util_calloc(n + 1, sizeof(*paths));
    json_t **bodies = util_calloc(n + 1, sizeof(*bodies));
    long *st = util_calloc(n + 1, sizeof(*st));
    for (size_t i = 0; i < n; i++) {
        if (!want[i])
            continue;
        paths[i] = util_strdupf("%s/namespaces/%s/podgroups/%s", NATIVEGANG_API, specs[i].namespace_, specs[i].name);
        bodies[i] = nativegang_min_count_patch(specs[i].min_count);
    }
    batch(c, "PATCH", kube_patch_content_type(KUBE_PATCH_MERGE), paths, bodies, want, n, st);
    for (size_t i = 0; i < n; i++) {
        if (want[i])
            ok[i] = ok_status(st[i]);
        free(paths[i]);
        json_decref(bodies[i]);
    }
    free(paths);
    free(bodies);
    free(st);
}

void native_ensure(struct kube_client *c, const struct nativegang_spec *specs, const enum nativegang_op *ops, size_t n, int *ok,
                   int (*may_write)(void *arg), void *arg)
{
    int *want_create = util_calloc(n + 1, sizeof(int)), *want_patch = util_calloc(n + 1, sizeof(int));
    size_t writes = 0;
    for (size_t i = 0; i < n; i++) {
        ok[i] = ops[i] == NATIVEGANG_NONE;
        want_create[i] = ops[i] == NATIVEGANG_CREATE;
        want_patch[i] = ops[i] == NATIVEGANG_PATCH;
        writes += !ok[i];
    }
    if (writes > 0 && (may_write == NULL || may_write(arg))) {
        create(c, specs, n, want_create, want_patch, ok);
        patch_min_count(c, specs, n, want_patch, ok);
        for (size_t i = 0; i < n; i++) {
            if (ops[i] != NATIVEGANG_NONE && ok[i])
                log_infof("native gang %s/%s: PodGroup minCount %lld%s", specs[i].namespace_, specs[i].name,
                          (long long)specs[i].min_count, ops[i] == NATIVEGANG_CREATE ? " written" : " patched");
        }
    }
    free(want_create);
    free(want_patch);
}
