/*
 * early: a gang weighed before all its pods exist, as Kueue weighs a workload
 * from the pod sets it declares (raygate-gate --early-admission; docs/design.md,
 * "Whole gangs, against the queue and the nodes").
 *
 * KubeRay creates a gang's pods one request at a time: a thousand take
 * seconds. Waiting for all of them before admitting, then ungating all of
 * them, adds creation time and binding time up instead of overlapping them.
 * Instead, once the head and one pod of every worker group the gang counts
 * exist, each member still to come is weighed as a copy of a pod of its role
 * (its request and scheduling constraints): KubeRay makes a group's pods from
 * one template, init containers and all, so the copy is the pod to come, where
 * a pod built here from the template would miss what KubeRay and admission
 * add. The queue already counts them (minResources); the nodes are checked
 * with the copies placed. Once admitted, each pod is ungated as it arrives
 * (admit.h: FINISH), and until it arrives and is ungated its copy keeps its
 * room on the nodes (early_reserve), as the admitted pods the scheduler has
 * not bound yet keep theirs.
 *
 * Not weighed early: the legacy operator's gangs (legacy.h: their own rule),
 * and topology-constrained gangs (topology.h: their domain is chosen for the
 * pods that exist). A gang weighed early that does not fit is no preemptor
 * (preemptscan.h) until it is complete. Pure: no I/O.
 */
#ifndef RAYGATE_EARLY_H
#define RAYGATE_EARLY_H

#include <stddef.h>

#include "cache.h"
#include "fit.h"

/* Whether gang g may be weighed (or, admitted, keep room) before its pods all exist: present, valid, neither legacy nor
 * topology-constrained. */
int early_applies(const struct cache_gang *g);

/*
 * The members gang g lacks, per role (0 the head, 1 + i worker group i of
 * g->groups): the role's count in g's shape less the pods of that role among
 * filled[0..nfilled) (at most the count). For each, a pod of the same role
 * among live[0..nlive) is appended to out (the same pod as often as its role
 * lacks members; out holds at least g->min_member); at most g->min_member -
 * nfilled in all (pods the labels do not place fill slots too). A lacking
 * role with no pod in live gets none, and sets *complete to 0 (else 1).
 * Returns how many were appended (out NULL: how many would be).
 */
size_t early_missing(const struct cache_gang *g, struct cache_pod *const *filled, size_t nfilled, struct cache_pod *const *live,
                     size_t nlive, struct cache_pod **out, int *complete);

/*
 * Whether admitted gang g keeps room for members that are missing or not
 * ungated yet (early_reserve does it for g): early_applies(), admitted, and
 * fewer than minMember of its live pods ungated, or some of them gated (a
 * member made again while autoscaled pods run: gang_copies then finds which
 * members lack). A member missing while the tail's pods make up its number
 * is not seen until its successor exists.
 */
int early_reserves(const struct cache_gang *g);

/*
 * For every gang of c that early_reserves(), reserves on f (fithold_reserve) a
 * copy of a pod of each role for each member of that role not ungated yet
 * (missing, or gated: a pass ungates it without placing it again), larger
 * first. Returns how many copies were reserved. It walks the gangs on c's
 * early list (model.h: those changed since early_prune last saw them,
 * and those it kept; a test of counters each; the pods only of the gangs it
 * reserves for), not every gang.
 * Every pass calls it, early admission on or off: an admitted gang whose
 * member was deleted and is made again (or was never ungated: a restart
 * mid-admission) is ungated by FINISH without a check of the nodes, so its
 * room is held meanwhile, or another gang's admission would take it.
 */
size_t early_reserve(const struct cache *c, struct fit *f);

/* Takes off c's early list the gangs early_reserves() says no to; the pass calls it before early_reserve. */
void early_prune(struct cache *c);

#endif
