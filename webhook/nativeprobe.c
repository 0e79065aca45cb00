#include "nativeprobe.h"

#include <string.h>

#include "log.h"

const char *const nativeprobe_mode_names[] = {"auto", "on", "off", NULL};

int nativeprobe_served(const json_t *resources)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(resources, "resources"), i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        if (name != NULL && strcmp(name, NATIVEPROBE_RESOURCE) == 0)
            return 1;
    }
    return 0;
}

/* auto's question to the API server, into out. */
static void discover(struct kube_client *client, struct nativeprobe_decision *out)
{
    struct kube_response r;
    kube_client_response_init(&r);
    if (kube_get(client, NATIVEGANG_API, &r) == 0) {
        out->on = nativeprobe_served(r.body);
        out->reason = out->on ? NATIVEPROBE_REASON_SERVED : NATIVEPROBE_REASON_NO_PODGROUPS;
    } else if (r.status == 404) {
        out->reason = NATIVEPROBE_REASON_NOT_SERVED;
    } else {
        out->reason = NATIVEPROBE_REASON_ERROR;
        error_setf(&out->error, "%s", r.message);
    }
    kube_client_response_finish(&r);
}

/* Why, in words, for the log. */
static const char *describe(enum nativeprobe_reason reason)
{
    switch (reason) {
    case NATIVEPROBE_REASON_FLAG:
        return "as --native-gang says";
    case NATIVEPROBE_REASON_NO_API:
        return "--native-gang auto, and no Kubernetes API to ask";
    case NATIVEPROBE_REASON_SERVED:
        return "--native-gang auto: the API server serves " NATIVEPROBE_RESOURCE " in scheduling.k8s.io/v1beta1";
    case NATIVEPROBE_REASON_NOT_SERVED:
        return "--native-gang auto: the API server does not serve scheduling.k8s.io/v1beta1: Kubernetes before 1.37, or that "
               "group-version or its GenericWorkload feature gate not enabled";
    case NATIVEPROBE_REASON_NO_PODGROUPS:
        return "--native-gang auto: the API server serves scheduling.k8s.io/v1beta1 without " NATIVEPROBE_RESOURCE;
    default: /* NATIVEPROBE_REASON_ERROR */
        return "--native-gang auto, and the API server's discovery failed";
    }
}

int nativeprobe_decide(enum nativeprobe_mode mode, struct kube_client *client, struct nativeprobe_decision *out)
{
    memset(out, 0, sizeof(*out));
    if (mode != NATIVEPROBE_AUTO) {
        out->on = mode == NATIVEPROBE_ON;
        out->reason = NATIVEPROBE_REASON_FLAG;
    } else if (client == NULL) {
        out->reason = NATIVEPROBE_REASON_NO_API;
    } else {
        discover(client, out);
    }
    if (out->on)
        log_infof("native gang step on (%s): gated pods name their PodGroup in spec.schedulingGroup, for Kubernetes' gang "
                  "scheduling",
                  describe(out->reason));
    else if (out->reason == NATIVEPROBE_REASON_ERROR)
        log_warnf("native gang step off (%s: %s): gated pods get no spec.schedulingGroup", describe(out->reason),
                  out->error.message);
    else
        log_infof("native gang step off (%s): gated pods get no spec.schedulingGroup", describe(out->reason));
    return out->on;
}
