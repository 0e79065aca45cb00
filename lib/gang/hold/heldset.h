/*
 * heldset: the RayClusters held suspended (heldsuspend.h) whose gangs are
 * admitted, as a watch of RayClusters reports them: the webhook's answer to
 * "is this pod's gang admitted?" without an API call on the request path
 * (mutate_options.held). A pod of a RayCluster in the set that is a member
 * of its gang (marked raygate.io/gang-member "true": the head, and a group
 * that cannot grow a tail) is born without the gate (mutate.h); every other
 * queued pod is gated as before (an autoscaler's tail is the gate's to weigh).
 *
 * A RayCluster is in the set while its last version seen is marked held and
 * admitted (raygate.io/admitted-at) at the generation its admission record
 * made (heldsuspend_born_ungated: a spec changed since, a group scaled up,
 * and its pods are gated), and leaves it with its eviction record (which
 * removes admitted-at), such a change or its deletion. Keyed by namespace
 * and name.
 *
 * Not thread-safe: its owner locks it (the webhook's clusterwatch). Pure.
 */
#ifndef RAYGATE_HELDSET_H
#define RAYGATE_HELDSET_H

#include <stddef.h>

#include <jansson.h>

#include "jsonscan.h"

struct heldset;

struct heldset *heldset_create(void);

/* Frees s and its entries. Accepts NULL. */
void heldset_destroy(struct heldset *s);

/* Records one watch event on a RayCluster (borrowed): deleted, or its new version. */
void heldset_record(struct heldset *s, const json_t *cluster, int deleted);

/* Whether the RayCluster ns[0..nslen)/name[0..namelen) is in s. */
int heldset_admitted(const struct heldset *s, const char *ns, size_t nslen, const char *name, size_t namelen);

/* How many RayClusters s holds. */
size_t heldset_len(const struct heldset *s);

/*
 * What a watch of RayClusters builds of each event for heldset_record (a
 * jsonscan_shape_fn for kube_watch_spec's shape, HELDSET_SHAPE_EVENT): the
 * event's type and object; of the object only its metadata, without
 * managedFields (the name, namespace, generation and annotations are all
 * heldset_record reads; a RayCluster's spec and status are most of its text).
 */
#define HELDSET_SHAPE_EVENT 1

int heldset_shape_fn(int shape, const struct jsonscan *s, long key);

#endif
