/*
 * view: what `kubectl raygate` shows, as pure functions of a snapshot of what
 * the gate controller wrote. No I/O: cli/fetch.c reads the objects, these
 * functions derive the rows, cli/output.c prints them.
 *
 * A snapshot is one JSON object (borrowed by every function here):
 *   {
 *     "queues":          [Queue, ...],           scheduling.volcano.sh/v1beta1
 *     "podGroups":       [PodGroup, ...],        raygate's ray-<name>-pg
 *     "owners":          [object, ...],          RayClusters (ray.io and cluster.ray.io) and RayJobs
 *     "pods":            [Pod, ...] or null,     the gangs' pods; null when they cannot be read
 *     "priorityClasses": [PriorityClass, ...] or null,
 *     "events":          [Event, ...]            (why only) Events about the gang's owner
 *   }
 * Missing arrays count as empty. Times are unix seconds (now).
 *
 * A gang is a PodGroup controlled by a RayCluster (KIND "RayCluster"), a
 * RayJob ("RayJob") or a legacy cluster.ray.io RayCluster ("legacy"). Its
 * state:
 * - Running: phase Running (minMember pods running);
 * - Admitted: phase Inqueue, or condition Scheduled "True";
 * - Backoff: not admitted, and its owner's raygate.io/requeue-at is later
 *   than now (evicted, may not be admitted before then);
 * - Evicted: not admitted, raygate.io/requeue-count > 0 (evicted, queued again);
 * - Waiting: otherwise.
 * Position (not admitted gangs only): its place among its queue's gangs that
 * are not admitted, in the gate's order: priority descending, then older
 * owner, then namespace/name. Priority: the highest spec.priority of its pods
 * when pods are known, else its priorityClassName's value (a missing class,
 * or none: the globalDefault class's value, else 0); null when neither can
 * be read.
 */
#ifndef RAYGATE_CLI_VIEW_H
#define RAYGATE_CLI_VIEW_H

#include <jansson.h>

#include "admit.h"
#include "evict.h"
#include "names.h"
#include "quantity.h"

/* Which gangs to show. NULL strings: no filter. */
struct view_filter {
    const char *namespace_;
    const char *queue;
};

/*
 * The gangs of snapshot that pass f, sorted by namespace then name, as a new
 * JSON array of rows:
 *   {"namespace","name","kind","podGroup","queue","priority" (integer or null),
 *    "priorityClassName" (or null),"state","pods":{"bound","min","counted"
 *    ("bound", or "running" when pods could not be read: the PodGroup's
 *    status.running)},"position" (integer or null),"reason" (condition reason
 *    or null),"message" (full wait message or null),"waitReason" (the gate's
 *    reason code, raygate.io/wait-reason: admit_result_reason_name(), or null when it
 *    does not wait or the PodGroup carries none),"podsCreated" (with code
 *    "pods": raygate.io/wait-pods-created, or null),"waitingFor" (the short
 *    reason, or null),"minResources","createdAt","ageSeconds","admittedAt",
 *    "requeueCount","requeueAt"}
 * waitingFor is written from the reason code, never read out of the message:
 * "queue q: cpu, memory short" (what the queue's status lacks now; "queue q:
 * room now" when nothing), "nodes: no room", "behind <gang> (fifo)"
 * (view_blocker), "pods: 1 of 3 created", "queue q does not exist", "queue
 * q is Closed", "invalid spec"; the message itself for an eviction or when
 * the PodGroup carries no code; "no decision yet" without a message; with
 * "backoff, <age> left; " before it in Backoff.
 */
json_t *view_gangs(const json_t *snapshot, long long now, const struct view_filter *f);

/* The reason code of a row (borrowed): ADMIT_REASON_NONE when it has none, or one this build does not know. */
enum admit_reason view_wait_reason(const json_t *row);

/*
 * The gang a row (borrowed) of a fifo queue waits behind (code "blocked"):
 * the first of its queue's gangs ahead of it among rows (borrowed, with
 * positions) that waits on the queue or on the nodes, where a pass stops.
 * Borrowed from rows; NULL when rows show none.
 */
const json_t *view_blocker(const json_t *rows, const json_t *row);

/* The Queue named name in snapshot (borrowed), or NULL. */
const json_t *view_find_queue(const json_t *snapshot, const char *name);

/* The quantity of resource name in a ResourceList (borrowed) in name's unit; 0 when absent or invalid. */
struct quantity view_quantity(const json_t *list, const char *name);

/*
 * Whether queue (borrowed; NULL: none) is short now of resource name of need
 * (a gang's minResources, borrowed): only resources its capability lists
 * count. Sets *n (needed), *cap (capability) and *free_ (capability less
 * status.allocated, at least 0).
 */
int view_queue_short(const json_t *queue, const json_t *need, const char *name, struct quantity *n, struct quantity *cap,
                     int64_t *free_);

/*
 * The queues of snapshot as a tree (spec.parent, queuetree.h), as a new JSON
 * array of rows, depth first: a Queue named "root" first, then the root's
 * children, each followed by its subtree, siblings by name; then the queues
 * outside the tree (a cycle, its own parent, a missing parent, or under such
 * a one), by name. With queue: only that queue and its subtree. Each row:
 *   {"name","parent" (spec.parent, or null),"depth" (0: top of what is
 *    shown; a child one more than its parent),"state","capability",
 *    "guarantee" (spec.guarantee.resource),"deserved","deservedDerived",
 *    "allocated","share" (string, or null),"treeError" (or null),"running",
 *    "pending","inqueue","weight"}
 * Read from the objects, not computed: deserved, deservedDerived, allocated,
 * share and treeError are the gate's status fields (status.deserved
 * absent: spec.deserved, not derived). ResourceLists are objects (empty when
 * unset).
 */
json_t *view_queues(const json_t *snapshot, const char *queue);

/* Whether a row's state is Admitted or Running. */
int view_state_admitted(const char *state);

/* Parses an RFC 3339 UTC time ("2024-05-01T11:00:00Z", fractions allowed) into unix seconds; -1 if it is not one. */
long long view_parse_time(const char *s);

/* kubectl's short age: "45s", "3m20s", "5m", "2h10m", "3d4h", "400d". Writes into buf (size >= 16); returns buf. */
char *view_age(long long seconds, char *buf, size_t size);

#endif
