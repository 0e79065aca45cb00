/*
 * preemptdomain: preemption (preempt.h) for a topology-constrained preemptor
 * (topology.h): victims chosen so that one domain ends up with room for the
 * whole gang, never gangs scattered over domains that would still leave no
 * domain big enough (Kueue's #5243). Pure: no I/O, no threads, no clock.
 *
 * The domains are those of the preemptor's primary constraint
 * (preemptdomain_constraint). For each domain D, the candidates weighed are
 * those with a pod counted on a node of D (preemptdomain_touches), in the
 * selection's order (lowest priority first); a victim with pods in several
 * domains is evicted whole, every pod of it giving its room back, but it is
 * a candidate of each domain it touches. The preemptor fits when, with the
 * victims' room given back, topoplace_gang() places it with its primary set
 * in one domain (preemptdomain_fits). A domain where evicting every
 * candidate that touches it does not make the preemptor fit gets no victims.
 * Of the domains that can be freed, the one needing the fewest victims is
 * taken, then the lowest sum of their priorities, then the least room left
 * over in the domain the preemptor lands in (the best fit), then the first
 * in the domains' order (preemptdomain_better).
 *
 * The hold (preempthold.h): while the victims' pods go, the preemptor's room
 * is held in the domain it lands in with those pods gone
 * (preemptdomain_hold).
 */
#ifndef RAYGATE_PREEMPTDOMAIN_H
#define RAYGATE_PREEMPTDOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "fit.h"
#include "topodomain.h"
#include "topology.h"

/*
 * The constraint whose domains a preemption frees (borrowed from r): the
 * gang-wide one, else the first group's own; NULL when r (may be NULL)
 * constrains nothing.
 */
const struct topo_constraint *preemptdomain_constraint(const struct topo_request *r);

/* Whether any of pods[0..n) is counted on a node of d (one of f's pass). */
int preemptdomain_touches(const struct fit *f, const struct topo_domain *d, struct cache_pod *const *pods, size_t n);

/* A victim's pods counted on nodes (borrowed): their room is given back when it is evicted. */
struct preemptdomain_victim {
    struct cache_pod *const *pods;
    size_t npods;
};

/* How a domain's choice weighs: lower is better, field by field. */
struct preemptdomain_score {
    size_t nvictims;
    int64_t priorities; /* the sum of the victims' priorities */
    int64_t left;       /* the room left in the domain the preemptor lands in, of its dominant resource */
    size_t order;       /* the domain's index in topodomain_get()'s order */
};

/* Whether a is better than b (see above). */
int preemptdomain_better(const struct preemptdomain_score *a, const struct preemptdomain_score *b);

/*
 * Whether the preemptor, asking r (its primary constraint not NONE), fits
 * once victims[0..nv) are evicted: their pods' room is given back
 * (fit_release), then topoplace_gang() places pods[0..n) (its live members,
 * larger first; those already bound pin their sets) with the primary set in
 * one domain (not spread). Returns 1 with *landed (may be NULL) the domain of
 * the primary set and *left (may be NULL) the room left there of the
 * preemptor's dominant resource (extended resources first, then cpu, then
 * memory); else 0. f's room is as it was on return.
 */
int preemptdomain_fits(struct fit *f, struct topodomains *t, const struct cache *c, const struct topo_request *r,
                       struct cache_pod *const *pods, size_t n, const struct preemptdomain_victim *victims, size_t nv,
                       const struct topo_domain **landed, int64_t *left);

/*
 * A held preemptor's room (preempthold.h): the domain it lands in once the
 * pods of victims[0..nv) (the evicted gangs whose pods remain; borrowed) are
 * gone, as preemptdomain_fits() finds it; then each of its unbound pods (of
 * pods[0..n), larger first) is placed for good on the first node of that
 * domain with room for it (fit_commit; nothing tentative may be pending), so
 * that no other gang takes the room freed there. Returns the domain
 * (borrowed, as topodomain_get's), or NULL when there is none: then nothing
 * is placed, and the caller holds its room as for an unconstrained gang.
 */
const struct topo_domain *preemptdomain_hold(struct fit *f, struct topodomains *t, const struct cache *c,
                                             const struct topo_request *r, struct cache_pod *const *pods, size_t n,
                                             struct cache_gang *const *victims, size_t nv);

#endif
