#include "table.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

uint64_t table_hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t table_hash_str(uint64_t h, const char *s)
{
    return table_hash_bytes(h, s, strlen(s) + 1);
}

void table_init(struct table *t)
{
    t->nbuckets = 16;
    t->buckets = util_calloc(t->nbuckets, sizeof(*t->buckets));
    t->len = 0;
}

void table_finish(struct table *t)
{
    free(t->buckets);
    t->buckets = NULL;
    t->nbuckets = t->len = 0;
}

struct table_node *table_first(const struct table *t, uint64_t hash)
{
    return t->buckets[hash & (t->nbuckets - 1)];
}

struct table_node *table_find(const struct table *t, uint64_t hash, int (*same)(const struct table_node *n, const void *key),
                              const void *key)
{
    for (struct table_node *n = table_first(t, hash); n != NULL; n = n->next) {
        if (n->hash == hash && same(n, key))
            return n;
    }
    return NULL;
}

static void grow(struct table *t)
{
    size_t nb = t->nbuckets * 2;
    struct table_node **b = util_calloc(nb, sizeof(*b));
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct table_node *e = t->buckets[i], *next;
        for (; e != NULL; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = nb;
}

void table_insert(struct table *t, struct table_node *n)
{
    if (t->len >= t->nbuckets)
        grow(t);
    struct table_node **head = &t->buckets[n->hash & (t->nbuckets - 1)];
    n->next = *head;
    *head = n;
    t->len++;
}

struct table_node *table_next(const struct table *t, const struct table_node *n)
{
    if (n != NULL && n->next != NULL)
        return n->next;
    for (size_t i = n != NULL ? (n->hash & (t->nbuckets - 1)) + 1 : 0; i < t->nbuckets; i++) {
        if (t->buckets[i] != NULL)
            return t->buckets[i];
    }
    return NULL;
}

void table_remove(struct table *t, struct table_node *n)
{
    struct table_node **pp = &t->buckets[n->hash & (t->nbuckets - 1)];
    while (*pp != NULL && *pp != n)
        pp = &(*pp)->next;
    if (*pp == n) {
        *pp = n->next;
        t->len--;
    }
}

/* An interned string: refcounted, its text right after its link. */
struct atom {
    struct table_node node;
    uint32_t refs;
    char s[];
};

static int atom_is(const struct table_node *n, const void *s)
{
    return strcmp(TABLE_CONTAINER_OF(n, struct atom, node)->s, s) == 0;
}

const char *table_intern(struct table *strings, const char *s)
{
    if (s == NULL)
        return NULL;
    uint64_t h = table_hash_str(TABLE_HASH_SEED, s);
    struct table_node *n = table_find(strings, h, atom_is, s);
    if (n != NULL) {
        struct atom *a = TABLE_CONTAINER_OF(n, struct atom, node);
        a->refs++;
        return a->s;
    }
    size_t len = strlen(s);
    struct atom *a = util_malloc(sizeof(*a) + len + 1);
    memcpy(a->s, s, len + 1);
    a->refs = 1;
    a->node.hash = h;
    table_insert(strings, &a->node);
    return a->s;
}

void table_release(struct table *strings, const char *s)
{
    if (s == NULL)
        return;
    struct atom *a = TABLE_CONTAINER_OF(s, struct atom, s);
    if (--a->refs == 0) {
        table_remove(strings, &a->node);
        free(a);
    }
}
