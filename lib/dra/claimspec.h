/*
 * claimspec: what a ResourceClaim's spec (or a ResourceClaimTemplate's
 * spec.spec) asks for, as raygate counts it: per request, a device class, a
 * count and the request's own selectors. Pure.
 *
 * spec.devices.requests[]:
 *   - `exactly`: deviceClassName, allocationMode (ExactCount, the default, with
 *     count, default 1; or All), selectors[].cel.expression;
 *   - `firstAvailable[]`: subrequests in the order kube-scheduler tries them;
 *     raygate counts the first (the preferred one) and says so
 *     (CLAIMSPEC_FIRST_AVAILABLE). A gang that fits only with a later
 *     alternative waits.
 * allocationMode All takes every matching device of a node: it cannot be
 * sized before allocation, so the request is marked CLAIMSPEC_ALL and the
 * gang waits, naming the field (a user of Kueue meets the same refusal).
 * Constraints (matchAttribute) and config are not counted.
 */
#ifndef RAYGATE_CLAIMSPEC_H
#define RAYGATE_CLAIMSPEC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "devsel.h"
#include "error.h"

enum {
    CLAIMSPEC_FIRST_AVAILABLE = 1 << 0, /* a firstAvailable request: the first subrequest is counted */
    CLAIMSPEC_ALL = 1 << 1,             /* allocationMode All: not sized */
};

struct claimspec_request {
    char *name;         /* owned: requests[].name (for firstAvailable: "req/subreq") */
    char *device_class; /* owned: deviceClassName */
    int64_t count;      /* devices asked; 0 with CLAIMSPEC_ALL */
    unsigned flags;
    struct devsel **sel; /* owned: the request's own selectors */
    char **exprs;        /* owned: their CEL texts, nsel of them (a variant's key: draset.h) */
    size_t nsel;
    char path[96]; /* the field, e.g. "spec.devices.requests[0].exactly", for messages */
};

struct claimspec {
    struct claimspec_request *requests; /* owned */
    size_t nrequests;
};

/*
 * Parses a claim spec (spec borrowed: a ResourceClaim's `spec`, or a
 * ResourceClaimTemplate's `spec.spec`) into out (caller storage, overwritten);
 * path prefixes fields in messages ("spec" or "spec.spec"). Returns 0, or -1
 * with err naming the field ("spec.spec.devices.requests[0].exactly.count: must
 * be at least 1"), out then empty.
 */
int claimspec_parse(const json_t *spec, const char *path, struct claimspec *out, struct error *err);

/* Releases what cs owns; cs may be NULL. */
void claimspec_finish(struct claimspec *cs);

/* 1 when d satisfies the request's own selectors (the class's are checked apart: deviceclass_match). */
int claimspec_request_match(const struct claimspec_request *r, const struct devsel_device *d);

#endif
