/*
 * quantity: Kubernetes resource.Quantity strings as int64 integers.
 *
 * Parsing accepts what k8s.io/apimachinery's ParseQuantity accepts:
 *   [+-] digits [. digits] suffix
 * with suffix one of n u m "" k M G T P E (decimal), Ki Mi Gi Ti Pi Ei (binary),
 * or e/E followed by a signed integer (decimal exponent). Like ParseQuantity it
 * also takes the degenerate forms "1.", ".5", "+", "-", "." and a bare suffix
 * ("Mi"), which are zero or the number they spell.
 *
 * Values are held in the units kube-scheduler uses: QUANTITY_UNIT_MILLI for cpu
 * (Quantity.MilliValue) and QUANTITY_UNIT_BASE for every other resource
 * (Quantity.Value), rounded up away from zero. Where ParseQuantity would keep an
 * arbitrary-precision value that no int64 holds, parsing fails instead.
 *
 * Formatting reproduces Quantity.String() (CanonicalizeBytes) for the value and
 * format: 3 cpu is "3", 1.5 cpu "1500m", 1536Mi stays "1536Mi", 2G stays "2G".
 */
#ifndef RAYGATE_QUANTITY_H
#define RAYGATE_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* How a quantity is rendered; sums keep the format of their first non-zero term. */
enum quantity_format {
    QUANTITY_DECIMAL_SI = 0,       /* 12M, 1500m, 3 */
    QUANTITY_BINARY_SI = 1,        /* 12Mi */
    QUANTITY_DECIMAL_EXPONENT = 2, /* 12e6 */
};

/* The integer unit of a quantity's value. */
enum quantity_unit {
    QUANTITY_UNIT_BASE = 0,  /* 1 means 1 (bytes, GPUs, ...) */
    QUANTITY_UNIT_MILLI = 1, /* 1 means 1/1000 (cpu) */
};

struct quantity {
    int64_t value; /* in the unit it was parsed with */
    enum quantity_format format;
};

/* Longest string quantity_format() writes, NUL included. */
#define QUANTITY_FORMAT_MAX 32

/*
 * Parses the NUL-terminated string s in unit. Returns 0 and fills *out, or -1
 * with err->message ("invalid quantity \"1.5.3\"", "quantity \"1e1000\" is too
 * large"). Negative quantities parse; callers reject them where they must.
 */
int quantity_parse(const char *s, enum quantity_unit unit, struct quantity *out, struct error *err);

/*
 * Writes the canonical string of q (a value in unit) into buf, of size bytes
 * (QUANTITY_FORMAT_MAX is always enough). Returns the length written.
 */
size_t quantity_format(const struct quantity *q, enum quantity_unit unit, char *buf, size_t size);

/* acc += q, taking q's format when acc is zero. Returns 0, or -1 (acc unchanged) on overflow. */
int quantity_add(struct quantity *acc, const struct quantity *q);

/* q *= factor, keeping the format. Returns 0, or -1 (q unchanged) on overflow. */
int quantity_mul(struct quantity *q, int64_t factor);

#endif
