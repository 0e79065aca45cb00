/*
 * dispatched: what `kubectl raygate gangs` and `why` show on a manager
 * cluster (docs/dispatch.md), from what the dispatcher wrote on the gang's
 * owner: raygate.io/dispatched-to (where it runs), raygate.io/dispatched-at,
 * raygate.io/dispatch-reasons (why no worker fits, {"worker": "message"}),
 * and its PodGroup's Dispatched condition. Pure, on borrowed JSON.
 */
#ifndef RAYGATE_DISPATCHED_H
#define RAYGATE_DISPATCHED_H

#include <jansson.h>

/*
 * For a gang the dispatcher handles (owner says dispatched-to or
 * dispatch-reasons, or pg has a Dispatched condition), sets row's "worker"
 * (the worker it runs on, or null), "dispatch" ({"at", "reasons", "message"}), its
 * state ("Dispatched" while it runs on a worker, "Waiting" while none fits)
 * and "waitingFor" ("worker gpu-east", "no worker fits: gpu-east: ...").
 * Returns 1 when the gang is dispatched or waits for a worker, else 0.
 */
int dispatched_row(json_t *row, const json_t *owner, const json_t *pg);

/* Appends to lines (a JSON array of strings) what `why` says of a dispatched row; returns 0 (nothing said) for others. */
int dispatched_explain(json_t *lines, const json_t *row);

#endif
