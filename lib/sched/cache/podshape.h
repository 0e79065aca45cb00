/*
 * podshape: what the gate controller builds of a pod watch event: every
 * change of every pod comes through the watch, and most of a KubeRay pod is
 * what the cache never reads (its metadata.managedFields, its containers'
 * env, image, probes), so building whole pods would make the watch's parse
 * grow with what is thrown away (docs/design.md, "Pacing").
 *
 * A jsonscan_shape_fn (jsonscan.h) for the watch stream (kube_watch_spec's
 * shape, PODSHAPE_EVENT): the event's type and object; of the object,
 * everything but metadata.managedFields, spec.volumes, of each container and
 * init container all but name, resources and restartPolicy, and of its
 * status all but the containers' statuses. What the cache reads of a pod
 * (model.c: labels, annotations, times, nodeName, gates, priority, overhead,
 * node selection, tolerations, claims, phase, conditions) is kept whole.
 * Pure.
 */
#ifndef RAYGATE_PODSHAPE_H
#define RAYGATE_PODSHAPE_H

#include "jsonscan.h"

/* The shape of a watch event {"type": ..., "object": pod}. */
#define PODSHAPE_EVENT 1

int podshape_fn(int shape, const struct jsonscan *s, long key);

#endif
