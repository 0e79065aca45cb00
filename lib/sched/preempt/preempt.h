/*
 * preempt: which admitted gangs to evict so that a waiting gang is admitted
 * whole (preemption within a queue, reclaim across queues). Whole gangs only,
 * and only when evicting them admits the preemptor. Pure: no I/O, no threads,
 * no clock; the node room is simulated with fit.h in the caller's pass.
 *
 * Within a queue (kind PREEMPT): the candidates are the admitted gangs of the
 * preemptor's queue that the queue's policy (annotation raygate.io/preemption)
 * lets it evict:
 * - LowerPriority (the default): strictly lower priority;
 * - LowerOrNewerEqualPriority (Kueue's): lower priority, or equal priority
 *   and created after the preemptor;
 * - Never: none.
 *
 * Across queues (kind RECLAIM, tried when no PREEMPT set exists), Volcano's
 * capacity plugin's deserved shares, in the queue tree: the preemptor's
 * queue has spec.deserved and its allocation plus the preemptor stays within
 * it (every resource deserved lists). The candidates are the gangs of other
 * queues (not the preemptor's ancestors) that have spec.deserved and whose
 * spec.reclaimable is not false; a set of them is allowed by
 * reclaimtree_allows(): each victim's queue borrows (allocated above deserved
 * in some resource deserved lists); neither it nor any ancestor of it below
 * its lowest common ancestor with the preemptor's queue is taken below its
 * deserved (in a resource where it was at or above it) or its guarantee; no
 * ancestor of the preemptor's queue below that common ancestor ends above
 * its deserved; and the preemptor's queue's share after admitting it is at
 * most the victim queue's share after the eviction. Whatever their
 * priority: reclaim is bounded by deserved on both sides, not by priority,
 * as in Volcano's capacity plugin, so a queue below its deserved takes back
 * its room from equal- or higher-priority borrowers. The nearest first:
 * candidates whose lowest common ancestor with the preemptor's queue is
 * deepest (siblings) are weighed alone first, then those of the next level
 * up with them, and so on to the root. The preemptor's queue's policy
 * decides only within the queue, except Never, which turns reclaim off as
 * well. A queue without deserved neither reclaims nor is reclaimed from,
 * unless it or an ancestor says raygate.io/reclaim-by-weight: "true": then
 * its deserved derived by weight (qtree.h, qtree_fill: by the demand of the
 * moment) stands for deserved here, both ways (preemptscan fills it in).
 *
 * Never a candidate: a gang whose RayCluster says volcano.sh/preemptable:
 * "false" (label or annotation), a gang already being evicted (its share and
 * its room are still held until its pods are gone), the gang that preempted
 * the preemptor (a victim never evicts its preemptor back). A preemptor with
 * evictions it caused still in flight causes no more.
 *
 * The set: candidates are taken lowest priority first, then the most recently
 * admitted (least work lost), then namespace/name. The preemptor must then
 * fit both the tree (reclaimtree_fits(): at its queue and every ancestor, the
 * allocation without the set's victims under it, plus the preemptor's
 * request, within the capability, listed resources only; no sibling's
 * guarantee lent) and the nodes,
 * pod by pod, with the room of the victims' pods given back (fit_release).
 * The first single candidate that suffices is the set; when none does, the
 * candidates are added in order until the preemptor fits, then each victim,
 * highest priority and oldest first, is spared when the preemptor still fits
 * without evicting it: a minimal set (no victim can be spared). When that set
 * has m > 2 victims, the sets of 2, then 3, ... m - 1 candidates are tried,
 * each size in the candidates' order, and the first that admits the
 * preemptor is taken instead: the fewest gangs, and of those the lowest
 * priorities and most recently admitted first; the search gives up after
 * 4096 sets weighed (then the minimal set stands). A reclaim then puts, in
 * place of each victim, the lowest-priority gang of the same queue left out
 * that still admits the preemptor: never a higher-priority gang while a lower
 * one of its queue would do. When even every candidate does not make it fit,
 * there are no victims.
 *
 * A topology-constrained preemptor (preempt_preemptor.topo) that does not
 * fit the nodes as they are (hard: in one domain; soft: anywhere) gets
 * victims that free one domain of its constraint (preemptdomain.h): for each
 * domain, the set above is chosen among the candidates with pods there, and
 * the preemptor must then fit with its constrained pods in one domain; the
 * domain needing the fewest victims wins, then the lowest priorities, then
 * the best fit (the search for fewer victims, 4096 sets, shared equally
 * among the domains). When no domain can be freed there are no victims (hard), or
 * the victims are chosen as for an unconstrained gang (soft: it may spread).
 * A hard one that fits one domain already (only its queue is short) gets
 * victims as any gang, its fit on the nodes still in one domain.
 *
 * Conservative: the room a victim's admitted but unbound pods reserve is not
 * counted as freed (fit.h does not say on which node a reservation sits), so
 * a set that relies on it is not found; an eviction is never chosen that the
 * simulation does not show admitting the preemptor.
 */
#ifndef RAYGATE_PREEMPT_H
#define RAYGATE_PREEMPT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "fit.h"
#include "queuetree.h"
#include "resources.h"
#include "topodomain.h"
#include "topology.h"

enum preempt_policy {
    PREEMPT_POLICY_LOWER_PRIORITY = 0,
    PREEMPT_POLICY_LOWER_OR_NEWER_EQUAL_PRIORITY,
    PREEMPT_POLICY_NEVER,
};

enum preempt_kind {
    PREEMPT_KIND_NONE = 0,
    PREEMPT_KIND_PREEMPT, /* victims of the preemptor's queue */
    PREEMPT_KIND_RECLAIM, /* victims of queues above their deserved */
};

/*
 * The policy an annotation value names (NULL: absent, the default):
 * "LowerPriority", "LowerOrNewerEqualPriority", "Never". Returns 0, or -1
 * with err naming the annotation for any other value (*out is then the
 * default, and the controller reports it).
 */
int preempt_policy_parse(const char *value, enum preempt_policy *out, struct error *err);

/* "LowerPriority", "LowerOrNewerEqualPriority", "Never". */
const char *preempt_policy_name(enum preempt_policy policy);

/* "preempt", "reclaim" (the metric's kind label); "" for NONE. */
const char *preempt_kind_name(enum preempt_kind kind);

/* A queue of the tree. Everything borrowed. */
struct preempt_queue {
    const char *name;
    enum preempt_policy policy;
    size_t parent;                      /* index into preempt_input.queues, or QUEUETREE_ROOT */
    const struct resources *capability; /* its own spec.capability; NULL: unlimited */
    const struct resources *deserved;   /* NULL: none */
    const struct resources *guarantee;  /* spec.guarantee.resource; NULL: none */
    int reclaimable;                    /* spec.reclaimable is not false */
    const struct resources *allocated;  /* what its subtree's gangs hold now, those being evicted included; NULL: nothing */
};

/* An admitted gang, a possible victim. Everything borrowed. */
struct preempt_gang {
    const char *namespace_, *name;
    size_t queue; /* index into preempt_input.queues */
    int32_t priority;
    int64_t created_ms;            /* its RayCluster's creation */
    int64_t admitted_ms;           /* its admission */
    int preemptable;               /* 0: volcano.sh/preemptable "false" */
    int evicting;                  /* being evicted: its pods are not gone yet */
    const struct resources *hold;  /* what it holds of its queue (admit_gang_hold); NULL: nothing */
    struct cache_pod *const *pods; /* its pods bound to nodes: their room is given back when it is gone */
    size_t npods;
};

/* The complete waiting gang that does not fit. Everything borrowed. */
struct preempt_preemptor {
    const char *namespace_, *name;
    size_t queue;
    int32_t priority;
    int64_t created_ms;
    const char *preempted_by;        /* "ns/name" of the gang that last preempted it, or NULL */
    int evictions_in_flight;         /* evictions it caused are not finished */
    const struct resources *request; /* what it would hold of its queue (its minResources) */
    struct cache_pod **pods;         /* its members to place, sorted larger first (fit_sort_larger_first) */
    size_t npods;
    const struct topo_request *topo; /* where its pods must lie (topology.h); NULL: anywhere */
};

struct preempt_input {
    const struct preempt_queue *queues;
    size_t nqueues;
    const struct preempt_gang *pool; /* the admitted gangs, the possible victims */
    size_t npool;
    const struct preempt_preemptor *preemptor;
    const struct resources *root_cap;  /* the capability of a Queue named root; NULL: none */
    const struct resources *root_room; /* the room the root shares (qtree.h); NULL: not checked */
    /* Topology (preemptdomain.h); both NULL: the preemptor's topo is not looked at. */
    struct topodomains *domains; /* the pass's domains (topodomain_begin() done on its fit) */
    const struct cache *cache;   /* the cache the pass's fit was created on */
};

/* The choice. Initialise with preempt_result_init, release with preempt_result_finish. */
struct preempt_result {
    enum preempt_kind kind; /* NONE: no victims */
    size_t *victims;        /* owned: indexes into preempt_input.pool, the order they were chosen in */
    size_t nvictims;
    char *domain;  /* owned: the domain the victims free for a topology-constrained preemptor, or NULL */
    char *message; /* owned: NONE: why not ("no gang of queue q with lower priority than 1000"); else what is needed ("cpu 4
                      needed") */
};

void preempt_result_init(struct preempt_result *r);
void preempt_result_finish(struct preempt_result *r);

/*
 * Chooses the victims for in->preemptor (see above), simulating on f, a
 * pass begun with fit_begin() and holding what the pass placed so far;
 * f's room is as it found it on return. out (initialised) is reset and
 * filled. Returns 0, or -1 with err when a sum of resources overflows (out
 * then has no victims).
 */
int preempt_select(struct fit *f, const struct preempt_input *in, struct preempt_result *out, struct error *err);

/*
 * The Preempted Event's message (new string): "preempted by gang ns/x
 * (priority 1000) in queue q: cpu 4 needed" (reclaim: "reclaimed by ...").
 */
char *preempt_victim_message(const struct preempt_input *in, const struct preempt_result *r);

#endif
