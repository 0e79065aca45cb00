/*
 * kubewatch: list and watch collections (see kube.h for the threading
 * contract): one thread and one curl multi handle per watcher, any number of
 * watches on it. A watch lists, then watches from the list's resourceVersion
 * with bookmarks; after a 410 it relists and tells the caller only what
 * changed. Callers include kube.h.
 */
#ifndef RAYGATE_KUBEWATCH_H
#define RAYGATE_KUBEWATCH_H

#include <jansson.h>

#include "error.h"
#include "jsonscan.h"
#include "kubeclient.h"

struct kube_watcher;

enum kube_watch_event {
    KUBE_WATCH_ADDED,
    KUBE_WATCH_MODIFIED,
    KUBE_WATCH_DELETED,
    /*
     * The list is complete: every object that exists was delivered. Sent after
     * the initial list and again after every relist (which delivers ADDED,
     * MODIFIED and DELETED for what changed while the watch was down).
     */
    KUBE_WATCH_SYNCED,
};

/*
 * A watch callback. object is borrowed (json_incref to keep it); NULL for
 * SYNCED. A DELETED synthesised by a relist carries only metadata (namespace,
 * name, uid, resourceVersion). Runs on the watcher's thread.
 */
typedef void (*kube_watch_fn)(void *arg, enum kube_watch_event event, json_t *object);

/* Why a watch's collection is not current, until its next SYNCED (kube_watch_trouble_fn). */
enum kube_watch_trouble {
    KUBE_WATCH_FAILED,    /* a list or watch request failed: status (0: no answer) and message say how */
    KUBE_WATCH_RELISTING, /* the watch expired (410 Gone): the collection is being listed again */
};

/*
 * Told of a watch's trouble (optional), on the watcher's thread, before the
 * next attempt is scheduled. Returns the delay in ms before that attempt
 * for a FAILED one (e.g. longer for a 404 the caller expects to last), or 0
 * for the watcher's own backoff; ignored for RELISTING.
 */
typedef long (*kube_watch_trouble_fn)(void *arg, enum kube_watch_trouble trouble, long status, const char *message);

struct kube_watch_spec {
    const char *name;           /* for logs and metrics, e.g. "pods" */
    const char *path;           /* the collection, e.g. "/api/v1/pods", "/apis/ray.io/v1/rayclusters" */
    const char *label_selector; /* NULL: none */
    const char *field_selector; /* NULL: none */
    kube_watch_fn fn;
    void *arg;
    kube_watch_trouble_fn trouble; /* NULL: not told (called with arg) */
    int relist_on_error;           /* after a failed watch stream, list again (then SYNCED), not resume where it was */
    /* The watch stream's events built only in part (watchstream_set_shape): shape_fn NULL builds them whole. The list
       (and a relist) is always whole. */
    int shape;
    jsonscan_shape_fn shape_fn;
};

/*
 * Creates a watcher on c (which must outlive it) and starts its thread.
 * Returns it, or NULL with err.
 */
struct kube_watcher *kube_watch_create(struct kube_client *c, struct error *err);

/*
 * Adds a watch (spec's strings are copied): list, deliver, SYNCED, then watch
 * from the list's resourceVersion with bookmarks and a jittered timeout; on a
 * stream's end it re-watches from the last resourceVersion seen; on 410 Gone it
 * relists; on errors and 429 it backs off with jitter (honouring Retry-After),
 * then re-watches (or relists: relist_on_error); spec.trouble hears of each.
 * Any thread. Returns 0, or -1 with err (invalid spec).
 */
int kube_watch_start(struct kube_watcher *w, const struct kube_watch_spec *spec, struct error *err);

/* Stops and frees the watcher (see the threading contract). Accepts NULL. */
void kube_watch_destroy(struct kube_watcher *w);

#endif
