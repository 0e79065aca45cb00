/*
 * fitsort: pods larger first, the order in which the node fit places them
 * (fit.h: fit_sort_larger_first). Extended resources (GPUs) dominate, then
 * cpu, then memory; ephemeral storage and huge pages do not weigh. Equal
 * pods in creation order, then by namespace and name; or (stable) in the
 * order given, which costs no string compare: the reservations of a flood's
 * thousands of admitted pods not bound yet, most of a few shapes, are sorted
 * in every pass (docs/design.md, "Pacing"), and among pods of one shape every
 * compare would fall through to the names. Many pods of at most 16
 * shapes, stable, are not compared at all: each shape weighed once, the
 * pods dealt into their weights' buckets in the order given.
 *
 * A struct fitsort keeps its buffer and what it knows of each resource id
 * across passes. Pure.
 */
#ifndef RAYGATE_FITSORT_H
#define RAYGATE_FITSORT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"

struct fitsort {
    const struct cache *c;
    uint32_t cpu, memory; /* resource ids, or UINT32_MAX */
    uint8_t rclass[256];  /* per resource id below 256: 0 not known yet, 1 weighs as extended, 2 does not */
    void *buf;            /* the weights (util_scratch) */
    size_t cap;
};

/* Before a pass: the cache and the ids of cpu and memory (the fit's). s starts zeroed. */
void fitsort_set(struct fitsort *s, const struct cache *c, uint32_t cpu, uint32_t memory);

/* Sorts pods[0..n) larger first; equals by creation (stable 0) or in the order given (stable 1). */
void fitsort_larger_first(struct fitsort *s, struct cache_pod **pods, size_t n, int stable);

/* Frees s's buffer. */
void fitsort_finish(struct fitsort *s);

#endif
