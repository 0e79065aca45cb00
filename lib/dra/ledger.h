/*
 * ledger: the nodes' devices, from a draset's ResourceSlices and the
 * allocations of its ResourceClaims: per node and device resource
 * (draset.h), how many devices the node's slices publish that a class mapping
 * to the resource selects (deviceclass_match), and how many of those claims
 * hold. A device that two classes of one resource select counts once.
 *
 * A slice names its node by spec.nodeName; a slice for spec.allNodes, or for
 * the nodes of spec.nodeSelector, serves each such node (network-attached
 * devices): its devices count on every node it serves, so the fit of two pods
 * on two such nodes may count one device twice (kube-scheduler then has the
 * final word: a pod it cannot allocate for stays Pending and is seen).
 *
 * Built again when slices or classes change, in one sweep over the devices;
 * otherwise the claims' moves that draset_record() journals are applied, one
 * device at a time. ledger_free() answers as of the last ledger_prepare(). Pure.
 */
#ifndef RAYGATE_LEDGER_H
#define RAYGATE_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "draset.h"

/* A node as a slice's nodeSelector sees it: its name and a label lookup (NULL: no such label). */
struct ledger_node {
    const char *name;
    const char *(*label)(const void *node, const char *key);
    const void *node;
};

/* Builds the ledger again if slices or classes changed since the last call (cheap otherwise). */
void ledger_prepare(struct draset *s);

/* Counts ledger_prepare() rebuilds and claim changes: the free devices of a node may differ when it moved. */
uint64_t ledger_generation(const struct draset *s);

/*
 * The devices of resource r (draset_resources' number) on node n: published
 * (into *total, may be NULL) and free (returned: published less allocated,
 * never negative). 0 and 0 for a node without any.
 */
int64_t ledger_free(const struct draset *s, const struct ledger_node *n, size_t r, int64_t *total);

/* Whether any slice serves nodes by nodeSelector or allNodes (ledger_free then needs the node's labels). */
int ledger_has_shared(const struct draset *s);

#endif
