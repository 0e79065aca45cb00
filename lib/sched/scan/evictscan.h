/*
 * evictscan: the eviction policy (evict.h) applied to the cache (cache.h):
 * which admitted gangs to take back now, which pods of evicted gangs are
 * still to be deleted, and when to look again. Pure: no I/O, no threads, no
 * clock (the time and the jitter's random number are passed in).
 *
 * For every present, admitted gang with a valid spec (not the legacy
 * operator's: legacy.h): its members
 * (admit_gang_members: the head and the counted workers, not the
 * autoscaler's tail) are judged by evict_check under the configuration of
 * its queue (the flags, with the Queue's annotations applied). While some
 * of its pods live, each member it has fewer live pods than (an early
 * admission's still to come, early.h; a deleted member's replacement) is
 * judged as a member unbound since the gang fell short (cache_gang
 * short_since_ms; its admission when unknown): a gang whose pods KubeRay
 * cannot all create (a quota) does not keep what it holds past the
 * placement timeout. One with no live pod (suspended) is not timed. No clock starts before floor_ms: a controller
 * that just started cannot know how long a pod waited before (a member
 * ungated by a restarted controller gets a whole timeout).
 *
 * Before its timeouts, an admitted gang dispatched from a manager whose
 * lease expired (dispatchlease.h) is evicted whole (EVICT_REASON_DISPATCH_LEASE,
 * no backoff: it is held back until the lease is renewed), and the end of
 * every running lease is a time to look again.
 *
 * An eviction lists every live pod of the gang that is ungated or bound (its
 * members and its tail): they are deleted, and KubeRay's replacements wait
 * behind the gate. A gang that is not admitted but has an eviction record and
 * such pods (a controller stopped in the middle of an eviction, or deletions
 * that failed) gets them listed again, with no new record: the eviction is
 * finished. So does a held gang (heldsuspend.h) that is not admitted, record
 * or not: a pod born without the gate while the webhook's view lagged its
 * eviction (docs/design.md, "Pods born ungated"). Declared pods (declare.h)
 * are never listed: they are not in the API.
 *
 * Cost: the scan runs about once a second over every gang. An admitted gang
 * none of whose live pods has a deadline running (none unbound, or placement
 * not timed; none bound but not Ready, or readiness not timed: cache_gang's
 * nunbound and nunready, kept by the cache) is not walked: a cache of running
 * gangs costs a look at each gang (hack/bench.sh: admit_bench --scan).
 */
#ifndef RAYGATE_EVICTSCAN_H
#define RAYGATE_EVICTSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "evict.h"

/* A pod to delete. Strings owned by the result. */
struct evictscan_pod {
    char *name;
    char *uid;
    int member; /* one of the members judged (else the tail, or a leftover) */
};

/* A gang to evict (reason set), or whose eviction is to be finished (reason NONE). Strings owned by the result. */
struct evictscan_gang {
    enum evict_reason reason;
    char *namespace_;
    char *cluster;          /* RayCluster name */
    char *cluster_uid;      /* may be NULL */
    char *resource_version; /* the RayCluster's, as decided on (the record's precondition); may be NULL */
    char *gang;             /* "ray-<cluster>-pg", or "ray-<rayjob>-pg" for a RayJob's RayCluster */
    char *rayjob;           /* the RayJob the RayCluster was made for (rayjob_owner_of), or NULL */
    char *rayjob_uid;       /* its uid, or NULL */
    char *queue;
    struct evict_record record; /* reason set: the record to write (evict_record_next) */
    char *message;              /* reason set: the Event text (evict_message); else NULL */
    char *preempted_by;         /* PREEMPTED/RECLAIMED: "ns/name" of the preemptor, written as raygate.io/preempted-by; else NULL */
    int held;    /* its RayCluster is held (heldsuspend.h): the record suspends it again, so that KubeRay makes no pod */
    int surplus; /* reason NONE: pods past an admitted held gang's members, not an eviction's leftovers (a second head) */
    /* Dispatched: its lease's sighting ("COUNTER@TIME", NAMES_ANNOTATION_DISPATCH_LEASE_SEEN) when counted, else NULL.
       A RayJob's record carries it, so that the RayCluster KubeRay makes again from the RayJob's annotations counts
       from it, not afresh (a first sighting would give an expired lease a new one: evictor.c, rerun_rayjob). */
    char *lease_seen;
    struct evictscan_pod *pods;
    size_t npods;
};

struct evictscan_result {
    struct evictscan_gang *items;
    size_t len, cap;
    int64_t next_ms; /* the earliest deadline or requeue-at after now (look again then); 0: none */
    /* Queues whose timeout annotations did not parse (the flags' values apply): "queue q: why", one each. */
    char **warnings;
    size_t nwarnings;
};

void evictscan_result_init(struct evictscan_result *r);
void evictscan_result_finish(struct evictscan_result *r);

/*
 * Scans c at now (Unix ms) under cfg (the flags), filling out (initialised by
 * the caller). random seeds the jitter (each gang's backoff gets its own
 * value from it). Returns the number of gangs to evict (reason set).
 */
size_t evictscan_run(const struct cache *c, const struct evict_config *cfg, int64_t now_ms, int64_t floor_ms, uint32_t random,
                     struct evictscan_result *out);

/*
 * evict_record_next() for gang g: its record after an eviction for reason at
 * now_ms. The record keeps the metadata.generation its RayCluster has once
 * the record is written (a backoff or a requeue limit holds until the spec
 * changes): g's, and one more for a held gang, whose record sets spec.suspend
 * (heldsuspend.h), a change of its spec; its admission record, which clears
 * it, stamps the generation after it (apply.h), so that the count goes on.
 */
void evictscan_record_next(const struct cache_gang *g, const struct evict_config *cfg, enum evict_reason reason, int64_t now_ms,
                           uint32_t random, struct evict_record *out);

/*
 * The annotations a RayJob's suspend carries for g's eviction (owned; rerun.h):
 * its eviction record without the admission, and its lease's sighting
 * (g->lease_seen) when dispatched. KubeRay copies a RayJob's annotations
 * onto the RayCluster it makes again, so the backoff and the requeue count
 * hold, and the new RayCluster's lease counts from this sighting: a first
 * sighting would give an expired lease a whole new one while the manager
 * runs the gang elsewhere (the soak's bound-twice, seed 21461).
 */
json_t *evictscan_rayjob_record(const struct evictscan_gang *g);

#endif
