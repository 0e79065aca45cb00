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
 *
 * For a RayJob's gang, once the record is written, the RayJob is suspended
 * (rerun.h) so that it runs again from the start on a new RayCluster; its pods
 * are deleted all the same.
 *
 * struct evictor carries out what one scan (evictscan.h) found, in that
 * order, with what users see: a Warning Event GangEvicted on the RayCluster
 * and on each pod (the scan's message: which members were late and why), the
 * log, and the counter raygate_gangs_evicted_total{queue,reason}.
 */
#ifndef RAYGATE_EVICTOR_H
#define RAYGATE_EVICTOR_H

#include <stddef.h>

#include <jansson.h>

#include "evictscan.h"
#include "kube.h"
#include "metrics.h"

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
    /* For the crash drill's fault point (fault.h): when >= 0, only this many
       pods are deleted, one at a time, and the call returns (the caller then
       exits as a crash would). -1: all of them. */
    long stop_after_deletes;
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

/* What the controller lends the evictor. */
struct evictor_hooks {
    int (*may_write)(void *arg); /* asked before every write; NULL: always */
    /* An eviction's record was written: the controller marks its cache (cache_gang_mark_evicted). */
    void (*evicted)(void *arg, const struct evictscan_gang *g);
    void *arg;
    long stop_after_deletes; /* the crash drill (fault.h): see evictor_options; -1: off */
};

struct evictor;

/* Creates an evictor writing through k (borrowed) and counting into reg (borrowed); instance: the Events' reportingInstance. */
struct evictor *evictor_create(struct kube_client *k, struct metrics_registry *reg, const char *instance);
void evictor_destroy(struct evictor *e);

/*
 * Carries out r's gangs: for an eviction (reason set) the record first, and
 * only once it is written the Events and the pods' deletion; for an eviction
 * to finish, the deletion of its leftover pods (a pod whose deletion this
 * evictor sent in the last EVICTOR_REDELETE_MS is not sent again). now:
 * RFC 3339. Returns the number of gangs for which something failed or whose
 * RayCluster changed since the scan (to look at again soon). With h->stop_after_deletes >= 0, stops after the first
 * eviction's record and that many deletions, returning -1.
 */
long evictor_carry_out(struct evictor *e, const struct evictscan_result *r, const char *now, const struct evictor_hooks *h);

#define EVICTOR_REDELETE_MS 15000

#endif
