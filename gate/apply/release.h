/*
 * release: the gate's writes of heldsuspend.h's release. A RayCluster the
 * webhook held until the gate's first decision (--hold-gangs decide) whose
 * gang must wait (declare_release_wanted) is released: one merge PATCH
 * (heldsuspend_release_patch, the RayCluster's uid as a precondition) clears
 * spec.suspend without an admission record, so that KubeRay makes its pods,
 * each gated by the webhook, and `kubectl describe pod` shows the gate and the
 * GangWaiting Event of the wait. From then on the gang is a gated one: admitted
 * later, its gates are lifted as any gated gang's.
 *
 * release_note runs under the controller's lock, in apply_plan; release_send
 * without it, in apply_carry_out. A write that fails is not retried here: the
 * gang stays held, and the next pass that finds it waiting releases it.
 */
#ifndef RAYGATE_GATE_RELEASE_H
#define RAYGATE_GATE_RELEASE_H

#include <stddef.h>

#include "admitresult.h"
#include "cache.h"
#include "kube.h"

struct release_item {
    char *path; /* owned: the RayCluster's path */
    char *uid;  /* owned, or NULL */
};

/* The releases of one pass, in caller-owned storage (zeroed: empty). */
struct release_list {
    struct release_item *items;
    size_t n, cap;
};

/* Releases l's memory, leaving it empty. */
void release_list_finish(struct release_list *l);

/* Under the lock: adds d's (borrowed) RayCluster to l when declare_release_wanted says so for its gang in cache. */
void release_note(struct release_list *l, struct cache *cache, const struct admit_decision *d);

/*
 * Without the lock: PATCHes every RayCluster of l, concurrently, and empties
 * l. Returns how many were released (a 404 or 409, the RayCluster gone or
 * another of that name, counts as none, and so does a failure, logged).
 */
size_t release_send(struct kube_client *client, struct release_list *l);

#endif
