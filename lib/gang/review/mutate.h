/*
 * mutate: what the admission webhook changes, as pure functions of one object.
 *
 * RayCluster (CREATE and UPDATE), when it has a non-empty volcano.sh/queue-name
 * label: the annotations raygate.io/min-member, raygate.io/min-resources (for
 * a RayJob's RayCluster with its submitter, submitter.h) and
 * (when metadata.name is known) scheduling.k8s.io/group-name on the cluster;
 * on the head and every worker template the queue label, the group-name
 * annotation and, from the cluster's ray.io/priority-class-name label, a
 * spec.priorityClassName the template does not set. A template labelled with
 * another queue is set to the cluster's queue, with a warning.
 *
 * A legacy RayCluster (cluster.ray.io, legacy.h) likewise, its gang from
 * legacy.h and its templates every spec.podTypes[].podConfig.
 *
 * Pod (CREATE), when labelled ray.io/cluster (or, from the legacy operator,
 * ray-cluster-name) and non-empty volcano.sh/queue-name,
 * not bound (no spec.nodeName) and for the default scheduler: the scheduling
 * gate raygate.io/gang (other gates kept) and, if missing, the annotation
 * scheduling.k8s.io/group-name ray-<cluster>-pg. metadata.name is never used.
 *
 * Kubernetes' own gang scheduling (KEP-4671, scheduling.k8s.io/v1beta1
 * Workload and PodGroup; the webhook's --native-gang, mutate_options): a pod
 * gated so also names its PodGroup in spec.schedulingGroup.podGroupName,
 * which kube-scheduler then binds all or nothing once the gate controller
 * has written that PodGroup and lifted the gate. The name is the pod's
 * group-name annotation (a RayJob's RayCluster's pods carry their RayJob's
 * group), else the ray-<cluster>-pg the annotation gets. The field is
 * immutable: it is set at CREATE, and a pod that has one (KubeRay's own
 * kubernetes-was backend sets it, or a user did) keeps it. A name that is not
 * a DNS subdomain (it could name no PodGroup, and the apiserver would refuse
 * the pod) is not written: such a pod is gated as before. With the option
 * off, the patch is what it was without it, byte for byte.
 *
 * Only gang members name the group: kube-scheduler holds a whole PodGroup
 * back while any of its pods is gated, and raygate keeps an autoscaler's tail
 * pods gated. The RayCluster mutation marks each template with
 * raygate.io/gang-member (names.h): "true" on the head's and on a worker
 * group's whose every pod is a member (gang.h's all_members), "false" on the
 * others; a pod gets spec.schedulingGroup only when it carries "true". A pod
 * without the mark (its cluster predates the mark) names no group: it is
 * gated as before, and the gate controller writes no PodGroup for a gang none
 * of whose pods names one.
 *
 * Both are idempotent: an object that already has what it needs gets no patch.
 */
#ifndef RAYGATE_MUTATE_H
#define RAYGATE_MUTATE_H

#include <jansson.h>

#include "draset.h"
#include "error.h"
#include "gang.h"
#include "heldset.h"
#include "heldsuspend.h"
#include "names.h"

struct mutate_result {
    json_t *patch;    /* new reference: RFC 6902 operations, or NULL when nothing changes */
    json_t *warnings; /* new reference: array of strings, or NULL when none */
};

/*
 * What the webhook's flags add to the mutation. All zero (or a NULL pointer
 * where one is taken): nothing, the mutation as it is without them.
 */
struct mutate_options {
    int native_gang; /* 1: a gated pod also gets spec.schedulingGroup (Kubernetes' gang scheduling, above) */
    /*
     * Borrowed: the DRA objects the webhook watches (its snapwatch_dra), listed; NULL
     * when resource.k8s.io/v1 is not served or not listed yet. Set, a KubeRay
     * RayCluster's raygate.io/min-resources adds what its device claims count
     * as (gangclaims.h): a template once per pod of its group, a shared claim
     * once. A claim, template or class not seen (yet) is left out, with a
     * warning naming it (the gate makes the gang wait for it); a claim entry
     * that names neither or both kinds leaves every device out, with a
     * warning (the gate counts none either). NULL: no device is counted.
     */
    const struct draset *dra;
    /* How long a qualifying RayCluster CREATE is held suspended (heldsuspend.h; the webhook's --hold-gangs). */
    enum heldsuspend_mode hold_gangs;
    /*
     * Borrowed: the admitted held RayClusters (heldset.h), from the webhook's
     * watch; NULL when not watched or not synced: every queued pod is gated.
     * A pod of a RayCluster in it is born without the gate (its other
     * changes as ever).
     */
    const struct heldset *held;
};

/* Initialises an empty result in caller-owned storage. */
void mutate_result_init(struct mutate_result *r);

/* Releases the patch and warnings; r may be NULL. */
void mutate_result_finish(struct mutate_result *r);

/*
 * Decides on a RayCluster object (borrowed), with opts (borrowed; NULL: all
 * off). out must be initialised and empty. Returns 0 (allowed; out->patch and
 * out->warnings set when any), or -1 when the object must be denied (an
 * invalid quantity, a negative count), with err.
 */
int mutate_raycluster(const json_t *raycluster, const struct mutate_options *opts, struct mutate_result *out, struct error *err);

/*
 * Decides on a Pod object (borrowed) being created, with opts (borrowed; NULL:
 * all off). out must be initialised and empty. Returns 0 (allowed; out->patch
 * set when any), or -1 with err when the pod is malformed where we must change
 * it (spec.schedulingGates not a list).
 */
int mutate_pod(const json_t *pod, const struct mutate_options *opts, struct mutate_result *out, struct error *err);

/* mutate_pod() of a pod created in namespace ns (the request's; NULL: the pod's metadata.namespace, else ""). */
int mutate_pod_ns(const json_t *pod, const char *ns, const struct mutate_options *opts, struct mutate_result *out,
                  struct error *err);

/* Whether a Pod (borrowed) carries raygate.io/gang-member "true": a gang member that may name the native group. */
int mutate_pod_is_member(const json_t *pod);

/* ---- building blocks, shared with the RayJob mutation (rayjob.h) ---- */

/*
 * Adds to *min what the device claims of a KubeRay RayCluster (borrowed; a
 * RayJob's spec.rayClusterSpec under its metadata will do) whose gang is gang
 * count as by s (mutate_options.dra): each claim that cannot be counted yet is
 * left out, with a warning in out naming it. Returns 0, or -1 with err on
 * overflow.
 */
int mutate_add_devices(const json_t *raycluster, const struct gang_spec *gang, const struct draset *s, struct resources *min,
                       struct mutate_result *out, struct error *err);

/*
 * What one pod template (borrowed, owned by the copy being mutated) needs: the
 * queue label (a different one is replaced, with a warning naming path and the
 * owner's kind), the group-name annotation when group is not NULL, the
 * gang-member mark member ("true", "false"; NULL: none) and
 * spec.priorityClassName from priority (may be NULL) when the template has none.
 */
void mutate_pod_template(json_t *template, const char *path, const char *owner, const char *queue, const char *group,
                         const char *member, const char *priority, struct mutate_result *out);

/* The gang-member mark of worker group i of gang (borrowed): "true" when all its pods are members, else "false". */
const char *mutate_member_mark(const struct gang_spec *gang, size_t i);

/*
 * mutate_pod_template() on the head (marked a member) and every worker
 * template (marked by mutate_member_mark() of gang, borrowed: the spec's own
 * gang) of a RayCluster spec (borrowed, owned by the copy being mutated; its
 * templates were checked to be objects by the gang arithmetic). path names
 * spec in warnings.
 */
void mutate_cluster_templates(json_t *spec, const char *path, const char *owner, const char *queue, const char *group,
                              const struct gang_spec *gang, const char *priority, struct mutate_result *out);

#endif
