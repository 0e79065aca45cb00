/*
 * table: an intrusive hash table, FNV-1a hashing, and interned strings.
 *
 * The table does not own its entries: a struct embeds a struct table_node,
 * sets node.hash, and the table links it by that hash; table_find() looks an
 * entry up by its hash and a comparison of the caller's key with what the
 * entry stored (TABLE_CONTAINER_OF finds the struct from its node). Growing
 * keeps every entry where it is.
 *
 * Interned strings (table_intern) are reference counted and compared by
 * pointer: two equal strings interned in one table are one pointer.
 */
#ifndef RAYGATE_TABLE_H
#define RAYGATE_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* The struct of type that holds member at ptr. */
#define TABLE_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* The FNV-1a offset basis: the hash of nothing, where hashing starts. */
#define TABLE_HASH_SEED 0xcbf29ce484222325ULL

/* A table's link, embedded in its entries. */
struct table_node {
    struct table_node *next;
    uint64_t hash; /* set by the entry's owner before table_insert() */
};

struct table {
    struct table_node **buckets; /* a power of two of them */
    size_t nbuckets;
    size_t len;
};

/* FNV-1a of n bytes at data, continued from h (TABLE_HASH_SEED to start). */
uint64_t table_hash_bytes(uint64_t h, const void *data, size_t n);

/* FNV-1a of s with its NUL, continued from h: "a" then "bc" hashes apart from "ab" then "c". */
uint64_t table_hash_str(uint64_t h, const char *s);

/* An empty table (the caller owns t's storage); table_finish() frees its buckets, not its entries. */
void table_init(struct table *t);
void table_finish(struct table *t);

/* The first entry whose hash shares hash's bucket (follow ->next; compare ->hash and the key), or NULL. */
struct table_node *table_first(const struct table *t, uint64_t hash);

/*
 * The first entry of t whose hash is hash and for which same(n, key) is
 * nonzero, or NULL. key is the caller's (a name, a struct of several parts),
 * passed to same as is; same is called only on entries of that very hash.
 */
struct table_node *table_find(const struct table *t, uint64_t hash, int (*same)(const struct table_node *n, const void *key),
                              const void *key);

/* Links n (n->hash set) into t; doubles the buckets once t holds as many entries. */
void table_insert(struct table *t, struct table_node *n);

/* Unlinks n from t; an n not in t is left alone. */
void table_remove(struct table *t, struct table_node *n);

/* The entry after n (NULL: the first), bucket by bucket; NULL after the last. t must not change meanwhile. */
struct table_node *table_next(const struct table *t, const struct table_node *n);

/*
 * The interned copy of s in strings (a table only table_intern fills), with one
 * more reference; NULL for NULL. Each call is matched by a table_release().
 */
const char *table_intern(struct table *strings, const char *s);

/* Drops a reference to s (from table_intern on strings, or NULL); the last one frees it. */
void table_release(struct table *strings, const char *s);

#endif
