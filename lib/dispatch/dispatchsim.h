/*
 * dispatchsim: whether one manager object would be admitted on one worker,
 * by the worker's own admission pass run on the dispatcher's view of it.
 *
 * The dispatcher keeps a struct cache per worker (cache.h), filled from lists
 * of the worker's Nodes, Pods, Queues and RayClusters. To weigh a manager
 * RayCluster or RayJob against it:
 * - the object becomes the RayCluster the worker would hold: a RayCluster as
 *   is; a RayJob as the RayCluster KubeRay makes from spec.rayClusterSpec
 *   (the RayJob's labels and annotations, ray.io/originated-from-* labels,
 *   and the submitter's request when the RayJob runs one, submitter.h), both
 *   with the gang annotations and template changes the worker's webhook would
 *   make (mutate.h, rayjob.h);
 * - one gated Pod per member (the head and each worker group's counted pods,
 *   gang.h) from the templates: labels ray.io/cluster, ray.io/node-type,
 *   ray.io/group and the queue label, the template's spec, the gate
 *   raygate.io/gang, Pending, unbound, created at now;
 * - those are upserted into the cache, one full admission pass runs
 *   (admit_pass, ADMIT_PASS_FULL: the worker's other waiting gangs compete as
 *   they would on the worker, in the worker's order), and the decision on that
 *   gang is the verdict;
 * - what was inserted is removed again: the cache models afterwards exactly
 *   what it modelled before (same nodes, pods, gangs, queues and what each
 *   holds). Only the pass's bookkeeping flags move (dirty marks, node-wait
 *   lists, cache_take_changes), which the dispatcher does not use.
 *
 * The synthetic head carries KubeRay's autoscaler sidecar when the cluster
 * autoscales (gang_autoscaler_container), as the gang's minResources does.
 * Copies not yet whole: the worker's own gate waits for a gang's pods, so a
 * copy whose pods KubeRay has not all made yet holds nothing there. The pass
 * counts it anyway, at its full demand, as it will be in a moment: each
 * RayCluster of copies (the view's: this manager's copies on the worker,
 * dispatchview.h) that the worker holds, not admitted, gets the members it
 * lacks (gated pods from its templates, named with "-pending"); a RayCluster
 * copy the cache does not hold yet (created a moment ago, its watch event not
 * in: the gate on the worker would see it incomplete, holding nothing) gets
 * the whole RayCluster the worker's webhook makes of it; a RayJob copy
 * KubeRay has made no RayCluster for yet (jobDeploymentStatus unset, New or
 * Initializing) gets a whole synthetic one; a copy being deleted gets
 * nothing. They are older than the weighed gang, so they take their room
 * first, as they will on the worker; a second gang is not sent to a worker
 * the first is about to fill. They are removed with the rest.
 *
 * stranded (best fit): after placing the gang, the room left free on the
 * worker's Ready, schedulable nodes in each resource the gang asks for
 * (allocatable - requests of the bound pods - the gang's minResources),
 * as a fraction of that resource's allocatable, the largest over those
 * resources, in parts per million (0..1000000; integers, no double). Lower is
 * a tighter fit.
 *
 * Pure: no I/O, no threads, no clock (now is passed in).
 */
#ifndef RAYGATE_DISPATCHSIM_H
#define RAYGATE_DISPATCHSIM_H

#include <stdint.h>

#include <jansson.h>

#include "admit.h"
#include "admitresult.h"
#include "cache.h"
#include "error.h"

/* stranded's scale: a whole resource left free. */
#define DISPATCH_PPM 1000000

struct dispatch_verdict {
    int fits;                 /* the worker's gate would admit it now */
    enum admit_reason reason; /* ADMIT_REASON_NONE when it fits; ADMIT_REASON_INVALID when it could not be simulated */
    char *message;            /* owned: why it does not fit ("... does not fit queue a: cpu needs 8, 4 free"); NULL when
                                 it fits */
    int64_t stranded;         /* when it fits: see above, in DISPATCH_PPM; DISPATCH_PPM when it does not */
};

/* Initialises an empty verdict (not fitting, no message) in caller-owned storage. */
void dispatch_sim_verdict_init(struct dispatch_verdict *v);

/* Releases v's message; v may be NULL. */
void dispatch_sim_verdict_finish(struct dispatch_verdict *v);

/*
 * Weighs manager object obj (borrowed: a RayCluster or RayJob from the
 * manager) against a worker's cache c, with the pending copies of copies
 * (borrowed, may be NULL: see above), with its decision state a
 * (admit_create(c), kept by the caller across calls), at now_ms (Unix ms: the
 * synthetic pods' and cluster's creation time, and the pass's time). out must
 * be initialised; it is overwritten.
 *
 * Returns 0 with the verdict; or -1 with err, the verdict then not fitting
 * with ADMIT_REASON_INVALID and err's text as its message, when obj cannot be
 * sized (its gang arithmetic fails), has no queue label, or a RayCluster of
 * its namespace and name (for a RayJob: of the synthetic cluster's name, the
 * RayJob's) is in the cache already (the worker has one). The cache is
 * unchanged in every case.
 */
int dispatch_sim(struct cache *c, struct admit *a, const json_t *obj, const json_t *copies, int64_t now_ms,
                 struct dispatch_verdict *out, struct error *err);

/*
 * The RayCluster the worker would hold for obj (borrowed), with the worker
 * webhook's changes, named name (for a RayJob, KubeRay's would be
 * <rayjob>-<5 random characters>). New reference, or NULL with err. Exposed
 * for tests and `why`.
 */
json_t *dispatch_sim_cluster(const json_t *obj, const char *name, int64_t now_ms, struct error *err);

#endif
