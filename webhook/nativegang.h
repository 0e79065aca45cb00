/*
 * nativegang: whether the webhook takes Kubernetes' own gang scheduling as
 * raygate's last step (KEP-4671: the Workload and PodGroup of
 * scheduling.k8s.io/v1beta1), that is, names each gated pod's PodGroup in
 * spec.schedulingGroup (mutate.h, mutate_options.native_gang). Decided once,
 * at start-up, from --native-gang: on, off, or auto, which asks the API
 * server's discovery whether it serves podgroups in that group-version. The
 * request path never calls the API server: it reads the decision.
 */
#ifndef RAYGATE_NATIVEGANG_H
#define RAYGATE_NATIVEGANG_H

#include "error.h"
#include "kube.h"

/* The group-version whose discovery auto reads, and the resource it looks for there. */
#define NATIVEGANG_API "/apis/scheduling.k8s.io/v1beta1"
#define NATIVEGANG_RESOURCE "podgroups"

/* --native-gang. */
enum nativegang_mode {
    NATIVEGANG_AUTO = 0,
    NATIVEGANG_ON,
    NATIVEGANG_OFF,
};

/* The modes' names, indexed by enum nativegang_mode, NULL-terminated (the flag's choices). */
extern const char *const nativegang_mode_names[];

/* Why the step is on or off. */
enum nativegang_reason {
    NATIVEGANG_REASON_FLAG,         /* --native-gang on or off */
    NATIVEGANG_REASON_NO_API,       /* auto without a Kubernetes API (no kubeconfig or service account): off */
    NATIVEGANG_REASON_SERVED,       /* auto: NATIVEGANG_API lists NATIVEGANG_RESOURCE: on */
    NATIVEGANG_REASON_NOT_SERVED,   /* auto: the API server answered 404 for NATIVEGANG_API: off */
    NATIVEGANG_REASON_NO_PODGROUPS, /* auto: NATIVEGANG_API is served without NATIVEGANG_RESOURCE: off */
    NATIVEGANG_REASON_ERROR,        /* auto: discovery failed (no answer, another status): off, and error says why */
};

struct nativegang_decision {
    int on;
    enum nativegang_reason reason;
    struct error error; /* NATIVEGANG_REASON_ERROR: the failed request, else empty */
};

/* Whether an APIResourceList (borrowed; may be NULL or of any shape) lists NATIVEGANG_RESOURCE. */
int nativegang_served(const json_t *resources);

/*
 * Decides for mode into out: on and off as they say; auto asks client
 * (borrowed; NULL: no API, off) GET NATIVEGANG_API once, blocking (the
 * client's timeouts and retries bound it). Logs the decision in one line
 * (a warning when discovery failed). Returns out->on.
 */
int nativegang_decide(enum nativegang_mode mode, struct kube_client *client, struct nativegang_decision *out);

#endif
