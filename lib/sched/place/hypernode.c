#include "hypernode.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "hypercheck.h"
#include "util.h"

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

enum sel_kind {
    SEL_EXACT,
    SEL_REGEX,
    SEL_LABEL,
};

/* metav1.LabelSelector's operators (no Gt/Lt: those are node affinity's). */
enum label_op {
    OP_IN,
    OP_NOT_IN,
    OP_EXISTS,
    OP_DOES_NOT_EXIST,
};

static const char *const op_names[] = {"In", "NotIn", "Exists", "DoesNotExist"};

/* One requirement of a labelMatch; matchLabels' pairs become In with one value. */
struct label_req {
    char *key;
    uint8_t op; /* enum label_op */
    size_t nvalues;
    char **values;
};

struct member {
    uint8_t hyper; /* type HyperNode: the selector picks child HyperNodes by name */
    uint8_t kind;  /* enum sel_kind */
    uint8_t compiled;
    char *name;   /* SEL_EXACT */
    regex_t re;   /* SEL_REGEX, when compiled */
    char *prefix; /* SEL_REGEX: a literal every match starts with ("" when none is known), a cheap test before regexec */
    char *suffix; /* likewise, a literal every match ends with */
    size_t nprefix, nsuffix;
    size_t nreqs; /* SEL_LABEL: all hold; none (an empty selector) selects nothing, as in Volcano */
    struct label_req *reqs;
};

struct hnode {
    char *name;
    int32_t tier;
    uint8_t valid;
    size_t nm;
    struct member *members;
};

struct hypernodes {
    struct hnode **v; /* sorted by name */
    size_t n, cap;
    uint64_t generation;
};

/* ---- the set ---- */

static void member_finish(struct member *m)
{
    free(m->name);
    free(m->prefix);
    free(m->suffix);
    if (m->compiled)
        regfree(&m->re);
    for (size_t i = 0; i < m->nreqs; i++) {
        free(m->reqs[i].key);
        for (size_t k = 0; k < m->reqs[i].nvalues; k++)
            free(m->reqs[i].values[k]);
        free(m->reqs[i].values);
    }
    free(m->reqs);
}

static void hnode_members_free(struct hnode *hn)
{
    for (size_t i = 0; i < hn->nm; i++)
        member_finish(&hn->members[i]);
    free(hn->members);
    hn->members = NULL;
    hn->nm = 0;
}

static void hnode_destroy(struct hnode *hn)
{
    if (hn == NULL)
        return;
    hnode_members_free(hn);
    free(hn->name);
    free(hn);
}

struct hypernodes *hypernode_create(void)
{
    return util_calloc(1, sizeof(struct hypernodes));
}

void hypernode_destroy(struct hypernodes *h)
{
    if (h == NULL)
        return;
    for (size_t i = 0; i < h->n; i++)
        hnode_destroy(h->v[i]);
    free(h->v);
    free(h);
}

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, (*(struct hnode *const *)elem)->name);
}

/* The index of name in h->v (*found 1), or where it would go (*found 0). */
static size_t find(const struct hypernodes *h, const char *name, int *found)
{
    struct hnode **at = h->n > 0 ? bsearch(name, h->v, h->n, sizeof(*h->v), cmp_name) : NULL;
    *found = at != NULL;
    if (at != NULL)
        return (size_t)(at - h->v);
    size_t i = 0;
    while (i < h->n && strcmp(h->v[i]->name, name) < 0) /* O(n) as the insertion's move is */
        i++;
    return i;
}

uint64_t hypernode_generation(const struct hypernodes *h)
{
    return h->generation;
}

size_t hypernode_count(const struct hypernodes *h)
{
    return h->n;
}

void hypernode_delete(struct hypernodes *h, const char *name)
{
    int found;
    size_t i = find(h, name, &found);
    if (!found)
        return;
    hnode_destroy(h->v[i]);
    memmove(&h->v[i], &h->v[i + 1], (h->n - i - 1) * sizeof(*h->v));
    h->n--;
    h->generation++;
}

/* Puts hn in the set, replacing the HyperNode of its name. */
static void put(struct hypernodes *h, struct hnode *hn)
{
    int found;
    size_t i = find(h, hn->name, &found);
    if (found) {
        hnode_destroy(h->v[i]);
    } else {
        if (h->n == h->cap) {
            h->cap = h->cap ? h->cap * 2 : 16;
            h->v = util_realloc(h->v, h->cap * sizeof(*h->v));
        }
        memmove(&h->v[i + 1], &h->v[i], (h->n - i) * sizeof(*h->v));
        h->n++;
    }
    h->v[i] = hn;
    h->generation++;
}

/* ---- parsing ---- */

static int32_t parse_tier(const json_t *spec)
{
    return (int32_t)json_integer_value(json_object_get(spec, "tier"));
}

static void add_req(struct member *m, const char *key, uint8_t op)
{
    m->reqs = util_realloc(m->reqs, (m->nreqs + 1) * sizeof(*m->reqs));
    m->reqs[m->nreqs++] = (struct label_req){.key = util_strdup(key), .op = op};
}

static void add_value(struct label_req *r, const char *v)
{
    r->values = util_realloc(r->values, (r->nvalues + 1) * sizeof(*r->values));
    r->values[r->nvalues++] = util_strdup(v);
}

/*
 * The literal every match of ERE pattern p starts with (when p begins with ^)
 * and ends with (when it ends with an unescaped $): the characters up to the
 * first special one, less a last one a quantifier may follow. Conservative:
 * none at all when p has an alternation anywhere.
 */
static void regex_literals(struct member *m, const char *p)
{
    static const char special[] = "\\.[]()*+?{}|^$";
    size_t len = strlen(p);
    m->prefix = util_strdup("");
    m->suffix = util_strdup("");
    if (strchr(p, '|') != NULL)
        return;
    if (p[0] == '^') {
        size_t n = strcspn(p + 1, special);
        if (n > 0 && strchr("*?{+", p[1 + n]) != NULL && p[1 + n] != '\0')
            n--; /* "^ab*": only "a" is sure */
        free(m->prefix);
        m->prefix = util_memdup(p + 1, n);
        m->nprefix = n;
    }
    if (len >= 2 && p[len - 1] == '$' && p[len - 2] != '\\') {
        size_t n = 0;
        while (n < len - 1 && strchr(special, p[len - 2 - n]) == NULL)
            n++;
        if (n > 0 && n < len - 1 && p[len - 2 - n] == '\\')
            n--; /* its first character is escaped: drop it */
        free(m->suffix);
        m->suffix = util_memdup(p + len - 1 - n, n);
        m->nsuffix = n;
    }
}

/* One matchExpressions requirement (hypercheck-valid) into m. */
static void parse_expr(struct member *m, const json_t *x)
{
    const char *op = json_string_value(json_object_get(x, "operator"));
    uint8_t code = 0;
    for (uint8_t k = 0; k < NKEYS(op_names); k++) {
        if (strcmp(op, op_names[k]) == 0)
            code = k;
    }
    add_req(m, json_string_value(json_object_get(x, "key")), code);
    const json_t *values = json_object_get(x, "values");
    for (size_t i = 0; i < json_array_size(values); i++)
        add_value(&m->reqs[m->nreqs - 1], json_string_value(json_array_get(values, i)));
}

/* A labelMatch (metav1.LabelSelector, borrowed, hypercheck-valid) into m. */
static void parse_labels(struct member *m, const json_t *sel)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), k, v)
    {
        add_req(m, k, OP_IN);
        add_value(&m->reqs[m->nreqs - 1], json_string_value(v));
    }
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, x)
    {
        parse_expr(m, x);
    }
}

/* The one selector of a member (sel borrowed, hypercheck-valid) into m; -1 with err when its pattern does not compile. */
static int parse_selector(struct member *m, const json_t *sel, struct error *err)
{
    static const char *const kinds[] = {[SEL_EXACT] = "exactMatch", [SEL_REGEX] = "regexMatch", [SEL_LABEL] = "labelMatch"};
    const json_t *s = NULL;
    for (uint8_t k = 0; k < NKEYS(kinds); k++) {
        const json_t *v = json_object_get(sel, kinds[k]);
        if (v != NULL && !json_is_null(v)) {
            s = v;
            m->kind = k;
        }
    }
    if (m->kind == SEL_LABEL) {
        parse_labels(m, s);
    } else if (m->kind == SEL_EXACT) {
        m->name = util_strdup(json_string_value(json_object_get(s, "name")));
    } else {
        const char *text = json_string_value(json_object_get(s, "pattern"));
        if (regcomp(&m->re, text, REG_EXTENDED | REG_NOSUB) != 0) {
            error_setf(err, "regexMatch.pattern: \"%s\" is not a valid regular expression", text);
            return -1; /* hypercheck compiled it: not reached */
        }
        m->compiled = 1;
        regex_literals(m, text);
    }
    return 0;
}

/* The members (hypercheck-valid) into hn. */
static int parse_members(struct hnode *hn, const json_t *members, struct error *err)
{
    size_t n = json_array_size(members);
    hn->members = util_calloc(n, sizeof(*hn->members));
    for (size_t i = 0; i < n; i++) {
        const json_t *mj = json_array_get(members, i);
        struct member *m = &hn->members[hn->nm++];
        m->hyper = util_streq(json_string_value(json_object_get(mj, "type")), "HyperNode");
        if (parse_selector(m, json_object_get(mj, "selector"), err) != 0)
            return -1;
    }
    return 0;
}

/* ---- the graph of children ---- */

/* Edges between the HyperNodes of h (indices of h->v), valid ones only, in compressed rows. */
struct graph {
    size_t *off; /* n + 1 */
    size_t *to;
    size_t len, cap;
};

static void edge(struct graph *g, size_t to)
{
    if (g->len == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 64;
        g->to = util_realloc(g->to, g->cap * sizeof(*g->to));
    }
    g->to[g->len++] = to;
}

/* The children of valid HyperNode i: the valid HyperNodes its HyperNode members name or match. */
static void children(const struct hypernodes *h, size_t i, struct graph *g)
{
    const struct hnode *hn = h->v[i];
    for (size_t k = 0; k < hn->nm; k++) {
        const struct member *m = &hn->members[k];
        if (!m->hyper)
            continue;
        if (m->kind == SEL_EXACT) {
            int found;
            size_t j = find(h, m->name, &found);
            if (found && h->v[j]->valid)
                edge(g, j);
            continue;
        }
        for (size_t j = 0; j < h->n; j++) {
            if (h->v[j]->valid && regexec(&m->re, h->v[j]->name, 0, NULL, 0) == 0)
                edge(g, j);
        }
    }
}

static void graph_build(const struct hypernodes *h, struct graph *g)
{
    *g = (struct graph){0};
    g->off = util_calloc(h->n + 1, sizeof(*g->off));
    for (size_t i = 0; i < h->n; i++) {
        g->off[i] = g->len;
        if (h->v[i]->valid)
            children(h, i, g);
    }
    g->off[h->n] = g->len;
}

static void graph_finish(struct graph *g)
{
    free(g->off);
    free(g->to);
}

/*
 * Marks in seen (n bytes, zeroed by the caller) every HyperNode reachable
 * from `from` by one edge or more, skipping those marked in skip (may be
 * NULL). Returns whether target is among them.
 */
static int reach(const struct graph *g, size_t n, size_t from, size_t target, uint8_t *seen, const uint8_t *skip)
{
    size_t *stack = util_malloc((n + 1) * sizeof(*stack));
    size_t top = 0;
    int hit = 0;
    stack[top++] = from;
    while (top > 0) {
        size_t i = stack[--top];
        for (size_t e = g->off[i]; e < g->off[i + 1]; e++) {
            size_t j = g->to[e];
            if (seen[j] || (skip != NULL && skip[j]))
                continue;
            seen[j] = 1;
            hit |= j == target;
            stack[top++] = j;
        }
    }
    free(stack);
    return hit;
}

/* Which HyperNodes lie on a cycle of children: into cyclic (h->n bytes). Returns how many. */
static size_t find_cycles(const struct hypernodes *h, const struct graph *g, uint8_t *cyclic)
{
    uint8_t *seen = util_malloc(h->n + 1);
    size_t count = 0;
    for (size_t i = 0; i < h->n; i++) {
        memset(seen, 0, h->n + 1);
        cyclic[i] = (uint8_t)reach(g, h->n, i, i, seen, NULL);
        count += cyclic[i];
    }
    free(seen);
    return count;
}

/* The name of a child through which valid HyperNode i reaches itself, or NULL. */
static const char *cycle_through(const struct hypernodes *h, size_t i)
{
    struct graph g;
    graph_build(h, &g);
    uint8_t *seen = util_malloc(h->n + 1);
    const char *out = NULL;
    for (size_t e = g.off[i]; e < g.off[i + 1] && out == NULL; e++) {
        memset(seen, 0, h->n + 1);
        seen[g.to[e]] = 1;
        if (g.to[e] == i || reach(&g, h->n, g.to[e], i, seen, NULL))
            out = h->v[g.to[e]]->name;
    }
    free(seen);
    graph_finish(&g);
    return out;
}

int hypernode_upsert(struct hypernodes *h, const json_t *obj, struct error *err)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    if (name == NULL || name[0] == '\0') {
        error_setf(err, "metadata.name: missing");
        return -1;
    }
    struct hnode *hn = util_calloc(1, sizeof(*hn));
    hn->name = util_strdup(name);
    const json_t *spec = json_object_get(obj, "spec");
    /* What is wrong with the object is the webhook's judgement too (hypercheck.h): one set of rules, one wording. */
    int rc = hypercheck_validate(obj, err);
    if (rc == 0) {
        hn->tier = parse_tier(spec);
        rc = parse_members(hn, json_object_get(spec, "members"), err);
    }
    if (rc != 0)
        hnode_members_free(hn); /* kept, invalid: only its name is used */
    hn->valid = rc == 0;
    put(h, hn);
    if (rc != 0)
        return -1;
    /* A cycle is the set's, not this object's: it stays valid, and hypernode_resolve leaves out every member of it. */
    int found;
    const char *via = cycle_through(h, find(h, name, &found));
    if (via != NULL) {
        error_setf(err, "spec.members: a cycle of HyperNodes through child %s leads back to %s", via, name);
        return -1;
    }
    return 0;
}

/* ---- resolution ---- */

static const char *node_label(const struct cache_node *n, const char *key)
{
    for (uint32_t i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    }
    return NULL;
}

static int req_holds(const struct cache_node *n, const struct label_req *r)
{
    const char *v = node_label(n, r->key);
    int in = 0;
    for (size_t i = 0; i < r->nvalues && v != NULL && !in; i++)
        in = strcmp(r->values[i], v) == 0;
    switch (r->op) {
    case OP_IN:
        return in;
    case OP_NOT_IN:
        return !in;
    case OP_EXISTS:
        return v != NULL;
    default:
        return v == NULL;
    }
}

/* Whether member m selects node n, whose name is nn bytes long. */
static int node_selected(const struct member *m, const struct cache_node *n, size_t nn)
{
    if (m->kind == SEL_REGEX) {
        if (nn < m->nprefix + m->nsuffix || memcmp(n->name, m->prefix, m->nprefix) != 0 ||
            memcmp(n->name + nn - m->nsuffix, m->suffix, m->nsuffix) != 0)
            return 0;
        return regexec(&m->re, n->name, 0, NULL, 0) == 0;
    }
    for (size_t i = 0; i < m->nreqs; i++) {
        if (!req_holds(n, &m->reqs[i]))
            return 0;
    }
    return m->nreqs > 0;
}

struct nodelist {
    struct cache_node **v;
    size_t n, cap;
};

static void nodelist_add(struct nodelist *l, struct cache_node *n)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = util_realloc(l->v, l->cap * sizeof(*l->v));
    }
    l->v[l->n++] = n;
}

/* A member as an index entry: its HyperNode's index and its own. */
#define MEMBER_REF(i, k) ((json_int_t)(i) << 24 | (json_int_t)(k))
#define MEMBER_OF(h, ref) (&(h)->v[(ref) >> 24]->members[(ref)&0xffffff])

/*
 * The regex and label members of the usable HyperNodes, for the walk over the
 * nodes: a label member with an In requirement (matchLabels' are) under
 * index[key][value] for each of its values, so that a node meets only the
 * members its labels can satisfy; every other one in scan.
 */
static void member_index(const struct hypernodes *h, const uint8_t *cyclic, json_t *index, json_t *scan)
{
    for (size_t i = 0; i < h->n; i++) {
        for (size_t k = 0; h->v[i]->valid && !cyclic[i] && k < h->v[i]->nm; k++) {
            const struct member *m = &h->v[i]->members[k];
            if (m->hyper || m->kind == SEL_EXACT)
                continue;
            const struct label_req *in = NULL;
            for (size_t r = 0; m->kind == SEL_LABEL && r < m->nreqs && in == NULL; r++)
                in = m->reqs[r].op == OP_IN ? &m->reqs[r] : NULL;
            if (in == NULL) {
                json_array_append_new(scan, json_integer(MEMBER_REF(i, k)));
                continue;
            }
            if (json_object_get(index, in->key) == NULL)
                json_object_set_new(index, in->key, json_object());
            json_t *values = json_object_get(index, in->key);
            for (size_t v = 0; v < in->nvalues; v++) {
                if (json_object_get(values, in->values[v]) == NULL)
                    json_object_set_new(values, in->values[v], json_array());
                json_array_append_new(json_object_get(values, in->values[v]), json_integer(MEMBER_REF(i, k)));
            }
        }
    }
}

/* Adds n to the HyperNodes of the members in refs (borrowed) that select it. */
static void try_members(const struct hypernodes *h, const json_t *refs, struct cache_node *n, struct nodelist *direct)
{
    size_t x, nn = strlen(n->name);
    const json_t *ref;
    json_array_foreach(refs, x, ref)
    {
        json_int_t r = json_integer_value(ref);
        if (node_selected(MEMBER_OF(h, r), n, nn))
            nodelist_add(&direct[r >> 24], n);
    }
}

/*
 * The cached nodes every usable (valid, not cyclic) HyperNode's Node members
 * select, into direct[] by HyperNode (duplicates possible). Exact names are
 * looked up; the nodes are walked once for the regex and label members.
 */
static void direct_nodes(const struct hypernodes *h, const uint8_t *cyclic, const struct cache *c, struct nodelist *direct)
{
    for (size_t i = 0; i < h->n; i++) {
        for (size_t k = 0; h->v[i]->valid && !cyclic[i] && k < h->v[i]->nm; k++) {
            const struct member *m = &h->v[i]->members[k];
            struct cache_node *n = !m->hyper && m->kind == SEL_EXACT ? cache_node_get(c, m->name) : NULL;
            if (n != NULL && n->present)
                nodelist_add(&direct[i], n);
        }
    }
    json_t *index = json_object(), *scan = json_array();
    member_index(h, cyclic, index, scan);
    struct cache_node *n;
    cache_node_for_each(n, c) {
        if (!n->present)
            continue;
        const char *key;
        const json_t *values;
        json_object_foreach(index, key, values)
        {
            const char *v = node_label(n, key);
            if (v != NULL)
                try_members(h, json_object_get(values, v), n, direct);
        }
        try_members(h, scan, n, direct);
    }
    json_decref(index);
    json_decref(scan);
}

static int by_node_name(const void *a, const void *b)
{
    return strcmp((*(struct cache_node *const *)a)->name, (*(struct cache_node *const *)b)->name);
}

static int by_tier_name(const void *a, const void *b)
{
    const struct hypernode_domain *x = a, *y = b;
    if (x->tier != y->tier)
        return x->tier < y->tier ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sorts l by name and drops repeats (one node, one interned name). */
static void nodelist_unique(struct nodelist *l)
{
    if (l->n == 0)
        return;
    qsort(l->v, l->n, sizeof(*l->v), by_node_name);
    size_t out = 1;
    for (size_t i = 1; i < l->n; i++) {
        if (l->v[i] != l->v[out - 1])
            l->v[out++] = l->v[i];
    }
    l->n = out;
}

/* The domain of HyperNode i: its own nodes and those of every HyperNode below it not on a cycle. */
static void cover(const struct hypernodes *h, const struct graph *g, const uint8_t *cyclic, const struct nodelist *direct, size_t i,
                  struct nodelist *out)
{
    uint8_t *seen = util_calloc(h->n + 1, 1);
    seen[i] = 1;
    reach(g, h->n, i, h->n, seen, cyclic);
    for (size_t j = 0; j < h->n; j++) {
        for (size_t k = 0; seen[j] && k < direct[j].n; k++)
            nodelist_add(out, direct[j].v[k]);
    }
    free(seen);
    nodelist_unique(out);
}

size_t hypernode_resolve(const struct hypernodes *h, const struct cache *c, struct hypernode_domain **out)
{
    struct graph g;
    graph_build(h, &g);
    uint8_t *cyclic = util_calloc(h->n + 1, 1);
    find_cycles(h, &g, cyclic);
    struct nodelist *direct = util_calloc(h->n + 1, sizeof(*direct));
    direct_nodes(h, cyclic, c, direct);
    struct hypernode_domain *d = util_calloc(h->n + 1, sizeof(*d));
    size_t nd = 0;
    for (size_t i = 0; i < h->n; i++) {
        if (!h->v[i]->valid || cyclic[i])
            continue;
        struct nodelist l = {0};
        cover(h, &g, cyclic, direct, i, &l);
        if (l.n == 0) {
            free(l.v);
            continue;
        }
        d[nd++] = (struct hypernode_domain){.name = h->v[i]->name, .tier = h->v[i]->tier, .nodes = l.v, .nn = l.n};
    }
    qsort(d, nd, sizeof(*d), by_tier_name);
    for (size_t i = 0; i < h->n; i++)
        free(direct[i].v);
    free(direct);
    free(cyclic);
    graph_finish(&g);
    *out = d;
    return nd;
}

void hypernode_domains_free(struct hypernode_domain *d, size_t n)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(d[i].nodes);
    free(d);
}
