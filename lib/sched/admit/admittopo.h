/*
 * admittopo: topology-constrained gangs (topology.h) in an admission pass
 * (admit.h): their members are placed by topoplace.h instead of first fit,
 * their pods confined to the chosen domains when their gates are removed
 * (topoconfine.h), and the domains recorded on the RayCluster. Pure.
 */
#ifndef RAYGATE_ADMITTOPO_H
#define RAYGATE_ADMITTOPO_H

#include <stddef.h>

#include "admitpass.h"

/*
 * Places the unbound members unbound[0..n) (sorted larger first) of w's gang,
 * which has a topology request. Returns 1 placed (committed; the placement is
 * kept in the pass for admittopo_admitted()), else decides WAIT (reason
 * topology, or nodes) and returns 0.
 */
int admittopo_place(struct pass *p, const struct work *w, struct cache_pod **unbound, size_t n);

/* ADMIT of w's gang: pod, the last of d's pods, gets its confinement in the placement admittopo_place() kept. */
void admittopo_pod(struct pass *p, const struct work *w, struct admit_decision *d, const struct cache_pod *pod);

/* ADMIT: d records the domains (and whether a soft set spread); the placement kept is dropped. */
void admittopo_admitted(struct pass *p, struct admit_decision *d);

/* FINISH: pod, the last of d's pods, gets the confinement its gang recorded at admission (its topo_placed). */
void admittopo_finish(struct pass *p, const struct work *w, struct admit_decision *d, const struct cache_pod *pod);

#endif
