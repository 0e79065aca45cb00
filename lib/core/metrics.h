/*
 * metrics: a small Prometheus registry (counters, gauges, histograms with
 * labels) rendered to the text exposition format 0.0.4.
 *
 * Pure: no I/O. Shared by the webhook and the gate controller; the program
 * owns one registry, creates its families once at start, updates them from
 * any thread (a registry has one mutex) and renders it for GET /metrics.
 *
 * Families are rendered in creation order, series of a family in the order
 * their label values were first seen. Label values are escaped on output.
 */
#ifndef RAYGATE_METRICS_H
#define RAYGATE_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct metrics_registry;
struct metrics_family;

/* Creates an empty registry. Out of memory aborts. */
struct metrics_registry *metrics_registry_create(void);

/* Frees the registry and all its families. Accepts NULL. */
void metrics_registry_destroy(struct metrics_registry *reg);

/*
 * Creates a family owned by reg (freed with it). name and label names must
 * match Prometheus' grammar ([a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*,
 * no label starting with "__"); names must be unique in reg; help is one line.
 * label_names holds nlabels strings (NULL when nlabels is 0); all strings are copied.
 * Returns the family (borrowed: valid until the registry is destroyed), or NULL
 * when a name is invalid or already used.
 */
struct metrics_family *metrics_counter_create(struct metrics_registry *reg, const char *name, const char *help, size_t nlabels,
                                              const char *const *label_names);
struct metrics_family *metrics_gauge_create(struct metrics_registry *reg, const char *name, const char *help, size_t nlabels,
                                            const char *const *label_names);

/*
 * Like the above for a histogram with nbounds finite, strictly increasing upper
 * bounds (the +Inf bucket is implicit). "le" is not allowed as a label name.
 */
struct metrics_family *metrics_histogram_create(struct metrics_registry *reg, const char *name, const char *help, size_t nlabels,
                                                const char *const *label_names, const double *bounds, size_t nbounds);

/*
 * Updates the series with the given label values (the family's nlabels strings,
 * in label order; NULL when it has none), creating it on first use.
 * Returns 0, or -1 if fam is NULL, of another type, or a label value is NULL.
 */
int metrics_counter_add(struct metrics_family *fam, const char *const *label_values, uint64_t n);
int metrics_gauge_set(struct metrics_family *fam, const char *const *label_values, double value);
int metrics_gauge_add(struct metrics_family *fam, const char *const *label_values, double delta);
int metrics_histogram_observe(struct metrics_family *fam, const char *const *label_values, double value);

/*
 * Removes the series whose label values match label_values (the family's
 * nlabels strings, in label order; a NULL entry matches any value; NULL
 * matches every series), so that what no longer exists (a deleted queue) is
 * no longer exported. Returns the number of series removed, or -1 if fam is
 * NULL.
 */
int metrics_remove(struct metrics_family *fam, const char *const *label_values);

/*
 * Renders every family as Prometheus text (# HELP, # TYPE and samples; a
 * histogram has _bucket{le=...} cumulative counts, _sum and _count).
 * Returns a new NUL-terminated string (caller frees) and sets *len if len is
 * not NULL. A family with no series yet renders only its HELP and TYPE lines.
 */
char *metrics_render(struct metrics_registry *reg, size_t *len);

/* The Content-Type to serve metrics_render()'s output with. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
