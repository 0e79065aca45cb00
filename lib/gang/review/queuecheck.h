/*
 * queuecheck: what the admission webhook decides about the Queue tree
 * (queuetree.h), as pure functions of a snapshot of the Queues and one object.
 *
 * - queuecheck_gang: a RayCluster, RayJob, RayService or legacy RayCluster
 *   whose volcano.sh/queue-name label names a queue with children is denied
 *   (only leaf queues hold gangs). An UPDATE that keeps the label is allowed:
 *   a queue that gained children keeps the gangs it holds.
 * - queuecheck_queue: a Queue (scheduling.volcano.sh/v1beta1) CREATE or UPDATE
 *   that makes the queue its own parent, closes a cycle or names a parent that
 *   does not exist is denied (spec.parent); a DELETE of a queue that has
 *   children, or running gangs by its own status (status.running,
 *   status.inqueue, status.allocated, as the gate controller writes them), is
 *   denied. A capability above the parent's, or below a child's, is allowed
 *   with a warning: the effective capability is the parent's. A CREATE or
 *   UPDATE is also denied, in Volcano's words (queuespec.h), when its own
 *   quantities break a rule (negative, deserved above capability, guarantee
 *   above deserved); when its guarantee brings its siblings' sum above their
 *   parent's guarantee, or its own guarantee falls below its children's sum;
 *   and when its new parent has no other child and holds gangs by its status
 *   (as for a DELETE): only leaves hold gangs, so they would be orphaned.
 *
 * The snapshot may be incomplete (the Queue CRD is absent, the webhook's watch
 * has not listed yet): then every check that needs it is skipped, and the
 * functions say so (fail open for the tree only).
 *
 * Pure: no I/O. The webhook's queue watch (webhook/snapwatch.h) keeps the set.
 */
#ifndef RAYGATE_QUEUECHECK_H
#define RAYGATE_QUEUECHECK_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "resources.h"

/* One Queue as the webhook knows it. */
struct queuecheck_queue {
    char *name;                  /* owned: metadata.name */
    char *parent;                /* owned: spec.parent as written, NULL when unset or not a string */
    struct resources capability; /* spec.capability; empty when unset or when it does not parse */
    struct resources guarantee;  /* spec.guarantee.resource; likewise */
    char held[64];               /* why its status says it holds gangs ("status.running 2"), "" when it does not */
    int dispatching;             /* annotated raygate.io/dispatch-to with a non-blank value (a manager's Queue) */
};

/* The Queues the webhook knows, sorted by name. */
struct queuecheck_set {
    struct queuecheck_queue *items;
    size_t len, cap;
    int synced; /* 1: items are every Queue that exists (the watch listed); 0: unknown, tree checks are skipped */
};

/* What a check decided. */
enum queuecheck_verdict {
    QUEUECHECK_ALLOWED = 0,
    QUEUECHECK_DENIED,  /* err says why, naming the field */
    QUEUECHECK_UNKNOWN, /* allowed: a check needed the set, which is not synced */
};

/* Initialises an empty, unsynced set in caller-owned storage. */
void queuecheck_set_init(struct queuecheck_set *s);

/* Releases the set's memory; s may be NULL. The set is empty and unsynced afterwards. */
void queuecheck_set_finish(struct queuecheck_set *s);

/* Empties the set (keeping synced as it is). */
void queuecheck_set_clear(struct queuecheck_set *s);

/*
 * Adds the Queue (borrowed), or replaces the one of the same metadata.name.
 * Returns 0, or -1 when it has no name (nothing changes).
 */
int queuecheck_set_put(struct queuecheck_set *s, const json_t *queue);

/* Removes the queue named name; returns 1 if it was present, else 0. */
int queuecheck_set_remove(struct queuecheck_set *s, const char *name);

/* The queue named name, or NULL. O(log n). */
const struct queuecheck_queue *queuecheck_set_get(const struct queuecheck_set *s, const char *name);

/*
 * A Ray object (borrowed) being created or updated; old is its previous version
 * on UPDATE (borrowed; NULL on CREATE). DENIED when its queue label names a
 * queue with children, with err like
 *   metadata.labels[volcano.sh/queue-name]: queue eng has children (infer, train): only leaf queues hold gangs
 * UNKNOWN when that needed an unsynced set.
 */
enum queuecheck_verdict queuecheck_gang(const struct queuecheck_set *s, const json_t *object, const json_t *old, struct error *err);

/*
 * A Queue admission: operation "CREATE", "UPDATE" or "DELETE"; object the new
 * Queue (borrowed; NULL on DELETE), old the previous one (borrowed; NULL on
 * CREATE, and possibly on DELETE), name the request's name (may be NULL: then
 * the objects' metadata.name). Warnings (allowed or not) are appended to
 * *warnings, a new JSON array created when NULL (caller owns it). DENIED with
 * err naming the field; UNKNOWN when a check was skipped for an unsynced set
 * (the checks that need no set still ran).
 */
enum queuecheck_verdict queuecheck_queue(const struct queuecheck_set *s, const char *operation, const char *name,
                                         const json_t *object, const json_t *old, json_t **warnings, struct error *err);

#endif
