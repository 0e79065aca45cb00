/*
 * topoplace: placing a topology-constrained gang (topology.h) during an
 * admission pass: the pass simulates the gang in each candidate domain
 * (topodomain.h) and takes the best fit.
 *
 * A gang's pods fall into sets, each to lie in one domain of its constraint:
 * - the gang-wide set: every member but the head (the head too with
 *   include-head), when the gang has a constraint;
 * - a group's set: the pods of a group with its own constraint (numOfHosts 1);
 * - a slice: the pods of one replica of a group with numOfHosts > 1 (label
 *   ray.io/worker-group-replica-name), in one domain of the group's constraint,
 *   else of the gang's.
 * Pods in no set (the head by default) are placed anywhere, after the sets.
 *
 * Best fit: of the domains whose free room (summed over their nodes) covers
 * the set, taken from the least room left over (the dominant resource of the
 * set's request, as a fraction of the domain's free room), then lower tier,
 * then name, the first where the set's pods really fit pod by pod
 * (fit_place_on). A gang-wide set is placed first; slices and group sets then
 * go within its domain when they are under one. A pod already bound pins its
 * set to the domains holding its node.
 *
 * Hard: no domain holds a set: the gang waits (ADMIT_REASON_TOPOLOGY), the
 * message saying what the set needs and the largest free domain, e.g. "needs
 * nvidia.com/gpu 16 in one nvidia.com/gpu.clique domain; largest free domain:
 * clique-b with nvidia.com/gpu 12 (cluster-wide free: nvidia.com/gpu 40)", or
 * "no Ready node carries label rack". Soft: the set is placed anywhere
 * (fit_place) and the outcome says so (spread).
 *
 * Pure: no I/O, no threads, no clock.
 */
#ifndef RAYGATE_TOPOPLACE_H
#define RAYGATE_TOPOPLACE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cache.h"
#include "fit.h"
#include "topodomain.h"
#include "topology.h"

/* Where one set went. */
struct topoplace_set {
    const char *group;                /* NULL: the gang-wide set; else the group's name (borrowed from the request) */
    const char *replica;              /* a slice: the replica's name (interned by the cache); else NULL */
    const struct topo_constraint *c;  /* borrowed from the request */
    const struct topo_domain *domain; /* the chosen domain (borrowed until the next topodomain_begin); NULL: spread (soft) */
};

/* A placed gang: its sets, and which pod went in which set. */
struct topoplace_out {
    struct topoplace_set *sets; /* owned */
    size_t nsets, cap;
    int spread; /* a soft set found no domain and was placed anywhere */
};

void topoplace_out_init(struct topoplace_out *o);
void topoplace_out_finish(struct topoplace_out *o);

/*
 * Places pods[0..n) (a gang's unbound members, sorted larger first) and honours
 * r, the gang's request, with bound the gang's members already bound (they pin
 * their sets; may be 0). Returns 1 when all are placed (tentatively: the
 * caller fit_commit()s) with out filled. Else nothing is placed, out is empty
 * and *why set (new string, the text after "gang ray-x-pg (...) "): 0 when no
 * domain holds a hard set (ADMIT_REASON_TOPOLOGY), -1 when pods fit no node
 * otherwise (the head, or a soft set spread: ADMIT_REASON_NODES).
 */
int topoplace_gang(struct fit *f, struct topodomains *t, const struct cache *c, const struct topo_request *r,
                   struct cache_pod **pods, size_t n, struct cache_pod *const *bound, size_t nbound, struct topoplace_out *out,
                   char **why);

/* The set of out pod belongs to, or NULL when it is in none (placed anywhere). */
const struct topoplace_set *topoplace_set_of(const struct topoplace_out *out, const struct topo_request *r,
                                             const struct cache_pod *pod);

#endif
