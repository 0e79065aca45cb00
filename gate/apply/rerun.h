/*
 * rerun: the API calls that rerun a RayJob whose gang raygate evicted; the
 * policy (when, and what the patches say) is rayjob.h's.
 *
 * rerun_suspend() suspends the RayJob, labelled raygate.io/rerun: KubeRay
 * deletes its RayCluster and submitter. rerun_resume_all(), called by the
 * leader on every full pass, lists the RayJobs so labelled and resumes those
 * KubeRay has made Suspended: KubeRay then makes a new RayCluster, which the
 * webhook and the gate queue like any other, and the job runs from the start.
 * The label is the state: a controller that restarts in between finds it.
 */
#ifndef RAYGATE_RERUN_H
#define RAYGATE_RERUN_H

#include <jansson.h>

#include "error.h"
#include "kube.h"

enum rerun_outcome {
    RERUN_FAILED = -1,  /* the API failed: why says how; try again */
    RERUN_NOT_POSSIBLE, /* KubeRay would not suspend it, or it is gone or changed: why says which */
    RERUN_SUSPENDED,    /* suspended, labelled */
};

/*
 * Suspends RayJob ns/name (of uid; NULL: any) for a rerun: a GET, then
 * rayjob_can_rerun(), then the merge PATCH rayjob_rerun_patch() with the uid
 * and resourceVersion seen as preconditions. record: annotations to put on the
 * RayJob (borrowed, may be NULL); stamp: RFC 3339, the label's value.
 */
enum rerun_outcome rerun_suspend(struct kube_client *k, const char *ns, const char *name, const char *uid, const json_t *record,
                                 const char *stamp, struct error *why);

/*
 * Lists the RayJobs labelled raygate.io/rerun (every namespace) and sends
 * rayjob_resume_patch() to each that needs it. Returns how many were resumed
 * or had their label removed, or -1 when the list failed (why filled; a
 * missing RayJob CRD is not a failure: 0).
 */
long rerun_resume_all(struct kube_client *k, struct error *why);

#endif
