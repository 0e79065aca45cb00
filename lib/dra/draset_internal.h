/*
 * draset_internal: the draset's storage, shared by draset.c (the objects and
 * the demand of claims) and ledger.c (the nodes' devices). Nothing else
 * includes it.
 */
#ifndef RAYGATE_DRASET_INTERNAL_H
#define RAYGATE_DRASET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "claimspec.h"
#include "deviceclass.h"
#include "draset.h"
#include "dravariant.h"
#include "resourceslice.h"
#include "table.h"

/* At most this many device resources (a device's resources are a bit set). */
#define DRASET_MAX_RESOURCES 64

/* Devices published and held, per device resource (nres of each). */
struct draset_counts {
    int64_t *total;
    int64_t *held;
    size_t n;
};

/* A device a claim took (+1) or gave back (-1), for the ledger to apply. */
struct draset_move {
    char *key;
    int sign;
};

/* One recorded object of any kind, keyed by (kind, namespace, name). */
struct draset_object {
    struct table_node by_key;
    uint8_t kind; /* enum draset_kind */
    uint8_t valid;
    char *ns;                    /* owned; "" for cluster-scoped */
    char *name;                  /* owned */
    char *error;                 /* owned: why it does not parse, or NULL */
    struct deviceclass cls;      /* DRASET_CLASS */
    int resource;                /* DRASET_CLASS: its resource's number */
    struct resourceslice slice;  /* DRASET_SLICE */
    struct draset_counts counts; /* DRASET_SLICE serving several nodes: its devices */
    struct claimspec spec;       /* DRASET_CLAIM, DRASET_TEMPLATE */
    char **alloc;                /* DRASET_CLAIM: owned keys of the devices status.allocation holds */
    size_t nalloc;
    uint8_t allocated; /* DRASET_CLAIM: status.allocation is set */
    uint8_t generated; /* DRASET_CLAIM: made from a pod's template (DRASET_POD_CLAIM_ANNOTATION), as last seen */
};

/* A device of a counted slice. */
struct draset_device {
    struct table_node by_key;
    char *key;                    /* owned: driver, pool, device joined by '\x1f' */
    uint64_t resources;           /* bit r: a class of resource r selects it */
    struct draset_counts *counts; /* its node's, or its slice's when it serves several nodes */
    uint32_t held;                /* claims that hold it */
};

/* A node's devices. */
struct draset_node {
    struct table_node by_name;
    char *name; /* owned */
    struct draset_counts counts;
};

struct draset {
    struct table objects;        /* struct draset_object */
    struct dravariants variants; /* requests' own selectors as device resources (dravariant.h) */
    char **resources;            /* owned names, by number */
    size_t nresources;
    uint64_t demand_gen;
    char *inexact; /* owned: draset_inexact() */
    /* The ledger (ledger.c). */
    int ledger_stale;
    uint64_t ledger_gen;
    struct table devices;          /* struct draset_device */
    struct table nodes;            /* struct draset_node */
    struct draset_object **shared; /* slices serving several nodes (borrowed from objects) */
    size_t nshared;
    /* Claims' allocations since the last ledger_prepare(), while the ledger is not stale: device keys (owned),
       each taken (-1) or held (+1), applied in order by ledger_prepare(). */
    struct draset_move *journal;
    size_t njournal, capjournal;
};

/* The device key of driver, pool, device (new string). */
char *draset_device_key(const char *driver, const char *pool, const char *device);

/* The object of kind ns/name, or NULL. */
struct draset_object *draset_find(const struct draset *s, int kind, const char *ns, const char *name);

/* Frees the ledger's devices, nodes and journal (ledger_prepare before a rebuild; draset_destroy). */
void draset_ledger_clear(struct draset *s);

#endif
