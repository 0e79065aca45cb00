/*
 * cacheguard: the controller's lock, owned by this module and taken only
 * through it. It guards the gate's cache (lib/sched/cache/cache.h) and what
 * the top of gate/ keeps beside it: the decision state, the watches' synced
 * bits, the HyperNodes, the native PodGroups and the held RayClusters' nudges.
 *
 * The modules that take it (apply.h, leaseseen.h, heldnudge.h, watches.h) are
 * lent the guard, not its mutex: none of them can destroy it, wait on a
 * condition with it, or be handed another lock in its place.
 *
 * Lock order: the guard first, then the status lock, then the status
 * writer's (status.h). Not recursive: a thread that holds it and takes it
 * again deadlocks.
 */
#ifndef RAYGATE_GATE_CACHEGUARD_H
#define RAYGATE_GATE_CACHEGUARD_H

struct cacheguard;

/* A guard not held. */
struct cacheguard *cacheguard_create(void);

/* Accepts NULL. Call it with the guard not held and nobody left to take it. */
void cacheguard_destroy(struct cacheguard *g);

/* Waits until the calling thread holds g. */
void cacheguard_lock(struct cacheguard *g);

/* Lets g go; the calling thread holds it. */
void cacheguard_unlock(struct cacheguard *g);

#endif
