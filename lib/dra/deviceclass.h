/*
 * deviceclass: a DeviceClass (resource.k8s.io/v1) as raygate counts it: its
 * selectors (devsel.h) and the queue resource its devices count as:
 *   1. spec.extendedResourceName, when set (Kubernetes' own mapping, KEP-5004);
 *   2. else the annotation raygate.io/quota-resource;
 *   3. else Kubernetes' implicit name "deviceclass.resource.kubernetes.io/<class>".
 * That resource then counts as nvidia.com/gpu counts: in capability,
 * guarantee, deserved, the tree, minResources and the nodes' room. Pure.
 */
#ifndef RAYGATE_DEVICECLASS_H
#define RAYGATE_DEVICECLASS_H

#include <stddef.h>

#include <jansson.h>

#include "devsel.h"
#include "error.h"

#define DEVICECLASS_QUOTA_ANNOTATION "raygate.io/quota-resource"
#define DEVICECLASS_IMPLICIT_PREFIX "deviceclass.resource.kubernetes.io/"

struct deviceclass {
    char *name;          /* owned: metadata.name */
    char *resource;      /* owned: the queue resource (above) */
    struct devsel **sel; /* owned: spec.selectors[].cel.expression, compiled */
    size_t nsel;
};

/*
 * Parses a DeviceClass (obj borrowed) into out (caller storage, overwritten).
 * Returns 0, or -1 with err naming the field ("spec.selectors[1].cel.expression:
 * must be a string"; "metadata.annotations.raygate.io/quota-resource: \"x y\" is
 * not a resource name"), out then empty.
 */
int deviceclass_parse(const json_t *obj, struct deviceclass *out, struct error *err);

/* Releases what dc owns; dc may be NULL. */
void deviceclass_finish(struct deviceclass *dc);

/* 1 when every selector is exact (devsel_exact). */
int deviceclass_exact(const struct deviceclass *dc);

/* The first selector's devsel_unevaluated(), or NULL when exact. */
const char *deviceclass_unevaluated(const struct deviceclass *dc);

/* 1 when d matches every selector of dc (a class without selectors matches every device). */
int deviceclass_match(const struct deviceclass *dc, const struct devsel_device *d);

#endif
