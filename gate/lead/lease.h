/*
 * lease: leader election on a coordination.k8s.io/v1 Lease, client-go's
 * algorithm (k8s.io/client-go/tools/leaderelection) as a pure state machine.
 *
 * The elector never talks to the API server. The caller (gate/lead/leader.c) does
 * the requests the elector asks for and reports what happened, passing the
 * time of each step in:
 *
 *   every retry period:
 *     lease_elector_try_fast()  -> UPDATE? PUT it; lease_elector_done()
 *     (if there was none, or it failed) GET the Lease, then
 *     lease_elector_try()       -> CREATE (POST) / UPDATE (PUT) / NONE;
 *                                  lease_elector_done() with the reply
 *     lease_elector_check()     -> leadership gained or lost
 *   on shutdown, while leading: lease_elector_release() -> UPDATE; PUT it.
 *
 * The rules, as in client-go:
 * - The Lease's spec is the LeaderElectionRecord: holderIdentity,
 *   leaseDurationSeconds, acquireTime, renewTime (MicroTime, RFC 3339 with
 *   microseconds), leaseTransitions.
 * - Expiry is judged by local observation: the observed time is the local
 *   monotonic time at which the record was last seen to CHANGE (or was
 *   written by us). Another holder's lease is valid until observed time +
 *   its leaseDurationSeconds, whatever its renewTime says (clocks of other
 *   machines are not trusted; only the rate of ours is).
 * - Writes are optimistic: an update carries the resourceVersion of the Lease
 *   it was computed from, so of two candidates only one can win; a 409 means
 *   "read again".
 * - A record with an empty holderIdentity (released) can be taken at once.
 * - Taking the lease from another holder (or from nobody) increments
 *   leaseTransitions; renewing keeps acquireTime and leaseTransitions.
 *
 * Stricter than client-go, where a leader acts until its renew deadline ends
 * the renew loop: here a leader leads (lease_elector_leading) only while its
 * last successful write was sent less than the renew deadline ago, and stops at
 * once when it reads a record that names another holder or finds the Lease
 * gone (deleted by hand, it could be recreated by anyone). The write's time is
 * taken before the request is sent, so a candidate that sees our record later
 * waits a full lease duration from a later instant: with lease duration >
 * renew deadline, two electors never lead at the same time as long as the
 * clocks' rates agree within that margin.
 */
#ifndef RAYGATE_LEASE_H
#define RAYGATE_LEASE_H

#include <jansson.h>

/* Defaults, as client-go's users (kube-controller-manager) set them. */
#define LEASE_DEFAULT_DURATION_MS 15000
#define LEASE_DEFAULT_RENEW_DEADLINE_MS 10000
#define LEASE_DEFAULT_RETRY_PERIOD_MS 2000

/* The instant of a step: both clocks, read once. */
struct lease_time {
    long long mono_ms; /* monotonic clock: observation times and deadlines */
    long long wall_us; /* Unix time in microseconds: the record's acquireTime and renewTime */
};

/* A LeaderElectionRecord (the Lease's spec). Strings owned, never NULL once parsed. */
struct lease_record {
    char *holder;       /* "" when nobody holds it */
    long duration_s;    /* leaseDurationSeconds */
    char *acquire_time; /* MicroTime text, "" when absent */
    char *renew_time;   /* MicroTime text, "" when absent */
    long transitions;   /* leaseTransitions */
};

struct lease_config {
    const char *namespace_; /* the Lease's namespace */
    const char *name;       /* the Lease's name */
    const char *identity;   /* unique per process, e.g. "host_1a2b3c4d" */
    long duration_ms;       /* lease duration; whole seconds go into the record */
    long renew_deadline_ms; /* < duration_ms */
    long retry_period_ms;   /* < renew_deadline_ms */
};

struct lease_elector {
    /* configuration (strings owned) */
    char *namespace_, *name, *identity;
    long duration_ms, renew_deadline_ms, retry_period_ms;

    json_t *lease;              /* new: the last Lease read from or written to the server, NULL if none */
    int observed;               /* whether `record` holds an observed record */
    struct lease_record record; /* the last record observed or written */
    long long observed_ms;      /* mono time at which `record` was last seen to change */
    int leading;                /* acquired, not lost since */
    long long renewed_ms;       /* mono time at which the last successful write was started */
    int reported;               /* `leading` as of the last lease_elector_check */
};

enum lease_action_kind {
    LEASE_ACTION_NONE,   /* nothing to send */
    LEASE_ACTION_CREATE, /* POST body to the collection */
    LEASE_ACTION_UPDATE, /* PUT body to the Lease (it carries the resourceVersion) */
};

/* A request the elector asks for. Initialise with lease_action_init; finish it after lease_elector_done. */
struct lease_action {
    enum lease_action_kind kind;
    json_t *body;               /* new: the Lease to send, NULL for NONE */
    struct lease_record record; /* the record in body */
    struct lease_time at;       /* when it was decided (the write's start) */
};

void lease_action_init(struct lease_action *a);
void lease_action_finish(struct lease_action *a);

/* Returns 0, or -1 if cfg is invalid (a string missing, durations not 0 < retry < renew < duration). */
int lease_config_check(const struct lease_config *cfg);

/* Initialises an elector in caller-owned storage (cfg's strings are copied). cfg must pass lease_config_check. */
void lease_elector_init(struct lease_elector *le, const struct lease_config *cfg);
void lease_elector_finish(struct lease_elector *le);

/*
 * The leader's fast path (client-go's optimistic renewal): when the last
 * observed record names us and is still valid at now, fills out with an UPDATE
 * of the last Lease we saw (no read first). Otherwise out is NONE. Returns out->kind.
 */
enum lease_action_kind lease_elector_try_fast(struct lease_elector *le, const struct lease_time *now, struct lease_action *out);

/*
 * The slow path, after reading the Lease: lease is the object the server
 * returned (borrowed), or NULL when it does not exist (404). Records it as
 * observed (the observed time moves only if the record changed) and decides:
 * CREATE when there is none; NONE while another holder's lease is valid;
 * otherwise UPDATE to take or renew it. Reading a valid record that names
 * another holder, or finding no Lease, ends our leadership at once (until a
 * write of ours succeeds). Returns out->kind.
 */
enum lease_action_kind lease_elector_try(struct lease_elector *le, const struct lease_time *now, const json_t *lease,
                                         struct lease_action *out);

/*
 * Reports the outcome of a: reply is the Lease the server returned for a
 * successful write (borrowed), or NULL when the write failed (409 or
 * anything). On success the written record becomes the observed one, observed
 * and renewed at a->at, and we lead (unless a released the lease). On failure
 * nothing changes: the next try reads again.
 */
void lease_elector_done(struct lease_elector *le, const struct lease_action *a, const json_t *reply);

/*
 * Whether we lead at now: we acquired, did not see another holder since, and
 * our last successful write started less than the renew deadline ago.
 */
int lease_elector_leading(const struct lease_elector *le, long long now_mono_ms);

/*
 * Drops leadership if the renew deadline has passed, and reports changes since
 * the previous check: 1 if we lead now and did not then, -1 if we led then and
 * no longer do, else 0.
 */
int lease_elector_check(struct lease_elector *le, long long now_mono_ms);

/*
 * client-go's ReleaseOnCancel: when the last observed record names us, fills
 * out with an UPDATE that empties holderIdentity (leaseDurationSeconds 1,
 * transitions kept), so that a candidate takes over at its next try instead of
 * waiting for the lease to expire. We stop leading now, whatever the outcome.
 * Returns out->kind (NONE when we do not hold it).
 */
enum lease_action_kind lease_elector_release(struct lease_elector *le, const struct lease_time *now, struct lease_action *out);

/*
 * Reads the LeaderElectionRecord of a Lease (borrowed) into rec (initialised
 * here; free with lease_record_finish). Missing fields read as empty / 0.
 * Returns 0, or -1 if lease is not an object or a present field has the
 * wrong type (rec is then empty).
 */
int lease_record_parse(const json_t *lease, struct lease_record *rec);
void lease_record_finish(struct lease_record *rec);

/* Whether two records are the same (client-go compares the raw record). */
int lease_record_equal(const struct lease_record *a, const struct lease_record *b);

/* Formats Unix microseconds as a Kubernetes MicroTime ("2026-11-21T19:31:15.123456Z") into buf (at least 28 bytes). */
char *lease_microtime(long long unix_us, char *buf, size_t size);

#endif
