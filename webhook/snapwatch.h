/*
 * snapwatch: a snapshot of API objects the webhook keeps from a list and
 * watch of their collections on a thread of its own (kube.h), so that the
 * admission path never calls the API server: it locks the snapshot, decides,
 * and unlocks.
 *
 * The webhook keeps three (snapwatch_queues, snapwatch_dra, snapwatch_held);
 * a struct snapwatch_spec says what differs between them: the collections,
 * the snapshot, and how an event changes it. One mutex guards the snapshot;
 * the watch thread records each event under it.
 *
 * A snapshot is synced once every collection has listed. Until then, and for
 * a spec with unsync_on_trouble from any trouble of a watch (a failed
 * request, a 410) until that collection has listed again, snapwatch_lock
 * returns NULL and the request path decides without it (what each caller
 * does without: mutate_options, admission.h). A snapshot lags the API by the
 * watch's delay.
 */
#ifndef RAYGATE_SNAPWATCH_H
#define RAYGATE_SNAPWATCH_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "jsonscan.h"
#include "kube.h"

/* The collections of one snapwatch, at most this many. */
#define SNAPWATCH_MAX_COLLECTIONS 4

/* One collection listed and watched. */
struct snapwatch_collection {
    const char *name; /* the watch's name in logs and metrics (kube_watch_spec.name) */
    const char *path; /* the collection, e.g. "/apis/ray.io/v1/rayclusters" */
    int kind;         /* passed to record as is: which collection an object is of (a draset kind) */
};

struct snapwatch_spec {
    const char *what;     /* the watch in logs: "queue watch" */
    const char *watching; /* what it watches, in its start-up log: "Queues (/apis/...)" */
    const char *counted;  /* what count() counts, in the synced log: "Queues known" */
    const char *synced;   /* what the synced snapshot turns on, logged once: "the queue tree checks are on" */
    const char *unsynced; /* what the request path does meanwhile: "the queue tree checks are skipped" */
    const struct snapwatch_collection *collections; /* borrowed: static; 0 of them: nothing watched, never synced */
    size_t ncollections;
    void *snap; /* the snapshot; snapwatch_create steals it (free_snap frees it, even when create fails) */
    /*
     * Records one event's object (borrowed) of collection kind into snap, under
     * the lock, on the watch thread: an ADDED or MODIFIED one (deleted 0) or a
     * DELETED one. A message in err is logged as a warning.
     */
    void (*record)(void *snap, int kind, int deleted, const json_t *object, struct error *err);
    size_t (*count)(const void *snap); /* the objects snap holds, for the synced log; NULL: not told */
    void (*free_snap)(void *snap);
    int unsync_on_trouble; /* a watch's trouble unsyncs the snapshot until that collection lists again (relist_on_error) */
    int shape;             /* the watch stream's events built only in part (kube_watch_spec): 0, or shape_fn's shape */
    jsonscan_shape_fn shape_fn;
};

/*
 * Starts listing and watching spec's collections through c (borrowed: it must
 * outlive the watch). spec is copied (its strings and collections are
 * borrowed: static). Returns a new snapwatch (snapwatch_destroy), or NULL with
 * err.
 */
struct snapwatch *snapwatch_create(struct kube_client *c, const struct snapwatch_spec *spec, struct error *err);

/* Stops the watch thread and frees everything, the snapshot included. Accepts NULL. */
void snapwatch_destroy(struct snapwatch *w);

/*
 * Locks the snapshot and returns it when synced (borrowed until
 * snapwatch_unlock; of the type the spec's snap is), else NULL.
 * snapwatch_unlock must follow on the same thread either way. Keep the lock
 * short: the watch waits on it.
 */
const void *snapwatch_lock(struct snapwatch *w);

void snapwatch_unlock(struct snapwatch *w);

/* Whether the snapshot is synced (a gauge's value). w may be NULL (0). */
int snapwatch_synced(struct snapwatch *w);

/*
 * The webhook's three, each started on c (borrowed) as snapwatch_create does;
 * NULL with err when the watch cannot start.
 *
 * snapwatch_queues: the Volcano Queues (SNAPWATCH_QUEUES_PATH) into a
 * struct queuecheck_set (queuecheck.h); until listed (the Queue CRD absent,
 * the service account may not list Queues, the API server does not answer)
 * the admission skips the tree checks (fail open for the tree only).
 */
#define SNAPWATCH_QUEUES_PATH "/apis/scheduling.volcano.sh/v1beta1/queues"
struct snapwatch *snapwatch_queues(struct kube_client *c, struct error *err);

/*
 * snapwatch_dra: the Dynamic Resource Allocation objects that size a gang
 * (SNAPWATCH_DRA_API's DeviceClasses, ResourceClaimTemplates and the
 * ResourceClaims that pods name) into a struct draset (draset.h): the request
 * path prices a RayCluster's claims into its raygate.io/min-resources
 * (mutate_options.dra). ResourceSlices are not watched (the webhook counts no
 * node), nor the claims kube-controller-manager makes from a pod's template
 * (annotated resource.kubernetes.io/pod-claim-name: pods name their template,
 * not them). Discovery, once at start-up: where the API server does not serve
 * resource.k8s.io/v1 (Kubernetes 1.33) nothing is watched, and said once; a
 * discovery that fails otherwise starts the watches anyway (their lists
 * retry). Until the three have listed, the webhook writes minResources
 * without devices (the gate counts them anyway, from its own watches).
 */
#define SNAPWATCH_DRA_API "/apis/resource.k8s.io/v1"
struct snapwatch *snapwatch_dra(struct kube_client *c, struct error *err);

/* Whether an APIResourceList (borrowed; may be NULL or of any shape) lists what snapwatch_dra watches. */
int snapwatch_dra_served(const json_t *resources);

/*
 * snapwatch_held: which held RayClusters (heldsuspend.h) are admitted, from
 * KubeRay's RayClusters (SNAPWATCH_HELD_PATH, metadata only), into a struct
 * heldset (heldset.h): the pod path asks it (mutate_options.held). Only when
 * the webhook holds gangs (--hold-gangs). Unsynced from any trouble of the
 * watch until it has listed again: then every queued pod is gated.
 * docs/design.md ("Pods born ungated") says what closes the watch's window.
 */
#define SNAPWATCH_HELD_PATH "/apis/ray.io/v1/rayclusters"
struct snapwatch *snapwatch_held(struct kube_client *c, struct error *err);

#endif
