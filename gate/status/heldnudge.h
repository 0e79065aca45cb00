/*
 * heldnudge: the gate's writes of heldresume.h's nudge. KubeRay that took a
 * held RayCluster's resume in makes its pods after its 2-second requeue; the
 * nudge (an annotation) makes it do so now.
 *
 * heldnudge_observe() runs on the watcher thread under the controller's lock
 * after a RayCluster was put in the cache; heldnudge_send(), on the
 * controller's thread without it, writes what was recorded: one merge patch
 * per RayCluster and admission, never twice for the same held generation
 * (a status update of KubeRay's before the watch shows the first would
 * otherwise ask again). A write that fails is not retried: the requeue comes
 * anyway.
 */
#ifndef RAYGATE_HELDNUDGE_H
#define RAYGATE_HELDNUDGE_H

#include <jansson.h>

#include "cache.h"
#include "cacheguard.h"
#include "kube.h"

struct heldnudge;

struct heldnudge *heldnudge_create(void);

/* Accepts NULL. */
void heldnudge_destroy(struct heldnudge *n);

/* Caller holds the controller's lock: RayCluster cluster (borrowed), just put in cache c; records its nudge if due. */
void heldnudge_observe(struct heldnudge *n, const struct cache *c, const json_t *cluster);

/* Caller holds the controller's lock: RayCluster namespace_/name is gone; forgets it. */
void heldnudge_forget(struct heldnudge *n, const char *namespace_, const char *name);

/*
 * Without guard held (the controller's lock, borrowed): writes the nudges recorded (taken under guard) while
 * may_write(arg) says this gate leads. Returns how many were written.
 */
size_t heldnudge_send(struct heldnudge *n, struct kube_client *k, struct cacheguard *guard, int (*may_write)(void *arg), void *arg);

#endif
