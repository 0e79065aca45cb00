/*
 * queuewatch: the webhook's view of the Volcano Queues
 * (scheduling.volcano.sh/v1beta1 queues), listed and watched on a thread of
 * its own (kube.h), so that the admission path never calls the API server.
 *
 * The snapshot (queuecheck.h) is updated under a mutex by the watch thread;
 * the request path locks it, decides, and unlocks. Until the first list
 * completes (the Queue CRD is absent, the service account may not list
 * Queues, the API server does not answer) the set is not synced, and the
 * admission skips the tree checks (fail open for the tree only).
 */
#ifndef RAYGATE_QUEUEWATCH_H
#define RAYGATE_QUEUEWATCH_H

#include "error.h"
#include "kube.h"
#include "queuecheck.h"

/* The collection watched. */
#define QUEUEWATCH_PATH "/apis/scheduling.volcano.sh/v1beta1/queues"

struct queuewatch;

/*
 * Starts listing and watching the Queues through c (borrowed: it must outlive
 * the watch). Returns a new queuewatch (queuewatch_destroy), or NULL with err.
 */
struct queuewatch *queuewatch_create(struct kube_client *c, struct error *err);

/* Stops the watch thread and frees everything. Accepts NULL. */
void queuewatch_destroy(struct queuewatch *w);

/*
 * Locks the snapshot and returns it (borrowed until queuewatch_unlock, which
 * must follow on the same thread). Keep the lock short: the watch waits on it.
 */
const struct queuecheck_set *queuewatch_lock(struct queuewatch *w);

void queuewatch_unlock(struct queuewatch *w);

#endif
