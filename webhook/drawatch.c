/* drawatch: the webhook's view of the DRA objects that size a gang (drawatch.h). */
#include "drawatch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

#define DRAWATCH_KINDS 3

/* One watch: its collection and the draset kind of its objects. */
struct drawatch_kind {
    struct drawatch *w;
    enum draset_kind kind;
    const char *name, *path;
};

struct drawatch {
    pthread_mutex_t mu;
    struct draset *set; /* under mu */
    unsigned listed;    /* under mu: bit k once watch k has listed */
    struct drawatch_kind kinds[DRAWATCH_KINDS];
    struct kube_watcher *watcher; /* NULL: nothing watched */
};

static const unsigned all_listed = (1u << DRAWATCH_KINDS) - 1;

int drawatch_served(const json_t *resources)
{
    static const char *const want[DRAWATCH_KINDS] = {"deviceclasses", "resourceclaimtemplates", "resourceclaims"};
    int found = 0;
    for (int k = 0; k < DRAWATCH_KINDS; k++) {
        size_t i;
        const json_t *r;
        json_array_foreach(json_object_get(resources, "resources"), i, r)
        {
            const char *name = json_string_value(json_object_get(r, "name"));
            if (name != NULL && strcmp(name, want[k]) == 0) {
                found++;
                break;
            }
        }
    }
    return found == DRAWATCH_KINDS;
}

/* A claim kube-controller-manager made from a pod's template (object borrowed): pods never name it. */
static int pod_claim(const json_t *object)
{
    const json_t *annotations = json_object_get(json_object_get(object, "metadata"), "annotations");
    return json_object_get(annotations, DRASET_POD_CLAIM_ANNOTATION) != NULL;
}

/* One watch event (object borrowed); on the watcher's thread. */
static void on_event(void *arg, enum kube_watch_event event, json_t *object)
{
    struct drawatch_kind *k = arg;
    struct drawatch *w = k->w;
    struct error err = {{0}};
    int first_sync = 0;
    if (event != KUBE_WATCH_SYNCED && event != KUBE_WATCH_DELETED && k->kind == DRASET_CLAIM && pod_claim(object))
        return;
    pthread_mutex_lock(&w->mu);
    if (event == KUBE_WATCH_SYNCED) {
        unsigned was = w->listed;
        w->listed |= 1u << (k - w->kinds);
        first_sync = was != all_listed && w->listed == all_listed;
    } else {
        draset_record(w->set, k->kind, event == KUBE_WATCH_DELETED, object, &err);
    }
    pthread_mutex_unlock(&w->mu);
    if (err.message[0] != '\0')
        log_warnf("DRA watch %s: %s", k->name, err.message);
    if (first_sync)
        log_infof("DRA watch synced (DeviceClasses, ResourceClaimTemplates, ResourceClaims): raygate.io/min-resources "
                  "counts device claims");
}

/* Whether DRAWATCH_API is worth watching: 0 only when the API server says it does not serve it. */
static int discover(struct kube_client *c)
{
    struct kube_response r;
    kube_client_response_init(&r);
    int served = 1;
    if (kube_get(c, DRAWATCH_API, &r) == 0) {
        served = drawatch_served(r.body);
    } else if (r.status == 404) {
        served = 0;
    } else {
        log_warnf("discovery of %s: %s: watching its DeviceClasses, ResourceClaimTemplates and ResourceClaims anyway", DRAWATCH_API,
                  r.message);
    }
    kube_client_response_finish(&r);
    if (!served)
        log_infof("Dynamic Resource Allocation (resource.k8s.io/v1) is not served: raygate.io/min-resources counts no device "
                  "claim (the gate counts them once it is)");
    return served;
}

static int start(struct drawatch *w, struct kube_client *c, struct error *err)
{
    if ((w->watcher = kube_watch_create(c, err)) == NULL)
        return -1;
    for (int k = 0; k < DRAWATCH_KINDS; k++) {
        const struct kube_watch_spec spec = {
            .name = w->kinds[k].name, .path = w->kinds[k].path, .fn = on_event, .arg = &w->kinds[k]};
        if (kube_watch_start(w->watcher, &spec, err) != 0)
            return -1;
    }
    log_infof("watching DeviceClasses, ResourceClaimTemplates and ResourceClaims (%s); until they are listed, "
              "raygate.io/min-resources counts no device claim",
              DRAWATCH_API);
    return 0;
}

struct drawatch *drawatch_create(struct kube_client *c, struct error *err)
{
    struct drawatch *w = util_calloc(1, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    w->set = draset_create();
    w->kinds[0] = (struct drawatch_kind){w, DRASET_CLASS, "deviceclasses", DRAWATCH_API "/deviceclasses"};
    w->kinds[1] = (struct drawatch_kind){w, DRASET_TEMPLATE, "resourceclaimtemplates", DRAWATCH_API "/resourceclaimtemplates"};
    w->kinds[2] = (struct drawatch_kind){w, DRASET_CLAIM, "resourceclaims", DRAWATCH_API "/resourceclaims"};
    if (discover(c) && start(w, c, err) != 0) {
        drawatch_destroy(w);
        return NULL;
    }
    return w;
}

void drawatch_destroy(struct drawatch *w)
{
    if (w == NULL)
        return;
    kube_watch_destroy(w->watcher); /* no callback runs after this */
    draset_destroy(w->set);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

const struct draset *drawatch_lock(struct drawatch *w)
{
    pthread_mutex_lock(&w->mu);
    return w->listed == all_listed ? w->set : NULL;
}

void drawatch_unlock(struct drawatch *w)
{
    pthread_mutex_unlock(&w->mu);
}

int drawatch_synced(struct drawatch *w)
{
    if (w == NULL)
        return 0;
    pthread_mutex_lock(&w->mu);
    int synced = w->listed == all_listed;
    pthread_mutex_unlock(&w->mu);
    return synced;
}
