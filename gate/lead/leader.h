/*
 * leader: the gate controller's leader election, the I/O around gate/lead/lease.h.
 *
 * One thread runs client-go's loop on the Lease <namespace>/<name>
 * (coordination.k8s.io/v1): every retry period while leading (renewal), every
 * retry period x [1, 2.2) otherwise (client-go's jitter), it tries to acquire
 * or renew: an optimistic PUT of the last Lease it wrote when it leads,
 * otherwise (or after a failure) a GET, then the POST or PUT the elector asks
 * for. 409s and other failures are only retried at the next try; leading ends
 * at the renew deadline or on reading another holder's record.
 *
 * The requests go through a client of its own with short timeouts (half the
 * renew deadline per request, one retry), so that a slow API server cannot
 * keep the loop from noticing its deadline, and so that the controller's
 * batches never queue ahead of a renewal.
 *
 * leader_is_leading() is what the controller asks before every write; it
 * compares the renew deadline with the clock at the time of the call, so a
 * leader stops writing at its deadline even while the loop is blocked in a
 * request.
 */
#ifndef RAYGATE_GATE_LEADER_H
#define RAYGATE_GATE_LEADER_H

#include "kube.h"
#include "kubeconfig.h"

struct leader;

struct leader_options {
    const char *namespace_;             /* the Lease's namespace (the controller's) */
    const char *name;                   /* the Lease's name, e.g. "raygate-gate" */
    const char *identity;               /* NULL: "<hostname>_<8 random hex digits>" */
    long duration_ms;                   /* 0: LEASE_DEFAULT_DURATION_MS */
    long renew_deadline_ms;             /* 0: LEASE_DEFAULT_RENEW_DEADLINE_MS */
    long retry_period_ms;               /* 0: LEASE_DEFAULT_RETRY_PERIOD_MS */
    const struct kube_metrics *metrics; /* borrowed, may be NULL: the client's request counts */
};

/*
 * Creates an elector (not started) with its own API client for cfg (copied).
 * Returns it, or NULL with err (invalid durations: 0 < retry < renew deadline <
 * lease duration, whole seconds of lease; or the client could not be created).
 */
struct leader *leader_create(const struct kubeconfig *cfg, const struct leader_options *opts, struct error *err);

/* This process's identity in the Lease (borrowed, valid until leader_destroy). */
const char *leader_identity(const struct leader *l);

/*
 * fn(arg) is called from the election thread each time leadership is gained
 * or lost (then ask leader_is_leading). Set it before leader_start.
 */
void leader_set_notify(struct leader *l, void (*fn)(void *arg), void *arg);

/* Starts the election thread. Returns 0, or -1 if it cannot. */
int leader_start(struct leader *l);

/* Whether this process leads now. Any thread. */
int leader_is_leading(struct leader *l);

/*
 * Stops the election thread and, if this process holds the Lease, releases it
 * (holder emptied) so that another replica takes over at its next try.
 * Idempotent. Call it once nothing will write any more.
 */
void leader_stop(struct leader *l);

/* Stops (as leader_stop) and frees. Accepts NULL. */
void leader_destroy(struct leader *l);

#endif
