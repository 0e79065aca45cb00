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
 * topology-constrained in any form (topology_constrained(), topology.h: its
 * domain is chosen for pods that exist: early.h)
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

/* How long the webhook holds a qualifying RayCluster (its --hold-gangs). */
enum heldsuspend_mode {
    HELDSUSPEND_OFF = 0, /* not at all: every queued pod is created gated */
    HELDSUSPEND_WAIT,    /* until its gang is admitted: a waiting gang has no pod */
    HELDSUSPEND_DECIDE,  /* until the gate's first decision: admitted, as WAIT; must wait, released to be gated */
};

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

/* Whether cluster (borrowed) is marked held and was released (raygate.io/held-release "released"): a gated gang. */
int heldsuspend_released(const json_t *cluster);

/* Whether cluster (borrowed) is marked held and is to be released when its gang must wait ("on-wait"). */
int heldsuspend_release_on_wait(const json_t *cluster);

/*
 * The gate's release of a held RayCluster whose gang must wait, as a merge patch (new reference):
 * raygate.io/held-release "released" and spec.suspend false, with no admission record. KubeRay then makes its
 * pods; the webhook gates them (the RayCluster is not admitted), and keeps spec.suspend as the release left it.
 */
json_t *heldsuspend_release_patch(void);

/*
 * The JSON Patch operations (appended to patch, an array that is applied
 * after what is in it already; metadata.annotations is known to exist once
 * those are applied: the RayCluster mutation adds raygate.io/min-member) for
 * a RayCluster CREATE (update 0) or UPDATE (update 1) of cluster (borrowed),
 * the webhook holding gangs as mode says (a CREATE under HELDSUSPEND_DECIDE is
 * also marked "on-wait"; an UPDATE is kept suspended in any mode, so that a
 * RayCluster held before a restart of the webhook in another mode stays so
 * until the gate admits or releases it). Returns how many were appended.
 */
int heldsuspend_ops(const json_t *cluster, int update, enum heldsuspend_mode mode, json_t *patch);

#endif
