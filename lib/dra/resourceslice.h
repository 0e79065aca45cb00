/*
 * resourceslice: a ResourceSlice (resource.k8s.io/v1) as raygate counts it:
 * its driver, pool, the nodes it serves and its devices with their
 * attributes and capacity (devsel.h). Pure.
 *
 * A slice names its node by spec.nodeName, or serves the nodes of
 * spec.nodeSelector (node selector terms, as a pod's required node affinity),
 * or spec.allNodes. Its devices are spec.devices[] (name, attributes,
 * capacity); a counter-based slice (sharedCounters) has no devices and is kept
 * empty.
 */
#ifndef RAYGATE_RESOURCESLICE_H
#define RAYGATE_RESOURCESLICE_H

#include <stddef.h>

#include <jansson.h>

#include "devsel.h"
#include "error.h"

enum resourceslice_scope {
    RESOURCESLICE_NODE = 0,  /* spec.nodeName */
    RESOURCESLICE_SELECTOR,  /* spec.nodeSelector: node_selector */
    RESOURCESLICE_ALL_NODES, /* spec.allNodes */
};

struct resourceslice_device {
    char *name;                  /* owned */
    struct devsel_device device; /* driver borrowed from the slice; attrs and capacity owned (their strings too) */
};

struct resourceslice {
    char *name;                           /* owned: metadata.name */
    char *driver;                         /* owned: spec.driver */
    char *pool;                           /* owned: spec.pool.name */
    int64_t generation;                   /* spec.pool.generation */
    int scope;                            /* enum resourceslice_scope */
    char *node;                           /* owned: spec.nodeName (RESOURCESLICE_NODE) */
    json_t *node_selector;                /* owned reference: spec.nodeSelector (RESOURCESLICE_SELECTOR), else NULL */
    struct resourceslice_device *devices; /* owned */
    size_t ndevices;
};

/*
 * Parses a ResourceSlice (obj borrowed) into out (caller storage, overwritten).
 * Returns 0, or -1 with err naming the field ("spec.devices[2].attributes.model:
 * no value"), out then empty. Attribute values: int, bool, string, version;
 * capacity: spec.devices[].capacity.NAME.value, a quantity.
 */
int resourceslice_parse(const json_t *obj, struct resourceslice *out, struct error *err);

/* Releases what s owns; s may be NULL. */
void resourceslice_finish(struct resourceslice *s);

#endif
