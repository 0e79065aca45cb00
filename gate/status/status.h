/*
 * status: the gate's mirror of the Volcano-compatible status it writes
 * (lib/sched/status/podgroup.h): the PodGroup of every gang and the status of every
 * Queue, with the gauges that mirror the queues (queuemetrics.h).
 *
 * It keeps what the API showed last (the PodGroup and Queue watches, and the
 * answers to our writes) and what our queued or in-flight writes will leave,
 * and after each pass compares the gangs' and queues' wanted status with
 * them: a write is queued on the status writer (statuswriter.h, its own
 * thread) only when something differs. A write that failed is not tried again
 * at every pass but at the next resync.
 *
 * Locking. The status has its own lock, taken inside each function here.
 * Lock order: the controller's lock (cacheguard.h: it guards the cache)
 * before the status lock, before the status writer's lock
 * (statuswriter_submit_new is called under the status lock). The writer's done callback runs on the
 * writer's thread with no lock held and takes only the status lock; the one
 * thing it tells the controller (a PodGroup found gone: changed()) is called
 * after the status lock is released, so nothing here ever calls back into the
 * controller while holding the status lock.
 */
#ifndef RAYGATE_GATE_STATUS_H
#define RAYGATE_GATE_STATUS_H

#include <jansson.h>

#include "admit.h"
#include "cache.h"
#include "kube.h"
#include "native.h"
#include "metrics.h"
#include "podgroup.h"
#include "statuswriter.h"

#define STATUS_VOLCANO_API "/apis/" PODGROUP_GROUP_VERSION

struct status;

/* Called with no lock held (the writer's thread): a PodGroup was found gone under a patch; a pass should look again. */
typedef void (*status_changed_fn)(void *arg);

/*
 * Creates the status mirror and its writer thread on client (borrowed, must
 * outlive it), its gauges in reg (borrowed). may_write (NULL: always) is asked
 * before each batch of writes; changed(arg) as above. Returns NULL if the
 * writer's thread cannot start.
 */
struct status *status_create(struct kube_client *client, struct metrics_registry *reg, statuswriter_may_write_fn may_write,
                             status_changed_fn changed, void *arg);

/* Stops the writer (after its batch in flight) and frees everything; accepts NULL. Call it with no lock held. */
void status_destroy(struct status *s);

/* A PodGroup (borrowed) from the watch; only ray-<cluster>-pg ones are kept. Any thread. */
void status_record_podgroup(struct status *s, enum kube_watch_event ev, const json_t *obj);

/* A Queue (borrowed) from the watch: its status, to write only what differs from it. Any thread. */
void status_record_queue(struct status *s, enum kube_watch_event ev, const json_t *obj);

/* Every PodGroup is known now (its watch synced): the next sync compares every gang. */
void status_podgroups_synced(struct status *s);

/*
 * Kubernetes' own PodGroup ns/name changed (native.h: its name is the Volcano
 * PodGroup's): its gang is looked at by the next sync, whose Scheduled
 * condition says what kube-scheduler says of it.
 */
void status_touch_podgroup(struct status *s, const char *ns, const char *name);

/* The native gang state (native.h, read under the controller's lock in status_sync); NULL: none. */
void status_set_native(struct status *s, const struct native *n);

/*
 * After a pass (res, borrowed) and its gate removals, with the cache's lock
 * held (cache and admit borrowed): the PodGroups of the gangs of the queues
 * the pass evaluated (every queue after status_podgroups_synced) and of
 * PodGroups that changed, those queues' status and gauges; and every
 * queue's place in the queue tree (qtree_fill: deserved, share, treeError,
 * a parent's allocation), which any queue's change may move. crds: the
 * PODGROUP_CRD_* flags usable now (PODGROUPS only once that watch synced,
 * QUEUES likewise). resync: a periodic full pass, when failed writes are
 * tried again. Writes are queued, never waited for.
 */
void status_sync(struct status *s, struct cache *cache, const struct admit *admit, const struct admit_result *res, unsigned crds,
                 int resync);

#endif
