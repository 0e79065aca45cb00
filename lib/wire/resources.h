/*
 * resources: a resource list (name -> quantity), the integer counterpart of a
 * Kubernetes ResourceList. cpu is held in milli-units, everything else in base
 * units (see quantity.h). Names are kept sorted.
 */
#ifndef RAYGATE_RESOURCES_H
#define RAYGATE_RESOURCES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "quantity.h"
#include "error.h"

struct resource {
    char *name; /* owned */
    struct quantity quantity;
};

struct resources {
    struct resource *items; /* sorted by name (strcmp) */
    size_t len;
    size_t cap;
};

/* Flags for resources_parse(). */
enum {
    RESOURCES_NONNEGATIVE = 1 << 0, /* a negative quantity is an error */
};

/* Initialises an empty list in caller-owned storage. */
void resources_init(struct resources *r);

/* Releases the list's memory; r may be NULL. The list is empty afterwards. */
void resources_finish(struct resources *r);

/* The unit kube-scheduler counts name in: milli for "cpu", base for the rest. */
enum quantity_unit resources_unit(const char *name);

/* The quantity of name, or NULL when absent. */
const struct quantity *resources_get(const struct resources *r, const char *name);

/* Sets name to q, inserting it if absent. */
void resources_set(struct resources *r, const char *name, const struct quantity *q);

/* Replaces dst's contents with a copy of src. */
void resources_copy(struct resources *dst, const struct resources *src);

/*
 * dst += src * factor, per resource (factor 1 for a plain sum). Returns 0, or -1
 * with err naming the resource on overflow (dst is then partly updated).
 */
int resources_add_scaled(struct resources *dst, const struct resources *src, int64_t factor, struct error *err);

/* dst[name] = max(dst[name], src[name]) for every name in either; ties keep dst's format. */
void resources_max(struct resources *dst, const struct resources *src);

/*
 * Parses a ResourceList JSON object (borrowed; NULL or JSON null is empty) into
 * out, which must be initialised and is cleared first. Values are strings or
 * integers, as the apiserver accepts them. path names the object in messages,
 * e.g. "spec.containers[0].resources.requests"; an error reads
 * "spec.containers[0].resources.requests.cpu: invalid quantity \"1.5.3\"".
 * Returns 0, or -1 with err.
 */
int resources_parse(struct resources *out, const json_t *obj, const char *path, unsigned flags, struct error *err);

/* Returns a new JSON object of canonical quantity strings, keys sorted. */
json_t *resources_to_json(const struct resources *r);

/* Returns r as compact JSON with sorted keys, e.g. {"cpu":"3","memory":"4Gi"}; caller frees. */
char *resources_to_string(const struct resources *r);

struct util_buf;

/* Appends value of resource in format (enum quantity_format) to b, as a quantity ("3", "4Gi"); negative as 0. */
void resources_put_quantity(struct util_buf *b, const char *resource, int64_t value, uint8_t format);

#endif
