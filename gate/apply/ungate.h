/*
 * ungate: removes raygate's scheduling gate from the pods of admitted gangs,
 * and keeps at it until every gate is gone.
 *
 * Once a gang is admitted, a gate left in place is a gang partly released: the
 * scheduler binds the ungated pods while the others wait. So a pod whose
 * PATCH fails is tried again at once, whatever the answer: 409 (the pod
 * changed: read it again, patch its new version), 429 and 5xx, a cut
 * connection or a timeout (the PATCH may have been applied: the retry's 409
 * and re-read tell). Only a pod that is gone (404, or another pod of the same
 * name) or free of our gate stops the retries, or the time limit, or
 * o->may_write saying no (leadership lost, shutting down). A 4xx that
 * retrying cannot cure (400, 403, 422, ...) is tried a few times, not until
 * the limit.
 *
 * ungate_spread: the time from a gang's first gate removed to its last, across
 * passes (a gang whose last gates outlive a pass's retries is finished by a
 * later FINISH pass). Pure bookkeeping, no I/O.
 */
#ifndef RAYGATE_UNGATE_H
#define RAYGATE_UNGATE_H

#include <stddef.h>

#include "admit.h"
#include "kube.h"
#include "ungatepace.h"

/* A pod to ungate. */
struct ungate_job {
    const char *ns;
    const struct admit_pod *pod; /* borrowed: name, uid, resource_version, keep_gates */
    int ok;                      /* out: 1 once the pod is free of our gate, or gone */
    long long removed_ms;        /* out: CLOCK_MONOTONIC ms when its gate was seen gone; -1 if gone or not ok */
};

struct ungate_options {
    long long persist_ms;        /* how long failures are retried (0: UNGATE_PERSIST_MS) */
    long long step_ms;           /* first pause between rounds that had failures other than 409 (0: UNGATE_STEP_MS) */
    int (*may_write)(void *arg); /* asked before every round; NULL: always */
    void *arg;
    size_t concurrency; /* PATCHes in flight at most (0: UNGATE_CONCURRENCY) */
    /*
     * Paced release: when set, and there are more than pace_over jobs, the
     * gates go head first, then in batches sized by how fast the released pods
     * bind (ungatepace.h). bound answers how many of jobs[order[0..n)] are
     * bound (have a node) now. NULL: every gate at once, heads first.
     */
    size_t (*bound)(void *arg, const struct ungate_job *jobs, const size_t *order, size_t n);
    size_t pace_over;                     /* gangs up to this many pods go at once (0: every batch is paced) */
    long long pace_tick_ms;               /* between looks at the binds while the backlog is full (0: UNGATE_PACE_TICK_MS) */
    const struct ungatepace_config *pace; /* the pacing's batches, stall and deadline (borrowed; NULL: ungatepace.h's) */
};

#define UNGATE_PERSIST_MS 30000 /* an apiserver restart fits in it */
#define UNGATE_STEP_MS 50       /* doubles per round, up to UNGATE_STEP_MAX_MS */
#define UNGATE_STEP_MAX_MS 1000
#define UNGATE_HOPELESS_TRIES 3
#define UNGATE_CONCURRENCY 16 /* leaves the API server room for kube-scheduler's binds (its client: 50 QPS) */
#define UNGATE_PACE_TICK_MS 20
#define UNGATE_CATCHUP_CONCURRENCY                                                                                                 \
    64 /* a paced release past its deadline (ungatepace_behind) */ /* tries for a 4xx other than 404, 408, 409, 429 */

/*
 * Removes our gate from the n pods of jobs, concurrently (at most
 * o->concurrency PATCHes in flight, retries batched too), heads first; paced
 * by the binds when o->bound is set. Sets jobs[i].ok and removed_ms. o may be NULL.
 * Returns the number of jobs not ok (each logged).
 */
size_t ungate_pods(struct kube_client *k, struct ungate_job *jobs, size_t n, const struct ungate_options *o);

/* The gates of a pod (borrowed JSON) other than ours, as [{"name":...}] (new); *ours set if ours is there. */
json_t *ungate_gates_without_ours(const json_t *pod, int *ours);

/*
 * Whether the gates of a FINISH or TAIL_ADMIT may go, from the answer to a
 * GET of the gang's RayCluster (status, body borrowed, may be NULL) and the
 * uid the cache knows it by (NULL: any): 0 yes (it exists as that uid and is
 * not being deleted); 1 no (404, another uid, deletionTimestamp set); -1 the
 * answer tells nothing (an error: try again).
 */
int ungate_owner_verdict(long status, const json_t *body, const char *uid);

struct ungate_spread;

struct ungate_spread *ungate_spread_create(void);
void ungate_spread_destroy(struct ungate_spread *s);

/*
 * Notes what one pass did to gang ns/cluster's gates: jobs are its n pods as
 * ungate_pods left them; begins is 1 for the gang's admission (ADMIT), 0 for a
 * later FINISH (only followed when its admission left gates behind). now_ms is
 * CLOCK_MONOTONIC ms. Returns the spread in ms, first gate removed to last,
 * once the gang has none left; -1 while some remain, for a FINISH of a gang
 * whose admission was complete (a replaced pod), or when no gate was removed.
 */
long long ungate_spread_note(struct ungate_spread *s, const char *ns, const char *cluster, int begins,
                             const struct ungate_job *jobs, size_t n, long long now_ms);

/* Gangs the spread still follows (left gates behind and not finished yet). */
size_t ungate_spread_pending(const struct ungate_spread *s);

#endif
