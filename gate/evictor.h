/*
 * evictor: carries out the whole-gang evictions that lib/evict decides, in
 * the order that makes them crash-safe:
 *
 *   1. evictor_record(): one merge PATCH of the RayCluster withdraws its
 *      admission record and writes the eviction record (evict_record_patch),
 *      with the RayCluster's uid and resourceVersion as preconditions: a
 *      RayCluster changed since the decision (409) or gone (404) is decided
 *      again, never evicted on stale facts. Nothing else is done unless this
 *      succeeded.
 *   2. evictor_delete_pods(): every pod gets the DisruptionTarget condition
 *      (a status PATCH, as kube-scheduler's preemption writes it; best
 *      effort) and is then deleted with its uid as precondition (a new pod of
 *      the same name is not ours to delete). Deletions are retried until every
 *      pod is deleted or gone, the time limit, or o->may_write says no.
 *
 * A crash between the two leaves a RayCluster that is not admitted, with an
 * eviction record, and pods still ungated or bound: the restarted controller
 * finds them (evict_pod_leftover) and deletes them, so the eviction finishes.
 */
#ifndef RAYGATE_EVICTOR_H
#define RAYGATE_EVICTOR_H

#include <stddef.h>

#include <jansson.h>

#include "kube.h"

#define EVICTOR_PERSIST_MS 30000 /* an apiserver restart fits in it */
#define EVICTOR_STEP_MS 50       /* pause after a round with failures; doubles up to EVICTOR_STEP_MAX_MS */
#define EVICTOR_STEP_MAX_MS 1000
#define EVICTOR_HOPELESS_TRIES 3 /* tries for a 4xx other than 404, 408, 409, 429 */

/* A pod to delete. Strings borrowed. */
struct evictor_pod {
    const char *ns;
    const char *name;
    const char *uid;
    int done; /* out: 1 once deleted (or gone, or replaced by another pod of its name) */
};

struct evictor_options {
    const char *message;         /* the DisruptionTarget condition's message */
    const char *now;             /* its lastTransitionTime (RFC 3339) */
    long long persist_ms;        /* how long failed deletions are retried (0: EVICTOR_PERSIST_MS) */
    long long step_ms;           /* 0: EVICTOR_STEP_MS */
    int (*may_write)(void *arg); /* asked before every round; NULL: always */
    void *arg;
    size_t concurrency; /* 0: 64 */
    /* Test-only fault switch (the crash drill): when >= 0, the process exits
       (status 3) after this many pods were deleted. -1: off. */
    long fault_exit_after_deletes;
};

/*
 * Step 1 for RayCluster ns/name of uid (borrowed): sends patch (borrowed; it
 * carries the resourceVersion precondition), with uid added as precondition.
 * Returns 0 when written, 1 when the RayCluster is gone or changed since
 * (404, 409), -1 on any other failure (why filled: one line).
 */
int evictor_record(struct kube_client *k, const char *ns, const char *name, const char *uid, const json_t *patch, char *why,
                   size_t why_size);

/*
 * Step 2: marks and deletes the n pods, concurrently. Sets pods[i].done.
 * o must give message and now. Returns the number of pods not done (each
 * logged).
 */
size_t evictor_delete_pods(struct kube_client *k, struct evictor_pod *pods, size_t n, const struct evictor_options *o);

#endif
