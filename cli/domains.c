/*
 * domains: free room per topology domain (see domains.h). Pure: the room is
 * counted by lib's cache, built from the snapshot, so that it is the gate's.
 */
#include "domains.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "hypernode.h"
#include "quantity.h"
#include "resources.h"
#include "topology.h"
#include "util.h"

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static const json_t *meta_map(const json_t *obj, const char *which)
{
    return json_object_get(json_object_get(obj, "metadata"), which);
}

/* A domain being summed: dense by resource id. */
struct dom {
    char *name; /* owned */
    int32_t tier;
    char *error; /* owned: an invalid HyperNode's reason */
    size_t nodes;
    int64_t *free_, *alloc;
    json_t *gangs; /* new array */
};

struct doms {
    struct dom *d;
    size_t n, cap;
    uint32_t nres;
    uint8_t *fmt, *seen; /* by resource id: the quantity format; shown */
    struct cache *c;
};

/* Adds a domain named name (steals it). */
static struct dom *dom_add(struct doms *s, char *name, int32_t tier)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->d = util_realloc(s->d, s->cap * sizeof(*s->d));
    }
    struct dom *d = &s->d[s->n++];
    memset(d, 0, sizeof(*d));
    d->name = name;
    d->tier = tier;
    d->free_ = util_calloc(s->nres ? s->nres : 1, sizeof(*d->free_));
    d->alloc = util_calloc(s->nres ? s->nres : 1, sizeof(*d->alloc));
    d->gangs = json_array();
    return d;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Whether node n counts in a domain: Ready and schedulable, as the gate's domains (topodomain.h). */
static int node_counts(const struct cache_node *n)
{
    return n->present && n->ready && !n->unschedulable;
}

/* Adds node n's room to d. */
static void dom_add_node(struct doms *s, struct dom *d, const struct cache_node *n)
{
    d->nodes++;
    for (uint32_t i = 0; n->allocatable != NULL && i < n->allocatable->len; i++) {
        const struct shape_res *r = &n->allocatable->items[i];
        int64_t used = r->id < n->nused ? n->used[r->id] : 0;
        d->alloc[r->id] = sat_add(d->alloc[r->id], r->value);
        d->free_[r->id] = sat_add(d->free_[r->id], r->value > used ? r->value - used : 0);
        if (!s->seen[r->id])
            s->fmt[r->id] = r->format;
        s->seen[r->id] = 1;
    }
}

static const char *node_label(const struct cache_node *n, const char *key)
{
    for (uint32_t i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    }
    return NULL;
}

static void doms_init(struct doms *s, const json_t *snap)
{
    struct error err = {{0}};
    size_t i;
    json_t *o;
    memset(s, 0, sizeof(*s));
    s->c = cache_create();
    /* An object the cache refuses is left out, as the gate leaves it out. */
    json_array_foreach(json_object_get(snap, "nodes"), i, o)
    {
        (void)cache_upsert_node(s->c, o, &err);
    }
    json_array_foreach(json_object_get(snap, "nodePods"), i, o)
    {
        (void)cache_upsert_pod(s->c, o, &err);
    }
    s->nres = s->c->shapes.nresources;
    s->fmt = util_calloc(s->nres ? s->nres : 1, 1);
    s->seen = util_calloc(s->nres ? s->nres : 1, 1);
}

static void doms_finish(struct doms *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->d[i].name);
        free(s->d[i].error);
        free(s->d[i].free_);
        free(s->d[i].alloc);
        json_decref(s->d[i].gangs);
    }
    free(s->d);
    free(s->fmt);
    free(s->seen);
    cache_destroy(s->c);
}

/* One domain per value of key among the Ready, schedulable nodes. */
static void label_domains(struct doms *s, const char *key)
{
    json_t *index = json_object(); /* value -> position in s->d */
    struct cache_node *n;
    cache_node_for_each(n, s->c) {
        const char *v = node_counts(n) ? node_label(n, key) : NULL;
        if (v == NULL)
            continue;
        json_t *at = json_object_get(index, v);
        if (at == NULL) {
            json_object_set_new(index, v, json_integer((json_int_t)s->n));
            dom_add(s, util_strdup(v), 0);
        }
        dom_add_node(s, &s->d[at != NULL ? json_integer_value(at) : (json_int_t)s->n - 1], n);
    }
    json_decref(index);
}

/* ---- HyperNodes ---- */

/* Adds HyperNode o (borrowed) as a row with the reason it is invalid, when its tier is shown. */
static void invalid_hypernode(struct doms *s, const json_t *o, int32_t tier, const char *why)
{
    const char *name = str(json_object_get(o, "metadata"), "name");
    json_int_t t = json_integer_value(json_object_get(json_object_get(o, "spec"), "tier"));
    if (name == NULL || (tier > 0 && t > tier))
        return;
    struct dom *d = dom_add(s, util_strdup(name), (int32_t)t);
    d->error = util_strdup(why);
}

/* One domain per HyperNode of tier <= tier (0: any) with a node, resolved by lib's hypernode.h as the gate resolves them, and the
 * invalid ones. */
static void hypernode_domains(struct doms *s, const json_t *snap, int32_t tier)
{
    struct hypernodes *h = hypernode_create();
    struct hypernode_domain *hd = NULL;
    size_t i, n;
    json_t *o;
    json_array_foreach(json_object_get(snap, "hyperNodes"), i, o)
    {
        struct error err = {{0}};
        if (hypernode_upsert(h, o, &err) != 0)
            invalid_hypernode(s, o, tier, err.message);
    }
    n = hypernode_resolve(h, s->c, &hd);
    for (i = 0; i < n; i++) {
        if (tier > 0 && hd[i].tier > tier)
            continue;
        struct dom *d = dom_add(s, util_strdup(hd[i].name), hd[i].tier);
        for (size_t k = 0; k < hd[i].nn; k++) {
            if (node_counts(hd[i].nodes[k]))
                dom_add_node(s, d, hd[i].nodes[k]);
        }
    }
    hypernode_domains_free(hd, n);
    hypernode_destroy(h);
}

/* ---- rows ---- */

/* Column order: nvidia.com/gpu, the other extended resources, cpu, memory, the rest. */
static int resource_rank(const char *name)
{
    if (strcmp(name, "nvidia.com/gpu") == 0)
        return 0;
    if (strchr(name, '/') != NULL)
        return 1;
    return strcmp(name, "cpu") == 0 ? 2 : strcmp(name, "memory") == 0 ? 3 : 4;
}

/* A shown resource: its id and name (borrowed from the cache). */
struct column {
    uint32_t id;
    const char *name;
};

static int by_column(const void *a, const void *b)
{
    const struct column *x = a, *y = b;
    int rx = resource_rank(x->name), ry = resource_rank(y->name);
    return rx != ry ? rx - ry : strcmp(x->name, y->name);
}

static int by_tier_name(const void *a, const void *b)
{
    const struct dom *x = a, *y = b;
    return x->tier != y->tier ? (x->tier < y->tier ? -1 : 1) : strcmp(x->name, y->name);
}

static json_t *quantity_json(const char *name, int64_t value, uint8_t fmt)
{
    char buf[QUANTITY_FORMAT_MAX];
    struct quantity q = {value, (enum quantity_format)fmt};
    quantity_format(&q, resources_unit(name), buf, sizeof(buf));
    return json_string(buf);
}

/* The rows of s (new array); cols: the shown resources in column order. */
static json_t *rows_of(const struct doms *s, const struct column *cols, size_t ncols, int hypernodes)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < s->n; i++) {
        const struct dom *d = &s->d[i];
        json_t *res = json_array();
        for (size_t k = 0; k < ncols && d->error == NULL; k++) {
            uint32_t id = cols[k].id;
            json_array_append_new(res, json_pack("{s:s,s:o,s:o}", "name", cols[k].name, "free",
                                                 quantity_json(cols[k].name, d->free_[id], s->fmt[id]), "allocatable",
                                                 quantity_json(cols[k].name, d->alloc[id], s->fmt[id])));
        }
        json_array_append_new(rows, json_pack("{s:s,s:o,s:I,s:o,s:O,s:o}", "domain", d->name, "tier",
                                              hypernodes ? json_integer(d->tier) : json_null(), "nodes", (json_int_t)d->nodes,
                                              "resources", res, "gangs", d->gangs, "error",
                                              d->error != NULL ? json_string(d->error) : json_null()));
    }
    return rows;
}

/* Whether o (borrowed) is a KubeRay RayCluster (list items carry no kind): it has a head group. */
static int is_raycluster(const json_t *o)
{
    return json_object_get(json_object_get(o, "spec"), "headGroupSpec") != NULL;
}

/* Whether owner (borrowed) asks for the kind of domain q shows (its own or a worker group's annotation, or Volcano's mode). */
static int asks_for(const json_t *owner, const struct domains_query *q)
{
    json_t *asks = domains_asks_of(owner), *a;
    size_t i;
    int yes = 0;
    json_array_foreach(asks, i, a)
    {
        const char *key = str(a, "key");
        yes |= q->hypernodes ? key == NULL : key != NULL && q->key != NULL && strcmp(key, q->key) == 0;
    }
    json_decref(asks);
    return yes;
}

/* Adds each RayCluster that asks for q's kind of domain to the gangs of the domains its raygate.io/topology-placed names. */
static void place_gangs(struct doms *s, const json_t *snap, const struct domains_query *q)
{
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(snap, "owners"), i, o)
    {
        const char *record = str(meta_map(o, "annotations"), TOPOLOGY_PLACED);
        if (record == NULL || !is_raycluster(o) || !asks_for(o, q))
            continue;
        json_t *placed = json_loads(record, 0, NULL);
        const char *set;
        json_t *v;
        json_object_foreach(placed, set, v)
        {
            for (size_t k = 0; json_is_string(v) && k < s->n; k++) {
                if (s->d[k].error != NULL || strcmp(s->d[k].name, json_string_value(v)) != 0)
                    continue;
                const json_t *m = json_object_get(o, "metadata");
                json_array_append_new(s->d[k].gangs, strcmp(set, "gang") == 0
                                                         ? json_sprintf("%s/%s", str(m, "namespace"), str(m, "name"))
                                                         : json_sprintf("%s/%s (%s)", str(m, "namespace"), str(m, "name"), set));
            }
        }
        json_decref(placed);
    }
}

json_t *domains_view(const json_t *snapshot, const struct domains_query *q)
{
    struct doms s;
    doms_init(&s, snapshot);
    if (q->hypernodes)
        hypernode_domains(&s, snapshot, q->tier);
    else if (q->key != NULL)
        label_domains(&s, q->key);
    if (s.n > 1)
        qsort(s.d, s.n, sizeof(*s.d), by_tier_name);
    place_gangs(&s, snapshot, q);
    struct column *cols = util_calloc(s.nres ? s.nres : 1, sizeof(*cols));
    size_t ncols = 0;
    for (uint32_t id = 0; id < s.nres; id++) {
        const char *name = cache_resource_name(s.c, id);
        if (s.seen[id] && strcmp(name, "pods") != 0)
            cols[ncols++] = (struct column){id, name};
    }
    qsort(cols, ncols, sizeof(*cols), by_column);
    json_t *rows = rows_of(&s, cols, ncols, q->hypernodes);
    free(cols);
    doms_finish(&s);
    return rows;
}

/* ---- what the gangs ask for ---- */

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds gang text to the row of key (NULL: HyperNodes of tier <= tier) in rows (an object: sort key -> row). */
static void ask(json_t *rows, const char *key, int32_t tier, json_t *gang)
{
    char *sort = key != NULL ? util_strdupf("k%s", key) : util_strdupf("t%010d", (int)tier);
    json_t *row = json_object_get(rows, sort);
    if (row == NULL) {
        char *cmd = key != NULL ? util_strdupf("kubectl raygate domains --key %s", key)
                    : tier > 0  ? util_strdupf("kubectl raygate domains --hypernodes --tier %d", (int)tier)
                                : util_strdup("kubectl raygate domains --hypernodes");
        row = json_pack("{s:o,s:o,s:[],s:s}", "key", key != NULL ? json_string(key) : json_null(), "tier",
                        key != NULL ? json_null() : json_integer(tier), "gangs", "command", cmd);
        json_object_set_new(rows, sort, row);
        free(cmd);
    }
    json_array_append_new(json_object_get(row, "gangs"), gang);
    free(sort);
}

/* Appends constraint c of group (NULL: the gang), whose replicas have hosts hosts each, to out; nothing for no constraint. */
static void add_ask(json_t *out, const struct topo_constraint *c, const char *group, int64_t hosts)
{
    if (c->mode == TOPO_MODE_NONE)
        return;
    int label = c->by == TOPO_BY_LABEL;
    const char *mode = !label ? topology_mode_name((enum topo_mode)c->mode) : c->mode == TOPO_MODE_HARD ? "required" : "preferred";
    json_array_append_new(out, json_pack("{s:o,s:o,s:s,s:s?,s:I}", "key", label ? json_string(c->key) : json_null(), "tier",
                                         label ? json_null() : json_integer(c->max_tier), "mode", mode, "group", group, "hosts",
                                         (json_int_t)hosts));
}

json_t *domains_asks_of(const json_t *owner)
{
    json_t *out = json_array();
    struct topo_request r;
    struct error err = {{0}};
    topology_request_init(&r);
    /* A request the webhook would deny asks for nothing the gate places: none shown. */
    if (topology_request_parse(owner, &r, &err) == 0) {
        add_ask(out, &r.gang, NULL, 1);
        for (size_t i = 0; i < r.ngroups; i++) {
            const struct topo_group *g = &r.groups[i];
            /* A multi-host group without its own constraint: each replica in one domain of the gang's. */
            add_ask(out, g->c.mode != TOPO_MODE_NONE ? &g->c : &r.gang, g->name, g->hosts);
        }
    }
    topology_request_finish(&r);
    return out;
}

/* What RayCluster o (borrowed) asks for, added to rows. */
static void ask_owner(json_t *rows, const json_t *o)
{
    const json_t *m = json_object_get(o, "metadata");
    json_t *asks = domains_asks_of(o), *a;
    size_t i;
    json_array_foreach(asks, i, a)
    {
        const char *group = str(a, "group");
        int slices = json_integer_value(json_object_get(a, "hosts")) > 1;
        json_t *who = json_sprintf("%s/%s%s%s%s (%s)", str(m, "namespace"), str(m, "name"), group != NULL ? " group " : "",
                                   group != NULL ? group : "", slices ? ", each replica" : "", str(a, "mode"));
        ask(rows, str(a, "key"), (int32_t)json_integer_value(json_object_get(a, "tier")), who);
    }
    json_decref(asks);
}

json_t *domains_asked(const json_t *snapshot)
{
    json_t *byname = json_object(), *rows = json_array();
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(snapshot, "owners"), i, o)
    {
        if (is_raycluster(o))
            ask_owner(byname, o);
    }
    /* Sort keys: "k<key>" before "t<tier>", each in order. */
    size_t n = json_object_size(byname), k = 0;
    const char **keys = util_calloc(n ? n : 1, sizeof(*keys));
    const char *key;
    json_t *row;
    json_object_foreach(byname, key, row) keys[k++] = key;
    qsort(keys, n, sizeof(*keys), by_string);
    for (k = 0; k < n; k++)
        json_array_append(rows, json_object_get(byname, keys[k]));
    free(keys);
    json_decref(byname);
    return rows;
}
