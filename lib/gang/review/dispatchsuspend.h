/*
 * dispatchsuspend: what a manager's webhook (path /dispatch-suspend) does to
 * a RayCluster or RayJob so that a KubeRay operator running on the manager
 * makes no pods for a dispatched object (docs/dispatch.md, "A manager with
 * KubeRay").
 *
 * An object whose queue label (volcano.sh/queue-name) names a Queue annotated
 * raygate.io/dispatch-to gets spec.suspend true and the annotation
 * raygate.io/dispatch-suspended "true" (the dispatcher's worker copy drops
 * that suspend: dispatchcopy.h). Once marked, an UPDATE keeps both, whatever
 * its queue now says: KubeRay must never see it unsuspended. An object the
 * user created suspended is left alone (its copy stays suspended). Denied:
 * a RayJob to be suspended whose spec.shutdownAfterJobFinishes is not true
 * (KubeRay refuses to suspend it: it would mark it ValidationFailed and fight
 * the status the dispatcher mirrors), and any unmarked queued object while the
 * Queues are not listed yet or its Queue is not known (the webhook cannot tell
 * whether it dispatches; a Queue created a moment before may not have reached
 * the watch).
 *
 * Pure: no I/O, no threads, no clock.
 */
#ifndef RAYGATE_DISPATCHSUSPEND_H
#define RAYGATE_DISPATCHSUSPEND_H

#include <jansson.h>

#include "error.h"
#include "mutate.h"
#include "queuecheck.h"

/* Whether obj (borrowed; NULL: none) carries raygate.io/dispatch-suspended "true": this webhook suspended it. */
int dispatchsuspend_marked(const json_t *obj);

/*
 * Decides on request (borrowed: an AdmissionReview request whose operation is
 * CREATE or UPDATE), object its RayCluster (is_job 0) or RayJob (is_job 1),
 * queues the Queues the webhook knows (borrowed; unsynced: unknown). out must
 * be initialised and empty. Returns 0 when allowed (out->patch: the JSON Patch
 * operations, or NULL when nothing changes), 1 when denied with err.
 */
int dispatchsuspend_decide(const json_t *request, const json_t *object, int is_job, const struct queuecheck_set *queues,
                           struct mutate_result *out, struct error *err);

#endif
