/*
 * fitwhy: the words of "no node fits pod NAME...": why a pod that fits no
 * node does not, from a survey of the pass's nodes that fit.c makes. Pure.
 */
#ifndef RAYGATE_FITWHY_H
#define RAYGATE_FITWHY_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "util.h"

/*
 * No node may take the pod: ": 2 nodes are not Ready or unschedulable, 1 node
 * does not match its node selector or affinity, 1 node has a taint it does not
 * tolerate" (nn: the pass's nodes; not_ready: nodes present but not among
 * them; selector, taints: nodes each rules out), ": there are no nodes".
 */
void fitwhy_no_match(struct util_buf *b, size_t nn, size_t not_ready, size_t selector, size_t taints);

/*
 * Nodes may take it, none has room: " (cpu 2, pods 1): at most cpu 1, pods 0
 * free on one node", the resources of req no single node has enough of (best:
 * by item of req, the most free on one node that may take it; best_pods: the
 * most free pod slots), nshort of them (the resource named only when more than one).
 */
void fitwhy_shortage(struct util_buf *b, const struct cache *c, const struct shape_rl *req, const int64_t *best, int64_t best_pods,
                     size_t nshort);

/* When a resource short (best, as above) is a DRA device (ledger.h): where its count comes from, and a selector not evaluated
 * whole. */
void fitwhy_devices(struct util_buf *b, const struct cache *c, const struct shape_rl *req, const int64_t *best);

#endif
