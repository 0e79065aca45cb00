/*
 * heldwatch: the webhook's view of which held RayClusters (heldsuspend.h)
 * are admitted, from a list and watch of KubeRay's RayClusters on a thread
 * of its own, into a heldset (heldset.h): the pod path asks it under the lock
 * (mutate_options.held), never the API server.
 *
 * Only when the webhook holds gangs (--hold-gangs). Until the list has
 * completed, and from any trouble of the watch (a failed request, a 410)
 * until it has listed again, the set is not synced: the request path gets
 * none, and every queued pod is gated. The set lags the API by the watch's
 * delay; docs/design.md ("Pods born ungated") says what closes that window.
 */
#ifndef RAYGATE_HELDWATCH_H
#define RAYGATE_HELDWATCH_H

#include "error.h"
#include "heldset.h"
#include "kube.h"

#define HELDWATCH_PATH "/apis/ray.io/v1/rayclusters"

struct heldwatch;

/* Starts listing and watching RayClusters on c (borrowed: it must outlive the watch). Returns it, or NULL with err. */
struct heldwatch *heldwatch_create(struct kube_client *c, struct error *err);

/* Stops the watch thread and frees everything. Accepts NULL. */
void heldwatch_destroy(struct heldwatch *w);

/*
 * Locks the set and returns it when synced (borrowed until heldwatch_unlock),
 * else NULL. heldwatch_unlock must follow on the same thread either way.
 */
const struct heldset *heldwatch_lock(struct heldwatch *w);

void heldwatch_unlock(struct heldwatch *w);

#endif
