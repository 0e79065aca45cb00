/*
 * devsel: the CEL device selectors of DeviceClasses and claim requests
 * (resource.k8s.io/v1 `selectors[].cel.expression`), evaluated in the subset
 * that real classes use, against a device of a ResourceSlice.
 *
 * The subset: the operands `device.driver`, `device.attributes["DOMAIN"].ID`
 * (also `device.attributes["DOMAIN"]["ID"]`), `device.capacity["DOMAIN"].ID`
 * with `.compareTo(quantity("40Gi"))`, string ('..' or ".."), integer and bool
 * literals, `semver("1.2.3")`; the operators == != < <= > >=, &&, ||, ! and
 * parentheses; the methods compareTo, isGreaterThan and isLessThan of
 * quantities and versions; presence `"ID" in device.attributes["DOMAIN"]` (or
 * capacity) and membership in a list of literals `x in ["a", "b"]`.
 * `"DOMAIN" in device.attributes` is not in it.
 * An attribute is looked up as the slice names it: "DOMAIN/ID", or a bare
 * "ID" when DOMAIN is the device's driver. A comparison whose attribute is
 * missing, or whose kinds differ, is false (kube-scheduler reports a CEL
 * error and does not take the device: the same for a count).
 *
 * An expression beyond the subset still compiles: it is not exact, and
 * matches every device of the driver that a top-level `device.driver == "x"`
 * conjunct names (every device when none): devsel_unevaluated() says what was
 * not evaluated, for the log and `kubectl raygate why`.
 *
 * Pure: no I/O. A compiled selector is immutable, and may be shared read-only.
 */
#ifndef RAYGATE_DEVSEL_H
#define RAYGATE_DEVSEL_H

#include <stddef.h>
#include <stdint.h>

enum devsel_kind {
    DEVSEL_NONE = 0, /* absent */
    DEVSEL_INT,      /* int: i */
    DEVSEL_BOOL,     /* bool: i is 0 or 1 */
    DEVSEL_STRING,   /* string: s */
    DEVSEL_VERSION,  /* version (semver text): s */
    DEVSEL_QUANTITY, /* a capacity: i in base units (milli for a fractional one is not kept: rounded up) */
};

struct devsel_value {
    uint8_t kind; /* enum devsel_kind */
    int64_t i;
    const char *s; /* borrowed */
};

/* One attribute or capacity of a device, named as the slice names it ("gpu.example.com/model" or "model"). */
struct devsel_attr {
    const char *name; /* borrowed */
    struct devsel_value value;
};

/* A device as selectors see it (borrowed strings and arrays). */
struct devsel_device {
    const char *driver;
    const struct devsel_attr *attrs;
    size_t nattrs;
    const struct devsel_attr *capacity;
    size_t ncapacity;
};

struct devsel;

/* Compiles expr (borrowed). Never NULL: an expression beyond the subset (or that does not parse) is not exact. */
struct devsel *devsel_compile(const char *expr);

/* Frees s; s may be NULL. */
void devsel_free(struct devsel *s);

/* 1 when the whole expression lies within the evaluated subset. */
int devsel_exact(const struct devsel *s);

/* The driver a top-level `device.driver == "x"` conjunct requires (s's), or NULL. */
const char *devsel_driver(const struct devsel *s);

/* What was not evaluated, e.g. `device.attributes["x"].model.matches("^a1"): a method call not evaluated`; NULL when exact. */
const char *devsel_unevaluated(const struct devsel *s);

/* 1 when d matches s (an inexact s: its driver conjunct alone), else 0. */
int devsel_match(const struct devsel *s, const struct devsel_device *d);

#endif
