/* snapwatch: the webhook's snapshots of API objects, each kept by a list and watch (snapwatch.h). */
#include "snapwatch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "draset.h"
#include "heldset.h"
#include "log.h"
#include "queuecheck.h"
#include "util.h"

/* One collection's watch: kube_watch_spec.arg, so that an event knows its collection. */
struct snapwatch_one {
    struct snapwatch *w;
    unsigned index;
};

struct snapwatch {
    pthread_mutex_t mu;
    struct snapwatch_spec spec; /* spec.snap under mu */
    unsigned listed;            /* under mu: bit i once collection i has listed (and, unsync_on_trouble, no trouble since) */
    struct snapwatch_one ones[SNAPWATCH_MAX_COLLECTIONS];
    struct kube_watcher *watcher; /* NULL: nothing watched */
};

/* Under mu. No collection: nothing to list, never synced. */
static int synced(const struct snapwatch *w)
{
    return w->spec.ncollections > 0 && w->listed == (1u << w->spec.ncollections) - 1;
}

/* One watch event (object borrowed); on the watcher's thread. */
static void on_event(void *arg, enum kube_watch_event event, json_t *object)
{
    struct snapwatch_one *one = arg;
    struct snapwatch *w = one->w;
    struct error err = {{0}};
    int first_sync = 0;
    size_t n = 0;
    pthread_mutex_lock(&w->mu);
    if (event == KUBE_WATCH_SYNCED) {
        int was = synced(w);
        w->listed |= 1u << one->index;
        first_sync = !was && synced(w);
    } else {
        w->spec.record(w->spec.snap, w->spec.collections[one->index].kind, event == KUBE_WATCH_DELETED, object, &err);
    }
    if (first_sync && w->spec.count != NULL)
        n = w->spec.count(w->spec.snap);
    pthread_mutex_unlock(&w->mu);
    if (err.message[0] != '\0')
        log_warnf("%s %s: %s", w->spec.what, w->spec.collections[one->index].name, err.message);
    if (first_sync && w->spec.count != NULL)
        log_infof("%s synced: %zu %s; %s", w->spec.what, n, w->spec.counted, w->spec.synced);
    else if (first_sync)
        log_infof("%s synced: %s", w->spec.what, w->spec.synced);
}

/* A failed list or watch, or a relist: the snapshot may be behind until that collection's next SYNCED (relist_on_error). */
static long on_trouble(void *arg, enum kube_watch_trouble trouble, long status, const char *message)
{
    struct snapwatch_one *one = arg;
    struct snapwatch *w = one->w;
    pthread_mutex_lock(&w->mu);
    int was = synced(w);
    w->listed &= ~(1u << one->index);
    pthread_mutex_unlock(&w->mu);
    if (was)
        log_warnf("%s: %s (%ld): %s until it has listed again", w->spec.what,
                  trouble == KUBE_WATCH_RELISTING ? "relisting"
                  : message != NULL               ? message
                                                  : "failed",
                  status, w->spec.unsynced);
    return 0;
}

static int start(struct snapwatch *w, struct kube_client *c, struct error *err)
{
    if ((w->watcher = kube_watch_create(c, err)) == NULL)
        return -1;
    for (unsigned i = 0; i < w->spec.ncollections; i++) {
        w->ones[i] = (struct snapwatch_one){w, i};
        const struct kube_watch_spec spec = {.name = w->spec.collections[i].name,
                                             .path = w->spec.collections[i].path,
                                             .fn = on_event,
                                             .arg = &w->ones[i],
                                             .trouble = w->spec.unsync_on_trouble ? on_trouble : NULL,
                                             .relist_on_error = w->spec.unsync_on_trouble,
                                             .shape = w->spec.shape,
                                             .shape_fn = w->spec.shape_fn};
        if (kube_watch_start(w->watcher, &spec, err) != 0)
            return -1;
    }
    log_infof("watching %s; until they are listed, %s", w->spec.watching, w->spec.unsynced);
    return 0;
}

struct snapwatch *snapwatch_create(struct kube_client *c, const struct snapwatch_spec *spec, struct error *err)
{
    struct snapwatch *w = util_calloc(1, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    w->spec = *spec;
    if (spec->ncollections > SNAPWATCH_MAX_COLLECTIONS) {
        error_setf(err, "%s: %zu collections, at most %d", spec->what, spec->ncollections, SNAPWATCH_MAX_COLLECTIONS);
        goto fail;
    }
    if (spec->ncollections > 0 && start(w, c, err) != 0)
        goto fail;
    return w;

fail:
    snapwatch_destroy(w);
    return NULL;
}

void snapwatch_destroy(struct snapwatch *w)
{
    if (w == NULL)
        return;
    kube_watch_destroy(w->watcher); /* no callback runs after this */
    w->spec.free_snap(w->spec.snap);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

const void *snapwatch_lock(struct snapwatch *w)
{
    pthread_mutex_lock(&w->mu);
    return synced(w) ? w->spec.snap : NULL;
}

void snapwatch_unlock(struct snapwatch *w)
{
    pthread_mutex_unlock(&w->mu);
}

int snapwatch_synced(struct snapwatch *w)
{
    if (w == NULL)
        return 0;
    pthread_mutex_lock(&w->mu);
    int s = synced(w);
    pthread_mutex_unlock(&w->mu);
    return s;
}

/* ---- the Queues ---- */

static void queues_record(void *snap, int kind, int deleted, const json_t *object, struct error *err)
{
    (void)kind;
    if (!deleted && queuecheck_set_put(snap, object) != 0)
        error_setf(err, "a Queue without metadata.name: ignored");
    const char *name = json_string_value(json_object_get(json_object_get(object, "metadata"), "name"));
    if (deleted && name != NULL)
        queuecheck_set_remove(snap, name);
}

static size_t queues_count(const void *snap)
{
    return ((const struct queuecheck_set *)snap)->len;
}

static void queues_free(void *snap)
{
    queuecheck_set_finish(snap);
    free(snap);
}

struct snapwatch *snapwatch_queues(struct kube_client *c, struct error *err)
{
    static const struct snapwatch_collection queues = {"queues", SNAPWATCH_QUEUES_PATH, 0};
    struct queuecheck_set *set = util_calloc(1, sizeof(*set));
    queuecheck_set_init(set);
    set->synced = 1; /* every Queue once it is handed out: snapwatch_lock hands it out only then */
    const struct snapwatch_spec spec = {.what = "queue watch",
                                        .watching = "Queues (" SNAPWATCH_QUEUES_PATH ")",
                                        .counted = "Queues known",
                                        .synced = "the queue tree checks are on",
                                        .unsynced = "the queue tree checks are skipped",
                                        .collections = &queues,
                                        .ncollections = 1,
                                        .snap = set,
                                        .record = queues_record,
                                        .count = queues_count,
                                        .free_snap = queues_free};
    return snapwatch_create(c, &spec, err);
}

/* ---- the DRA objects ---- */

#define DRA_KINDS 3

static const struct snapwatch_collection dra_collections[DRA_KINDS] = {
    {"deviceclasses", SNAPWATCH_DRA_API "/deviceclasses", DRASET_CLASS},
    {"resourceclaimtemplates", SNAPWATCH_DRA_API "/resourceclaimtemplates", DRASET_TEMPLATE},
    {"resourceclaims", SNAPWATCH_DRA_API "/resourceclaims", DRASET_CLAIM},
};

int snapwatch_dra_served(const json_t *resources)
{
    int found = 0;
    for (int k = 0; k < DRA_KINDS; k++) {
        size_t i;
        const json_t *r;
        json_array_foreach(json_object_get(resources, "resources"), i, r)
        {
            const char *name = json_string_value(json_object_get(r, "name"));
            if (name != NULL && strcmp(name, dra_collections[k].name) == 0) {
                found++;
                break;
            }
        }
    }
    return found == DRA_KINDS;
}

static void dra_record(void *snap, int kind, int deleted, const json_t *object, struct error *err)
{
    /* A claim kube-controller-manager made from a pod's template: pods never name it. Its deletion is harmless. */
    const json_t *annotations = json_object_get(json_object_get(object, "metadata"), "annotations");
    if (!deleted && kind == DRASET_CLAIM && json_object_get(annotations, DRASET_POD_CLAIM_ANNOTATION) != NULL)
        return;
    draset_record(snap, (enum draset_kind)kind, deleted, object, err);
}

static void dra_free(void *snap)
{
    draset_destroy(snap);
}

/* Whether SNAPWATCH_DRA_API is worth watching: 0 only when the API server says it does not serve it. */
static int dra_discover(struct kube_client *c)
{
    struct kube_response r;
    kube_client_response_init(&r);
    int served = 1;
    if (kube_get(c, SNAPWATCH_DRA_API, &r) == 0) {
        served = snapwatch_dra_served(r.body);
    } else if (r.status == 404) {
        served = 0;
    } else {
        log_warnf("discovery of %s: %s: watching its DeviceClasses, ResourceClaimTemplates and ResourceClaims anyway",
                  SNAPWATCH_DRA_API, r.message);
    }
    kube_client_response_finish(&r);
    if (!served)
        log_infof("Dynamic Resource Allocation (resource.k8s.io/v1) is not served: raygate.io/min-resources counts no device "
                  "claim (the gate counts them once it is)");
    return served;
}

struct snapwatch *snapwatch_dra(struct kube_client *c, struct error *err)
{
    const struct snapwatch_spec spec = {.what = "DRA watch",
                                        .watching =
                                            "DeviceClasses, ResourceClaimTemplates and ResourceClaims (" SNAPWATCH_DRA_API ")",
                                        .synced = "raygate.io/min-resources counts device claims",
                                        .unsynced = "raygate.io/min-resources counts no device claim",
                                        .collections = dra_collections,
                                        .ncollections = dra_discover(c) ? DRA_KINDS : 0,
                                        .snap = draset_create(),
                                        .record = dra_record,
                                        .free_snap = dra_free};
    return snapwatch_create(c, &spec, err);
}

/* ---- the admitted held RayClusters ---- */

static void held_record(void *snap, int kind, int deleted, const json_t *object, struct error *err)
{
    (void)kind;
    (void)err;
    heldset_record(snap, object, deleted);
}

static size_t held_count(const void *snap)
{
    return heldset_len(snap);
}

static void held_free(void *snap)
{
    heldset_destroy(snap);
}

struct snapwatch *snapwatch_held(struct kube_client *c, struct error *err)
{
    static const struct snapwatch_collection rayclusters = {"rayclusters", SNAPWATCH_HELD_PATH, 0};
    const struct snapwatch_spec spec = {.what = "RayCluster watch",
                                        .watching = "RayClusters (" SNAPWATCH_HELD_PATH ") for admitted held gangs",
                                        .counted = "admitted held RayClusters",
                                        .synced = "their pods are born without the gate",
                                        .unsynced = "every queued pod is gated",
                                        .collections = &rayclusters,
                                        .ncollections = 1,
                                        .snap = heldset_create(),
                                        .record = held_record,
                                        .count = held_count,
                                        .free_snap = held_free,
                                        .unsync_on_trouble = 1,
                                        .shape = HELDSET_SHAPE_EVENT, /* metadata only: all the set reads */
                                        .shape_fn = heldset_shape_fn};
    return snapwatch_create(c, &spec, err);
}
