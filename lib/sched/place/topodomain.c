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
    int64_t *sums; /* n x (nres + 1): each domain's free room summed (topodomain_sums), pods last */
    uint32_t *off; /* nn + 1: node i is in domains doms[off[i]..off[i + 1]) (HyperNodes nest: several) */
    uint32_t *doms;
};

struct topodomains {
    const struct hypernodes *h;
    uint64_t h_gen;    /* hypernode_generation() the entries were built for */
    uint64_t node_gen; /* fit_nodes_generation() the entries were built for */
    int built;         /* the generations above are set */
    struct fit *f;
    const struct cache *c;
    struct entry *entries;
    size_t n, cap;
    struct hypernode_domain *hd; /* the HyperNodes resolved (hypernode_resolve), once per generation */
    size_t nhd;
    int resolved;
    struct topo_memo memo[TOPO_MEMOS];
    size_t memo_next;
    uint32_t *all; /* 0..nall-1 */
    size_t nall;
    /* Sums kept up to date with fit_touched(): every node's free room as last read (clamped at 0), and their total. */
    int64_t *seen; /* nn x (nres + 1) */
    int64_t *total;
    uint32_t nres;
    size_t cursor; /* fit_touched() read up to here */
    int seen_built;
};

struct topodomains *topodomain_create(void)
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
        free(t->entries[i].sums);
        free(t->entries[i].off);
        free(t->entries[i].doms);
    }
    t->n = 0;
    hypernode_domains_free(t->hd, t->nhd);
    t->hd = NULL;
    t->nhd = 0;
    t->resolved = 0;
    free(t->all);
    t->all = NULL;
    t->nall = 0;
}

static void clear_memos(struct topodomains *t)
{
    for (size_t i = 0; i < TOPO_MEMOS; i++) {
        free(t->memo[i].why);
        free(t->memo[i].key);
        t->memo[i].why = t->memo[i].key = NULL;
    }
    t->seen_built = 0;
}

void topodomain_destroy(struct topodomains *t)
{
    if (t == NULL)
        return;
    drop_entries(t);
    clear_memos(t);
    free(t->entries);
    for (size_t i = 0; i < TOPO_MEMOS; i++) {
        free(t->memo[i].req);
        free(t->memo[i].sched);
        free(t->memo[i].in_set);
    }
    free(t->total);
    free(t->seen);
    free(t);
}

void topodomain_set_hypernodes(struct topodomains *t, const struct hypernodes *h)
{
    if (t->h != h)
        t->built = 0;
    t->h = h;
}

void topodomain_begin(struct topodomains *t, struct fit *f, const struct cache *c)
{
    uint64_t hg = t->h != NULL ? hypernode_generation(t->h) : 0, ng = fit_nodes_generation(f);
    if (!t->built || hg != t->h_gen || ng != t->node_gen || t->f != f || t->c != c)
        drop_entries(t);
    clear_memos(t); /* the room is new */
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
        t->nhd = hypernode_resolve(t->h, t->c, &t->hd);
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

static void catch_up(struct topodomains *t);
static void entry_sums(struct topodomains *t, struct entry *e);

const struct topo_domain *topodomain_get(struct topodomains *t, const struct topo_constraint *c, size_t *n)
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
    if (t->seen_built) {
        catch_up(t);
        entry_sums(t, e);
    }
    *n = e->n;
    return e->d;
}

struct topo_memo *topodomain_memo(struct topodomains *t, size_t i)
{
    return &t->memo[i];
}

struct topo_memo *topodomain_memo_slot(struct topodomains *t)
{
    struct topo_memo *m = &t->memo[t->memo_next];
    t->memo_next = (t->memo_next + 1) % TOPO_MEMOS;
    return m;
}

const uint32_t *topodomain_all(struct topodomains *t, size_t *n)
{
    struct cache_node *const *nodes;
    size_t nn = fit_nodes(t->f, &nodes);
    if (t->all == NULL || t->nall != nn) {
        free(t->all);
        t->all = util_calloc(nn ? nn : 1, sizeof(*t->all));
        for (size_t i = 0; i < nn; i++)
            t->all[i] = (uint32_t)i;
        t->nall = nn;
    }
    *n = nn;
    return t->all;
}

/*
 * A node's free room counted in sums: at least 0, at most 2^45 (35 TB of
 * memory; "pods" without a limit), so that sums over 2^17 nodes never
 * overflow and stay exact under the changes added and taken away.
 */
static int64_t clamp(int64_t v)
{
    const int64_t most = (int64_t)1 << 45;
    return v < 0 ? 0 : v > most ? most : v;
}

/* Node i's free room now, clamped, into v (nres + 1, pods last). */
static void read_node(const struct topodomains *t, size_t i, int64_t *v)
{
    int64_t pods;
    const int64_t *room = fit_node_free(t->f, i, &pods);
    for (uint32_t j = 0; j < t->nres; j++)
        v[j] = clamp(room[j]);
    v[t->nres] = clamp(pods);
}

static void add_to(int64_t *into, const int64_t *v, uint32_t n, int sign)
{
    for (uint32_t j = 0; j < n; j++)
        into[j] += sign * v[j];
}

/* e's sums from the nodes as last read, and which domains each node is in. */
static void entry_sums(struct topodomains *t, struct entry *e)
{
    size_t nn = t->nall, w = t->nres + 1;
    free(e->sums);
    free(e->off);
    free(e->doms);
    e->sums = util_calloc(e->n * w + 1, sizeof(*e->sums));
    e->off = util_calloc(nn + 1, sizeof(*e->off));
    size_t total = 0;
    for (size_t d = 0; d < e->n; d++) {
        for (size_t k = 0; k < e->d[d].nn; k++)
            e->off[e->d[d].nodes[k] + 1]++;
        total += e->d[d].nn;
    }
    for (size_t i = 0; i < nn; i++)
        e->off[i + 1] += e->off[i];
    e->doms = util_calloc(total + 1, sizeof(*e->doms));
    uint32_t *fill = util_calloc(nn + 1, sizeof(*fill));
    for (size_t d = 0; d < e->n; d++) {
        for (size_t k = 0; k < e->d[d].nn; k++) {
            uint32_t i = e->d[d].nodes[k];
            e->doms[e->off[i] + fill[i]++] = (uint32_t)d;
            add_to(e->sums + d * w, t->seen + (size_t)i * w, (uint32_t)w, 1);
        }
    }
    free(fill);
}

/* Brings the sums up to date: from scratch once per pass, then by the nodes fit touched since. */
static void catch_up(struct topodomains *t)
{
    size_t nn;
    topodomain_all(t, &nn);
    const uint32_t *touched;
    size_t nt = fit_touched(t->f, &touched);
    if (!t->seen_built) {
        t->nres = fit_resources(t->f);
        size_t w = t->nres + 1;
        free(t->seen);
        free(t->total);
        t->seen = util_calloc(nn * w + 1, sizeof(*t->seen));
        t->total = util_calloc(w, sizeof(*t->total));
        for (size_t i = 0; i < nn; i++) {
            read_node(t, i, t->seen + i * w);
            add_to(t->total, t->seen + i * w, (uint32_t)w, 1);
        }
        for (size_t e = 0; e < t->n; e++)
            entry_sums(t, &t->entries[e]);
        t->cursor = nt;
        t->seen_built = 1;
        return;
    }
    size_t w = t->nres + 1;
    int64_t *now = util_calloc(w, sizeof(*now));
    for (; t->cursor < nt; t->cursor++) {
        uint32_t i = touched[t->cursor];
        int64_t *old = t->seen + (size_t)i * w;
        read_node(t, i, now);
        add_to(now, old, (uint32_t)w, -1); /* now: the change */
        add_to(t->total, now, (uint32_t)w, 1);
        for (size_t e = 0; e < t->n; e++) {
            const struct entry *x = &t->entries[e];
            for (uint32_t k = x->off != NULL ? x->off[i] : 0; x->off != NULL && k < x->off[i + 1]; k++)
                add_to(x->sums + (size_t)x->doms[k] * w, now, (uint32_t)w, 1);
        }
        add_to(old, now, (uint32_t)w, 1);
    }
    free(now);
}

const int64_t *topodomain_total(struct topodomains *t)
{
    catch_up(t);
    return t->total;
}

const int64_t *topodomain_sums(struct topodomains *t, const struct topo_constraint *c, size_t *n)
{
    const struct topo_domain *d = topodomain_get(t, c, n);
    (void)d;
    catch_up(t);
    for (size_t e = 0; e < t->n; e++) {
        if (t->entries[e].d == d)
            return t->entries[e].sums;
    }
    return NULL;
}

int topodomain_has(const struct topo_domain *d, uint32_t i)
{
    return bsearch(&i, d->nodes, d->nn, sizeof(*d->nodes), cmp_u32) != NULL;
}
