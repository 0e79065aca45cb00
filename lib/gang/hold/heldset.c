/* heldset: the admitted held RayClusters, by namespace and name (heldset.h). */
#include "heldset.h"

#include <stdlib.h>
#include <string.h>

#include "heldsuspend.h"
#include "table.h"
#include "util.h"

struct held_entry {
    struct table_node node;
    size_t nslen;
    char *key; /* owned: ns, '\0', name, '\0' */
};

struct heldset {
    struct table t;
};

struct heldset *heldset_create(void)
{
    struct heldset *s = util_calloc(1, sizeof(*s));
    table_init(&s->t);
    return s;
}

void heldset_destroy(struct heldset *s)
{
    if (s == NULL)
        return;
    struct table_node *n = table_next(&s->t, NULL);
    while (n != NULL) {
        struct table_node *next = table_next(&s->t, n);
        struct held_entry *e = TABLE_CONTAINER_OF(n, struct held_entry, node);
        table_remove(&s->t, n);
        free(e->key);
        free(e);
        n = next;
    }
    table_finish(&s->t);
    free(s);
}

static uint64_t key_hash(const char *ns, size_t nslen, const char *name, size_t namelen)
{
    uint64_t h = table_hash_bytes(TABLE_HASH_SEED, ns, nslen);
    h = table_hash_bytes(h, "", 1);
    return table_hash_bytes(h, name, namelen);
}

static struct held_entry *find(const struct heldset *s, const char *ns, size_t nslen, const char *name, size_t namelen)
{
    uint64_t h = key_hash(ns, nslen, name, namelen);
    for (struct table_node *n = table_first(&s->t, h); n != NULL; n = n->next) {
        struct held_entry *e = TABLE_CONTAINER_OF(n, struct held_entry, node);
        if (n->hash == h && e->nslen == nslen && memcmp(e->key, ns, nslen) == 0 && strlen(e->key + nslen + 1) == namelen &&
            memcmp(e->key + nslen + 1, name, namelen) == 0)
            return e;
    }
    return NULL;
}

void heldset_record(struct heldset *s, const json_t *cluster, int deleted)
{
    const json_t *meta = json_object_get(cluster, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (name == NULL)
        return;
    if (ns == NULL)
        ns = "";
    size_t nslen = strlen(ns), namelen = strlen(name);
    struct held_entry *e = find(s, ns, nslen, name, namelen);
    int in = !deleted && heldsuspend_born_ungated(cluster);
    if (in && e == NULL) {
        e = util_calloc(1, sizeof(*e));
        e->nslen = nslen;
        e->key = util_calloc(1, nslen + namelen + 2);
        memcpy(e->key, ns, nslen);
        memcpy(e->key + nslen + 1, name, namelen);
        e->node.hash = key_hash(ns, nslen, name, namelen);
        table_insert(&s->t, &e->node);
    } else if (!in && e != NULL) {
        table_remove(&s->t, &e->node);
        free(e->key);
        free(e);
    }
}

int heldset_admitted(const struct heldset *s, const char *ns, size_t nslen, const char *name, size_t namelen)
{
    return s != NULL && find(s, ns, nslen, name, namelen) != NULL;
}

size_t heldset_len(const struct heldset *s)
{
    return s->t.len;
}

enum { SHAPE_EVENT = HELDSET_SHAPE_EVENT, SHAPE_CLUSTER, SHAPE_META };

int heldset_shape_fn(int shape, const struct jsonscan *s, long key)
{
    if (key < 0)
        return JSONSCAN_WHOLE; /* an array where an object is expected: built whole */
    switch (shape) {
    case SHAPE_EVENT:
        return jsonscan_string_is(s, key, "object") ? SHAPE_CLUSTER : JSONSCAN_WHOLE;
    case SHAPE_CLUSTER:
        return jsonscan_string_is(s, key, "metadata")                                           ? SHAPE_META
               : jsonscan_string_is(s, key, "kind") || jsonscan_string_is(s, key, "apiVersion") ? JSONSCAN_WHOLE
                                                                                                : JSONSCAN_DROP;
    default: /* SHAPE_META */
        return jsonscan_string_is(s, key, "managedFields") ? JSONSCAN_DROP : JSONSCAN_WHOLE;
    }
}
