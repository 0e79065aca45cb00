/*
 * preemptscan: preemption (preempt.h) applied to the cache (cache.h) after a
 * decision pass (admit.h). Pure: no I/O, no threads, no clock.
 *
 * The preemptors are the gangs a pass left waiting on their queue's
 * capability or on the nodes (WAIT with reason QUEUE_CAPACITY or NODES: they
 * are complete), highest priority first, then the older RayCluster. The first
 * whose selection finds victims is the scan's one preemption: one per scan,
 * and none at all while an earlier preemption is in flight at now_ms
 * (preempthold_in_flight: a victim, one with raygate.io/preempted-by, not
 * admitted again and with pods ungated or bound, terminating ones included,
 * evicted less than PREEMPTHOLD_MAX_MS ago), so that no selection counts on
 * room another one already claimed.
 *
 * What the selection sees, from the cache as the controller left it (its
 * admissions marked): every present Queue with its capability, deserved,
 * reclaimable and policy (a policy annotation that does not parse is the
 * default, with a warning), and what its gangs hold (admit_gang_hold); every
 * present, admitted gang with its priority (the highest spec.priority of its
 * live pods, as admit orders), admission time (raygate.io/admitted-at),
 * preemptable flag and the pods bound to nodes; the node room of a pass on
 * which every admitted but unbound pod is reserved. The preemptor asks for
 * its minResources of the queue, and places its live pods (its autoscaling
 * tail too: a conservative count, never a smaller one).
 *
 * A topology-constrained preemptor (the RayCluster's request, topology.h)
 * gets victims that free one domain of its constraint (preemptdomain.h),
 * over the domains of the scan's pass; the result names the domain.
 *
 * A victim is evicted whole: the result lists every live pod of it that is
 * ungated or bound, to delete, as lib/evictscan does for an eviction.
 */
#ifndef RAYGATE_PREEMPTSCAN_H
#define RAYGATE_PREEMPTSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "admit.h"
#include "cache.h"
#include "error.h"
#include "preempt.h"

/* A pod to delete. Strings owned by the result. */
struct preemptscan_pod {
    char *name;
    char *uid;
};

/* A victim. Strings owned by the result. */
struct preemptscan_victim {
    char *namespace_;
    char *cluster;          /* RayCluster name */
    char *cluster_uid;      /* may be NULL */
    char *resource_version; /* the RayCluster's, as decided on; may be NULL */
    char *gang;             /* "ray-<cluster>-pg" */
    char *queue;
    int32_t priority;
    struct preemptscan_pod *pods;
    size_t npods;
};

struct preemptscan_result {
    enum preempt_kind kind; /* NONE: no preemption */
    /* The preemptor, when kind is set. */
    char *namespace_;
    char *cluster;
    char *gang;
    char *queue;
    int32_t priority;
    char *domain; /* a topology-constrained preemptor's: the domain its victims free (preempt_result.domain), or NULL */
    char *
        victim_message; /* the Preempted Events on the victims: "preempted by gang ns/x (priority 1000) in queue q: cpu 4 needed" */
    char *preemptor_message; /* the Preempting Event: "preempting gang ray-a-pg of queue q (priority 0): cpu 4 needed" */
    struct preemptscan_victim *victims;
    size_t nvictims;
    /* Why not, for each preemptor weighed without victims ("gang ns/x: ..."), and policy annotations that did not parse. */
    char **notes;
    size_t nnotes;
};

void preemptscan_result_init(struct preemptscan_result *r);
void preemptscan_result_finish(struct preemptscan_result *r);

/*
 * Scans c after a pass whose decisions are d (borrowed), filling out
 * (initialised by the caller); h (borrowed, may be NULL: none) are the
 * HyperNodes Volcano-style constraints resolve against. Admitted gangs'
 * members to come or gated keep their room here as in a pass (early.h,
 * early_reserve). A gang that is
 * not complete is no preemptor. Returns 0 (out->kind says whether there is a
 * preemption), or -1 with err when a sum of resources overflows (no
 * preemption then).
 */
struct hypernodes;
int preemptscan_run(const struct cache *c, const struct admit_result *d, const struct hypernodes *h, int64_t now_ms,
                    struct preemptscan_result *out, struct error *err);

#endif
