/*
 * dispatchlease: the worker side of "at most once" (docs/dispatch.md). A
 * RayCluster that a manager's dispatcher copied to this cluster carries a
 * lease: NAMES_ANNOTATION_DISPATCH_LEASE, a decimal counter the dispatcher
 * bumps at every renewal, and NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS, how
 * long the gate waits for the next bump. Pure: no I/O, no threads, no clock
 * (the time is passed in, Unix ms of the gate's clock).
 *
 * The rule, as client-go's leader election judges another holder's Lease
 * (lease.h): the gate never reads the manager's clock. It remembers the
 * counter and the time, on its own clock, at which it last saw the counter
 * CHANGE; the first sighting counts as a change. When now - seen > seconds
 * the gang is expired:
 * - an admitted gang is evicted whole (evictscan.h, EVICT_REASON_DISPATCH_LEASE,
 *   Event DispatchLeaseExpired);
 * - an expired gang is never admitted (admit.h, ADMIT_REASON_DISPATCH_LEASE);
 * - any later change of the counter ends the expiry: the gang is admitted again
 *   as any other.
 * A lease whose annotations do not parse (dispatchlease_parse) holds the gang
 * back (it waits, naming the annotation) but never evicts it: a hand edit
 * must not cost a running gang, nor let an unleased copy start.
 *
 * Caveats. What the gate saw lives in its memory: a restarted gate (or a new
 * leader) starts from its first sighting, so a gang whose dispatcher is gone
 * gets one more whole lease from the restart before it is evicted (the
 * dispatcher's margin, dispatch-design.md, covers one restart per lease). The
 * gate's wall clock is used (the clock its passes decide at): a step of that
 * clock forward shortens a lease (safe for at-most-once), a step back
 * lengthens it by the step. A RayCluster deleted and created again (a new
 * uid) is a first sighting.
 */
#ifndef RAYGATE_DISPATCHLEASE_H
#define RAYGATE_DISPATCHLEASE_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

/* The longest lease accepted: 30 days, as evict.h's longest timeout. */
#define DISPATCHLEASE_SECONDS_MAX (30LL * 24 * 3600)

/* What the gate knows of one RayCluster's lease (owned by the cache's gang: cache_gang.lease). */
struct dispatchlease {
    char *uid;       /* owned: the RayCluster's uid when first seen (another uid is a first sighting); may be NULL */
    uint8_t valid;   /* the annotations parsed; else error says why, and counter/seconds are the last valid ones */
    uint8_t counted; /* a valid counter was seen (counter and seen_ms are set) */
    uint64_t counter;
    int64_t seconds; /* 1 .. DISPATCHLEASE_SECONDS_MAX */
    int64_t seen_ms; /* when the counter was last seen to change (or first seen) */
    char *error;     /* owned: !valid: which annotation is wrong and how; else NULL */
};

/*
 * Parses the two annotation values (borrowed; NULL: absent). Returns 0 when
 * both are absent (no lease), 1 with *counter and *seconds set, or -1 with err
 * naming the annotation: one present without the other, a counter that is not
 * a decimal number within 64 bits, seconds not a whole number in
 * 1..DISPATCHLEASE_SECONDS_MAX.
 */
int dispatchlease_parse(const char *counter, const char *seconds, uint64_t *counter_out, int64_t *seconds_out, struct error *err);

/*
 * Brings *l (NULL: none yet; the struct is created and freed here) up to date
 * with a RayCluster's metadata (borrowed) seen at now_ms: no lease
 * annotations free it (NULL); a counter other than the remembered one (or a
 * first sighting, or another uid) restarts the lease at now_ms; bad
 * annotations keep what was remembered and set the error.
 */
void dispatchlease_observe(struct dispatchlease **l, const json_t *meta, int64_t now_ms);

/* Frees *l and sets it to NULL; l or *l may be NULL. */
void dispatchlease_drop(struct dispatchlease **l);

enum dispatchlease_state {
    DISPATCHLEASE_NONE = 0, /* no lease (l NULL), or one still running */
    DISPATCHLEASE_EXPIRED,  /* not renewed for longer than its seconds */
    DISPATCHLEASE_BAD,      /* its annotations do not parse: hold, never evict */
};

/*
 * The state of l (borrowed; NULL: none) at now_ms. For NONE with a lease,
 * *deadline_ms (may be NULL) is the first time it is expired; else 0.
 */
enum dispatchlease_state dispatchlease_check(const struct dispatchlease *l, int64_t now_ms, int64_t *deadline_ms);

/*
 * Why gang ("ray-x-pg") waits (new string, caller frees), for EXPIRED: "gang
 * ray-x-pg waits: its dispatch lease (raygate.io/dispatch-lease) was not
 * renewed for 25s (lease 20s); it may be admitted again when the dispatcher
 * renews it", or for BAD: "gang ray-x-pg waits: <the error>". NULL for NONE.
 */
char *dispatchlease_wait_message(const char *gang, const struct dispatchlease *l, int64_t now_ms);

/* The message of the eviction of an expired gang (new string, caller frees), for its Event and PodGroup. */
char *dispatchlease_evict_message(const char *gang, const struct dispatchlease *l, int64_t now_ms);

#endif
