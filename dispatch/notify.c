#include "notify.h"

#include <stdlib.h>

#include "log.h"
#include "util.h"

int dispatchnotify_event(struct kube_client *k, const struct events_object *obj, const char *type, const char *reason,
                         const char *message, const char *now)
{
    json_t *ev = events_build(obj, type, reason, message, now, DISPATCHNOTIFY_INSTANCE);
    char *path = util_strdupf("/api/v1/namespaces/%s/events", obj->namespace_);
    struct kube_response resp;
    kube_client_response_init(&resp);
    int rc = kube_create(k, path, ev, &resp);
    if (rc != 0)
        log_warnf("Event %s on %s %s/%s: %s", reason, obj->kind, obj->namespace_, obj->name, resp.message);
    kube_client_response_finish(&resp);
    free(path);
    json_decref(ev);
    return rc;
}
