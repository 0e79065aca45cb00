/*
 * hyperwatch: Volcano's HyperNodes (topology.volcano.sh/v1alpha1,
 * lib/sched/place/hypernode.h) as the gate sees them. watches.h feeds it every
 * HyperNode watch event under the controller's lock; it keeps the set the
 * admission pass resolves Volcano-style topology constraints against
 * (admit_set_hypernodes), and says once per change of an object's spec
 * (metadata.generation) that it is invalid: a log line at once, and a Warning Event InvalidHyperNode on the
 * HyperNode (message: the field and what is wrong), which the controller
 * posts after its next pass. An invalid HyperNode is ignored, never fatal.
 *
 * Threads: every function runs under the controller's lock.
 */
#ifndef RAYGATE_GATE_HYPERWATCH_H
#define RAYGATE_GATE_HYPERWATCH_H

#include <stddef.h>

#include <jansson.h>

#include "eventpost.h"
#include "hypernode.h"
#include "kube.h"

#define HYPERWATCH_API "/apis/topology.volcano.sh/v1alpha1"
#define HYPERWATCH_API_VERSION "topology.volcano.sh/v1alpha1"
#define HYPERWATCH_REASON_INVALID "InvalidHyperNode"

struct hyperwatch;

struct hyperwatch *hyperwatch_create(void);

/* Frees hw and its set; accepts NULL. Nothing may use the set afterwards (admit_set_hypernodes(a, NULL) first, or destroy a). */
void hyperwatch_destroy(struct hyperwatch *hw);

/* The HyperNodes (borrowed: hw's, valid until hyperwatch_destroy). */
const struct hypernodes *hyperwatch_set(const struct hyperwatch *hw);

/* A watch event ADDED, MODIFIED or DELETED (object borrowed) into the set. */
void hyperwatch_record(struct hyperwatch *hw, enum kube_watch_event ev, const json_t *object);

/*
 * Moves the InvalidHyperNode Events found since the last call into l, stamped
 * now and reported by instance (both copied). Returns how many.
 */
size_t hyperwatch_take_events(struct hyperwatch *hw, struct eventpost_list *l, const char *now, const char *instance);

#endif
