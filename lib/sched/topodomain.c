#include "topodomain.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The domains of one constraint, built on first use. */
struct entry {
    uint8_t by;       /* enum topo_by */
    char *key;        /* owned: TOPO_BY_LABEL's key */
    int32_t max_tier; /* TOPO_BY_HYPERNODE's */
    struct topo_domain *d;
    size_t n;
};

struct topodomains {
    const struct hypernodes *h;
    uint64_t h_gen;    /* hypernodes_generation() the entries were built for */
    uint64_t node_gen; /* fit_nodes_generation() the entries were built for */
    int built;         /* the generations above are set */
    struct fit *f;
    const struct cache *c;
    struct entry *entries;
    size_t n, cap;
    struct hypernode_domain *hd; /* the HyperNodes resolved (hypernodes_resolve), once per generation */
    size_t nhd;
    int resolved;
    struct topo_memo memo;
};

struct topodomains *topodomains_create(void)
{
    return util_calloc(1, sizeof(struct topodomains));
}

static void drop_entries(struct topodomains *t)
{
    for (size_t i = 0; i < t->n; i++) {
        for (size_t j = 0; j < t->entries[i].n; j++)
            free(t->entries[i].d[j].nodes);
        free(t->entries[i].d);
        free(t->entries[i].key);
    }
    t->n = 0;
    hypernodes_domains_free(t->hd, t->nhd);
    t->hd = NULL;
    t->nhd = 0;
    t->resolved = 0;
    free(t->memo.why);
    free(t->memo.key);
    t->memo.why = t->memo.key = NULL;
}

void topodomains_destroy(struct topodomains *t)
{
    if (t == NULL)
        return;
    drop_entries(t);
    free(t->entries);
    free(t->memo.req);
    free(t->memo.sched);
    free(t->memo.in_set);
    free(t);
}

void topodomains_set_hypernodes(struct topodomains *t, const struct hypernodes *h)
{
    if (t->h != h)
        t->built = 0;
    t->h = h;
}

void topodomains_begin(struct topodomains *t, struct fit *f, const struct cache *c)
{
    uint64_t hg = t->h != NULL ? hypernodes_generation(t->h) : 0, ng = fit_nodes_generation(f);
    if (!t->built || hg != t->h_gen || ng != t->node_gen || t->f != f || t->c != c)
        drop_entries(t);
    free(t->memo.why); /* the room is new */
    t->memo.why = NULL;
    t->built = 1;
    t->h_gen = hg;
    t->node_gen = ng;
    t->f = f;
    t->c = c;
}

static const char *node_label(const struct cache_node *n, const char *key)
{
    for (uint32_t i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    }
    return NULL;
}

struct valued {
    const char *value;
    uint32_t node;
};

static int cmp_valued(const void *pa, const void *pb)
{
    const struct valued *a = pa, *b = pb;
    int r = strcmp(a->value, b->value);
    return r != 0 ? r : (a->node > b->node) - (a->node < b->node);
}

/* One domain per value of key among the pass's nodes. */
static void build_label(struct topodomains *t, struct entry *e)
{
    struct cache_node *const *nodes;
    size_t nn = fit_nodes(t->f, &nodes), nv = 0;
    struct valued *vs = util_calloc(nn ? nn : 1, sizeof(*vs));
    for (size_t i = 0; i < nn; i++) {
        const char *v = node_label(nodes[i], e->key);
        if (v != NULL)
            vs[nv++] = (struct valued){v, (uint32_t)i};
    }
    qsort(vs, nv, sizeof(*vs), cmp_valued);
    e->d = util_calloc(nv ? nv : 1, sizeof(*e->d));
    for (size_t i = 0; i < nv;) {
        size_t j = i;
        while (j < nv && strcmp(vs[j].value, vs[i].value) == 0)
            j++;
        struct topo_domain *d = &e->d[e->n++];
        d->name = vs[i].value;
        d->key = e->key;
        d->nodes = util_calloc(j - i, sizeof(*d->nodes));
        for (size_t k = i; k < j; k++)
            d->nodes[d->nn++] = vs[k].node; /* ascending: sorted by node within a value */
        i = j;
    }
    free(vs);
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* One domain per HyperNode of an allowed tier with a node among the pass's. */
static void build_hypernode(struct topodomains *t, struct entry *e)
{
    if (!t->resolved && t->h != NULL)
        t->nhd = hypernodes_resolve(t->h, t->c, &t->hd);
    t->resolved = 1;
    e->d = util_calloc(t->nhd ? t->nhd : 1, sizeof(*e->d));
    for (size_t i = 0; i < t->nhd; i++) {
        const struct hypernode_domain *h = &t->hd[i];
        if (e->max_tier > 0 && h->tier > e->max_tier)
            continue;
        uint32_t *idx = util_calloc(h->nn ? h->nn : 1, sizeof(*idx));
        size_t k = 0;
        for (size_t j = 0; j < h->nn; j++) {
            size_t at = fit_node_index(t->f, h->nodes[j]);
            if (at != SIZE_MAX)
                idx[k++] = (uint32_t)at;
        }
        if (k == 0) {
            free(idx);
            continue;
        }
        qsort(idx, k, sizeof(*idx), cmp_u32);
        e->d[e->n++] = (struct topo_domain){.name = h->name, .key = NULL, .tier = h->tier, .nodes = idx, .nn = k};
    }
}

const struct topo_domain *topodomains_get(struct topodomains *t, const struct topo_constraint *c, size_t *n)
{
    for (size_t i = 0; i < t->n; i++) {
        struct entry *e = &t->entries[i];
        if (e->by == c->by &&
            (c->by == TOPO_BY_LABEL ? strcmp(e->key, c->key != NULL ? c->key : "") == 0 : e->max_tier == c->max_tier)) {
            *n = e->n;
            return e->d;
        }
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 4;
        t->entries = util_realloc(t->entries, t->cap * sizeof(*t->entries));
    }
    struct entry *e = &t->entries[t->n++];
    memset(e, 0, sizeof(*e));
    e->by = c->by;
    e->max_tier = c->max_tier;
    if (c->by == TOPO_BY_LABEL) {
        e->key = util_strdup(c->key != NULL ? c->key : "");
        build_label(t, e);
    } else {
        build_hypernode(t, e);
    }
    *n = e->n;
    return e->d;
}

struct topo_memo *topodomains_memo(struct topodomains *t)
{
    return &t->memo;
}

int topodomain_has(const struct topo_domain *d, uint32_t i)
{
    return bsearch(&i, d->nodes, d->nn, sizeof(*d->nodes), cmp_u32) != NULL;
}
