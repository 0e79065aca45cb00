/*
 * heldresume: KubeRay told at once that a held RayCluster is resumed
 * (heldsuspend.h; docs/design.md, "Pods born ungated").
 *
 * The gate's admission record clears a held RayCluster's spec.suspend.
 * KubeRay (1.6, its RayClusterStatusConditions gate on by default) that had
 * already marked the RayCluster suspended (condition RayClusterSuspended
 * True) takes the resume in two rounds: the first only flips that condition
 * to False, and since a status change is not an event its own watch passes
 * on, the second, which makes the pods, waits for its requeue, 2 seconds
 * later: the held gang's first pod comes 2 s after its admission, where a
 * RayCluster never suspended has its pods in the round that sees it.
 * Whether KubeRay marked it suspended first is a race with the gate's
 * admission: a gang admitted at once mostly wins it, one that waited in its
 * queue always loses it.
 *
 * Due, once per admission: the RayCluster has no pod (KubeRay made none:
 * when it took the resume in at once, it made them in the same round), is held, admitted, still at its
 * admission's generation (raygate.io/held-generation), not suspended, its
 * condition RayClusterSuspended False (KubeRay took the resume in), and not
 * nudged at that generation yet (raygate.io/held-resumed). The nudge is that
 * annotation, written with a merge patch: KubeRay's watch passes annotation
 * changes on, and its next round makes the pods. One write per held
 * admission that needs it, none per pod. A nudge lost or late costs what it
 * saves: KubeRay's requeue comes anyway.
 *
 * Pure: no I/O.
 */
#ifndef RAYGATE_HELDRESUME_H
#define RAYGATE_HELDRESUME_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Whether cluster (borrowed), of which the caller knows pods pods, is due a
 * nudge (above); if so, *generation is the held generation to write.
 */
int heldresume_due(const json_t *cluster, size_t pods, int64_t *generation);

/* The merge patch that nudges (new reference): metadata.annotations[raygate.io/held-resumed] = generation. */
json_t *heldresume_patch(int64_t generation);

#endif
