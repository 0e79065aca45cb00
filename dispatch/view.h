/*
 * view: what the dispatcher knows of one worker cluster, kept by watches:
 * its nodes, pods, Queues and RayClusters in a struct cache
 * (lib/sched/cache/cache.h: the same model the worker's gate decides on, for
 * the admission simulation), its DRA objects (resource.k8s.io/v1
 * DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates:
 * dracache.h), and the copies this manager made there (RayClusters and
 * RayJobs labelled raygate.io/dispatched-from=<cluster-name>, and the
 * RayClusters KubeRay made for such RayJobs, which carry the label too).
 *
 * One watcher thread per view (lib/io/kubewatch.h) lists each collection
 * once, then watches it; it lists again only after a watch expires (410
 * Gone) or fails (relist_on_error), and delivers only what changed. A list is
 * read page by page (the client's list_page_size: the dispatcher's worker
 * clients use DISPATCHVIEW_PAGE), each page put into the cache before the
 * next is read: the lists' JSON is never held whole. What a relist lacks is
 * deleted only when that whole list succeeded (kubewatch's SYNCED). So a
 * worker costs its API server a few requests a minute at rest, instead of a
 * list of everything every --resync.
 *
 * A view is whole when every collection has been listed once and none is in
 * trouble; a collection whose request failed (but a DRA collection answered
 * 404, not served before Kubernetes 1.34, or 403, not granted by an older
 * worker-rbac.yaml: it holds nothing, looked for again every
 * DISPATCHVIEW_DRA_RETRY_MS) makes the worker down (workers.h) until it is
 * listed whole again. A collection being listed again after an expiry keeps
 * its last state meanwhile, and dispatchview_sync waits for it a little.
 *
 * Threads: the watcher's thread writes the fields marked (mu) under mu; the
 * loop's thread (the dispatcher's passes) calls every function here and
 * reads the unmarked fields without a lock.
 */
#ifndef RAYGATE_DISPATCH_VIEW_H
#define RAYGATE_DISPATCH_VIEW_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "admit.h"
#include "cache.h"
#include "dispatchsim.h"
#include "draset.h"
#include "error.h"
#include "kube.h"

/* Items per page of a list (the worker clients' list_page_size): the most JSON the view holds parsed at once. */
#define DISPATCHVIEW_PAGE 100

/* The collections a view watches. */
#define DISPATCHVIEW_COLLECTIONS 9

/* How long the first dispatchview_sync waits for the first lists; later ones for a relist under way. */
#define DISPATCHVIEW_FIRST_WAIT_MS 15000
#define DISPATCHVIEW_RELIST_WAIT_MS 2000

/* A DRA collection answered 404 or 403: asked again this much later. */
#define DISPATCHVIEW_DRA_RETRY_MS 300000

/* A created copy no watch event has named this long after (deleted at once, its events lost to a relist) is forgotten. */
#define DISPATCHVIEW_CREATED_TTL_MS 60000

struct dispatchview_watch;

struct dispatchview {
    pthread_mutex_t mu;
    pthread_cond_t cond;                     /* (mu) broadcast when a collection synced or got into trouble */
    struct cache *cache;                     /* (mu) the worker's nodes, pods, Queues and RayClusters */
    struct draset *dra;                      /* (mu) the worker's DRA objects (dracache.h), which cache borrows */
    struct admit *admit;                     /* (mu) the decision state of cache, for the simulation (dispatchsim.h) */
    json_t *keys;                            /* (mu) what is in the cache: {"Node"|"Pod"|...: {"ns/name"|"name": true}} */
    json_t *live;                            /* (mu) {"RayCluster/ns/name"|"RayJob/ns/name": object}: this manager's copies there */
    json_t *created;                         /* (mu) the copies dispatchview_created noted that no watch event has named yet:
                                                {key: {"object": copy, "at": monotonic ms}} */
    int64_t created_ttl_ms;                  /* DISPATCHVIEW_CREATED_TTL_MS (a test may shorten it) */
    unsigned synced;                         /* (mu) bit per collection: listed whole at least once */
    unsigned relisting;                      /* (mu) bit per collection: being listed again after an expiry */
    unsigned failing;                        /* (mu) bit per collection: its last request failed, not listed whole since */
    char why[DISPATCHVIEW_COLLECTIONS][320]; /* (mu) each failing collection's failure */
    uint64_t lists;                          /* (mu) whole lists delivered, since the start */
    uint64_t trimmed;                        /* lists when the heap was last given back */
    char *cluster_name;                      /* this manager's name (the label of its copies), from the first sync */
    struct kube_watcher *watcher;            /* NULL until the first dispatchview_sync */
    struct dispatchview_watch *watches;      /* the watch callbacks' arguments, one per collection */
    json_t *copies;                          /* live and created at the last dispatchview_sync, and those created since */
    int refreshed;                           /* every collection was listed whole at least once */
};

void dispatchview_init(struct dispatchview *v);

/* Stops the watcher (if started) and frees what v holds. Call it before destroying the client the view watches with. */
void dispatchview_finish(struct dispatchview *v);

/*
 * Brings the view's copies up to date, starting the watches with k (which
 * must outlive the view; worker names the worker in logs; cluster_name is
 * copied) at the first call, and waiting for the first lists then (at most
 * DISPATCHVIEW_FIRST_WAIT_MS), later for a relist under way (at most
 * DISPATCHVIEW_RELIST_WAIT_MS). Returns 0 when the view is whole; or -1 with
 * err: the first failing collection's failure, or what is not listed yet.
 */
int dispatchview_sync(struct dispatchview *v, struct kube_client *k, const char *worker, const char *cluster_name,
                      struct error *err);

/* dispatch_sim of obj (borrowed) on the view's cache with its copies, under the view's lock. */
int dispatchview_sim(struct dispatchview *v, const json_t *obj, int64_t now_ms, struct dispatch_verdict *out, struct error *err);

/* Whether the worker has Queue name. */
int dispatchview_has_queue(struct dispatchview *v, const char *name);

/*
 * Notes copy (borrowed: the RayCluster or RayJob the dispatcher has just
 * created on the worker, kind "RayCluster" or "RayJob") in the copies, until
 * a watch event names it: the simulation counts it at its full demand from
 * now on (dispatchsim.h), though no watch has delivered it yet.
 */
void dispatchview_created(struct dispatchview *v, const char *kind, const json_t *copy);

/*
 * Lists the n collections at paths with k into res[0..n) (initialised here;
 * the caller finishes them, also on failure). Returns 0, or -1 with err (the
 * first list that failed).
 */
int dispatchview_list(struct kube_client *k, const char *const *paths, size_t n, struct kube_list_result *res, struct error *err);

/* The copy of kind ("RayCluster" or "RayJob") ns/name on the worker (borrowed from copies), or NULL. */
const json_t *dispatchview_copy(const struct dispatchview *v, const char *kind, const char *namespace_, const char *name);

/*
 * The RayCluster KubeRay made on the worker for the copied RayJob ns/job
 * (labels ray.io/originated-from-crd=RayJob and
 * ray.io/originated-from-cr-name=job), borrowed from copies, or NULL.
 */
const json_t *dispatchview_rayjob_cluster(const struct dispatchview *v, const char *namespace_, const char *job);

#endif
