/* heldwatch: the webhook's view of the admitted held RayClusters (heldwatch.h). */
#include "heldwatch.h"

#include <pthread.h>
#include <stdlib.h>

#include "log.h"
#include "util.h"

struct heldwatch {
    pthread_mutex_t mu;
    struct heldset *set; /* under mu */
    int synced;          /* under mu: listed, and no trouble since */
    struct kube_watcher *watcher;
};

/* One watch event (object borrowed); on the watcher's thread. */
static void on_event(void *arg, enum kube_watch_event event, json_t *object)
{
    struct heldwatch *w = arg;
    int first_sync = 0;
    pthread_mutex_lock(&w->mu);
    if (event == KUBE_WATCH_SYNCED) {
        first_sync = !w->synced;
        w->synced = 1;
    } else {
        heldset_record(w->set, object, event == KUBE_WATCH_DELETED);
    }
    size_t n = heldset_len(w->set);
    pthread_mutex_unlock(&w->mu);
    if (first_sync)
        log_infof("RayCluster watch synced: %zu admitted held RayClusters; their pods are born without the gate", n);
}

/* A failed list or watch, or a relist: the set may be behind until the next SYNCED (relist_on_error). */
static long on_trouble(void *arg, enum kube_watch_trouble trouble, long status, const char *message)
{
    struct heldwatch *w = arg;
    pthread_mutex_lock(&w->mu);
    int was = w->synced;
    w->synced = 0;
    pthread_mutex_unlock(&w->mu);
    if (was)
        log_warnf("RayCluster watch: %s (%ld): every queued pod is gated until it has listed again",
                  trouble == KUBE_WATCH_RELISTING ? "relisting"
                  : message != NULL               ? message
                                                  : "failed",
                  status);
    return 0;
}

struct heldwatch *heldwatch_create(struct kube_client *c, struct error *err)
{
    struct heldwatch *w = util_calloc(1, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    w->set = heldset_create();
    if ((w->watcher = kube_watch_create(c, err)) == NULL)
        goto fail;
    const struct kube_watch_spec spec = {.name = "rayclusters",
                                         .path = HELDWATCH_PATH,
                                         .fn = on_event,
                                         .arg = w,
                                         .trouble = on_trouble,
                                         .relist_on_error = 1,
                                         .shape = HELDSET_SHAPE_EVENT, /* metadata only: all the set reads */
                                         .shape_fn = heldset_shape_fn};
    if (kube_watch_start(w->watcher, &spec, err) != 0)
        goto fail;
    log_infof("watching RayClusters (%s) for admitted held gangs; until they are listed, every queued pod is gated",
              HELDWATCH_PATH);
    return w;

fail:
    heldwatch_destroy(w);
    return NULL;
}

void heldwatch_destroy(struct heldwatch *w)
{
    if (w == NULL)
        return;
    kube_watch_destroy(w->watcher); /* no callback runs after this */
    heldset_destroy(w->set);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

const struct heldset *heldwatch_lock(struct heldwatch *w)
{
    pthread_mutex_lock(&w->mu);
    return w->synced ? w->set : NULL;
}

void heldwatch_unlock(struct heldwatch *w)
{
    pthread_mutex_unlock(&w->mu);
}
