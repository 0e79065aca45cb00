/*
 * notify: the dispatcher's Events (lib/wire/events.h builds them), posted one
 * at a time on the manager: the dispatcher posts a few per object and state
 * change, never per pod. A failure is logged, never fatal.
 */
#ifndef RAYGATE_DISPATCH_NOTIFY_H
#define RAYGATE_DISPATCH_NOTIFY_H

#include "events.h"
#include "kube.h"

/* The instance that reports the dispatcher's Events (the Event's reportingInstance and source). */
#define DISPATCHNOTIFY_INSTANCE "raygate-dispatch"

/* Posts an Event about obj (type "Normal" or "Warning") on the manager k. Returns 0, or -1 (logged). */
int dispatchnotify_event(struct kube_client *k, const struct events_object *obj, const char *type, const char *reason,
                         const char *message, const char *now);

#endif
