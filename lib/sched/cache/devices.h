/*
 * devices: a pod's or a gang's device claims (DRA), counted as the queue
 * resources their DeviceClasses map to (gangclaims.h, draset.h): a pod's in
 * its request, a gang's in its minResources, so that queues, the tree,
 * preemption and the fit count them as they count nvidia.com/gpu. The nodes'
 * free devices come from the ledger (ledger.h, fit.h).
 *
 * Without a set (NULL), claims count nothing and nothing waits on them. A pod
 * or gang whose claims cannot be counted yet (a template, claim or class not
 * seen, allocationMode All) keeps its request without devices and has
 * cache_devices.wait set: admission waits with it (admit.h), never admits it
 * on a guess. dracache.h prices the whole cache again when the set changes.
 *
 * Pure. The cache calls the parse functions from its upserts.
 */
#ifndef RAYGATE_DEVICES_H
#define RAYGATE_DEVICES_H

#include <jansson.h>

#include "draset.h"
#include "model.h"
#include "shape.h"

/*
 * Reads a pod's claims (obj borrowed) after model_pod_parse_spec(), before the
 * pod is attached, and prices its request by s (borrowed, NULL fine).
 */
void devices_pod_parse(struct shape_pool *p, const struct draset *s, struct cache_pod *pod, const json_t *obj);

/* Reads a RayCluster's claims (obj borrowed) after model_gang_parse_spec(), pricing its minResources. */
void devices_gang_parse(struct shape_pool *p, const struct draset *s, struct cache_gang *g, const json_t *obj);

/* Prices pod (with claims) again; one counted on a node is counted there at its new request. Returns 1 when it changed. */
int devices_pod_price(struct shape_pool *p, const struct draset *s, struct cache_pod *pod);

/* Prices g's minResources (with claims) again; returns 1 when they changed. */
int devices_gang_price(struct shape_pool *p, const struct draset *s, struct cache_gang *g);

/*
 * Sets pod's carry (sharedcarry.h): its fit request plus what the shared
 * claims names[0..n) (borrowed) count as, on the nodes too (demand and
 * variants); NULL when n is 0 or one cannot be counted (the gang waits on it
 * through devices_gang_wait). Returns 1 when it changed.
 */
int devices_pod_carry(struct shape_pool *p, const struct draset *s, struct cache_pod *pod, const char *const *names, size_t n);

/* Whether g's RayCluster names a shared claim (resourceClaimName). */
int devices_gang_shares(const struct cache_gang *g);

/* The first reason a gang's devices cannot be counted: its own, or one of its live pods'; NULL when none. */
const char *devices_gang_wait(const struct cache_gang *g);

#endif
