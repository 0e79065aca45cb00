#include "marks.h"

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
}

static size_t slot(const struct marks *m, const void *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    size_t i = (size_t)h & m->mask;
    while (m->keys[i] != NULL && m->keys[i] != key)
        i = (i + 1) & m->mask;
    return i;
}

unsigned marks_get(const struct marks *m, const void *key)
{
    size_t i = slot(m, key);
    return m->keys[i] == key ? m->bits[i] : 0;
}

void marks_set(struct marks *m, const void *key, unsigned bits)
{
    size_t i = slot(m, key);
    if (m->keys[i] == NULL) {
        m->keys[i] = key;
        m->bits[i] = 0;
    }
    m->bits[i] |= (uint8_t)bits;
}

void marks_clear(struct marks *m, const void *key, unsigned bits)
{
    size_t i = slot(m, key);
    if (m->keys[i] == key)
        m->bits[i] &= (uint8_t)~bits;
}
