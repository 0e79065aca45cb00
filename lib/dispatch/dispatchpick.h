/*
 * dispatchpick: the one worker a gang is dispatched to, from the verdicts of
 * the workers its Queue names (dispatchsim.h), and the text shown when none
 * fits.
 *
 * A manager Queue names the workers it may use in raygate.io/dispatch-to,
 * comma-separated, in order of preference ("gpu-east, gpu-west"). Among the
 * reachable workers whose verdict fits, the least stranded wins; ties go to
 * the one named first. Unreachable workers are skipped.
 *
 * Pure: no I/O, no threads, no clock.
 */
#ifndef RAYGATE_DISPATCHPICK_H
#define RAYGATE_DISPATCHPICK_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dispatchsim.h"
#include "error.h"
#include "names.h"

/* No worker: none fits, or none is given. */
#define DISPATCH_NO_WORKER SIZE_MAX

/* A Queue's raygate.io/dispatch-to, parsed. */
struct dispatch_to {
    char **names; /* owned, in the annotation's order, trimmed, distinct, non-empty */
    size_t n;
};

/* Initialises an empty list in caller-owned storage. */
void dispatch_pick_to_init(struct dispatch_to *to);

/* Releases the names; to may be NULL. */
void dispatch_pick_to_finish(struct dispatch_to *to);

/*
 * Parses the annotation's value (borrowed; NULL: absent) into out, which must
 * be initialised and is overwritten. Each comma-separated entry is trimmed of
 * blanks. Returns 0 (NULL gives an empty list: the Queue does not dispatch),
 * or -1 with err naming the annotation ("raygate.io/dispatch-to: empty entry
 * 2", "raygate.io/dispatch-to: \"gpu-east\" named twice") when an entry is
 * empty or repeated; out is then empty.
 */
int dispatch_pick_to_parse(const char *value, struct dispatch_to *out, struct error *err);

/* The index of name in to, or DISPATCH_NO_WORKER. */
size_t dispatch_pick_to_index(const struct dispatch_to *to, const char *name);

/* One worker named in dispatch-to, as the dispatcher sees it now. Strings and verdict borrowed. */
struct dispatch_candidate {
    const char *name;
    int up;                                 /* reachable, its view current: verdict is set */
    const char *error;                      /* !up: why (the last error talking to it) */
    const struct dispatch_verdict *verdict; /* up: the gang's verdict on it */
};

/*
 * The index of the worker to dispatch to among cand[0..n) (in dispatch-to
 * order), or DISPATCH_NO_WORKER when no reachable worker fits.
 */
size_t dispatch_pick(const struct dispatch_candidate *cand, size_t n);

/*
 * Why none fits, one clause per worker in order, joined by "; ":
 * "gpu-east: <its verdict's message>; gpu-west: unreachable: <error>"
 * (a fitting worker: "gpu-east: fits"). New string (caller frees); "" when n
 * is 0.
 */
char *dispatch_pick_why(const struct dispatch_candidate *cand, size_t n);

/*
 * The same, as the value of raygate.io/dispatch-reasons: a new JSON object
 * {"gpu-east": "<message>", "gpu-west": "unreachable: <error>"}, a fitting
 * worker as "fits".
 */
json_t *dispatch_pick_reasons(const struct dispatch_candidate *cand, size_t n);

#endif
