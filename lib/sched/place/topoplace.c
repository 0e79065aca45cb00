#include "topoplace.h"

#include <stdlib.h>
#include <string.h>

#include "hold.h"
#include "util.h"

/* ---- sets ---- */

static int is_head(const struct cache_pod *pod)
{
    return pod->node_type != NULL && strcmp(pod->node_type, "head") == 0;
}

static const struct topo_group *group_of(const struct topo_request *r, const struct cache_pod *pod)
{
    for (size_t i = 0; pod->group != NULL && i < r->ngroups; i++) {
        if (r->groups[i].name != NULL && strcmp(r->groups[i].name, pod->group) == 0)
            return &r->groups[i];
    }
    return NULL;
}

/* Whether pod is in the gang-wide set. */
static int in_gang(const struct topo_request *r, const struct cache_pod *pod)
{
    return r->gang.mode != TOPO_MODE_NONE && (r->include_head || !is_head(pod));
}

/*
 * The inner set of pod (a group's own, or a slice), or 0: *c its constraint,
 * *group and *replica naming it. A slice under the gang-wide constraint alone
 * is no set of its own: the gang's domain holds it already.
 */
static int inner_of(const struct topo_request *r, const struct cache_pod *pod, const struct topo_constraint **c, const char **group,
                    const char **replica)
{
    const struct topo_group *g = is_head(pod) ? NULL : group_of(r, pod);
    if (g == NULL || g->c.mode == TOPO_MODE_NONE)
        return 0;
    *c = &g->c;
    *group = g->name;
    *replica = g->hosts > 1 ? pod->replica : NULL;
    return 1;
}

const struct topoplace_set *topoplace_set_of(const struct topoplace_out *out, const struct topo_request *r,
                                             const struct cache_pod *pod)
{
    const struct topo_constraint *c;
    const char *group, *replica;
    int inner = inner_of(r, pod, &c, &group, &replica);
    for (size_t i = 0; inner && i < out->nsets; i++) {
        const struct topoplace_set *s = &out->sets[i];
        if (s->group != NULL && strcmp(s->group, group) == 0 &&
            (replica == NULL ? s->replica == NULL : s->replica != NULL && strcmp(s->replica, replica) == 0))
            return s;
    }
    for (size_t i = 0; in_gang(r, pod) && i < out->nsets; i++) {
        if (out->sets[i].group == NULL)
            return &out->sets[i];
    }
    return NULL;
}

void topoplace_out_init(struct topoplace_out *o)
{
    memset(o, 0, sizeof(*o));
}

void topoplace_out_finish(struct topoplace_out *o)
{
    if (o == NULL)
        return;
    free(o->sets);
    topoplace_out_init(o);
}

static void out_add(struct topoplace_out *o, const char *group, const char *replica, const struct topo_constraint *c,
                    const struct topo_domain *d)
{
    if (o->nsets == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 4;
        o->sets = util_realloc(o->sets, o->cap * sizeof(*o->sets));
    }
    o->sets[o->nsets++] = (struct topoplace_set){group, replica, c, d};
    o->spread |= d == NULL;
}

/* ---- one call ---- */

/* A set being placed: its pods (unbound), the nodes its bound pods pin it to. */
struct set {
    const struct topo_constraint *c;
    const char *group, *replica; /* both NULL: the gang-wide set */
    struct cache_pod **pods;
    size_t n, cap;
    uint32_t *pins; /* fit indices of its bound pods' nodes */
    size_t npins, pins_cap;
};

struct call {
    struct fit *f;
    struct topodomains *t;
    const struct cache *c;
    const struct topo_request *r;
    struct set gang;   /* the gang-wide set's pods that are in no inner set */
    struct set *inner; /* groups' own sets and slices */
    size_t ninner, inner_cap;
    struct cache_pod **rest; /* in no set: placed anywhere */
    size_t nrest;
    int64_t *need;              /* scratch: a set's summed request, by resource id */
    int64_t *room;              /* scratch: a domain's summed free room */
    int64_t *best;              /* per resource (pods last): the most free room of one domain, by candidates() at top level */
    size_t *best_at;            /* which domain (its index) */
    const struct set *best_for; /* the set best was computed for; NULL: none */
    struct topoplace_out *out;
    char *why; /* the first hard failure's text */
};

static void set_push(struct set *s, struct cache_pod *pod)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->pods = util_realloc(s->pods, s->cap * sizeof(*s->pods));
    }
    s->pods[s->n++] = pod;
}

static void set_pin(struct set *s, const struct fit *f, const struct cache_pod *pod)
{
    size_t at = pod->node != NULL ? fit_node_index(f, pod->node) : SIZE_MAX;
    if (at == SIZE_MAX)
        return;
    if (s->npins == s->pins_cap) {
        s->pins_cap = s->pins_cap ? s->pins_cap * 2 : 4;
        s->pins = util_realloc(s->pins, s->pins_cap * sizeof(*s->pins));
    }
    s->pins[s->npins++] = (uint32_t)at;
}

/* The inner set pod goes in, made on first sight. */
static struct set *inner_set(struct call *k, const struct topo_constraint *c, const char *group, const char *replica)
{
    for (size_t i = 0; i < k->ninner; i++) {
        struct set *s = &k->inner[i];
        if (strcmp(s->group, group) == 0 &&
            (replica == NULL ? s->replica == NULL : s->replica != NULL && strcmp(s->replica, replica) == 0))
            return s;
    }
    if (k->ninner == k->inner_cap) {
        k->inner_cap = k->inner_cap ? k->inner_cap * 2 : 4;
        k->inner = util_realloc(k->inner, k->inner_cap * sizeof(*k->inner));
    }
    struct set *s = &k->inner[k->ninner++];
    memset(s, 0, sizeof(*s));
    s->c = c;
    s->group = group;
    s->replica = replica;
    return s;
}

/* Sorts a pod into its set: inner first, else the gang's, else the rest. bound: it only pins its set. */
static void classify(struct call *k, struct cache_pod *pod, int bound)
{
    const struct topo_constraint *c;
    const char *group, *replica;
    struct set *s = NULL;
    if (inner_of(k->r, pod, &c, &group, &replica))
        s = inner_set(k, c, group, replica);
    else if (in_gang(k->r, pod))
        s = &k->gang;
    if (bound) {
        if (s != NULL)
            set_pin(s, k->f, pod);
        if (s != NULL && s != &k->gang && in_gang(k->r, pod))
            set_pin(&k->gang, k->f, pod);
    } else if (s != NULL) {
        set_push(s, pod);
    } else {
        k->rest[k->nrest++] = pod;
    }
}

static void call_finish(struct call *k)
{
    free(k->gang.pods);
    free(k->gang.pins);
    for (size_t i = 0; i < k->ninner; i++) {
        free(k->inner[i].pods);
        free(k->inner[i].pins);
    }
    free(k->inner);
    free(k->rest);
    free(k->need);
    free(k->room);
    free(k->best);
    free(k->best_at);
    free(k->why);
}

/* ---- domains ---- */

/* k->need: the summed requests of s's pods (with with_inner, the inner sets' too: they lie in the gang's domain), by resource id,
 * pods last. */
static void sum_need(struct call *k, const struct set *s, int with_inner)
{
    uint32_t nres = fit_resources(k->f);
    memset(k->need, 0, (nres + 1) * sizeof(*k->need));
    for (size_t pass = 0; pass <= (with_inner ? k->ninner : 0); pass++) {
        const struct set *x = pass == 0 ? s : &k->inner[pass - 1];
        for (size_t i = 0; i < x->n; i++) {
            const struct shape_rl *req = model_pod_fit_request(x->pods[i]);
            for (uint32_t j = 0; req != NULL && j < req->len; j++)
                k->need[req->items[j].id] = util_sat_add(k->need[req->items[j].id], req->items[j].value);
            k->need[nres]++; /* pods */
        }
    }
}

/* k->room: the free room of nodes[0..nn), summed, by resource id (pods last). */
static void sum_room(struct call *k, const uint32_t *nodes, size_t nn)
{
    uint32_t nres = fit_resources(k->f);
    memset(k->room, 0, (nres + 1) * sizeof(*k->room));
    for (size_t i = 0; i < nn; i++) {
        int64_t pods;
        const int64_t *free_room = fit_node_free(k->f, nodes[i], &pods);
        for (uint32_t j = 0; j < nres; j++) {
            if (k->need[j] > 0 && free_room[j] > 0)
                k->room[j] = util_sat_add(k->room[j], free_room[j]);
        }
        k->room[nres] = util_sat_add(k->room[nres], pods > 0 ? pods : 0);
    }
}

/* Whether k->room covers k->need; *score: the room left over, a fraction per resource needed, summed (less is tighter). */
static int covers(const struct call *k, double *score)
{
    uint32_t nres = fit_resources(k->f);
    *score = 0;
    for (uint32_t j = 0; j <= nres; j++) {
        if (k->need[j] <= 0)
            continue;
        if (k->room[j] < k->need[j])
            return 0;
        *score += (double)(k->room[j] - k->need[j]) / (double)k->room[j];
    }
    return 1;
}

/* A domain a set may go to: its nodes (within another domain's, when nested), and how tightly the set fits. */
struct cand {
    const struct topo_domain *d;
    const uint32_t *nodes;
    size_t nn;
    uint32_t *own; /* owned: nodes, when cut to another domain's */
    double score;
    size_t order;
};

static int cmp_cand(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score < b->score ? -1 : 1;
    if (a->d->tier != b->d->tier)
        return a->d->tier < b->d->tier ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

/* d's nodes that are also within's (both ascending), new array; *nn its length. */
static uint32_t *intersect(const struct topo_domain *d, const struct topo_domain *within, size_t *nn)
{
    uint32_t *out = util_calloc(d->nn ? d->nn : 1, sizeof(*out));
    size_t i = 0, j = 0, n = 0;
    while (i < d->nn && j < within->nn) {
        if (d->nodes[i] == within->nodes[j]) {
            out[n++] = d->nodes[i];
            i++, j++;
        } else if (d->nodes[i] < within->nodes[j]) {
            i++;
        } else {
            j++;
        }
    }
    *nn = n;
    return out;
}

static int holds_pins(const struct set *s, const uint32_t *nodes, size_t nn)
{
    for (size_t i = 0; i < s->npins; i++) {
        struct topo_domain d = {.nodes = (uint32_t *)nodes, .nn = nn};
        if (!topodomain_has(&d, s->pins[i]))
            return 0;
    }
    return 1;
}

/* The domains of s's constraint (within another's, or NULL) whose summed room covers the set (next_best() takes them in order). */
static size_t candidates(struct call *k, const struct set *s, const struct topo_domain *within, struct cand **out)
{
    size_t nd;
    const struct topo_domain *ds = topodomain_get(k->t, s->c, &nd);
    struct cand *cs = NULL;
    size_t nc = 0, cap = 0;
    sum_need(k, s, s == &k->gang);
    uint32_t nres = fit_resources(k->f);
    if (within == NULL) { /* what fail_text() says of the largest domain */
        memset(k->best, 0, (nres + 1) * sizeof(*k->best));
        memset(k->best_at, 0, (nres + 1) * sizeof(*k->best_at));
        k->best_for = s;
    }
    const int64_t *sums = within == NULL ? topodomain_sums(k->t, s->c, &nd) : NULL;
    for (size_t i = 0; i < nd; i++) {
        struct cand x = {.d = &ds[i], .nodes = ds[i].nodes, .nn = ds[i].nn, .order = i};
        if (within != NULL)
            x.nodes = x.own = intersect(&ds[i], within, &x.nn);
        if (sums != NULL) /* kept up to date by topodomain: O(domains), not O(nodes) */
            memcpy(k->room, sums + i * (nres + 1), (nres + 1) * sizeof(*k->room));
        else
            sum_room(k, x.nodes, x.nn);
        for (uint32_t j = 0; within == NULL && j <= nres; j++) {
            if (k->need[j] > 0 && k->room[j] > k->best[j])
                k->best[j] = k->room[j], k->best_at[j] = i;
        }
        if (x.nn > 0 && holds_pins(s, x.nodes, x.nn) && covers(k, &x.score)) {
            if (nc == cap) {
                cap = cap ? cap * 2 : 8;
                cs = util_realloc(cs, cap * sizeof(*cs));
            }
            cs[nc++] = x;
        } else {
            free(x.own);
        }
    }
    *out = cs;
    return nc;
}

/*
 * The best of cs[0..*left) (cmp_cand's order), moved to cs[*left - 1] and
 * *left decremented: the domains are taken best first without sorting them
 * all, as the first one mostly holds the set.
 */
static const struct cand *next_best(struct cand *cs, size_t *left)
{
    size_t best = 0;
    for (size_t i = 1; i < *left; i++) {
        if (cmp_cand(&cs[i], &cs[best]) < 0)
            best = i;
    }
    struct cand x = cs[best];
    cs[best] = cs[*left - 1];
    cs[--*left] = x;
    return &cs[*left];
}

static void free_cands(struct cand *cs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(cs[i].own);
    free(cs);
}

/* Every node of the pass, for pods placed anywhere while others are tentative (fit_place_on: no memo to spoil). */
static const uint32_t *all_nodes(struct call *k, size_t *nn)
{
    return topodomain_all(k->t, nn);
}

/* Places s's pods on nodes (NULL: every node); 1 when all fit. */
static int place_on(struct call *k, const struct set *s, const uint32_t *nodes, size_t nn)
{
    if (nodes == NULL)
        nodes = all_nodes(k, &nn);
    return fit_place_on(k->f, s->pods, s->n, nodes, nn) == s->n;
}

/*
 * Places s in its best-fit domain within `within` (NULL: anywhere). Returns 1
 * placed (*chosen its domain; NULL when a soft set found none and spread
 * within `within`), 0 not (nothing of s placed).
 */
static int place_set(struct call *k, const struct set *s, const struct topo_domain *within, const struct topo_domain **chosen)
{
    struct cand *cs;
    size_t nc = candidates(k, s, within, &cs);
    int ok = 0;
    for (size_t left = nc; left > 0 && !ok;) {
        const struct cand *x = next_best(cs, &left);
        ok = place_on(k, s, x->nodes, x->nn);
        *chosen = x->d;
    }
    free_cands(cs, nc);
    if (!ok && s->c->mode == TOPO_MODE_SOFT) {
        *chosen = NULL;
        ok = place_on(k, s, within != NULL ? within->nodes : NULL, within != NULL ? within->nn : 0);
    }
    return ok;
}

/* "16 nvidia.com/gpu", "4Gi memory"; without named, only "16" */
static void put_amount(struct util_buf *b, const struct call *k, uint32_t id, int64_t v, int named)
{
    if (id == fit_resources(k->f)) {
        util_buf_printf(b, named ? "%lld pods" : "%lld", (long long)v);
        return;
    }
    const char *name = cache_resource_name(k->c, id);
    int binary = strcmp(name, "memory") == 0 || strcmp(name, "ephemeral-storage") == 0;
    resources_put_quantity(b, name, v, binary ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI);
    if (named)
        util_buf_printf(b, " %s", name);
}

/* No domain: no node carries the key, or no HyperNode of an allowed tier covers one. */
static void put_no_domain(struct util_buf *b, const struct topo_constraint *c)
{
    if (c->by == TOPO_BY_LABEL)
        util_buf_printf(b, "no Ready node carries label %s", c->key != NULL ? c->key : "");
    else if (c->max_tier > 0)
        util_buf_printf(b, "no HyperNode of tier <= %d covers a Ready node", (int)c->max_tier);
    else
        util_buf_printf(b, "no HyperNode covers a Ready node");
}

/*
 * Why s fits no domain (new string): "needs 16 nvidia.com/gpu in one rack
 * domain; largest free domain: r2 with 12 (cluster-wide free: 40)", on the
 * resource the set is shortest of.
 */
static char *fail_text(struct call *k, const struct set *s)
{
    char what[256];
    size_t nd;
    const struct topo_domain *ds = topodomain_get(k->t, s->c, &nd);
    uint32_t nres = fit_resources(k->f), key = nres;
    struct util_buf b = {0};
    if (s->replica != NULL)
        util_buf_printf(&b, "slice %s of group %s ", s->replica, s->group);
    else if (s->group != NULL)
        util_buf_printf(&b, "group %s ", s->group);
    topology_constraint_text(s->c, what, sizeof(what));
    if (nd == 0) {
        util_buf_printf(&b, "needs %s, but ", what);
        put_no_domain(&b, s->c);
        return util_buf_take(&b);
    }
    if (k->best_for != s) { /* candidates() for s at top level sums every domain's room */
        struct cand *cs;
        size_t nc = candidates(k, s, NULL, &cs);
        free_cands(cs, nc);
    }
    sum_need(k, s, s == &k->gang);
    const int64_t *best = k->best, *total = topodomain_total(k->t);
    const size_t *best_at = k->best_at;
    double worst = -1;
    for (uint32_t j = 0; j <= nres; j++) { /* the resource the best domain is shortest of */
        double ratio = k->need[j] > 0 ? (double)k->need[j] / (double)(best[j] > 0 ? best[j] : 1) : -1;
        if (ratio > worst)
            worst = ratio, key = j;
    }
    util_buf_puts(&b, "needs ");
    put_amount(&b, k, key, k->need[key], 1);
    util_buf_printf(&b, " in %s; largest free domain: %s with ", what, ds[best_at[key]].name);
    put_amount(&b, k, key, best[key], 0);
    util_buf_puts(&b, " (cluster-wide free: ");
    put_amount(&b, k, key, total[key], 0);
    util_buf_puts(&b, worst <= 1 ? "), but no domain fits its pods node by node" : ")");
    return util_buf_take(&b);
}

/* Places every inner set within `within` (NULL: anywhere), recording them. */
static int place_inner(struct call *k, const struct topo_domain *within)
{
    for (size_t i = 0; i < k->ninner; i++) {
        const struct set *s = &k->inner[i];
        const struct topo_domain *d = NULL;
        if (s->n == 0 && s->npins == 0)
            continue;
        if (!place_set(k, s, within, &d)) {
            if (within == NULL && k->why == NULL)
                k->why = fail_text(k, s);
            return 0;
        }
        out_add(k->out, s->group, s->replica, s->c, d);
    }
    return 1;
}

/*
 * The gang-wide set with its inner sets, in the best-fit domain that holds
 * them all; a soft one that finds none spreads (its inner sets still in
 * domains of their own where they can be).
 */
static int place_gang(struct call *k)
{
    struct cand *cs;
    size_t nc = candidates(k, &k->gang, NULL, &cs);
    int ok = 0;
    for (size_t left = nc; left > 0 && !ok;) {
        const struct cand *x = next_best(cs, &left);
        size_t mark = fit_mark(k->f), nsets = k->out->nsets;
        struct topo_domain cut = *x->d;
        cut.nodes = (uint32_t *)x->nodes;
        cut.nn = x->nn;
        ok = place_inner(k, &cut) && place_on(k, &k->gang, x->nodes, x->nn);
        if (ok) {
            out_add(k->out, NULL, NULL, k->r->gang.mode != TOPO_MODE_NONE ? &k->r->gang : NULL, x->d);
        } else {
            fit_undo(k->f, mark);
            k->out->nsets = nsets;
            k->out->spread = 0;
        }
    }
    free_cands(cs, nc);
    if (ok)
        return 1;
    if (k->r->gang.mode == TOPO_MODE_SOFT) {
        if (!place_inner(k, NULL))
            return 0; /* a hard inner set holds nowhere: k->why says so */
        if (place_on(k, &k->gang, NULL, 0)) {
            out_add(k->out, NULL, NULL, &k->r->gang, NULL);
            return 1;
        }
        if (k->why == NULL)
            k->why = util_strdup("its pods do not fit the nodes, even across domains");
        return -1;
    }
    if (k->why == NULL)
        k->why = fail_text(k, &k->gang);
    return 0;
}

/* ---- the memo ---- */

/* Whether r asks for a gang-wide constraint only, the one the memo can speak for. */
static int memo_kind(const struct topo_request *r, size_t nbound)
{
    return nbound == 0 && r->ngroups == 0 && r->gang.mode != TOPO_MODE_NONE;
}

static int memo_same(const struct topo_memo *m, uint64_t room, const struct topo_request *r, struct cache_pod **pods, size_t n)
{
    const struct topo_constraint *c = &r->gang;
    if (m->why == NULL || m->room != room || m->n != n || m->mode != c->mode || m->by != c->by || m->max_tier != c->max_tier ||
        strcmp(m->key != NULL ? m->key : "", c->key != NULL ? c->key : "") != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (m->req[i] != model_pod_fit_request(pods[i]) || m->sched[i] != pods[i]->sched || m->in_set[i] != in_gang(r, pods[i]))
            return 0;
    }
    return 1;
}

static void memo_store(struct topo_memo *m, uint64_t room, const struct topo_request *r, struct cache_pod **pods, size_t n,
                       const char *why, int rc)
{
    if (n > m->cap) {
        m->cap = n;
        m->req = util_realloc(m->req, n * sizeof(*m->req));
        m->sched = util_realloc(m->sched, n * sizeof(*m->sched));
        m->in_set = util_realloc(m->in_set, n * sizeof(*m->in_set));
    }
    for (size_t i = 0; i < n; i++) {
        m->req[i] = model_pod_fit_request(pods[i]);
        m->sched[i] = pods[i]->sched;
        m->in_set[i] = (uint8_t)in_gang(r, pods[i]);
    }
    m->n = n;
    m->room = room;
    m->mode = r->gang.mode;
    m->by = r->gang.by;
    m->max_tier = r->gang.max_tier;
    free(m->key);
    m->key = util_strdup(r->gang.key);
    free(m->why);
    m->why = util_strdup(why);
    m->rc = rc;
}

/* ---- the gang ---- */

int topoplace_gang(struct fit *f, struct topodomains *t, const struct cache *c, const struct topo_request *r,
                   struct cache_pod **pods, size_t n, struct cache_pod *const *bound, size_t nbound, struct topoplace_out *out,
                   char **why)
{
    uint64_t room = fit_room_version(f);
    int memo = memo_kind(r, nbound) && fit_mark(f) == 0; /* nothing tentative: the room is what its version says */
    for (size_t i = 0; memo && i < TOPO_MEMOS; i++) {
        const struct topo_memo *m = topodomain_memo(t, i);
        if (memo_same(m, room, r, pods, n)) {
            *why = util_strdup(m->why);
            return m->rc;
        }
    }
    uint32_t nres = fit_resources(f);
    struct call k = {.f = f, .t = t, .c = c, .r = r, .out = out};
    k.rest = util_calloc(n ? n : 1, sizeof(*k.rest));
    k.need = util_calloc(nres + 1, sizeof(*k.need));
    k.room = util_calloc(nres + 1, sizeof(*k.room));
    k.best = util_calloc(nres + 1, sizeof(*k.best));
    k.best_at = util_calloc(nres + 1, sizeof(*k.best_at));
    k.gang.c = &r->gang;
    for (size_t i = 0; i < nbound; i++)
        classify(&k, bound[i], 1);
    for (size_t i = 0; i < n; i++)
        classify(&k, pods[i], 0);
    size_t mark = fit_mark(f);
    int rc = r->gang.mode != TOPO_MODE_NONE ? place_gang(&k) : place_inner(&k, NULL);
    if (rc == 1 && k.nrest > 0) {
        size_t nall;
        const uint32_t *all = all_nodes(&k, &nall);
        size_t at = fit_place_on(f, k.rest, k.nrest, all, nall);
        if (at < k.nrest) {
            rc = -1;
            k.why = util_strdupf("no node fits pod %s after the gang's other pods were placed in their domains", k.rest[at]->name);
        }
    }
    if (rc != 1) {
        fit_undo(f, mark);
        topoplace_out_finish(out);
        *why = k.why != NULL ? k.why : util_strdup("no domain holds it");
        k.why = NULL;
        if (memo)
            memo_store(topodomain_memo_slot(t), room, r, pods, n, *why, rc);
    }
    call_finish(&k);
    return rc;
}
