/*
 * prioclass: the cluster's PriorityClasses (scheduling.k8s.io/v1), name to
 * value, as the gate's watch shows them, and the cache's use of them. A
 * held RayCluster's declared pods (declare.h) have no spec.priority (the
 * apiserver resolves a pod's priority at its creation, and they are made in
 * the cache only): their gang's priority is its class's value, the class the
 * webhook writes into every template from the RayCluster's
 * ray.io/priority-class-name label (mutate.h), or the global default
 * class's, as the apiserver would resolve it. Pure.
 */
#ifndef RAYGATE_PRIOCLASS_H
#define RAYGATE_PRIOCLASS_H

#include <jansson.h>
#include <stdint.h>

#include "cache.h"

struct prioclasses;

struct prioclasses *prioclass_set_create(void);
void prioclass_set_destroy(struct prioclasses *s);

/*
 * A watch event of a PriorityClass (obj borrowed; deleted 1 for DELETED).
 * Returns 1 when what a name resolves to changed (a class added, removed,
 * its value or the global default changed), else 0.
 */
int prioclass_set_record(struct prioclasses *s, int deleted, const json_t *obj);

/*
 * The value of class name (NULL or "": the global default class's, if one is
 * marked globalDefault); 0 for a class not known (the apiserver refuses a pod
 * that names one) and without a global default.
 */
int32_t prioclass_set_value(const struct prioclasses *s, const char *name);

/* The cache resolves priorities by s (borrowed, NULL: every declared pod's is 0; it must outlive its use). */
void prioclass_use(struct cache *c, struct prioclasses *s);

/* prioclass_set_record() into the cache's set; a change marks every queue dirty (a gang's order may change). */
void prioclass_record(struct cache *c, int deleted, const json_t *obj);

/* prioclass_set_value() of the cache's set; 0 without one. */
int32_t prioclass_value(const struct cache *c, const char *name);

#endif
