/*
 * rayjob: a RayJob (ray.io/v1) as one gang, as pure functions of the object.
 *
 * KubeRay v1.5 (rayjob_controller.go) runs a RayJob on a RayCluster it creates
 * from spec.rayClusterSpec, named <rayjob>-<5 random characters> (a new one per
 * retry), carrying every RayJob label and annotation plus
 * ray.io/originated-from-crd=RayJob and ray.io/originated-from-cr-name=<rayjob>.
 * How the job is submitted (spec.submissionMode) decides what else runs:
 * - K8sJobMode (the default): a submitter pod, from a batch Job named like the
 *   RayJob that KubeRay creates once the cluster is Ready; its template is
 *   spec.submitterPodTemplate, else KubeRay's default (one container
 *   "ray-job-submitter" with the head's image, requests 500m CPU / 200Mi memory,
 *   limits 1 CPU / 1Gi);
 * - SidecarMode: that default container inside the head pod (the RayCluster's
 *   head template carries it, so the cluster's own gang counts it);
 * - HTTPMode, InteractiveMode: no submitter pod.
 * spec.clusterSelector runs the job on an existing RayCluster instead: such a
 * RayJob is not a gang of its own (its cluster is one, if queued), and raygate
 * neither mutates it nor counts its submitter.
 *
 * The gang (as KubeRay's Volcano integration sizes its PodGroup ray-<rayjob>-pg):
 * minMember is the cluster's (the submitter starts only once the cluster is
 * Ready: counting it would deadlock); minResources is the cluster's plus the
 * submitter's, so that the queue holds the submitter's share from admission.
 */
#ifndef RAYGATE_RAYJOB_H
#define RAYGATE_RAYJOB_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "gang.h"
#include "names.h"
#include "resources.h"

#define RAYJOB_LABEL_ORIGIN_NAME "ray.io/originated-from-cr-name"
#define RAYJOB_LABEL_JOB_NAME "batch.kubernetes.io/job-name"
/* Marks the submitter pod template raygate mutated (the submitter pod carries no ray.io label). */
#define RAYJOB_LABEL_SUBMITTER "raygate.io/rayjob-submitter"
#define RAYJOB_SUBMITTER_CONTAINER "ray-job-submitter"

enum rayjob_mode {
    RAYJOB_MODE_K8S_JOB = 0,
    RAYJOB_MODE_HTTP,
    RAYJOB_MODE_INTERACTIVE,
    RAYJOB_MODE_SIDECAR,
};

struct rayjob_gang {
    enum rayjob_mode mode;
    int selector;                   /* spec.clusterSelector is set: no gang of its own, nothing else below is filled */
    int suspended;                  /* spec.suspend */
    struct gang_spec cluster;       /* the RayCluster KubeRay creates (SidecarMode: the submitter in its head) */
    int has_submitter;              /* K8sJobMode: a submitter pod */
    struct resources submitter;     /* its effective request (kube-scheduler's, as gang.h computes it) */
    int64_t min_member;             /* the cluster's: the submitter is left out */
    struct resources min_resources; /* the cluster's plus the submitter pod's */
};

/* Initialises an empty gang in caller-owned storage. */
void rayjob_gang_init(struct rayjob_gang *g);

/* Releases the gang's memory; g may be NULL. */
void rayjob_gang_finish(struct rayjob_gang *g);

/*
 * Computes the gang of a RayJob object (borrowed). out must be initialised; it
 * is overwritten. Returns 0, or -1 with err naming the field
 * ("spec.rayClusterSpec.workerGroupSpecs[0].replicas: must not be negative",
 * "spec.submitterPodTemplate.spec.containers[0].resources.requests.cpu: ...",
 * "spec.submissionMode: ...") when the spec cannot be sized.
 */
int rayjob_gang_from(const json_t *rayjob, struct rayjob_gang *out, struct error *err);

/* KubeRay's default submitter container (common.GetDefaultSubmitterContainer); image may be NULL. New reference. */
json_t *rayjob_submitter_container(const char *image);

/* The first container's image of a RayCluster spec's (borrowed) head (borrowed), or NULL. */
const char *rayjob_head_image(const json_t *cluster_spec);

/*
 * The RayJob a RayCluster (borrowed) was made for: returns 1 and sets *name and
 * *uid (borrowed from raycluster) when its labels say
 * ray.io/originated-from-crd=RayJob, ray.io/originated-from-cr-name=<name> and
 * an ownerReference with controller true names that RayJob (kind RayJob,
 * ray.io/v1) with a uid; else returns 0. Such a cluster's gang is the RayJob's:
 * its PodGroup is ray-<rayjob>-pg, owned by the RayJob, kept across the
 * RayClusters KubeRay makes for it (retries, suspend and resume).
 */
int rayjob_owner_of(const json_t *raycluster, const char **name, const char **uid);

/* ---- rerunning a RayJob whose gang raygate evicted ----
 *
 * KubeRay deletes a suspended RayJob's RayCluster and submitter, and makes a
 * new RayCluster once it is resumed (its annotations copied from the RayJob):
 * the job runs again from the start, never Failed for the eviction. raygate
 * suspends it with the label raygate.io/rerun (the eviction time) and the
 * eviction record in its annotations (so that the next RayCluster carries the
 * requeue backoff), and resumes it once KubeRay has made it Suspended.
 */
#define RAYJOB_LABEL_RERUN "raygate.io/rerun"

/*
 * Whether raygate can rerun the RayJob (borrowed) by suspending it: KubeRay
 * suspends only a RayJob with spec.shutdownAfterJobFinishes, without
 * clusterSelector, whose status.jobDeploymentStatus is Running or
 * Initializing. Returns 1, or 0 with why (one line) filled.
 */
int rayjob_can_rerun(const json_t *rayjob, struct error *why);

/*
 * The merge patch that suspends RayJob (borrowed) for a rerun: spec.suspend
 * true, the label raygate.io/rerun (stamp's letters, digits, '-', '_' and '.':
 * a label value), the annotations of record (borrowed,
 * an object of annotation values or nulls; may be NULL), and metadata.uid and
 * metadata.resourceVersion of the RayJob as preconditions. New reference.
 */
json_t *rayjob_rerun_patch(const json_t *rayjob, const char *stamp, const json_t *record);

/*
 * What a RayJob (borrowed) carrying raygate.io/rerun needs: NULL while KubeRay
 * has not made it Suspended yet (or it carries no such label); else a new JSON
 * patch (RFC 6902) that resumes it only if it is still as seen: it tests the
 * label's value and spec.suspend, then sets spec.suspend false and removes the
 * label. A RayJob the user resumed already (suspend false) gets only the
 * label removed.
 */
json_t *rayjob_resume_patch(const json_t *rayjob);

/*
 * The RayJob a pod (borrowed) is the submitter of: the batch Job's name (KubeRay
 * names it after the RayJob) when the pod carries raygate's submitter label,
 * else NULL. Borrowed from pod.
 */
const char *rayjob_submitter_of(const json_t *pod);

#endif
