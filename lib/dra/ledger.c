#include "ledger.h"

#include <stdlib.h>
#include <string.h>

#include "draset_internal.h"
#include "util.h"

static void counts_init(struct draset_counts *c, size_t n)
{
    c->total = util_calloc(n > 0 ? n : 1, sizeof(*c->total));
    c->held = util_calloc(n > 0 ? n : 1, sizeof(*c->held));
    c->n = n;
}

static void counts_free(struct draset_counts *c)
{
    free(c->total);
    free(c->held);
    memset(c, 0, sizeof(*c));
}

static int node_is(const struct table_node *n, const void *name)
{
    return strcmp(TABLE_CONTAINER_OF(n, struct draset_node, by_name)->name, name) == 0;
}

static struct draset_node *node_find(const struct draset *s, const char *name)
{
    struct table_node *n = table_find(&s->nodes, table_hash_str(TABLE_HASH_SEED, name), node_is, name);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct draset_node, by_name) : NULL;
}

static struct draset_node *node_get(struct draset *s, const char *name)
{
    struct draset_node *nd = node_find(s, name);
    if (nd != NULL)
        return nd;
    nd = util_calloc(1, sizeof(*nd));
    nd->name = util_strdup(name);
    nd->by_name.hash = table_hash_str(TABLE_HASH_SEED, name);
    counts_init(&nd->counts, s->nresources);
    table_insert(&s->nodes, &nd->by_name);
    return nd;
}

static int device_is(const struct table_node *n, const void *key)
{
    return strcmp(TABLE_CONTAINER_OF(n, struct draset_device, by_key)->key, key) == 0;
}

static struct draset_device *device_find(const struct draset *s, const char *key)
{
    struct table_node *n = table_find(&s->devices, table_hash_str(TABLE_HASH_SEED, key), device_is, key);
    return n != NULL ? TABLE_CONTAINER_OF(n, struct draset_device, by_key) : NULL;
}

/* Adds sign to the held count of d's resources once d's holders go from 0 to 1 or back. */
static void device_hold(struct draset_device *d, int sign)
{
    if (sign < 0 && d->held == 0)
        return;
    d->held = (uint32_t)((int64_t)d->held + sign);
    if ((sign > 0 && d->held != 1) || (sign < 0 && d->held != 0))
        return;
    for (size_t r = 0; r < d->counts->n; r++) {
        if (d->resources & ((uint64_t)1 << r))
            d->counts->held[r] += sign;
    }
}

/*
 * What a rebuild reads once rather than per device or per slice (a walk over every object, claims
 * included, per device of 5,000 nodes of 8 took half a minute): the valid classes that map to a
 * resource, and the slices with their pool's current generation.
 */
struct sweep {
    const struct draset_object **classes;
    size_t nclasses;
    const struct draset_object **vclass; /* by variant: its class, or NULL when not seen or invalid */
    struct slice_ref *slices;
    size_t nslices;
    const struct draset *s;
};

struct slice_ref {
    struct draset_object *o;
    size_t order;    /* its place in the objects' table */
    int64_t current; /* the highest spec.pool.generation of its driver/pool among the valid slices */
};

/* The variants (draset_internal.h) whose class and selectors both select dev, a bit each. */
static uint64_t variant_bits(const struct sweep *w, const struct devsel_device *dev)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < w->s->variants.n; i++) {
        const struct dravariant *v = &w->s->variants.v[i];
        if (w->vclass[i] != NULL && deviceclass_match(&w->vclass[i]->cls, dev) && dravariant_match(v, dev))
            bits |= (uint64_t)1 << v->resource;
    }
    return bits;
}

/* The resources whose classes select dev (a bit each), noting in *inexact the first class not evaluated whole. */
static uint64_t device_resources(const struct sweep *w, const struct devsel_device *dev, const char **inexact)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < w->nclasses; i++) {
        const struct draset_object *c = w->classes[i];
        if (*inexact == NULL && !deviceclass_exact(&c->cls))
            *inexact = c->name;
        if (deviceclass_match(&c->cls, dev))
            bits |= (uint64_t)1 << c->resource;
    }
    return bits | variant_bits(w, dev);
}

static int strcmp_null(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "");
}

static int by_pool(const void *a, const void *b)
{
    const struct resourceslice *x = &((const struct slice_ref *)a)->o->slice, *y = &((const struct slice_ref *)b)->o->slice;
    int c = strcmp_null(x->driver, y->driver);
    return c != 0 ? c : strcmp_null(x->pool, y->pool);
}

static int by_order(const void *a, const void *b)
{
    size_t x = ((const struct slice_ref *)a)->order, y = ((const struct slice_ref *)b)->order;
    return x < y ? -1 : x > y;
}

/* The classes and the valid slices of s, in the objects' order, each slice with its pool's current generation. */
static void sweep_init(const struct draset *s, struct sweep *w)
{
    size_t n = s->objects.len, order = 0;
    *w = (struct sweep){
        util_calloc(n > 0 ? n : 1, sizeof(*w->classes)), 0, util_calloc(s->variants.n > 0 ? s->variants.n : 1, sizeof(*w->vclass)),
        util_calloc(n > 0 ? n : 1, sizeof(*w->slices)),  0, s};
    for (size_t i = 0; i < s->variants.n; i++) {
        const struct draset_object *c = draset_find(s, DRASET_CLASS, "", s->variants.v[i].cls);
        w->vclass[i] = c != NULL && c->valid ? c : NULL;
    }
    for (struct table_node *t = table_next(&s->objects, NULL); t != NULL; t = table_next(&s->objects, t), order++) {
        struct draset_object *o = TABLE_CONTAINER_OF(t, struct draset_object, by_key);
        if (o->kind == DRASET_CLASS && o->valid && o->resource >= 0)
            w->classes[w->nclasses++] = o;
        else if (o->kind == DRASET_SLICE && o->valid)
            w->slices[w->nslices++] = (struct slice_ref){o, order, o->slice.generation};
    }
    qsort(w->slices, w->nslices, sizeof(*w->slices), by_pool);
    for (size_t i = 0, j; i < w->nslices; i = j) {
        int64_t gen = w->slices[i].current;
        for (j = i + 1; j < w->nslices && by_pool(&w->slices[i], &w->slices[j]) == 0; j++)
            gen = w->slices[j].current > gen ? w->slices[j].current : gen;
        for (size_t k = i; k < j; k++)
            w->slices[k].current = gen;
    }
    qsort(w->slices, w->nslices, sizeof(*w->slices), by_order);
}

static void sweep_finish(struct sweep *w)
{
    free(w->classes);
    free(w->vclass);
    free(w->slices);
}

/* Counts the devices of slice o (valid, of its pool's current generation). */
static void add_slice(struct draset *s, const struct sweep *w, struct draset_object *o, const char **inexact)
{
    struct draset_counts *counts;
    if (o->slice.scope == RESOURCESLICE_NODE) {
        if (o->slice.node == NULL)
            return;
        counts = &node_get(s, o->slice.node)->counts;
    } else {
        counts_init(&o->counts, s->nresources);
        counts = &o->counts;
        s->shared = util_realloc(s->shared, (s->nshared + 1) * sizeof(*s->shared));
        s->shared[s->nshared++] = o;
    }
    for (size_t i = 0; i < o->slice.ndevices; i++) {
        const struct resourceslice_device *rd = &o->slice.devices[i];
        char *key = draset_device_key(o->slice.driver, o->slice.pool, rd->name);
        if (device_find(s, key) != NULL) {
            free(key); /* published twice: counted once */
            continue;
        }
        struct draset_device *d = util_calloc(1, sizeof(*d));
        d->key = key;
        d->by_key.hash = table_hash_str(TABLE_HASH_SEED, key);
        d->counts = counts;
        d->resources = device_resources(w, &rd->device, inexact);
        table_insert(&s->devices, &d->by_key);
        for (size_t r = 0; r < counts->n; r++) {
            if (d->resources & ((uint64_t)1 << r))
                counts->total[r]++;
        }
    }
}

static void hold_keys(struct draset *s, char *const *keys, size_t n, int sign)
{
    for (size_t i = 0; i < n; i++) {
        struct draset_device *d = device_find(s, keys[i]);
        if (d != NULL)
            device_hold(d, sign);
    }
}

static void set_inexact(struct draset *s, const char *cls)
{
    free(s->inexact);
    s->inexact = NULL;
    if (cls == NULL)
        return;
    const struct draset_object *c = draset_find(s, DRASET_CLASS, "", cls);
    s->inexact = util_strdupf("deviceclass %s: %s; every device of its driver counted", cls,
                              c != NULL && deviceclass_unevaluated(&c->cls) != NULL ? deviceclass_unevaluated(&c->cls)
                                                                                    : "a selector not evaluated");
}

/* Applies the claims' moves journaled since the last call (draset.c). */
static void apply_journal(struct draset *s)
{
    for (size_t i = 0; i < s->njournal; i++) {
        struct draset_device *d = device_find(s, s->journal[i].key);
        if (d != NULL)
            device_hold(d, s->journal[i].sign);
        free(s->journal[i].key);
    }
    if (s->njournal > 0)
        s->ledger_gen++;
    s->njournal = 0;
}

void ledger_prepare(struct draset *s)
{
    if (!s->ledger_stale) {
        apply_journal(s);
        return;
    }
    draset_ledger_clear(s);
    const char *inexact = NULL;
    struct table_node *n;
    for (n = table_next(&s->objects, NULL); n != NULL; n = table_next(&s->objects, n)) {
        struct draset_object *o = TABLE_CONTAINER_OF(n, struct draset_object, by_key);
        if (o->kind == DRASET_SLICE)
            counts_free(&o->counts);
    }
    struct sweep w;
    sweep_init(s, &w);
    for (size_t i = 0; i < w.nslices; i++) {
        if (w.slices[i].o->slice.generation >= w.slices[i].current)
            add_slice(s, &w, w.slices[i].o, &inexact);
    }
    sweep_finish(&w);
    for (n = table_next(&s->objects, NULL); n != NULL; n = table_next(&s->objects, n)) {
        const struct draset_object *o = TABLE_CONTAINER_OF(n, struct draset_object, by_key);
        if (o->kind == DRASET_CLAIM)
            hold_keys(s, o->alloc, o->nalloc, 1);
    }
    set_inexact(s, inexact);
    s->ledger_stale = 0;
    s->ledger_gen++;
}

uint64_t ledger_generation(const struct draset *s)
{
    return s->ledger_gen;
}

int ledger_has_shared(const struct draset *s)
{
    return s->nshared > 0;
}

/* Whether one requirement of a node selector term (JSON, borrowed) holds for n. */
static int requirement_holds(const struct ledger_node *n, const json_t *req, int field)
{
    const char *key = json_string_value(json_object_get(req, "key"));
    const char *op = json_string_value(json_object_get(req, "operator"));
    if (key == NULL || op == NULL)
        return 0;
    const char *value =
        field ? (strcmp(key, "metadata.name") == 0 ? n->name : NULL) : (n->label != NULL ? n->label(n->node, key) : NULL);
    int in = 0;
    const json_t *values = json_object_get(req, "values");
    for (size_t i = 0; value != NULL && i < json_array_size(values); i++)
        in |= util_streq(json_string_value(json_array_get(values, i)), value);
    if (strcmp(op, "In") == 0)
        return in;
    if (strcmp(op, "NotIn") == 0)
        return !in;
    if (strcmp(op, "Exists") == 0)
        return value != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return value == NULL;
    return 0; /* Gt, Lt: not evaluated for slices; the node is not served */
}

/* Whether slice o (serving several nodes) serves n: allNodes, or any term of its nodeSelector. */
static int serves(const struct draset_object *o, const struct ledger_node *n)
{
    if (o->slice.scope == RESOURCESLICE_ALL_NODES)
        return 1;
    const json_t *terms = json_object_get(o->slice.node_selector, "nodeSelectorTerms");
    for (size_t t = 0; t < json_array_size(terms); t++) {
        const json_t *term = json_array_get(terms, t);
        const json_t *exprs = json_object_get(term, "matchExpressions"), *fields = json_object_get(term, "matchFields");
        int ok = json_array_size(exprs) + json_array_size(fields) > 0;
        for (size_t i = 0; ok && i < json_array_size(exprs); i++)
            ok = requirement_holds(n, json_array_get(exprs, i), 0);
        for (size_t i = 0; ok && i < json_array_size(fields); i++)
            ok = requirement_holds(n, json_array_get(fields, i), 1);
        if (ok)
            return 1;
    }
    return 0;
}

int64_t ledger_free(const struct draset *s, const struct ledger_node *n, size_t r, int64_t *total)
{
    int64_t all = 0, held = 0;
    const struct draset_node *nd = node_find(s, n->name);
    if (nd != NULL && r < nd->counts.n) {
        all += nd->counts.total[r];
        held += nd->counts.held[r];
    }
    for (size_t i = 0; i < s->nshared; i++) {
        const struct draset_object *o = s->shared[i];
        if (r < o->counts.n && serves(o, n)) {
            all += o->counts.total[r];
            held += o->counts.held[r];
        }
    }
    if (total != NULL)
        *total = all;
    return all > held ? all - held : 0;
}
