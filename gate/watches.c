#include "watches.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "declare.h"
#include "dracache.h"
#include "hyperwatch.h"
#include "legacy.h"
#include "log.h"
#include "native.h"
#include "podgroup.h"
#include "podshape.h"
#include "prioclass.h"
#include "util.h"

enum watch_kind {
    WATCH_PODS,
    WATCH_NODES,
    WATCH_RAYCLUSTERS,
    WATCH_QUEUES,
    WATCH_PODGROUPS,
    WATCH_LEGACY,          /* the legacy operator's RayClusters (lib/gang/model/legacy.h), when its CRD is installed */
    WATCH_HYPERNODES,      /* Volcano's HyperNodes (hyperwatch.h), when their CRD is installed */
    WATCH_NATIVE,          /* Kubernetes' own PodGroups (native.h), when the native gang step is used */
    WATCH_PRIORITYCLASSES, /* a held gang's priority before its pods exist (prioclass.h) */
    /* Dynamic Resource Allocation (dracache.h), when resource.k8s.io/v1 is served: classes, slices, claims, templates. */
    WATCH_DEVICECLASSES,
    WATCH_RESOURCESLICES,
    WATCH_RESOURCECLAIMS,
    WATCH_CLAIMTEMPLATES,
    WATCH_COUNT,
};

#define DRA_WATCHES                                                                                                                \
    ((1u << WATCH_DEVICECLASSES) | (1u << WATCH_RESOURCESLICES) | (1u << WATCH_RESOURCECLAIMS) | (1u << WATCH_CLAIMTEMPLATES))

/* The watches decisions need; the PodGroup watch only feeds status writes. */
#define DECISION_WATCHES                                                                                                           \
    ((1u << WATCH_PODS) | (1u << WATCH_NODES) | (1u << WATCH_RAYCLUSTERS) | (1u << WATCH_QUEUES) | (1u << WATCH_HYPERNODES) |      \
     (1u << WATCH_PRIORITYCLASSES) | DRA_WATCHES)

#define LEGACY_API "/apis/" LEGACY_API_VERSION
#define DRA_API "/apis/resource.k8s.io/v1"

static const struct {
    const char *name;
    const char *path;
} watch_specs[WATCH_COUNT] = {
    [WATCH_PODS] = {"pods", "/api/v1/pods"},
    [WATCH_NODES] = {"nodes", "/api/v1/nodes"},
    [WATCH_RAYCLUSTERS] = {"rayclusters", "/apis/ray.io/v1/rayclusters"},
    [WATCH_QUEUES] = {"queues", STATUS_VOLCANO_API "/queues"},
    [WATCH_PODGROUPS] = {"podgroups", STATUS_VOLCANO_API "/podgroups"},
    [WATCH_LEGACY] = {"legacy-rayclusters", LEGACY_API "/rayclusters"},
    [WATCH_HYPERNODES] = {"hypernodes", HYPERWATCH_API "/hypernodes"},
    [WATCH_NATIVE] = {"native-podgroups", NATIVEGANG_API "/podgroups"},
    [WATCH_PRIORITYCLASSES] = {"priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses"},
    [WATCH_DEVICECLASSES] = {"deviceclasses", DRA_API "/deviceclasses"},
    [WATCH_RESOURCESLICES] = {"resourceslices", DRA_API "/resourceslices"},
    [WATCH_RESOURCECLAIMS] = {"resourceclaims", DRA_API "/resourceclaims"},
    [WATCH_CLAIMTEMPLATES] = {"resourceclaimtemplates", DRA_API "/resourceclaimtemplates"},
};

/* The draset kind of a DRA watch. */
static const enum draset_kind dra_kinds[WATCH_COUNT] = {
    [WATCH_DEVICECLASSES] = DRASET_CLASS,
    [WATCH_RESOURCESLICES] = DRASET_SLICE,
    [WATCH_RESOURCECLAIMS] = DRASET_CLAIM,
    [WATCH_CLAIMTEMPLATES] = DRASET_TEMPLATE,
};

struct watch_ctx {
    struct watches *w;
    enum watch_kind kind;
};

struct watches {
    struct watches_config cfg;
    struct kube_watcher *watcher;
    struct watch_ctx ctx[WATCH_COUNT];
    unsigned started; /* bit per watch_kind; the controller's thread */
    unsigned crds;    /* PODGROUP_CRD_* found by discovery; written under cfg.guard by the controller's thread */
    int discovered;   /* discovery answered at least once; likewise */
    int hyper_said;   /* the HyperNode CRD's absence was logged; the controller's thread */
    int native_said;  /* the native gang API's absence was logged; the controller's thread */
    int dra_said;     /* resource.k8s.io/v1's absence was logged; the controller's thread */
    unsigned synced;  /* under cfg.guard: bit per watch_kind (set too for a watch not started: its CRD is not installed) */
};

static const char *obj_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

struct watches *watches_create(const struct watches_config *cfg)
{
    struct watches *w = util_calloc(1, sizeof(*w));
    w->cfg = *cfg;
    if (cfg->cache->dra == NULL)
        w->synced |= DRA_WATCHES; /* no device is counted: nothing to wait for */
    return w;
}

void watches_destroy(struct watches *w)
{
    if (w == NULL)
        return;
    kube_watch_destroy(w->watcher);
    free(w);
}

/* A deletion (object borrowed) into the cache or the status; under the lock. */
static void on_deleted(struct watches *w, enum watch_kind kind, const json_t *object)
{
    const char *ns = obj_str(object, "namespace"), *name = obj_str(object, "name");
    if (name == NULL)
        return;
    switch (kind) {
    case WATCH_PODS:
        cache_delete_pod(w->cfg.cache, ns != NULL ? ns : "", name);
        break;
    case WATCH_NODES:
        cache_delete_node(w->cfg.cache, name);
        break;
    case WATCH_RAYCLUSTERS:
    case WATCH_LEGACY:
        declare_drop(w->cfg.cache, ns != NULL ? ns : "", name);
        cache_delete_raycluster(w->cfg.cache, ns != NULL ? ns : "", name);
        if (w->cfg.nudge != NULL)
            heldnudge_forget(w->cfg.nudge, ns != NULL ? ns : "", name);
        break;
    case WATCH_QUEUES:
        cache_delete_queue(w->cfg.cache, name);
        status_record_queue(w->cfg.status, KUBE_WATCH_DELETED, object);
        break;
    default:
        break;
    }
}

/* After a pod (borrowed) was upserted: a held gang's declared pods that its real ones replace go (declare.h). */
static void held_pod(struct cache *cache, const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    const struct cache_pod *p = name != NULL ? cache_pod_get(cache, ns != NULL ? ns : "", name) : NULL;
    if (p != NULL && p->gang != NULL && p->gang->held && p->gang->present && !declare_pod_is(p))
        declare_sync_gang(cache, p->gang->namespace_, p->gang->name);
}

/* An addition or change (object borrowed); under the lock. Returns 0, or -1 with err (the object is ignored). */
static int on_upserted(struct watches *w, enum watch_kind kind, enum kube_watch_event ev, const json_t *object, struct error *err)
{
    switch (kind) {
    case WATCH_PODS:
        if (cache_upsert_pod(w->cfg.cache, object, err) != 0)
            return -1;
        held_pod(w->cfg.cache, object);
        return 0;
    case WATCH_NODES:
        return cache_upsert_node(w->cfg.cache, object, err);
    case WATCH_RAYCLUSTERS:
        if (cache_upsert_raycluster(w->cfg.cache, object, err) != 0 || declare_sync_cluster(w->cfg.cache, object, err) != 0)
            return -1; /* declare: a held RayCluster's members (declare.h) */
        if (w->cfg.nudge != NULL)
            heldnudge_observe(w->cfg.nudge, w->cfg.cache, object);
        return 0;
    case WATCH_LEGACY:
        return cache_upsert_raycluster(w->cfg.cache, object, err);
    case WATCH_QUEUES:
        status_record_queue(w->cfg.status, ev, object);
        return cache_upsert_queue(w->cfg.cache, object, err);
    default:
        break;
    }
    return 0;
}

/* Runs on the watcher thread. object borrowed. */
static void on_watch(void *arg, enum kube_watch_event ev, json_t *object)
{
    struct watch_ctx *x = arg;
    struct watches *w = x->w;
    struct error err = {{0}};
    int rc = 0;

    cacheguard_lock(w->cfg.guard);
    if (ev == KUBE_WATCH_SYNCED) {
        if (!(w->synced & (1u << x->kind)))
            log_infof("watch %s synced", watch_specs[x->kind].name);
        w->synced |= 1u << x->kind;
        if (x->kind == WATCH_PODGROUPS)
            status_podgroups_synced(w->cfg.status); /* every PodGroup is known now: compare them all */
    } else if (x->kind == WATCH_PODGROUPS) {
        status_record_podgroup(w->cfg.status, ev, object);
    } else if (DRA_WATCHES & (1u << x->kind)) {
        dracache_record(w->cfg.cache, dra_kinds[x->kind], ev == KUBE_WATCH_DELETED, object, &err);
        rc = err.message[0] != '\0' ? -1 : 0;
    } else if (x->kind == WATCH_HYPERNODES) {
        hyperwatch_record(w->cfg.hyper, ev, object);
    } else if (x->kind == WATCH_PRIORITYCLASSES) {
        prioclass_record(w->cfg.cache, ev == KUBE_WATCH_DELETED, object);
    } else if (x->kind == WATCH_NATIVE) {
        native_record(w->cfg.native, ev, object);
        const json_t *meta = json_object_get(object, "metadata");
        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        const char *name = json_string_value(json_object_get(meta, "name"));
        if (ns != NULL && name != NULL)
            status_touch_podgroup(w->cfg.status, ns, name);
    } else {
        /* Changes are seen now: a dispatch lease's (dispatchlease.h), a gang falling short of pods (evictscan.h). */
        cache_set_clock(w->cfg.cache, clock_wall_ms());
        if (ev == KUBE_WATCH_DELETED)
            on_deleted(w, x->kind, object);
        else
            rc = on_upserted(w, x->kind, ev, object, &err);
    }
    *w->cfg.changed = 1;
    cacheguard_unlock(w->cfg.guard);
    if (rc != 0)
        log_warnf("watch %s: object ignored: %s", watch_specs[x->kind].name, err.message);
    w->cfg.wake(w->cfg.arg);
}

static int start_watch(struct watches *w, enum watch_kind k, struct error *err)
{
    if (w->started & (1u << k))
        return 0;
    w->ctx[k] = (struct watch_ctx){w, k};
    struct kube_watch_spec spec = {
        .name = watch_specs[k].name,
        .path = watch_specs[k].path,
        .fn = on_watch,
        .arg = &w->ctx[k],
    };
    if (k == WATCH_PODS) { /* only what the cache reads of a pod is built (podshape.h) */
        spec.shape = PODSHAPE_EVENT;
        spec.shape_fn = podshape_fn;
    }
    if (kube_watch_start(w->watcher, &spec, err) != 0)
        return -1;
    w->started |= 1u << k;
    return 0;
}

/*
 * Which of Volcano's CRDs the apiserver serves (GET /apis/scheduling.volcano.sh/v1beta1).
 * Returns 0 with *flags (PODGROUP_CRD_*; 0 when the group is not served), or -1 when it did not answer.
 */
static int discover(struct watches *w, unsigned *flags)
{
    struct kube_response r;
    kube_client_response_init(&r);
    int out = 0;
    if (kube_get(w->cfg.client, STATUS_VOLCANO_API, &r) == 0) {
        *flags = podgroup_discovery(r.body);
    } else if (r.status == 404) {
        *flags = 0;
    } else {
        log_warnf("discovery of %s: %s", STATUS_VOLCANO_API, r.message);
        out = -1;
    }
    kube_client_response_finish(&r);
    return out;
}

/* Whether an APIResourceList (borrowed) names resource. */
static int resource_listed(const json_t *list, const char *resource)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(list, "resources"), i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        if (name != NULL && strcmp(name, resource) == 0)
            return 1;
    }
    return 0;
}

/*
 * The legacy operator's RayCluster CRD (GET /apis/cluster.ray.io/v1): once it
 * is served, its clusters are watched (and gated) like KubeRay's. Returns 0,
 * or -1 with err when the watch cannot start.
 */
static int discover_legacy(struct watches *w, struct error *err)
{
    if (w->started & (1u << WATCH_LEGACY))
        return 0;
    struct kube_response r;
    kube_client_response_init(&r);
    int served = kube_get(w->cfg.client, LEGACY_API, &r) == 0 && resource_listed(r.body, "rayclusters");
    kube_client_response_finish(&r);
    if (!served)
        return 0;
    log_infof("legacy RayCluster CRD (rayclusters.cluster.ray.io) found: the legacy Ray operator's clusters are gated too");
    return start_watch(w, WATCH_LEGACY, err);
}

/*
 * Volcano's HyperNode CRD (GET /apis/topology.volcano.sh/v1alpha1): once it is
 * served, HyperNodes are watched, and passes wait for their list. Until then
 * their watch counts as synced (no HyperNode exists), its absence is said
 * once, and it is looked for again at each resync. Returns 0, or -1 with err
 * when the watch cannot start.
 */
static int discover_hypernodes(struct watches *w, struct error *err)
{
    if (w->started & (1u << WATCH_HYPERNODES))
        return 0;
    int served = 0;
    if (w->cfg.hyper != NULL) {
        struct kube_response r;
        kube_client_response_init(&r);
        if (kube_get(w->cfg.client, HYPERWATCH_API, &r) == 0)
            served = resource_listed(r.body, "hypernodes");
        else if (r.status != 404)
            log_warnf("discovery of %s: %s", HYPERWATCH_API, r.message);
        kube_client_response_finish(&r);
    }
    cacheguard_lock(w->cfg.guard);
    if (served)
        w->synced &= ~(1u << WATCH_HYPERNODES); /* passes wait for the list */
    else
        w->synced |= 1u << WATCH_HYPERNODES;
    cacheguard_unlock(w->cfg.guard);
    if (!served) {
        if (w->cfg.hyper != NULL && !w->hyper_said)
            log_infof("HyperNode CRD (hypernodes.topology.volcano.sh) is not installed: gangs that ask for Volcano's "
                      "network topology find no HyperNode");
        w->hyper_said = 1;
        return 0;
    }
    log_infof("HyperNode CRD (hypernodes.topology.volcano.sh) found: watching HyperNodes");
    return start_watch(w, WATCH_HYPERNODES, err);
}

/*
 * Kubernetes' own gang scheduling (native.h): with --native-gang on, its
 * PodGroups are watched at once; with auto, once discovery finds them served
 * (GET /apis/scheduling.k8s.io/v1beta1), looked for again at each resync
 * until then. Returns 0, or -1 with err when the watch cannot start.
 */
static int discover_native(struct watches *w, struct error *err)
{
    if (w->cfg.native == NULL || native_mode(w->cfg.native) == NATIVE_OFF || (w->started & (1u << WATCH_NATIVE)))
        return 0;
    int served = native_mode(w->cfg.native) == NATIVE_ON;
    if (!served) {
        struct kube_response r;
        kube_client_response_init(&r);
        if (kube_get(w->cfg.client, NATIVEGANG_API, &r) == 0)
            served = resource_listed(r.body, "podgroups");
        else if (r.status != 404)
            log_warnf("discovery of %s: %s", NATIVEGANG_API, r.message);
        kube_client_response_finish(&r);
    }
    if (!served) {
        if (!w->native_said)
            log_infof("Kubernetes' gang scheduling (podgroups.scheduling.k8s.io/v1beta1) is not served: gangs are placed "
                      "without it");
        w->native_said = 1;
        return 0;
    }
    if (start_watch(w, WATCH_NATIVE, err) != 0)
        return -1;
    cacheguard_lock(w->cfg.guard);
    native_set_enabled(w->cfg.native);
    cacheguard_unlock(w->cfg.guard);
    log_infof("Kubernetes' gang scheduling (podgroups.scheduling.k8s.io/v1beta1) is used: each admitted gang's PodGroup is "
              "written before its gates are lifted, and kube-scheduler places it whole");
    return 0;
}

/*
 * Dynamic Resource Allocation (GET /apis/resource.k8s.io/v1, GA since 1.34):
 * once served, its classes, slices, claims and templates are watched and
 * passes wait for their lists; until then the watches count as synced (no
 * device exists), its absence is said once and looked for at each resync.
 * Not looked for when the cache counts no devices (cfg.cache->dra NULL).
 */
static int discover_dra(struct watches *w, struct error *err)
{
    if (w->cfg.cache->dra == NULL || (w->started & DRA_WATCHES) == DRA_WATCHES)
        return 0;
    struct kube_response r;
    kube_client_response_init(&r);
    int served = 0;
    if (kube_get(w->cfg.client, DRA_API, &r) == 0)
        served = resource_listed(r.body, "resourceslices") && resource_listed(r.body, "resourceclaimtemplates");
    else if (r.status != 404)
        log_warnf("discovery of %s: %s", DRA_API, r.message);
    kube_client_response_finish(&r);
    cacheguard_lock(w->cfg.guard);
    if (served)
        w->synced &= ~DRA_WATCHES; /* passes wait for the lists */
    else
        w->synced |= DRA_WATCHES;
    cacheguard_unlock(w->cfg.guard);
    if (!served) {
        if (!w->dra_said)
            log_infof("Dynamic Resource Allocation (resource.k8s.io/v1) is not served: no device claim is counted");
        w->dra_said = 1;
        return 0;
    }
    log_infof("Dynamic Resource Allocation (resource.k8s.io/v1) is served: device claims count in queues and on nodes");
    for (int k = WATCH_DEVICECLASSES; k <= WATCH_CLAIMTEMPLATES; k++) {
        if (start_watch(w, (enum watch_kind)k, err) != 0)
            return -1;
    }
    return 0;
}

/* Says what discovery found, once, and again only when it changes. */
static void log_discovery(unsigned was, unsigned flags, int first)
{
    if (first || ((was ^ flags) & PODGROUP_CRD_QUEUES))
        log_infof((flags & PODGROUP_CRD_QUEUES) ? "Queue CRD (queues.scheduling.volcano.sh) found"
                                                : "Queue CRD (queues.scheduling.volcano.sh) is not installed: no queue exists, so "
                                                  "every gang waits for its queue, and no Queue status is written");
    if (first || ((was ^ flags) & PODGROUP_CRD_PODGROUPS))
        log_infof((flags & PODGROUP_CRD_PODGROUPS)
                      ? "PodGroup CRD (podgroups.scheduling.volcano.sh) found: writing PodGroups"
                      : "PodGroup CRD (podgroups.scheduling.volcano.sh) is not installed: PodGroups are not written");
}

/*
 * Discovery, and the watches it allows. When discovery does not answer, the
 * Queue watch is started anyway (its list retries) and PodGroups wait for the
 * next try.
 */
int watches_discover(struct watches *w, struct error *err)
{
    unsigned flags = 0;
    int known = discover(w, &flags) == 0;
    cacheguard_lock(w->cfg.guard);
    if (!known) /* as before, else as both Volcano's Queue CRD and ours are */
        flags = w->crds | PODGROUP_CRD_QUEUES | PODGROUP_CRD_QUEUES_STATUS;
    unsigned was = w->crds;
    int first = !w->discovered;
    w->crds = flags;
    w->discovered |= known;
    if (!(flags & PODGROUP_CRD_QUEUES))
        w->synced |= 1u << WATCH_QUEUES;
    cacheguard_unlock(w->cfg.guard);
    if (known)
        log_discovery(was, flags, first);
    if ((flags & PODGROUP_CRD_QUEUES) && start_watch(w, WATCH_QUEUES, err) != 0)
        return -1;
    if ((flags & PODGROUP_CRD_PODGROUPS) && start_watch(w, WATCH_PODGROUPS, err) != 0)
        return -1;
    if (discover_hypernodes(w, err) != 0 || discover_native(w, err) != 0 || discover_dra(w, err) != 0)
        return -1;
    return discover_legacy(w, err);
}

int watches_start(struct watches *w, struct error *err)
{
    w->watcher = kube_watch_create(w->cfg.client, err);
    if (w->watcher == NULL)
        return -1;
    if (start_watch(w, WATCH_PODS, err) != 0 || start_watch(w, WATCH_NODES, err) != 0 ||
        start_watch(w, WATCH_RAYCLUSTERS, err) != 0 || start_watch(w, WATCH_PRIORITYCLASSES, err) != 0)
        return -1;
    return watches_discover(w, err);
}

int watches_discovery_wanted(const struct watches *w)
{
    return !w->discovered || !(w->crds & PODGROUP_CRD_PODGROUPS) || !(w->crds & PODGROUP_CRD_QUEUES) ||
           !(w->started & (1u << WATCH_LEGACY)) || (w->cfg.hyper != NULL && !(w->started & (1u << WATCH_HYPERNODES))) ||
           (w->cfg.native != NULL && native_mode(w->cfg.native) != NATIVE_OFF && !(w->started & (1u << WATCH_NATIVE))) ||
           (w->cfg.cache->dra != NULL && (w->started & DRA_WATCHES) != DRA_WATCHES);
}

int watches_synced(const struct watches *w)
{
    return (w->synced & DECISION_WATCHES) == DECISION_WATCHES;
}

unsigned watches_status_crds(const struct watches *w)
{
    unsigned crds = w->crds & (PODGROUP_CRD_PODGROUPS_STATUS | PODGROUP_CRD_QUEUES_STATUS);
    if ((w->crds & PODGROUP_CRD_PODGROUPS) && (w->synced & (1u << WATCH_PODGROUPS)))
        crds |= PODGROUP_CRD_PODGROUPS;
    if ((w->crds & PODGROUP_CRD_QUEUES) && (w->synced & (1u << WATCH_QUEUES)))
        crds |= PODGROUP_CRD_QUEUES;
    return crds;
}
