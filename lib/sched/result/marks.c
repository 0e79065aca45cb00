#include "marks.h"

#include <string.h>

size_t marks_slots(size_t n)
{
    size_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    return slots;
}

void marks_init(struct marks *m, const void **keys, uint8_t *bits, size_t slots)
{
    m->keys = keys;
    m->bits = bits;
    m->mask = slots - 1;
    memset(m->filter, 0, sizeof(m->filter));
}

static uint64_t hash(const void *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* The filter's word and bit of hash h: its high bits, the slots take the low ones. */
static size_t filter_word(uint64_t h)
{
    return (size_t)(h >> 40) % MARKS_FILTER_WORDS;
}

static uint64_t filter_bit(uint64_t h)
{
    return 1ULL << ((h >> 34) & 63);
}

/* The slot of key (hash h): its own, or the empty one where it would go. */
static size_t slot(const struct marks *m, const void *key, uint64_t h)
{
    size_t i = (size_t)h & m->mask;
    while (m->keys[i] != NULL && m->keys[i] != key)
        i = (i + 1) & m->mask;
    return i;
}

unsigned marks_get(const struct marks *m, const void *key)
{
    uint64_t h = hash(key);
    if (!(m->filter[filter_word(h)] & filter_bit(h)))
        return 0;
    size_t i = slot(m, key, h);
    return m->keys[i] == key ? m->bits[i] : 0;
}

void marks_set(struct marks *m, const void *key, unsigned bits)
{
    uint64_t h = hash(key);
    m->filter[filter_word(h)] |= filter_bit(h);
    size_t i = slot(m, key, h);
    if (m->keys[i] == NULL) {
        m->keys[i] = key;
        m->bits[i] = 0;
    }
    m->bits[i] |= (uint8_t)bits;
}

void marks_clear(struct marks *m, const void *key, unsigned bits)
{
    size_t i = slot(m, key, hash(key));
    if (m->keys[i] == key)
        m->bits[i] &= (uint8_t)~bits;
}
