/*
 * watches: what the gate controller watches, and where each event goes.
 *
 * One watcher thread (lib/io/kube.h) lists and watches pods, nodes,
 * KubeRay's RayClusters, and, when discovery finds their CRDs, Volcano's
 * Queues, PodGroups and HyperNodes, the legacy operator's RayClusters
 * (lib/gang/model/legacy.h), Kubernetes' own PodGroups when the native gang
 * step is used (native.h), and, where resource.k8s.io/v1 is served, the DRA
 * objects devices are counted by (DeviceClasses, ResourceSlices,
 * ResourceClaims, ResourceClaimTemplates: dracache.h). Each event goes, under the controller's lock, into
 * the cache (lib/sched/cache/cache.h), the status mirror (status.h: PodGroups,
 * and Queues' status) or the HyperNodes (hyperwatch.h); then *changed is set
 * and the controller is woken.
 *
 * Discovery says which of Volcano's CRDs exist: without the PodGroup CRD no
 * PodGroup is written, without the Queue CRD no queue exists (its watch
 * counts as synced, every gang waits for its queue); either is said once in
 * the log, looked for again at each resync, and used from the moment it
 * appears. The legacy RayCluster CRD and Volcano's HyperNode CRD
 * (topology.volcano.sh) are looked for at start and at each resync until
 * found; without the HyperNode CRD no HyperNode exists (its watch counts as
 * synced).
 *
 * Threads: watches_start, watches_discover and watches_discovery_wanted run on
 * the controller's thread (or before it runs); the event handlers on the
 * watcher's thread. The synced bits and *changed are guarded by the
 * controller's lock (cfg.guard), which the handlers take before the status lock
 * (status.h's lock order).
 */
#ifndef RAYGATE_GATE_WATCHES_H
#define RAYGATE_GATE_WATCHES_H

#include "cache.h"
#include "cacheguard.h"
#include "heldnudge.h"
#include "hyperwatch.h"
#include "kube.h"
#include "native.h"
#include "status.h"

struct watches;

/* Everything borrowed, and must outlive the watches. */
struct watches_config {
    struct kube_client *client;
    struct cacheguard *guard; /* the controller's lock: guards cache, *changed and the synced bits */
    struct cache *cache;
    struct status *status;
    int *changed;            /* set to 1 (under guard) after every event */
    void (*wake)(void *arg); /* after every event, without the lock */
    void *arg;
    struct hyperwatch *hyper; /* HyperNodes go here (under guard); NULL: not watched */
    struct native *native;    /* Kubernetes' own PodGroups go here (under guard); NULL: not watched */
    struct heldnudge *nudge;  /* held RayClusters KubeRay is to be told are resumed (under guard); NULL: none told */
};

struct watches *watches_create(const struct watches_config *cfg);

/* Stops the watcher thread (if started) and frees; accepts NULL. Call it without cfg.guard held. */
void watches_destroy(struct watches *w);

/* Starts the watcher, the pods', nodes' and RayClusters' watches, and discovery's. Returns 0, or -1 with err. */
int watches_start(struct watches *w, struct error *err);

/* Whether discovery should be asked again (a CRD not found yet, or discovery never answered). */
int watches_discovery_wanted(const struct watches *w);

/* Asks discovery again and starts the watches it allows. Returns 0, or -1 with err when a watch cannot start. */
int watches_discover(struct watches *w, struct error *err);

/* Caller holds cfg.guard: whether every watch decisions need (pods, nodes, RayClusters, Queues, HyperNodes) delivered its initial
 * list. */
int watches_synced(const struct watches *w);

/*
 * Caller holds cfg.guard: the PODGROUP_CRD_* flags status_sync may use now:
 * PODGROUPS once the PodGroup watch synced, QUEUES once the Queue watch
 * synced, and the *_STATUS subresource flags as discovered.
 */
unsigned watches_status_crds(const struct watches *w);

#endif
