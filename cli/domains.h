/*
 * domains: `kubectl raygate domains`, the free room of each topology domain
 * (docs/topology.md), as pure functions of a snapshot. No I/O: cli/fetch.c
 * reads the objects (FETCH_NODES), cli/output.c prints the rows.
 *
 * The snapshot is view.h's, with (missing arrays count as empty):
 *   "nodes":      [Node, ...],
 *   "nodePods":   [Pod, ...]        the cluster's pods (terminated ones are not counted),
 *   "hyperNodes": [HyperNode, ...]  topology.volcano.sh/v1alpha1,
 *   "owners":     [object, ...]     RayClusters: what they ask (raygate.io/topology-required,
 *                                   -preferred, volcano.sh/network-topology-mode) and where
 *                                   they were placed (raygate.io/topology-placed).
 *
 * Room is counted as the gate counts it (cache.h): a domain's nodes are its
 * Ready, schedulable nodes; a node's free room is its allocatable less the
 * requests of the non-terminated pods bound to it, terminating pods included
 * (at least 0 per node); a domain's is the sum over its nodes.
 *
 * HyperNodes are resolved by lib's hypernode.h, as the gate resolves them:
 * a HyperNode with no node is no domain; an invalid one (hypernode_upsert()
 * refuses it: no tier, a bad selector, a child cycle) is a row with "error".
 */
#ifndef RAYGATE_CLI_DOMAINS_H
#define RAYGATE_CLI_DOMAINS_H

#include <stdint.h>

#include <jansson.h>

/* What `domains` shows: the values of a node label, or the HyperNodes. */
struct domains_query {
    const char *key; /* --key LABEL: one domain per value among Ready, schedulable nodes; NULL with hypernodes */
    int hypernodes;  /* --hypernodes: one domain per HyperNode */
    int32_t tier;    /* --tier N: HyperNodes of tier <= N only; 0: every tier */
};

/*
 * The domains of q over snapshot (borrowed), as a new JSON array of rows,
 * by label value (HyperNodes: by tier, then name):
 *   {"domain","tier" (a HyperNode's; null for a label value),"nodes" (Ready,
 *    schedulable nodes),"resources":[{"name","free","allocatable"} (quantity
 *    strings), ...] (nvidia.com/gpu first, then the other extended resources,
 *    cpu, memory, the rest; "pods" left out),"gangs":["ns/name", or
 *    "ns/name (group/G)", "ns/name (slice/R)" for a group's or a slice's set,
 *    ...] (the RayClusters that ask for this kind of domain and whose
 *    raygate.io/topology-placed names it),"error" (an invalid HyperNode's
 *    reason, else null)}
 */
json_t *domains_view(const json_t *snapshot, const struct domains_query *q);

/*
 * What owner (borrowed: a RayCluster, or a RayJob with spec.rayClusterSpec)
 * asks for, read by lib's topology_request_parse() (topology.h), as a new array:
 *   {"key" (a node label key, or null for HyperNodes),"tier" (HyperNodes:
 *    the highest tier allowed, 0 for any; else null),"mode" ("required" or
 *    "preferred" for a key, "hard" or "soft" for HyperNodes),"group" (the
 *    worker group whose pods the set holds, or null for the whole gang),
 *    "hosts" (the group's numOfHosts: above 1, each replica in one domain)}
 * the gang's first, then each group with its own constraint or more than one
 * host (a multi-host group without its own: the gang's constraint, per
 * replica). Empty when it asks for nothing or its request is invalid.
 */
json_t *domains_asks_of(const json_t *owner);

/*
 * What the gangs of snapshot (borrowed) ask for, as a new JSON array of rows,
 * label keys by name, then HyperNodes by tier:
 *   {"key" (the label key, or null for HyperNodes),"tier" (HyperNodes: the
 *    highest tier allowed, 0 for any; null for a key),"gangs":["ns/name
 *    (required)", "ns/name group G (preferred)", "ns/name group G, each
 *    replica (required)" (numOfHosts > 1), "ns/name (hard)", ...],
 *    "command" (the domains command that shows those domains)}
 */
json_t *domains_asked(const json_t *snapshot);

#endif
