/*
 * view: what the dispatcher knows of one worker cluster, refreshed by lists
 * every --resync: its nodes, pods, Queues and RayClusters in a struct cache
 * (lib/sched/cache/cache.h: the same model the worker's gate decides on, for the
 * admission simulation), and the copies this manager made there (RayClusters
 * and RayJobs labelled raygate.io/dispatched-from=<cluster-name>, and the
 * RayClusters KubeRay made for such RayJobs, which carry the label too).
 *
 * A refresh lists one collection after the other, page by page
 * (DISPATCHVIEW_PAGE items), and puts each page into the cache before the
 * next is read: the lists' JSON is never held whole (a parsed KubeRay pod
 * takes about 85 KB of jansson's nodes, its cached form under 1 KB), and the
 * heap the pages used is given back to the system after each refresh. What
 * a collection's list lacks is deleted from the cache only when that whole
 * list succeeded, and the copies are replaced only when every list did: a
 * worker that stops answering keeps its last view, at most with some
 * objects updated (it is then down: workers.h), and nothing is deleted from
 * it.
 */
#ifndef RAYGATE_DISPATCH_VIEW_H
#define RAYGATE_DISPATCH_VIEW_H

#include <stddef.h>

#include <jansson.h>

#include "admit.h"
#include "cache.h"
#include "draset.h"
#include "error.h"
#include "kube.h"

/* Items per page of a refresh's lists (limit=): the most JSON a refresh holds parsed at once. */
#define DISPATCHVIEW_PAGE 100

struct dispatchview {
    struct cache *cache; /* the worker's nodes, pods, Queues and RayClusters */
    struct draset *dra;  /* the worker's DRA objects (dracache.h), which cache borrows */
    struct admit *admit; /* the decision state of cache, for the simulation (dispatchsim.h) */
    json_t *keys;        /* what is in the cache: {"Node"|"Pod"|"RayCluster"|"Queue": {key: true}} */
    json_t *copies;      /* {"RayCluster/ns/name"|"RayJob/ns/name": object}: this manager's copies there */
    int refreshed;       /* a refresh succeeded at least once */
};

void dispatchview_init(struct dispatchview *v);
void dispatchview_finish(struct dispatchview *v);

/*
 * Lists the worker's collections with k and brings the view up to date:
 * upserts what is listed, deletes from the cache what is no longer listed,
 * and replaces the copies (those labelled dispatched-from=cluster_name).
 * Returns 0, or -1 with err (the first list that failed: the pages read until
 * then are in the cache, nothing is deleted, the copies are the last ones).
 */
int dispatchview_refresh(struct dispatchview *v, struct kube_client *k, const char *cluster_name, struct error *err);

/*
 * Lists the n collections at paths with k into res[0..n) (initialised here;
 * the caller finishes them, also on failure). Returns 0, or -1 with err (the
 * first list that failed).
 */
int dispatchview_list(struct kube_client *k, const char *const *paths, size_t n, struct kube_list_result *res, struct error *err);

/* The copy of kind ("RayCluster" or "RayJob") ns/name on the worker (borrowed), or NULL. */
const json_t *dispatchview_copy(const struct dispatchview *v, const char *kind, const char *namespace_, const char *name);

/*
 * The RayCluster KubeRay made on the worker for the copied RayJob ns/job
 * (labels ray.io/originated-from-crd=RayJob and
 * ray.io/originated-from-cr-name=job), borrowed, or NULL.
 */
const json_t *dispatchview_rayjob_cluster(const struct dispatchview *v, const char *namespace_, const char *job);

#endif
