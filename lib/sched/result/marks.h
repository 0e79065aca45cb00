/*
 * marks: what an admission pass found of pods and gangs, by pointer (open
 * addressing): the pass's own marks, not the cache's (cache.h). Only the live
 * pods of the gangs a pass evaluates are marked; their gang carries the union
 * of their marks, so that a gang without any costs no lookup per pod. The
 * storage is the caller's (a pass keeps it between passes). Pure.
 */
#ifndef RAYGATE_MARKS_H
#define RAYGATE_MARKS_H

#include <stddef.h>
#include <stdint.h>

enum {
    MARKS_ADMITTED = 1 << 0,  /* a pod the pass admitted */
    MARKS_TAIL = 1 << 1,      /* a pod beyond its gang's members (members.h) */
    MARKS_REPLACING = 1 << 2, /* a gated member of an admitted gang being weighed (admit.c), for the moment */
};

/* A key's bit in the filter: most keys a pass looks up are not marked, and the filter (16 KiB, in cache) says so without
   probing the slots (a cache miss each at 10,000 gangs). */
#define MARKS_FILTER_WORDS 2048

struct marks {
    const void **keys;
    uint8_t *bits;
    size_t mask;                         /* slots - 1, slots a power of two at least twice the objects that may be marked */
    uint64_t filter[MARKS_FILTER_WORDS]; /* a bit per hash of the keys marked (never cleared): none set, not marked */
};

/* How many slots marks of up to n objects need (a power of two). */
size_t marks_slots(size_t n);

/* Marks in keys (slots of them, all NULL) and bits (slots of them, any content); the filter emptied. */
void marks_init(struct marks *m, const void **keys, uint8_t *bits, size_t slots);

/* The marks on key (MARKS_*), 0 when none. */
unsigned marks_get(const struct marks *m, const void *key);

/* Adds bits to key's marks; key must not be NULL, and at most half the slots may be taken. */
void marks_set(struct marks *m, const void *key, unsigned bits);

/* Removes bits from key's marks (its slot stays taken); nothing when key has none. */
void marks_clear(struct marks *m, const void *key, unsigned bits);

#endif
