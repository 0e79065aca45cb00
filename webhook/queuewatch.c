/* queuewatch: the webhook's view of the Queues (queuewatch.h). */
#include "queuewatch.h"

#include <pthread.h>
#include <stdlib.h>

#include "log.h"
#include "util.h"

struct queuewatch {
    pthread_mutex_t mu;
    struct queuecheck_set set; /* under mu */
    struct kube_watcher *watcher;
};

/* One watch event (object borrowed); on the watcher's thread. */
static void on_event(void *arg, enum kube_watch_event event, json_t *object)
{
    struct queuewatch *w = arg;
    const char *name = json_string_value(json_object_get(json_object_get(object, "metadata"), "name"));
    int first_sync = 0;
    size_t n;
    pthread_mutex_lock(&w->mu);
    switch (event) {
    case KUBE_WATCH_ADDED:
    case KUBE_WATCH_MODIFIED:
        if (queuecheck_set_put(&w->set, object) != 0)
            log_warnf("queue watch: a Queue without metadata.name: ignored");
        break;
    case KUBE_WATCH_DELETED:
        if (name != NULL)
            queuecheck_set_remove(&w->set, name);
        break;
    case KUBE_WATCH_SYNCED:
        first_sync = !w->set.synced;
        w->set.synced = 1;
        break;
    }
    n = w->set.len;
    pthread_mutex_unlock(&w->mu);
    if (first_sync)
        log_infof("queue watch synced: %zu Queues known; the queue tree checks are on", n);
}

struct queuewatch *queuewatch_create(struct kube_client *c, struct error *err)
{
    struct queuewatch *w = util_calloc(1, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    queuecheck_set_init(&w->set);
    if ((w->watcher = kube_watch_create(c, err)) == NULL)
        goto fail;
    const struct kube_watch_spec spec = {.name = "queues", .path = QUEUEWATCH_PATH, .fn = on_event, .arg = w};
    if (kube_watch_start(w->watcher, &spec, err) != 0)
        goto fail;
    log_infof("watching Queues (%s); until they are listed, the queue tree checks are skipped", QUEUEWATCH_PATH);
    return w;

fail:
    queuewatch_destroy(w);
    return NULL;
}

void queuewatch_destroy(struct queuewatch *w)
{
    if (w == NULL)
        return;
    kube_watch_destroy(w->watcher); /* no callback runs after this */
    queuecheck_set_finish(&w->set);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

const struct queuecheck_set *queuewatch_lock(struct queuewatch *w)
{
    pthread_mutex_lock(&w->mu);
    return &w->set;
}

void queuewatch_unlock(struct queuewatch *w)
{
    pthread_mutex_unlock(&w->mu);
}
