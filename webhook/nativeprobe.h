/*
 * nativeprobe: whether the webhook takes Kubernetes' own gang scheduling as
 * raygate's last step (KEP-4671: the Workload and PodGroup of
 * scheduling.k8s.io/v1beta1), that is, names each gated pod's PodGroup in
 * spec.schedulingGroup (mutate.h, mutate_options.native_gang). Decided once,
 * at start-up, from --native-gang: on, off, or auto, which asks the API
 * server's discovery whether it serves podgroups in that group-version. The
 * request path never calls the API server: it reads the decision.
 */
#ifndef RAYGATE_WEBHOOK_NATIVEPROBE_H
#define RAYGATE_WEBHOOK_NATIVEPROBE_H

#include "error.h"
#include "kube.h"
#include "nativegang.h" /* NATIVEGANG_API: the group-version whose discovery auto reads */

/* The resource auto looks for in NATIVEGANG_API. */
#define NATIVEPROBE_RESOURCE "podgroups"

/* --native-gang. */
enum nativeprobe_mode {
    NATIVEPROBE_AUTO = 0,
    NATIVEPROBE_ON,
    NATIVEPROBE_OFF,
};

/* The modes' names, indexed by enum nativeprobe_mode, NULL-terminated (the flag's choices). */
extern const char *const nativeprobe_mode_names[];

/* Why the step is on or off. */
enum nativeprobe_reason {
    NATIVEPROBE_REASON_FLAG,         /* --native-gang on or off */
    NATIVEPROBE_REASON_NO_API,       /* auto without a Kubernetes API (no kubeconfig or service account): off */
    NATIVEPROBE_REASON_SERVED,       /* auto: NATIVEGANG_API lists NATIVEPROBE_RESOURCE: on */
    NATIVEPROBE_REASON_NOT_SERVED,   /* auto: the API server answered 404 for NATIVEGANG_API: off */
    NATIVEPROBE_REASON_NO_PODGROUPS, /* auto: NATIVEGANG_API is served without NATIVEPROBE_RESOURCE: off */
    NATIVEPROBE_REASON_ERROR,        /* auto: discovery failed (no answer, another status): off, and error says why */
};

struct nativeprobe_decision {
    int on;
    enum nativeprobe_reason reason;
    struct error error; /* NATIVEPROBE_REASON_ERROR: the failed request, else empty */
};

/* Whether an APIResourceList (borrowed; may be NULL or of any shape) lists NATIVEPROBE_RESOURCE. */
int nativeprobe_served(const json_t *resources);

/*
 * Decides for mode into out: on and off as they say; auto asks client
 * (borrowed; NULL: no API, off) GET NATIVEGANG_API once, blocking (the
 * client's timeouts and retries bound it). Logs the decision in one line
 * (a warning when discovery failed). Returns out->on.
 */
int nativeprobe_decide(enum nativeprobe_mode mode, struct kube_client *client, struct nativeprobe_decision *out);

#endif
