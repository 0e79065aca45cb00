/*
 * topodomain: the domains a topology constraint (topology.h) chooses among,
 * over one pass's nodes (fit.h): by node label, one domain per value of the
 * key among the Ready, schedulable nodes; by HyperNode, one domain per valid
 * HyperNode of tier <= the highest allowed (hypernode.h). Built on first use
 * in a pass and kept while neither the nodes (fit_nodes_generation) nor the
 * HyperNodes (hypernode_generation) change. Pure.
 */
#ifndef RAYGATE_TOPODOMAIN_H
#define RAYGATE_TOPODOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include "fit.h"
#include "hypernode.h"
#include "topology.h"

struct topo_domain {
    const char *name; /* the label value (interned by the cache), or the HyperNode's name */
    const char *key;  /* TOPO_BY_LABEL: the label key (the constraint's); NULL for a HyperNode */
    int32_t tier;     /* a HyperNode's tier; 0 for a label domain */
    uint32_t *nodes;  /* fit indices of its nodes, ascending */
    size_t nn;
};

struct topodomains;

struct topodomains *topodomain_create(void);
void topodomain_destroy(struct topodomains *t);

/* The HyperNodes (borrowed, may be NULL: none) HyperNode constraints resolve against. */
void topodomain_set_hypernodes(struct topodomains *t, const struct hypernodes *h);

/* A pass begins on f (fit_begin() done): drops what was built for older nodes or HyperNodes. */
void topodomain_begin(struct topodomains *t, struct fit *f, const struct cache *c);

/*
 * The domains of constraint c (mode not NONE) over the pass's nodes, in a
 * stable order (label value; HyperNodes by tier then name): sets *n and returns
 * the array (borrowed until the next topodomain_begin()). *n == 0: no Ready
 * node carries the key, or no HyperNode of an allowed tier has a Ready node.
 */
const struct topo_domain *topodomain_get(struct topodomains *t, const struct topo_constraint *c, size_t *n);

/*
 * topoplace.c's memo of its last failures in the pass (TOPO_MEMOS of them,
 * reset by topodomain_begin): a gang whose request has only a gang-wide
 * constraint equal to an entry's, whose pods have the same shapes in the same
 * order, with the room unchanged since (fit_room_version), fails the same way.
 */
#define TOPO_MEMOS 8
struct topo_memo {
    uint64_t room;
    const struct shape_rl **req;
    const struct shape_sched **sched;
    uint8_t *in_set;
    size_t n, cap;
    uint8_t mode, by;
    char *key; /* owned */
    int32_t max_tier;
    char *why; /* owned; NULL: no memo */
    int rc;    /* what topoplace_gang() returned */
};

/* Memo entry i (< TOPO_MEMOS). */
struct topo_memo *topodomain_memo(struct topodomains *t, size_t i);

/* The entry to overwrite next (round robin). */
struct topo_memo *topodomain_memo_slot(struct topodomains *t);

/* Every node index of the pass, 0..n-1 (borrowed until the nodes change). */
const uint32_t *topodomain_all(struct topodomains *t, size_t *n);

/*
 * The free room of all the pass's nodes summed (each node's clamped at 0), by
 * resource id, pods last (fit_resources() + 1 long; borrowed until the next
 * call). Kept up to date with fit_touched(): O(nodes changed) per call.
 */
const int64_t *topodomain_total(struct topodomains *t);

/*
 * The same sums per domain of constraint c: *n domains (topodomain_get's,
 * in its order) of fit_resources() + 1 values each, borrowed until the next
 * call.
 */
const int64_t *topodomain_sums(struct topodomains *t, const struct topo_constraint *c, size_t *n);

/* Whether fit node index i is in d (binary search). */
int topodomain_has(const struct topo_domain *d, uint32_t i);

#endif
