/*
 * members: which of a gang's pods are its members, the pods its minMember
 * counts (gang.h): the head and, per worker group, as many pods as minMember
 * counts for it, told apart by their ray.io/node-type and ray.io/group labels.
 * The others are its tail: pods an autoscaler added beyond minMember. Pure.
 */
#ifndef RAYGATE_MEMBERS_H
#define RAYGATE_MEMBERS_H

#include <stddef.h>

#include "cache.h"

enum {
    MEMBERS_ROLE_EXTRA = -1,   /* a worker of a group the shape counts no pods of (minReplicas 0, suspended) */
    MEMBERS_ROLE_UNKNOWN = -2, /* a pod its labels do not place */
};

/* A pod's place in g's shape: 0 the head, 1 + i worker group i (g->groups[i]), else MEMBERS_ROLE_*. */
int members_role(const struct cache_gang *g, const struct cache_pod *pod);

/*
 * Puts the members of gang g first in live[0..nlive) (live is in creation order,
 * and each part stays so) and returns how many there are. The members are the
 * head and, per worker group, as many of its pods as minMember counts for it
 * (gang.h), told apart by their ray.io/node-type and ray.io/group labels;
 * never merely the first pods created: KubeRay creates them in the same
 * second, and a worker whose name sorts before the head's must not take the
 * head's place. Ungated pods are taken first (an admitted gang keeps the
 * members it has), then gated ones. Pods the labels do not place fill the
 * slots left.
 */
size_t members_order(const struct cache_gang *g, struct cache_pod **live, size_t nlive);

/* admit_gang_members() (admit.h), which see: a new array of g's live pods, members first; returns how many lead. */
size_t members_of(const struct cache_gang *g, struct cache_pod ***out);

#endif
