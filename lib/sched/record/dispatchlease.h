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
 * The sighting survives the gate (NAMES_ANNOTATION_DISPATCH_LEASE_SEEN,
 * "COUNTER@TIME"): the leader records on the RayCluster when it saw the
 * counter change, once per change (dispatchlease_record_wanted,
 * dispatchlease_record_patch), and a gate that starts (a restart, a standby
 * taking over) counts from that record, never afresh (dispatchlease_sight):
 * - the record holds the counter on the object: counted from its time, or
 *   from now when that time is ahead of this gate's clock (another host's
 *   clock, or a hand edit: the record can shorten a lease, never lengthen it
 *   beyond a sighting of this gate's own);
 * - it holds another counter, or none: the counter is a new sighting, now;
 * - it does not parse: when it was seen is unknown, so the lease counts as
 *   run out (expired at once) until the counter changes: the only time no
 *   later than any true sighting. It is rewritten with that time.
 * A gate that counts a counter already keeps the earlier of its own sighting
 * and the record's. docs/dispatch.md ("At most once") bounds the clocks.
 *
 * The gate's wall clock is used (the clock its passes decide at, and the one
 * the record is written in): a step of that clock forward shortens a lease
 * (safe for at-most-once), a step back lengthens it by the step. A RayCluster
 * deleted and created again (a new uid) is a first sighting.
 */
#ifndef RAYGATE_DISPATCHLEASE_H
#define RAYGATE_DISPATCHLEASE_H

#include <stddef.h>
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
    int64_t seconds;  /* 1 .. DISPATCHLEASE_SECONDS_MAX */
    int64_t seen_ms;  /* when the counter was last seen to change (or first seen, or recorded: dispatchlease_sight) */
    uint8_t recorded; /* the RayCluster's sighting record holds counter (or our write of it succeeded): nothing to write */
    uint8_t unknown;  /* counted as run out: at its first sighting the record did not parse */
    char *error;      /* owned: !valid: which annotation is wrong and how; else NULL */
};

/* A sighting as recorded (NAMES_ANNOTATION_DISPATCH_LEASE_SEEN): the counter and when a gate saw it change. */
struct dispatchlease_seen {
    uint64_t counter;
    int64_t at_ms; /* Unix ms of the writer's clock, >= 0 */
};

/* Room for a formatted sighting: 20 digits, "@", "YYYY-MM-DDTHH:MM:SS.mmmZ", NUL. */
#define DISPATCHLEASE_SEEN_SIZE 48

/*
 * Parses a sighting record (value borrowed; NULL: absent): "COUNTER@TIME",
 * COUNTER decimal within 64 bits, TIME RFC 3339 UTC (util_parse_time) whose
 * fraction is read to the millisecond (further digits dropped). Returns 1
 * with *out set, 0 when absent, or -1 with err naming the annotation.
 */
int dispatchlease_seen_parse(const char *value, struct dispatchlease_seen *out, struct error *err);

/* Formats s as dispatchlease_seen_parse reads it ("42@2026-11-28T10:48:29.123Z") into buf (>= DISPATCHLEASE_SEEN_SIZE). */
char *dispatchlease_seen_format(const struct dispatchlease_seen *s, char *buf, size_t size);

/* What a sighting comes to (dispatchlease_sight). */
struct dispatchlease_sighting {
    int64_t seen_ms;  /* the time to count the lease from (the gate's clock) */
    uint8_t recorded; /* the record already holds the counter; else {counter, seen_ms} is to be written */
    uint8_t unknown;  /* a first sighting whose record does not parse: seen_ms makes the lease run out at now_ms */
};

/*
 * The policy of one sighting of a valid lease, pure: mem (borrowed; NULL, or
 * not counted: this gate saw no counter yet) is what the gate remembers,
 * counter and seconds the lease on the object, recorded the value of its
 * NAMES_ANNOTATION_DISPATCH_LEASE_SEEN (borrowed; NULL: absent), now_ms the
 * gate's clock. The time to count from is the earliest of:
 * - mem's seen_ms, when mem counts this counter; else now_ms, or, for a first
 *   sighting with a record that does not parse, now_ms - seconds * 1000 - 1 (run out at now_ms);
 * - the record's time, capped at now_ms, when the record holds this counter.
 * Whether to write: the record does not hold this counter.
 */
void dispatchlease_sight(const struct dispatchlease *mem, uint64_t counter, int64_t seconds, const char *recorded, int64_t now_ms,
                         struct dispatchlease_sighting *out);

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
 * annotations free it (NULL); a valid lease is sighted (dispatchlease_sight,
 * with the record in the metadata): a counter other than the remembered one
 * (or a first sighting, or another uid) restarts the lease at now_ms unless
 * the record holds it; bad annotations keep what was remembered and set the
 * error. Returns whether the sighting is then to be recorded
 * (dispatchlease_record_wanted).
 */
int dispatchlease_observe(struct dispatchlease **l, const json_t *meta, int64_t now_ms);

/* Whether l's sighting is to be recorded on its RayCluster: a valid lease counted, the record not holding its counter. */
int dispatchlease_record_wanted(const struct dispatchlease *l);

/*
 * The merge patch that records l's sighting (new; NULL when none is wanted):
 * {"metadata": {"uid": uid, "annotations": {NAMES_ANNOTATION_DISPATCH_LEASE_SEEN:
 * "COUNTER@TIME"}}}; uid (borrowed; NULL: none) is the write's precondition.
 * *counter (may be NULL) gets the counter written, for dispatchlease_mark_recorded.
 */
json_t *dispatchlease_record_patch(const struct dispatchlease *l, const char *uid, uint64_t *counter);

/* The record of counter was written: l (may be NULL) wants no write until its counter changes. */
void dispatchlease_mark_recorded(struct dispatchlease *l, uint64_t counter);

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
