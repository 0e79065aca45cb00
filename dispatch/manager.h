/*
 * manager: what the dispatcher reads of the manager cluster at each pass:
 * its Queues (which ones dispatch, to which workers, and the capability that
 * caps what is dispatched in total) and its RayClusters and RayJobs.
 *
 * A Queue dispatches when raygate.io/dispatch-to names at least one worker
 * (dispatchpick.h parses it). Its spec.capability, when set, caps the sum of
 * the gangs' minResources dispatched from it (dispatched-to set): a gang is
 * nominated only while the sum with it stays within the capability.
 */
#ifndef RAYGATE_DISPATCH_MANAGER_H
#define RAYGATE_DISPATCH_MANAGER_H

#include <stddef.h>

#include <jansson.h>

#include "dispatchpick.h"
#include "error.h"
#include "kube.h"
#include "resources.h"

struct dispatchmanager_queue {
    char *name;
    struct dispatch_to to; /* empty: the Queue does not dispatch */
    char *to_error;        /* dispatch-to does not parse: why (the Queue then does not dispatch), else NULL */
    int has_cap;           /* spec.capability is set (and parses) */
    struct resources cap;  /* spec.capability */
    struct resources used; /* minResources of its gangs with dispatched-to set */
};

struct dispatchmanager {
    struct dispatchmanager_queue *queues;
    size_t nqueues;
    json_t *objects; /* the RayClusters and RayJobs (kind and apiVersion set), a JSON array */
};

void dispatchmanager_init(struct dispatchmanager *m);
void dispatchmanager_finish(struct dispatchmanager *m);

/* Lists the manager's Queues, RayClusters and RayJobs with k into m. Returns 0, or -1 with err (m unchanged). */
int dispatchmanager_list(struct dispatchmanager *m, struct kube_client *k, struct error *err);

/*
 * Replaces m's contents with these lists (borrowed JSON arrays; NULL: empty),
 * and counts each Queue's used quota from the objects dispatched from it.
 * Pure: dispatchmanager_list's second half, for tests.
 */
void dispatchmanager_apply(struct dispatchmanager *m, const json_t *queues, const json_t *rayclusters, const json_t *rayjobs);

/* The Queue named name, or NULL. */
struct dispatchmanager_queue *dispatchmanager_queue(const struct dispatchmanager *m, const char *name);

/* The manager Queue obj (borrowed) names (label volcano.sh/queue-name), or NULL. */
struct dispatchmanager_queue *dispatchmanager_queue_of(const struct dispatchmanager *m, const json_t *obj);

/* The gang's minResources of a manager RayCluster or RayJob (borrowed) into out (initialised). Returns 0, or -1 with err. */
int dispatchmanager_min_resources(const json_t *obj, struct resources *out, struct error *err);

/* Whether q's capability (if any) has room for obj (borrowed) besides what q has dispatched. 1 or 0. */
int dispatchmanager_quota_room(const struct dispatchmanager_queue *q, const json_t *obj);

/* Counts obj (borrowed, just nominated from q) into q's used quota. */
void dispatchmanager_quota_take(struct dispatchmanager_queue *q, const json_t *obj);

#endif
