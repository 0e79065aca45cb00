#include "fit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitsort.h"
#include "fitwhy.h"
#include "ledger.h"
#include "quantity.h"
#include "resources.h"
#include "util.h"

void fit_request_text(struct util_buf *b, const struct cache *c, const struct shape_rl *req)
{
    for (uint32_t k = 0; req != NULL && k < req->len; k++) {
        const char *name = cache_resource_name(c, req->items[k].id);
        util_buf_printf(b, "%s%s ", k ? ", " : "", name);
        resources_put_quantity(b, name, req->items[k].value, req->items[k].format);
    }
}

/* A pod shape (request, constraints) seen in this pass. Free room only shrinks during a pass, so a node
 * that could not hold a shape never will until the pass ends, and a shape that fit nowhere never fits. */
struct fit_shape {
    const struct shape_rl *req;
    const struct shape_sched *sched;
    size_t start;  /* nodes before it do not fit the shape */
    int failed;    /* fits no node */
    size_t stamp;  /* commits when message was written */
    char *message; /* what follows "no node fits pod NAME" */
};

struct fit_placed {
    uint32_t node;
    int32_t sign; /* 1: a pod placed; -1: a bound pod's room given back (fit_release) */
    const struct shape_rl *req;
};

/* The last gang that did not fit the nodes: its pods' shapes, in placement order, and the outcome. */
struct fit_memo {
    const struct shape_rl **req;
    const struct shape_sched **sched;
    size_t n, cap;
    size_t failed;  /* index of the pod that fit nowhere */
    size_t commits; /* commits when it failed */
    char *why;      /* fit_place()'s text, or NULL when no memo */
};

struct fit {
    const struct cache *c;
    /* Kept across passes. */
    struct cache_node **nodes; /* Ready, schedulable nodes by name */
    size_t nn;
    int stale;          /* nodes is to be built again (fit_nodes_changed) */
    uint64_t nodes_gen; /* bumped by every build of nodes */
    /* The nodes' free DRA devices (device_room), kept while neither the ledger nor the nodes change: nn x ndev, -1 where
       the node advertises the resource itself; and the resource ids they are for. */
    int64_t *dev_free;
    uint32_t *dev_ids;
    size_t ndev;
    uint64_t dev_ledger_gen, dev_nodes_gen;
    uint32_t dev_nresources; /* the resource names known then: a device resource a pod names later is surveyed then */
    int dev_valid;
    uint32_t *touched; /* nodes whose free room changed this pass, in order, repeats kept (fit_touched) */
    size_t ntouched, captouched;
    /*
     * What the last fit_begin() built, for the next to catch up from (restore()): each node's
     * cache_node.room_gen when its row was read, and the layout the rows were built with.
     */
    uint64_t *row_gen;
    int built;                /* free, free_pods, pos and tree hold the last pass's room */
    uint32_t built_nres;      /* nres then */
    uint64_t built_nodes_gen; /* nodes_gen then */
    void *buf[6];             /* free room, free pods, trees, sort weights, pos, debt */
    size_t cap[6];
    /* One pass's. */
    uint32_t nres;
    int64_t *free;      /* nn x nres */
    int64_t *free_pods; /* nn */
    int64_t *pos;       /* nres + 1: the free room summed over the nodes, each counted at least 0 (the last: pod slots) */
    int64_t *debt;      /* nres + 1: what pods held on nodes short of room lack there (fit_take_on), owed by the others */
    int indebted;       /* some debt */
    /*
     * Max trees over the nodes' free room, one per resource and one for pods
     * (dimension nres): tree[d * 2 * leaves + k], leaf k of node i at k = leaves + i,
     * a parent holds the larger of its children. A first-fit search skips every
     * subtree without room, so placing a pod costs about log(nodes), not nodes.
     */
    size_t leaves;
    int64_t *tree;
    size_t ntainted; /* nodes with a NoSchedule or NoExecute taint */
    struct fit_shape *shapes;
    size_t nshapes, capshapes;
    struct fit_placed *log; /* tentative placements */
    size_t nlog, caplog;
    size_t commits;
    struct fit_memo memo;
    uint32_t cpu, memory; /* resource ids, or UINT32_MAX */
    struct fitsort sort;  /* fit_sort_larger_first's weights, kept across passes */
};

/* Buffers kept across passes: big ones would otherwise be mapped and faulted in anew each time. */
enum { BUF_FREE, BUF_FREE_PODS, BUF_TREE, BUF_UNUSED, BUF_POS, BUF_DEBT };

/* Buffer kind of at least n * size bytes, zeroed if zero; its contents are the caller's until the next call for that kind. */
static void *buffer(struct fit *f, int kind, size_t n, size_t size, int zero)
{
    return util_scratch(&f->buf[kind], &f->cap[kind], n, size, zero);
}

void fit_sort_larger_first(struct fit *f, struct cache_pod **pods, size_t n)
{
    fitsort_larger_first(&f->sort, pods, n, 0);
}

void fit_sort_larger_first_stable(struct fit *f, struct cache_pod **pods, size_t n)
{
    fitsort_larger_first(&f->sort, pods, n, 1);
}

static int cmp_node_name(const void *pa, const void *pb)
{
    const struct cache_node *a = *(const struct cache_node *const *)pa, *b = *(const struct cache_node *const *)pb;
    return strcmp(a->name, b->name);
}

/* ---- node fit ---- */

static const char *node_label(const struct cache_node *n, const char *key)
{
    for (uint32_t i = 0; i < n->nlabels; i++) {
        if (n->labels[i].key == key)
            return n->labels[i].value;
    }
    return NULL;
}

static int expr_matches(const struct cache_node *n, const struct shape_expr *x)
{
    const char *v = x->field_name ? (strcmp(x->key, "metadata.name") == 0 ? n->name : NULL) : node_label(n, x->key);
    int in = 0;
    for (uint32_t i = 0; i < x->nvalues && v != NULL; i++) {
        /* Interned, except a node name against values: compare text. */
        if (x->values[i] == v || strcmp(x->values[i], v) == 0)
            in = 1;
    }
    int64_t a, b;
    switch (x->op) {
    case SHAPE_OP_IN:
        return in;
    case SHAPE_OP_NOT_IN:
        return !in;
    case SHAPE_OP_EXISTS:
        return v != NULL;
    case SHAPE_OP_DOES_NOT_EXIST:
        return v == NULL;
    case SHAPE_OP_GT:
    case SHAPE_OP_LT:
        if (v == NULL || x->nvalues != 1 || util_parse_int64(v, &a) != 0 || util_parse_int64(x->values[0], &b) != 0)
            return 0;
        return x->op == SHAPE_OP_GT ? a > b : a < b;
    }
    return 0;
}

static int selector_matches(const struct cache_node *n, const struct shape_sched *s)
{
    if (s == NULL)
        return 1;
    for (uint32_t i = 0; i < s->nselector; i++) {
        if (node_label(n, s->selector[i].key) != s->selector[i].value)
            return 0;
    }
    if (s->nterms == 0)
        return 1;
    for (uint32_t t = 0; t < s->nterms; t++) {
        const struct shape_term *term = &s->terms[t];
        int ok = term->len > 0; /* an empty term matches no node */
        for (uint32_t e = 0; e < term->len && ok; e++)
            ok = expr_matches(n, &term->exprs[e]);
        if (ok)
            return 1;
    }
    return 0;
}

static int tolerates(const struct shape_toleration *tol, const struct shape_taint *taint)
{
    if (tol->effect != SHAPE_EFFECT_ANY && tol->effect != taint->effect)
        return 0;
    if (tol->key == NULL)
        return tol->exists; /* empty key with Exists tolerates everything */
    if (tol->key != taint->key)
        return 0;
    return tol->exists || tol->value == taint->value;
}

static int taints_tolerated(const struct cache_node *n, const struct shape_sched *s)
{
    for (uint32_t i = 0; i < n->ntaints; i++) {
        int ok = 0;
        for (uint32_t j = 0; s != NULL && j < s->ntolerations && !ok; j++)
            ok = tolerates(&s->tolerations[j], &n->taints[i]);
        if (!ok)
            return 0;
    }
    return 1;
}

static int room_for(const struct fit *f, size_t i, const struct shape_rl *req)
{
    if (f->free_pods[i] < 1)
        return 0;
    const int64_t *room = f->free + i * f->nres;
    for (uint32_t k = 0; req != NULL && k < req->len; k++) {
        if (room[req->items[k].id] < req->items[k].value)
            return 0;
    }
    return 1;
}

static int64_t *tree_dim(const struct fit *f, uint32_t d)
{
    return f->tree + (size_t)d * 2 * f->leaves;
}

/* Node i's free room of dimension d changed: fix the maxima above its leaf. */
static void tree_update(struct fit *f, uint32_t d, size_t i)
{
    int64_t *t = tree_dim(f, d);
    size_t k = f->leaves + i;
    t[k] = d < f->nres ? f->free[i * f->nres + d] : f->free_pods[i];
    for (k >>= 1; k >= 1; k >>= 1) {
        int64_t m = t[2 * k] > t[2 * k + 1] ? t[2 * k] : t[2 * k + 1];
        if (t[k] == m)
            break;
        t[k] = m;
    }
}

static void tree_build(struct fit *f)
{
    f->leaves = 1;
    while (f->leaves < f->nn)
        f->leaves *= 2;
    f->tree = buffer(f, BUF_TREE, (size_t)(f->nres + 1) * 2 * f->leaves, sizeof(*f->tree), 0);
    for (uint32_t d = 0; d <= f->nres; d++) {
        int64_t *t = tree_dim(f, d);
        for (size_t k = 0; k < f->leaves; k++)
            t[f->leaves + k] = k >= f->nn ? -1 : d < f->nres ? f->free[k * f->nres + d] : f->free_pods[k];
        for (size_t k = f->leaves - 1; k >= 1; k--)
            t[k] = t[2 * k] > t[2 * k + 1] ? t[2 * k] : t[2 * k + 1];
    }
}

static int64_t at_least_0(int64_t v)
{
    return v > 0 ? v : 0;
}

static void take(struct fit *f, size_t i, const struct shape_rl *req, int sign)
{
    int64_t *room = f->free + i * f->nres;
    for (uint32_t k = 0; req != NULL && k < req->len; k++) {
        int64_t *r = &room[req->items[k].id], was = *r;
        *r -= sign * req->items[k].value;
        f->pos[req->items[k].id] = util_sat_add(f->pos[req->items[k].id], at_least_0(*r) - at_least_0(was));
        tree_update(f, req->items[k].id, i);
    }
    f->pos[f->nres] = util_sat_add(f->pos[f->nres], at_least_0(f->free_pods[i] - sign) - at_least_0(f->free_pods[i]));
    f->free_pods[i] -= sign;
    tree_update(f, f->nres, i);
    if (f->ntouched == f->captouched) {
        f->captouched = f->captouched ? f->captouched * 2 : 256;
        f->touched = util_realloc(f->touched, f->captouched * sizeof(*f->touched));
    }
    f->touched[f->ntouched++] = (uint32_t)i;
}

/* take() and remember it, to be undone. */
static void log_take(struct fit *f, size_t i, const struct shape_rl *req, int sign)
{
    if (f->nlog == f->caplog) {
        f->caplog = f->caplog ? f->caplog * 2 : 64;
        f->log = util_realloc(f->log, f->caplog * sizeof(*f->log));
    }
    f->log[f->nlog].node = (uint32_t)i;
    f->log[f->nlog].sign = sign;
    f->log[f->nlog].req = req;
    f->nlog++;
    take(f, i, req, sign);
}

static struct fit_shape *shape_get(struct fit *f, const struct cache_pod *pod)
{
    for (size_t i = 0; i < f->nshapes; i++) {
        if (f->shapes[i].req == model_pod_fit_request(pod) && f->shapes[i].sched == pod->sched)
            return &f->shapes[i];
    }
    if (f->nshapes == f->capshapes) {
        f->capshapes = f->capshapes ? f->capshapes * 2 : 16;
        f->shapes = util_realloc(f->shapes, f->capshapes * sizeof(*f->shapes));
    }
    struct fit_shape *s = &f->shapes[f->nshapes++];
    memset(s, 0, sizeof(*s));
    s->req = model_pod_fit_request(pod);
    s->sched = pod->sched;
    return s;
}

/* The nodes pod could go to, and the most free room of each resource it requests on any one of them. */
struct no_fit {
    size_t selector, taints, matching; /* nodes its selector or affinity rules out, whose taints it does not tolerate, the rest */
    int64_t *best;                     /* by item of the pod's fit request: the most free on a matching node (INT64_MIN: none) */
    int64_t best_pods;
};

static void no_fit_survey(const struct fit *f, const struct cache_pod *pod, struct no_fit *nf)
{
    const struct shape_rl *req = model_pod_fit_request(pod);
    uint32_t nitems = req != NULL ? req->len : 0;
    memset(nf, 0, sizeof(*nf));
    nf->best = util_calloc(nitems, sizeof(*nf->best));
    for (uint32_t k = 0; k < nitems; k++)
        nf->best[k] = INT64_MIN;
    int every = pod->sched == NULL && f->ntainted == 0 && f->nn > 0;
    if (every) {
        /* Every node matches: the most free room of each resource is at the root of its tree. */
        nf->matching = f->nn;
        for (uint32_t k = 0; k < nitems; k++)
            nf->best[k] = tree_dim(f, req->items[k].id)[1];
        nf->best_pods = tree_dim(f, f->nres)[1];
        if (nf->best_pods < 0)
            nf->best_pods = 0;
    }
    for (size_t i = 0; i < f->nn && !every; i++) {
        const struct cache_node *n = f->nodes[i];
        if (!selector_matches(n, pod->sched)) {
            nf->selector++;
            continue;
        }
        if (!taints_tolerated(n, pod->sched)) {
            nf->taints++;
            continue;
        }
        nf->matching++;
        const int64_t *room = f->free + i * f->nres;
        for (uint32_t k = 0; k < nitems; k++) {
            if (room[req->items[k].id] > nf->best[k])
                nf->best[k] = room[req->items[k].id];
        }
        if (f->free_pods[i] > nf->best_pods)
            nf->best_pods = f->free_pods[i];
    }
}

/* Whether what pods held short of room owe (fit_take_on) leaves too little for req on the nodes together. */
static int debt_blocks(const struct fit *f, const struct shape_rl *req)
{
    if (!f->indebted)
        return 0;
    if (f->debt[f->nres] > 0 && f->pos[f->nres] - f->debt[f->nres] < 1)
        return 1;
    for (uint32_t k = 0; req != NULL && k < req->len; k++) {
        uint32_t id = req->items[k].id;
        if (f->debt[id] > 0 && f->pos[id] - f->debt[id] < req->items[k].value)
            return 1;
    }
    return 0;
}

/* Why pod fits no node, after "no node fits pod NAME" (against the current free room). */
static char *describe_no_fit(struct fit *f, const struct cache_pod *pod)
{
    const struct shape_rl *req = model_pod_fit_request(pod);
    if (debt_blocks(f, req)) {
        struct util_buf held = {0};
        util_buf_printf(&held, " (");
        fit_request_text(&held, f->c, req);
        util_buf_printf(&held, "): the room left is held for admitted pods that wait for room on the nodes");
        return util_buf_take(&held);
    }
    uint32_t nitems = req != NULL ? req->len : 0;
    struct no_fit nf;
    no_fit_survey(f, pod, &nf);
    struct util_buf b = {0};
    size_t nshort = nf.best_pods < 1;
    for (uint32_t k = 0; k < nitems; k++)
        nshort += nf.best[k] < req->items[k].value;
    if (nf.matching == 0) {
        fitwhy_no_match(&b, f->nn, f->c->nnodes_present - f->nn, nf.selector, nf.taints);
    } else if (nshort == 0) {
        util_buf_printf(&b, " (");
        fit_request_text(&b, f->c, req);
        util_buf_printf(&b, "): no node has all of it free at once");
    } else {
        fitwhy_shortage(&b, f->c, req, nf.best, nf.best_pods, nshort);
        fitwhy_devices(&b, f->c, req, nf.best);
    }
    free(nf.best);
    return util_buf_take(&b);
}

/* Whether subtree k (of the trees) may hold a node with room for req: every needed maximum suffices. */
static int subtree_may_fit(const struct fit *f, size_t k, const struct shape_rl *req)
{
    if (tree_dim(f, f->nres)[k] < 1)
        return 0;
    for (uint32_t j = 0; req != NULL && j < req->len; j++) {
        if (tree_dim(f, req->items[j].id)[k] < req->items[j].value)
            return 0;
    }
    return 1;
}

/* The first node at or after start in subtree k (covering nodes [lo, lo + width)) that takes pod, or SIZE_MAX. */
static size_t find_in(struct fit *f, const struct cache_pod *pod, size_t start, size_t k, size_t lo, size_t width)
{
    if (lo + width <= start || lo >= f->nn || !subtree_may_fit(f, k, model_pod_fit_request(pod)))
        return SIZE_MAX;
    if (width == 1) {
        const struct cache_node *n = f->nodes[lo];
        return room_for(f, lo, model_pod_fit_request(pod)) && selector_matches(n, pod->sched) && taints_tolerated(n, pod->sched)
                   ? lo
                   : SIZE_MAX;
    }
    size_t at = find_in(f, pod, start, 2 * k, lo, width / 2);
    return at != SIZE_MAX ? at : find_in(f, pod, start, 2 * k + 1, lo + width / 2, width / 2);
}

/* The first node at or after start that takes pod, or SIZE_MAX. */
static size_t find_node(struct fit *f, const struct cache_pod *pod, size_t start)
{
    /* Nodes fill in order, so the fit is mostly at or just after start: look there before descending the trees. */
    size_t near = start + 8 < f->nn ? start + 8 : f->nn;
    for (size_t i = start; i < near; i++) {
        const struct cache_node *n = f->nodes[i];
        if (room_for(f, i, model_pod_fit_request(pod)) && selector_matches(n, pod->sched) && taints_tolerated(n, pod->sched))
            return i;
    }
    return near >= f->nn ? SIZE_MAX : find_in(f, pod, near, 1, 0, f->leaves);
}

/*
 * Places pods (sorted larger first) one by one, tentatively. Returns n when all
 * fit (placements stay; call commit()), else the index of the first that fits
 * nowhere, with every placement undone and *why set (new string).
 */
size_t fit_place(struct fit *f, struct cache_pod **pods, size_t n, char **why)
{
    size_t mark = f->nlog;
    for (size_t i = 0; i < n; i++) {
        struct fit_shape *s = shape_get(f, pods[i]);
        int tentative = f->nlog > mark;
        size_t at = s->failed || debt_blocks(f, model_pod_fit_request(pods[i])) ? SIZE_MAX : find_node(f, pods[i], s->start);
        if (at == SIZE_MAX) {
            /* The message speaks of the nodes with this gang's earlier pods on them. */
            char *tentative_why = tentative ? describe_no_fit(f, pods[i]) : NULL;
            while (f->nlog > mark) {
                f->nlog--;
                take(f, f->log[f->nlog].node, f->log[f->nlog].req, -f->log[f->nlog].sign);
            }
            if (!tentative) {
                if (!s->failed || s->stamp != f->commits) {
                    free(s->message);
                    s->message = describe_no_fit(f, pods[i]);
                    s->stamp = f->commits;
                }
                s->failed = 1;
                *why = util_strdup(s->message);
            } else {
                *why = tentative_why;
            }
            return i;
        }
        if (!tentative)
            s->start = at;
        log_take(f, at, model_pod_fit_request(pods[i]), 1);
    }
    return n;
}

/*
 * place() for a gang's pods, remembering the last failure: a gang whose pods
 * have the same shapes in the same order, with no placement committed since,
 * fails the same way (a failure leaves the free room as it found it), so it is
 * not placed again. Alike gangs waiting on full nodes then cost no search.
 */
size_t fit_place_gang(struct fit *f, struct cache_pod **pods, size_t n, char **why)
{
    struct fit_memo *m = &f->memo;
    int same = m->why != NULL && m->commits == f->commits && m->n == n;
    for (size_t i = 0; same && i < n; i++)
        same = m->req[i] == model_pod_fit_request(pods[i]) && m->sched[i] == pods[i]->sched;
    if (same) {
        *why = util_strdup(m->why);
        return m->failed;
    }
    size_t failed = fit_place(f, pods, n, why);
    if (failed < n) {
        free(m->why);
        if (n > m->cap) {
            m->cap = n;
            m->req = util_realloc(m->req, n * sizeof(*m->req));
            m->sched = util_realloc(m->sched, n * sizeof(*m->sched));
        }
        for (size_t i = 0; i < n; i++) {
            m->req[i] = model_pod_fit_request(pods[i]);
            m->sched[i] = pods[i]->sched;
        }
        m->n = n;
        m->failed = failed;
        m->commits = f->commits;
        m->why = util_strdup(*why);
    }
    return failed;
}

void fit_commit(struct fit *f)
{
    if (f->nlog > 0)
        f->commits++;
    f->nlog = 0;
}

size_t fit_mark(const struct fit *f)
{
    return f->nlog;
}

size_t fit_node_index(const struct fit *f, const struct cache_node *n)
{
    size_t lo = 0, hi = f->nn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(f->nodes[mid]->name, n->name);
        if (r == 0)
            return f->nodes[mid] == n ? mid : SIZE_MAX;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SIZE_MAX;
}

/* Free room grew: what the shapes and the memo remember of a smaller room no longer holds. */
static void forget_failures(struct fit *f)
{
    for (size_t i = 0; i < f->nshapes; i++) {
        f->shapes[i].start = 0;
        f->shapes[i].failed = 0;
    }
    f->commits++; /* the memo and the shapes' messages were written for another room */
}

int fit_release(struct fit *f, const struct cache_pod *pod)
{
    if (pod->counted == NULL)
        return 0;
    size_t i = fit_node_index(f, pod->counted);
    if (i == SIZE_MAX)
        return 0;
    log_take(f, i, model_pod_fit_request(pod), -1);
    forget_failures(f);
    return 1;
}

void fit_undo(struct fit *f, size_t mark)
{
    int released = 0;
    while (f->nlog > mark) {
        f->nlog--;
        released |= f->log[f->nlog].sign < 0;
        take(f, f->log[f->nlog].node, f->log[f->nlog].req, -f->log[f->nlog].sign);
    }
    if (released)
        f->commits++; /* messages written while the room was larger are stale */
}

/* ---- the pass ---- */

struct fit *fit_create(const struct cache *c)
{
    struct fit *f = util_calloc(1, sizeof(*f));
    f->c = c;
    f->stale = 1;
    return f;
}

void fit_destroy(struct fit *f)
{
    if (f == NULL)
        return;
    fit_end(f);
    for (size_t i = 0; i < sizeof(f->buf) / sizeof(f->buf[0]); i++)
        free(f->buf[i]);
    free(f->nodes);
    free(f->touched);
    free(f->row_gen);
    free(f->dev_free);
    free(f->dev_ids);
    fitsort_finish(&f->sort);
    free(f);
}

void fit_nodes_changed(struct fit *f)
{
    f->stale = 1;
}

/* The Ready, schedulable nodes, sorted by name, again (the nodes changed). */
static void build_nodes(struct fit *f)
{
    free(f->nodes);
    f->nodes = util_calloc(f->c->nodes.len, sizeof(*f->nodes));
    f->nn = 0;
    struct cache_node *n;
    cache_node_for_each(n, f->c) {
        if (n->present && n->ready && !n->unschedulable)
            f->nodes[f->nn++] = n;
    }
    qsort(f->nodes, f->nn, sizeof(*f->nodes), cmp_node_name);
    f->stale = 0;
    f->nodes_gen++;
}

static uint32_t find_resource(const struct cache *c, const char *name)
{
    for (uint32_t i = 0; i < c->shapes.nresources; i++) {
        if (strcmp(c->shapes.resource_names[i], name) == 0)
            return i;
    }
    return UINT32_MAX;
}

/* A node's label by key (not interned: a slice's nodeSelector asks), for the ledger. */
static const char *ledger_label(const void *node, const char *key)
{
    const struct cache_node *n = node;
    for (uint32_t i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    }
    return NULL;
}

/* Whether node n's allocatable names resource id (a device plugin's count, which then stands). */
static int allocatable_has(const struct cache_node *n, uint32_t id)
{
    for (uint32_t k = 0; n->allocatable != NULL && k < n->allocatable->len; k++) {
        if (n->allocatable->items[k].id == id)
            return 1;
    }
    return 0;
}

/* The nodes' free DRA devices (ledger.h) again, into f->dev_free: the ledger or the nodes changed. */
static void device_survey(struct fit *f)
{
    const char *const *names;
    size_t nr = draset_resources(f->c->dra, &names);
    f->dev_ids = util_realloc(f->dev_ids, (nr > 0 ? nr : 1) * sizeof(*f->dev_ids));
    f->ndev = 0;
    for (size_t r = 0; r < nr; r++) {
        uint32_t id = find_resource(f->c, names[r]);
        if (id != UINT32_MAX)
            f->dev_ids[f->ndev++] = id; /* else no pod or queue names it */
    }
    f->dev_free = util_realloc(f->dev_free, (f->nn * f->ndev > 0 ? f->nn * f->ndev : 1) * sizeof(*f->dev_free));
    for (size_t k = 0; k < f->ndev; k++) {
        size_t r = (size_t)draset_resource_index(f->c->dra, f->c->shapes.resource_names[f->dev_ids[k]]);
        for (size_t i = 0; i < f->nn; i++) {
            const struct cache_node *n = f->nodes[i];
            struct ledger_node ln = {.name = n->name, .label = ledger_label, .node = n};
            f->dev_free[i * f->ndev + k] = allocatable_has(n, f->dev_ids[k]) ? -1 : ledger_free(f->c->dra, &ln, r, NULL);
        }
    }
    f->dev_ledger_gen = ledger_generation(f->c->dra);
    f->dev_nodes_gen = f->nodes_gen;
    f->dev_nresources = f->c->shapes.nresources;
    f->dev_valid = 1;
}

/* Whether the nodes' free devices are to be surveyed again (device_survey): the ledger or the nodes changed. */
static int devices_stale(const struct fit *f)
{
    return f->c->dra != NULL && (!f->dev_valid || f->dev_ledger_gen != ledger_generation(f->c->dra) ||
                                 f->dev_nodes_gen != f->nodes_gen || f->dev_nresources != f->c->shapes.nresources);
}

/*
 * Node i's row from the cache: its allocatable minus the requests of the pods bound to it, its pod slots and,
 * for a DRA device resource it does not advertise, the ledger's free devices there (ledger.h: they already leave
 * out those of bound pods, whose claims hold them; surveyed once per change of the ledger or the nodes).
 */
static void node_row(struct fit *f, size_t i)
{
    const struct cache_node *n = f->nodes[i];
    int64_t *free_room = f->free + i * f->nres;
    memset(free_room, 0, f->nres * sizeof(*free_room));
    for (uint32_t k = 0; n->allocatable != NULL && k < n->allocatable->len; k++)
        free_room[n->allocatable->items[k].id] = n->allocatable->items[k].value;
    for (uint32_t k = 0; k < n->nused && k < f->nres; k++)
        free_room[k] -= n->used[k];
    f->free_pods[i] = n->alloc_pods - n->used_pods;
    for (size_t k = 0; f->c->dra != NULL && k < f->ndev; k++) {
        int64_t v = f->dev_free[i * f->ndev + k];
        if (f->dev_ids[k] < f->nres && v >= 0)
            free_room[f->dev_ids[k]] = v;
    }
    f->row_gen[i] = n->room_gen;
}

/* Every node's row, their sums and the trees, from the cache. */
static void rebuild(struct fit *f)
{
    if (devices_stale(f))
        device_survey(f);
    f->free = buffer(f, BUF_FREE, f->nn * f->nres, sizeof(*f->free), 1);
    f->free_pods = buffer(f, BUF_FREE_PODS, f->nn, sizeof(*f->free_pods), 0);
    f->row_gen = util_realloc(f->row_gen, (f->nn + 1) * sizeof(*f->row_gen));
    f->pos = buffer(f, BUF_POS, f->nres + 1, sizeof(*f->pos), 1);
    f->ntainted = 0;
    for (size_t i = 0; i < f->nn; i++) {
        node_row(f, i);
        f->ntainted += f->nodes[i]->ntaints > 0;
        for (uint32_t k = 0; k < f->nres; k++)
            f->pos[k] = util_sat_add(f->pos[k], at_least_0(f->free[i * f->nres + k]));
        f->pos[f->nres] = util_sat_add(f->pos[f->nres], at_least_0(f->free_pods[i]));
    }
    tree_build(f);
    f->built = 1;
    f->built_nres = f->nres;
    f->built_nodes_gen = f->nodes_gen;
}

/* Node i's row read again from the cache, its sums and trees with it (pos holds no saturated sum). */
static void refresh(struct fit *f, size_t i)
{
    const int64_t *row = f->free + i * f->nres;
    for (uint32_t k = 0; k < f->nres; k++)
        f->pos[k] -= at_least_0(row[k]);
    f->pos[f->nres] -= at_least_0(f->free_pods[i]);
    node_row(f, i);
    for (uint32_t k = 0; k <= f->nres; k++) {
        f->pos[k] = util_sat_add(f->pos[k], at_least_0(k < f->nres ? row[k] : f->free_pods[i]));
        tree_update(f, k, i);
    }
}

/*
 * The last pass's room brought back to the cache's, where it can be: the same nodes, resources and devices,
 * and no saturated sum. Only the rows that differ are read again: those the last pass touched (fit_touched) and
 * those of nodes whose bound pods changed since (cache_node.room_gen). Returns 0 when a rebuild is needed.
 */
static int restore(struct fit *f)
{
    if (!f->built || f->built_nres != f->nres || f->built_nodes_gen != f->nodes_gen || devices_stale(f))
        return 0;
    for (uint32_t k = 0; k <= f->nres; k++) {
        if (f->pos[k] == INT64_MAX)
            return 0;
    }
    /* A row read again costs about log(nodes) per resource, a rebuild about one per node and resource: past an
       eighth of the nodes (a flood's thousands of reservations on a few nodes touch them many times), rebuild. */
    size_t budget = f->nn / 8, changed = f->ntouched;
    for (size_t i = 0; i < f->nn && changed <= budget; i++)
        changed += f->nodes[i]->room_gen != f->row_gen[i];
    if (changed > budget)
        return 0;
    for (size_t t = 0; t < f->ntouched; t++)
        refresh(f, f->touched[t]);
    for (size_t i = 0; i < f->nn; i++) {
        if (f->nodes[i]->room_gen != f->row_gen[i])
            refresh(f, i);
    }
    return 1;
}

void fit_begin(struct fit *f)
{
    if (f->stale)
        build_nodes(f);
    f->nres = f->c->shapes.nresources;
    f->cpu = find_resource(f->c, "cpu");
    f->memory = find_resource(f->c, "memory");
    fitsort_set(&f->sort, f->c, f->cpu, f->memory);
    if (!restore(f))
        rebuild(f);
    f->ntouched = 0;
    f->debt = buffer(f, BUF_DEBT, f->nres + 1, sizeof(*f->debt), 1);
    f->indebted = 0;
}

void fit_end(struct fit *f)
{
    for (size_t i = 0; i < f->nshapes; i++)
        free(f->shapes[i].message);
    free(f->shapes);
    free(f->log);
    free(f->memo.why);
    free(f->memo.req);
    free(f->memo.sched);
    f->shapes = NULL;
    f->nshapes = f->capshapes = 0;
    f->log = NULL;
    f->nlog = f->caplog = 0;
    f->commits = 0;
    memset(&f->memo, 0, sizeof(f->memo));
}

/* ---- topology ---- */

size_t fit_nodes(const struct fit *f, struct cache_node *const **nodes)
{
    *nodes = f->nodes;
    return f->nn;
}

uint64_t fit_nodes_generation(const struct fit *f)
{
    return f->nodes_gen;
}

const int64_t *fit_node_free(const struct fit *f, size_t i, int64_t *pods)
{
    if (pods != NULL)
        *pods = f->free_pods[i];
    return f->free + i * f->nres;
}

size_t fit_touched(const struct fit *f, const uint32_t **nodes)
{
    *nodes = f->touched;
    return f->ntouched;
}

uint64_t fit_room_version(const struct fit *f)
{
    return f->commits;
}

uint32_t fit_resources(const struct fit *f)
{
    return f->nres;
}

size_t fit_place_on(struct fit *f, struct cache_pod **pods, size_t n, const uint32_t *nodes, size_t nn)
{
    size_t mark = f->nlog;
    for (size_t i = 0; i < n; i++) {
        const struct cache_pod *pod = pods[i];
        size_t at = SIZE_MAX;
        for (size_t j = 0; j < nn && at == SIZE_MAX && !debt_blocks(f, model_pod_fit_request(pod)); j++) {
            if (room_for(f, nodes[j], model_pod_fit_request(pod)) && fit_node_matches(f, nodes[j], pod))
                at = nodes[j];
        }
        if (at == SIZE_MAX) {
            fit_undo(f, mark);
            return i;
        }
        log_take(f, at, model_pod_fit_request(pod), 1);
    }
    return n;
}

int fit_node_matches(const struct fit *f, size_t i, const struct cache_pod *pod)
{
    return selector_matches(f->nodes[i], pod->sched) && taints_tolerated(f->nodes[i], pod->sched);
}

void fit_take_on(struct fit *f, size_t i, const struct cache_pod *pod)
{
    const struct shape_rl *req = model_pod_fit_request(pod);
    const int64_t *room = f->free + i * f->nres;
    size_t everywhere = 0;
    for (size_t j = 0; j < f->nn; j++)
        everywhere += fit_node_matches(f, j, pod);
    for (uint32_t k = 0; req != NULL && k < req->len && everywhere == f->nn; k++) {
        int64_t lack = req->items[k].value - at_least_0(room[req->items[k].id]);
        f->debt[req->items[k].id] = util_sat_add(f->debt[req->items[k].id], lack > 0 ? lack : 0);
        f->indebted |= lack > 0;
    }
    if (everywhere == f->nn) {
        f->debt[f->nres] += 1 - (f->free_pods[i] > 0 ? 1 : 0);
        f->indebted |= f->free_pods[i] < 1;
    }
    log_take(f, i, req, 1);
}
