/*
 * leaseseen: the gate's record of when it saw a dispatch lease's counter
 * change (lib/sched/record/dispatchlease.h), written on the RayCluster as
 * NAMES_ANNOTATION_DISPATCH_LEASE_SEEN so that a restarted gate, or a standby
 * taking over, counts the lease from that sighting instead of afresh
 * (docs/dispatch.md, "At most once").
 *
 * What to write is the cache's (its dispatch leases, dispatchlease_observe);
 * this module is the I/O: after a pass, the leader PATCHes (merge, the
 * RayCluster's uid as a precondition) the record of every lease whose counter
 * changed and whose record does not hold it yet, one concurrent batch, at
 * most once per change of the counter while the writes succeed. A write that
 * fails is tried again after a later pass; a RayCluster gone (404) or
 * replaced (409: another uid) is left alone: its new sighting is the cache's.
 */
#ifndef RAYGATE_GATE_LEASESEEN_H
#define RAYGATE_GATE_LEASESEEN_H

#include "cache.h"
#include "cacheguard.h"
#include "kube.h"

/* Borrowed, must outlive every call. */
struct leaseseen_config {
    struct kube_client *client;
    struct cacheguard *guard;    /* guards cache; not held by the caller */
    struct cache *cache;         /* its leases are read and marked under guard */
    int (*may_write)(void *arg); /* asked before the writes (leader election); NULL: always */
    void *arg;
};

/*
 * Writes the sightings the cache wants recorded (cachelease_take_news), if
 * any, and marks the ones the API accepted. Not leading: writes nothing and
 * keeps them wanted. Returns the number written, or -1 when a write failed
 * (the caller tries again soon: the cache still wants it).
 */
long leaseseen_sync(const struct leaseseen_config *cfg);

#endif
