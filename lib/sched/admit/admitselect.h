/*
 * admitselect: which gangs an admission pass (admit.h) weighs, and what their
 * queues hold before it decides: the selection of queues (incremental: dirty
 * queues whole, node waiters where room appeared; in a tree, any change
 * weighs every queue), the gangs' members and order within a leaf (priority,
 * then older, then namespace/name), and the queues' and the tree's alloc and
 * demand (treepass.h). Private to admit.c. Pure.
 */
#ifndef RAYGATE_ADMITSELECT_H
#define RAYGATE_ADMITSELECT_H

#include <stddef.h>

#include "admitpass.h"

/*
 * Selects the queues to evaluate into p->queues (all: every queue whole;
 * grew: room may have appeared on the nodes), their held zero. Sets *npods to
 * the pods of the gangs to evaluate; returns how many gangs.
 */
size_t admitselect_queues(struct pass *p, int all, int grew, size_t *npods);

/*
 * The gangs the selected queues evaluate (at most ngangs of them, npods pods;
 * *nout of them: an admitted gang with no pod gated decides nothing and is
 * left out), sorted in their within-leaf order (p's scratch).
 */
struct work *admitselect_works(struct pass *p, size_t ngangs, size_t npods, size_t *nout);

/* What the selected queues' gangs hold, into their held and the tree; the other queues' alloc and demand, then deserved. */
void admitselect_sum_held(struct pass *p);

/* Whether some queue's objects changed since the last pass that evaluated it. */
int admitselect_any_dirty(const struct cache *c);

#endif
