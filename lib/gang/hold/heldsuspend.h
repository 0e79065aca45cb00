/*
 * heldsuspend: a RayCluster held suspended until its gang is admitted, so
 * that its pods are born without the gate (docs/design.md, "Pods born
 * ungated").
 *
 * The webhook's --hold-gangs: a RayCluster CREATE that qualifies gets
 * spec.suspend true and the annotation raygate.io/held-suspended "true"
 * (names.h). KubeRay makes no pod for it. The gate controller weighs the gang
 * from its declaration (declare.h: members made from its templates), and its
 * admission record (raygate.io/admitted-at) clears spec.suspend in the same
 * write: KubeRay makes the pods, and the webhook, which watches admitted held
 * RayClusters (heldset.h), leaves them ungated. One write per RayCluster
 * instead of one per pod. An eviction writes suspend true with its record.
 *
 * Qualifies: a KubeRay RayCluster with a non-empty queue label, made by a
 * user (no ownerReferences: a RayJob's or RayService's controller would fight
 * over spec.suspend), not suspended already (a user's suspend is theirs), not
 * suspended by a manager's dispatch (dispatchsuspend.h), not
 * topology-constrained (its domain is chosen for pods that exist: early.h)
 * and not admitted.
 *
 * An UPDATE of a held RayCluster that is not admitted keeps spec.suspend true
 * (a user's apply, an old client): only the gate's admission record may clear
 * it. The mark stays for the RayCluster's life.
 *
 * Pure: no I/O.
 */
#ifndef RAYGATE_HELDSUSPEND_H
#define RAYGATE_HELDSUSPEND_H

#include <jansson.h>

/* Whether cluster (borrowed; NULL: no) carries raygate.io/held-suspended "true". */
int heldsuspend_marked(const json_t *cluster);

/* Whether cluster (borrowed) is admitted: raygate.io/admitted-at is a non-empty string. */
int heldsuspend_admitted(const json_t *cluster);

/* Whether cluster (borrowed) has spec.suspend true. */
int heldsuspend_suspended(const json_t *cluster);

/*
 * Whether cluster's (borrowed) pods that are members of its gang are born without the gate: it is marked held,
 * admitted, and its metadata.generation is still raygate.io/held-generation's (its admission's, a decimal
 * integer: none, or another, and no pod is).
 */
int heldsuspend_born_ungated(const json_t *cluster);

/*
 * The JSON Patch operations (appended to patch, an array that is applied
 * after what is in it already; metadata.annotations is known to exist once
 * those are applied: the RayCluster mutation adds raygate.io/min-member) for
 * a RayCluster CREATE (update 0) or UPDATE (update 1) of cluster (borrowed).
 * Returns how many were appended.
 */
int heldsuspend_ops(const json_t *cluster, int update, json_t *patch);

#endif
