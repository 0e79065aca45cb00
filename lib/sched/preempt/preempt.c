#include "preempt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "preemptdomain.h"
#include "quantity.h"
#include "reclaimtree.h"
#include "util.h"

#define PREEMPT_SEARCH_MAX 4096 /* sets weighed in search of fewer victims than a minimal set (fewest()) */

int preempt_policy_parse(const char *value, enum preempt_policy *out, struct error *err)
{
    *out = PREEMPT_POLICY_LOWER_PRIORITY;
    if (value == NULL || strcmp(value, "LowerPriority") == 0)
        return 0;
    if (strcmp(value, "LowerOrNewerEqualPriority") == 0) {
        *out = PREEMPT_POLICY_LOWER_OR_NEWER_EQUAL_PRIORITY;
        return 0;
    }
    if (strcmp(value, "Never") == 0) {
        *out = PREEMPT_POLICY_NEVER;
        return 0;
    }
    error_setf(err, "%s: \"%s\" is not LowerPriority, LowerOrNewerEqualPriority or Never", NAMES_ANNOTATION_PREEMPTION, value);
    return -1;
}

const char *preempt_policy_name(enum preempt_policy policy)
{
    switch (policy) {
    case PREEMPT_POLICY_LOWER_PRIORITY:
        return "LowerPriority";
    case PREEMPT_POLICY_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return "LowerOrNewerEqualPriority";
    case PREEMPT_POLICY_NEVER:
        return "Never";
    }
    return "";
}

const char *preempt_kind_name(enum preempt_kind kind)
{
    switch (kind) {
    case PREEMPT_KIND_PREEMPT:
        return "preempt";
    case PREEMPT_KIND_RECLAIM:
        return "reclaim";
    case PREEMPT_KIND_NONE:
        break;
    }
    return "";
}

void preempt_result_init(struct preempt_result *r)
{
    memset(r, 0, sizeof(*r));
}

void preempt_result_finish(struct preempt_result *r)
{
    if (r == NULL)
        return;
    free(r->victims);
    free(r->domain);
    free(r->message);
    memset(r, 0, sizeof(*r));
}

/* ---- one selection ---- */

struct sel {
    struct fit *f;
    const struct preempt_input *in;
    const struct preempt_preemptor *p;
    const struct preempt_queue *q; /* the preemptor's */
    enum preempt_kind kind;
    size_t *cand; /* candidate gangs, in the order they are taken */
    size_t ncand;
    size_t *set; /* the set being tried */
    size_t nset;
    size_t min_depth;               /* reclaim: the shallowest common ancestor with the preemptor's queue weighed */
    struct reclaimtree_node *nodes; /* the tree of in->queues */
    struct reclaimtree tree;        /* its rules, with the set's victims freed (load_set()) */
    struct reclaimtree_block block; /* why the preemptor does not fit the tree (fits_queue()) */
    size_t *vq;                     /* the queues of the set's victims */
    struct resources tmp;
    struct error *err;
    int failed; /* an overflow: no victims */
    /* Topology (preemptdomain.h). */
    const struct topo_constraint *topo;   /* the preemptor's primary constraint, when the input has domains; else NULL */
    int in_domain;                        /* fits_nodes() asks for the constrained pods in one domain */
    int by_domain;                        /* victims free one domain (decide()) */
    struct preemptdomain_victim *victims; /* the set's, for preemptdomain_fits() */
    const struct topo_domain *landed;     /* where the last fits_nodes() in one domain placed it */
    int64_t left;                         /* and the room left there */
    const struct topo_domain *freed;      /* the domain the chosen set frees */
    long budget;                          /* sets fewest() may still weigh */
};

/* s->tmp += r * factor; records an overflow. */
static void add(struct sel *s, const struct resources *r, int64_t factor)
{
    struct error rerr;
    if (r != NULL && !s->failed && resources_add_scaled(&s->tmp, r, factor, &rerr) != 0) {
        error_setf(s->err, "%s", rerr.message);
        s->failed = 1;
    }
}

/* The tree sees the set's victims freed, and s->vq their queues. */
static void load_set(struct sel *s)
{
    reclaimtree_clear(&s->tree);
    for (size_t i = 0; i < s->nset && !s->failed; i++) {
        const struct preempt_gang *g = &s->in->pool[s->set[i]];
        s->vq[i] = g->queue;
        if (reclaimtree_free(&s->tree, g->queue, g->hold, s->err) != 0)
            s->failed = 1;
    }
}

/* The preemptor fits its queue and every ancestor once the set is gone (s->block says where not). */
static int fits_queue(struct sel *s)
{
    load_set(s);
    s->block.level = QUEUETREE_ROOT;
    int r = s->failed ? -1 : reclaimtree_fits(&s->tree, s->p->queue, s->p->request, &s->block, s->err);
    s->failed |= r < 0;
    return r > 0;
}

/* The set keeps every queue's deserved and guarantee and the share rule (reclaimtree_allows()). */
static int reclaim_allows(struct sel *s)
{
    load_set(s);
    int r = s->failed ? -1 : reclaimtree_allows(&s->tree, s->p->queue, s->p->request, s->vq, s->nset, s->err);
    s->failed |= r < 0;
    return r > 0;
}

/* The preemptor's pods fit the nodes with the room of the set's pods given back (in one domain: s->in_domain). */
static int fits_nodes(struct sel *s)
{
    if (s->in_domain) {
        for (size_t i = 0; i < s->nset; i++) {
            const struct preempt_gang *g = &s->in->pool[s->set[i]];
            s->victims[i] = (struct preemptdomain_victim){g->pods, g->npods};
        }
        return preemptdomain_fits(s->f, s->in->domains, s->in->cache, s->p->topo, s->p->pods, s->p->npods, s->victims, s->nset,
                                  &s->landed, &s->left);
    }
    size_t mark = fit_mark(s->f);
    for (size_t i = 0; i < s->nset; i++) {
        const struct preempt_gang *g = &s->in->pool[s->set[i]];
        for (size_t j = 0; j < g->npods; j++)
            fit_release(s->f, g->pods[j]);
    }
    char *why = NULL;
    size_t placed = fit_place(s->f, s->p->pods, s->p->npods, &why);
    free(why);
    fit_undo(s->f, mark);
    return placed == s->p->npods;
}

/* The set admits the preemptor (and, for reclaim, takes no queue below its deserved). */
static int admits(struct sel *s)
{
    if (s->kind == PREEMPT_KIND_RECLAIM && !reclaim_allows(s))
        return 0;
    return fits_queue(s) && fits_nodes(s);
}

static int policy_allows(enum preempt_policy policy, const struct preempt_preemptor *p, const struct preempt_gang *g)
{
    switch (policy) {
    case PREEMPT_POLICY_LOWER_PRIORITY:
        return g->priority < p->priority;
    case PREEMPT_POLICY_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return g->priority < p->priority || (g->priority == p->priority && g->created_ms > p->created_ms);
    case PREEMPT_POLICY_NEVER:
        break;
    }
    return 0;
}

static int is_named(const struct preempt_gang *g, const char *ns_name)
{
    size_t n = strlen(g->namespace_);
    return ns_name != NULL && strncmp(ns_name, g->namespace_, n) == 0 && ns_name[n] == '/' && strcmp(ns_name + n + 1, g->name) == 0;
}

/* Whether gang i may be a victim of the selection's kind. */
static int candidate(const struct sel *s, size_t i)
{
    const struct preempt_gang *g = &s->in->pool[i];
    const struct preempt_preemptor *p = s->p;
    if (!g->preemptable || g->evicting || is_named(g, p->preempted_by) || g->queue >= s->in->nqueues)
        return 0;
    if (strcmp(g->namespace_, p->namespace_) == 0 && strcmp(g->name, p->name) == 0)
        return 0;
    /* Reclaim is bounded by deserved, not by priority (Volcano's capacity plugin): the policy orders gangs within a queue. */
    if (s->kind == PREEMPT_KIND_PREEMPT)
        return g->queue == p->queue && policy_allows(s->q->policy, p, g);
    const struct preempt_queue *vq = &s->in->queues[g->queue];
    if (g->queue == p->queue || vq->deserved == NULL || !vq->reclaimable || reclaimtree_under(&s->tree, g->queue, p->queue))
        return 0;
    return reclaimtree_depth(&s->tree, reclaimtree_lca(&s->tree, p->queue, g->queue)) >= s->min_depth;
}

/* A candidate with its gang, for sorting. */
struct keyed {
    size_t index;
    const struct preempt_gang *g;
    size_t near; /* reclaim: the depth of its queue's common ancestor with the preemptor's; 0 within a queue */
};

/* The nearest queues first (reclaim), then the lowest priority, then the most recently admitted, then namespace/name. */
static int cmp_candidates(const void *pa, const void *pb)
{
    const struct keyed *ka = pa, *kb = pb;
    if (ka->near != kb->near)
        return ka->near > kb->near ? -1 : 1;
    const struct preempt_gang *a = ka->g, *b = kb->g;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->admitted_ms != b->admitted_ms)
        return a->admitted_ms > b->admitted_ms ? -1 : 1;
    int r = strcmp(a->namespace_, b->namespace_);
    return r != 0 ? r : strcmp(a->name, b->name);
}

static void gather(struct sel *s)
{
    struct keyed *ks = util_calloc(s->in->npool + 1, sizeof(*ks));
    s->ncand = 0;
    for (size_t i = 0; i < s->in->npool; i++) {
        if (!candidate(s, i))
            continue;
        size_t q = s->in->pool[i].queue;
        size_t near = s->kind == PREEMPT_KIND_RECLAIM ? reclaimtree_depth(&s->tree, reclaimtree_lca(&s->tree, s->p->queue, q)) : 0;
        ks[s->ncand++] = (struct keyed){i, &s->in->pool[i], near};
    }
    qsort(ks, s->ncand, sizeof(*ks), cmp_candidates);
    for (size_t i = 0; i < s->ncand; i++)
        s->cand[i] = ks[i].index;
    free(ks);
}

/*
 * The first set of k candidates (k < s->ncand), in the candidates' order
 * (lexicographic over s->cand), that admits the preemptor, into s->set;
 * returns 1, or 0 when none does or *budget sets were weighed. idx: room for
 * k indexes.
 */
static int first_of_size(struct sel *s, size_t k, size_t *idx, long *budget)
{
    for (size_t i = 0; i < k; i++)
        idx[i] = i;
    for (;;) {
        if (s->failed || (*budget)-- <= 0)
            return 0;
        for (size_t i = 0; i < k; i++)
            s->set[i] = s->cand[idx[i]];
        s->nset = k;
        if (admits(s))
            return 1;
        size_t i = k; /* the next combination: the last index that can still move, moved, those after it following */
        while (i > 0 && idx[i - 1] == s->ncand - k + i - 1)
            i--;
        if (i == 0)
            return 0;
        idx[i - 1]++;
        for (size_t j = i; j < k; j++)
            idx[j] = idx[j - 1] + 1;
    }
}

/*
 * s->set holds a minimal set of m > 2 victims: a smaller one, the fewest
 * gangs, when one exists among the first PREEMPT_SEARCH_MAX sets weighed in
 * the selection (sizes 2 to m - 1, each in the candidates' order); else the
 * set stays.
 */
static void fewest(struct sel *s)
{
    size_t m = s->nset;
    size_t *minimal = util_calloc(m + 1, sizeof(*minimal)), *idx = util_calloc(m + 1, sizeof(*idx));
    memcpy(minimal, s->set, m * sizeof(*minimal));
    int found = 0;
    for (size_t k = 2; k < m && !found && s->budget > 0 && !s->failed; k++)
        found = first_of_size(s, k, idx, &s->budget);
    if (!found) {
        memcpy(s->set, minimal, m * sizeof(*minimal));
        s->nset = m;
    }
    free(idx);
    free(minimal);
}

/* A minimal set of candidates that admits the preemptor into s->set, the fewest when found (fewest()), or nset 0. */
static void choose(struct sel *s)
{
    /* One victim, the first in order that suffices. */
    for (size_t i = 0; i < s->ncand && !s->failed; i++) {
        s->set[0] = s->cand[i];
        s->nset = 1;
        if (admits(s))
            return;
    }
    /* Candidates in order until it fits; a reclaim candidate that would take its queue below deserved is passed over. */
    s->nset = 0;
    int fits = 0;
    for (size_t i = 0; i < s->ncand && !fits && !s->failed; i++) {
        s->set[s->nset++] = s->cand[i];
        if (s->kind == PREEMPT_KIND_RECLAIM && !reclaim_allows(s)) {
            s->nset--;
            continue;
        }
        fits = fits_queue(s) && fits_nodes(s);
    }
    if (!fits || s->failed) {
        s->nset = 0;
        return;
    }
    /* Spare, highest priority and oldest first, each victim the preemptor fits without. */
    for (size_t k = s->nset; k-- > 0 && !s->failed;) {
        size_t spared = s->set[k];
        memmove(&s->set[k], &s->set[k + 1], (s->nset - k - 1) * sizeof(*s->set));
        s->nset--;
        if (!admits(s)) {
            memmove(&s->set[k + 1], &s->set[k], (s->nset - k) * sizeof(*s->set));
            s->set[k] = spared;
            s->nset++;
        }
    }
    if (s->nset > 2 && !s->failed)
        fewest(s);
}

/* "cpu 4, memory 2Gi": what of r the level that blocks lacks (s->block), else r whole. */
static void needed_text(struct util_buf *b, const struct sel *s, const struct resources *r, int queue_short)
{
    const char *sep = "";
    for (size_t k = 0; r != NULL && k < r->len; k++) {
        const char *name = r->items[k].name;
        struct quantity q = r->items[k].quantity;
        const struct quantity *cap = queue_short && s->block.limit != NULL ? resources_get(s->block.limit, name) : NULL;
        if (queue_short && s->block.limit != NULL) {
            int64_t over = cap != NULL ? reclaimtree_value(&s->block.have, name) - cap->value : 0;
            if (over <= 0)
                continue;
            q.value = over < q.value ? over : q.value;
        }
        char buf[QUANTITY_FORMAT_MAX];
        quantity_format(&q, resources_unit(name), buf, sizeof(buf));
        util_buf_printf(b, "%s%s %s", sep, name, buf);
        sep = ", ";
    }
}

/* out->message once victims are chosen: what the preemptor lacks without them. */
static char *needed_message(struct sel *s)
{
    size_t nset = s->nset;
    s->nset = 0;
    int queue_short = !fits_queue(s);
    s->nset = nset;
    struct util_buf b = {0};
    needed_text(&b, s, s->p->request, queue_short);
    if (b.len == 0)
        util_buf_printf(&b, "room for %zu pods", s->p->npods);
    util_buf_printf(&b, " needed%s", queue_short ? "" : " on the nodes");
    if (queue_short && s->block.level != s->p->queue && s->block.level < s->in->nqueues)
        util_buf_printf(&b, " in queue %s", s->in->queues[s->block.level].name);
    if (s->freed != NULL) {
        char what[256];
        topology_constraint_text(s->topo, what, sizeof(what));
        util_buf_printf(&b, " in %s: %s", what, s->freed->name);
    }
    return util_buf_take(&b);
}

/* Why no selection is possible before looking at candidates, or NULL. */
static char *precondition(const struct sel *s)
{
    const struct preempt_preemptor *p = s->p;
    if (p->evictions_in_flight)
        return util_strdup("evictions it caused are still in progress");
    if (s->q->policy == PREEMPT_POLICY_NEVER)
        return util_strdupf("queue %s's preemption policy is Never", s->q->name);
    return NULL;
}

/* Whether the preemptor's queue may reclaim for it: deserved set, its allocation plus the preemptor within it. */
static int may_reclaim(struct sel *s)
{
    if (s->q->deserved == NULL)
        return 0;
    resources_finish(&s->tmp);
    add(s, s->q->allocated, 1);
    add(s, s->p->request, 1);
    return !s->failed && reclaimtree_within(&s->tmp, s->q->deserved);
}

static void finish_result(struct sel *s, struct preempt_result *out)
{
    out->kind = s->kind;
    out->nvictims = s->nset;
    out->victims = util_calloc(s->nset + 1, sizeof(*out->victims));
    memcpy(out->victims, s->set, s->nset * sizeof(*s->set));
    out->message = needed_message(s);
    out->domain = s->freed != NULL ? util_strdup(s->freed->name) : NULL;
}

static int in_set(const struct sel *s, size_t gang)
{
    for (size_t i = 0; i < s->nset; i++) {
        if (s->set[i] == gang)
            return 1;
    }
    return 0;
}

/* Each victim of the set in turn: the lowest-priority gang of its queue left out that still admits the preemptor in its place. */
static void lower_first(struct sel *s)
{
    for (size_t i = 0; i < s->nset && !s->failed; i++) {
        size_t chosen = s->set[i];
        const struct preempt_gang *g = &s->in->pool[chosen];
        for (size_t k = 0; k < s->ncand && !s->failed; k++) {
            const struct preempt_gang *c = &s->in->pool[s->cand[k]];
            if (c->queue != g->queue || c->priority >= g->priority || in_set(s, s->cand[k]))
                continue;
            s->set[i] = s->cand[k];
            if (admits(s))
                break;
            s->set[i] = chosen;
        }
    }
}

/* A set among s->cand (choose()); a reclaim's then lower_first(). */
static void pick(struct sel *s)
{
    choose(s);
    if (s->kind == PREEMPT_KIND_RECLAIM && s->nset > 0 && !s->failed)
        lower_first(s);
}

/* The candidates of cand[0..n) with pods in d, into out (order kept); returns how many. */
static size_t in_domain(const struct sel *s, const struct topo_domain *d, const size_t *cand, size_t n, size_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct preempt_gang *g = &s->in->pool[cand[i]];
        if (preemptdomain_touches(s->f, d, g->pods, g->npods))
            out[k++] = cand[i];
    }
    return k;
}

/* How the set s chose for domain order weighs (fits_nodes() done on it last: s->left). */
static struct preemptdomain_score score(const struct sel *s, size_t order)
{
    struct preemptdomain_score sc = {.nvictims = s->nset, .left = s->left, .order = order};
    for (size_t i = 0; i < s->nset; i++)
        sc.priorities += s->in->pool[s->set[i]].priority;
    return sc;
}

/*
 * Victims that free one domain (preemptdomain.h): for each domain of the
 * preemptor's constraint, a set among the candidates with pods there, when
 * evicting them all makes it fit; the best such set into s->set (s->freed its
 * domain), else nset 0.
 */
static void choose_in_domains(struct sel *s)
{
    size_t nd, nall = s->ncand;
    const struct topo_domain *ds = topodomain_get(s->in->domains, s->topo, &nd);
    size_t *all = s->cand, *best = util_calloc(s->in->npool + 1, sizeof(*best)), nbest = 0;
    struct preemptdomain_score top = {0};
    s->cand = util_calloc(s->in->npool + 1, sizeof(*s->cand));
    for (size_t k = 0; k < nd && !s->failed; k++) {
        s->ncand = in_domain(s, &ds[k], all, nall, s->cand);
        memcpy(s->set, s->cand, s->ncand * sizeof(*s->set));
        s->nset = s->ncand;
        if (s->ncand == 0 || !fits_nodes(s))
            continue;                              /* never evict for a domain that its candidates cannot free */
        s->budget = PREEMPT_SEARCH_MAX / (long)nd; /* fewest()'s search shared fairly among the domains */
        pick(s);
        if (s->nset == 0 || s->failed || !fits_nodes(s))
            continue;
        struct preemptdomain_score sc = score(s, k);
        if (nbest == 0 || preemptdomain_better(&sc, &top)) {
            top = sc;
            nbest = s->nset;
            memcpy(best, s->set, nbest * sizeof(*best));
            s->freed = s->landed;
        }
    }
    free(s->cand);
    s->cand = all;
    s->ncand = nall;
    memcpy(s->set, best, nbest * sizeof(*best));
    s->nset = nbest;
    free(best);
}

/* The set for the candidates gathered: freeing one domain (s->by_domain), else choose()'s. */
static void decide(struct sel *s)
{
    s->freed = NULL;
    if (!s->by_domain) {
        pick(s);
        return;
    }
    int in = s->in_domain;
    s->in_domain = 1;
    choose_in_domains(s);
    s->in_domain = in;
    if (s->nset == 0 && !s->failed && s->topo->mode == TOPO_MODE_SOFT)
        pick(s); /* soft: no domain can be freed, it may spread */
}

/*
 * Reclaim, the nearest queues first: the candidates whose common ancestor
 * with the preemptor's queue is at depth d or deeper, d from the deepest up
 * to the root. *ncandidates: the candidates weighed last.
 */
static void reclaim(struct sel *s, struct preempt_result *out, size_t *ncandidates)
{
    size_t weighed = SIZE_MAX;
    for (size_t d = reclaimtree_depth(&s->tree, s->p->queue); d-- > 0 && !s->failed;) {
        s->min_depth = d;
        gather(s);
        if (s->ncand == weighed)
            continue; /* no candidate more than at the level below */
        weighed = *ncandidates = s->ncand;
        decide(s);
        if (s->nset > 0 && !s->failed) {
            finish_result(s, out);
            return;
        }
    }
}

static void sel_init(struct sel *s)
{
    const struct preempt_input *in = s->in;
    resources_init(&s->tmp);
    resources_init(&s->block.have);
    s->cand = util_calloc(in->npool + 1, sizeof(*s->cand));
    s->set = util_calloc(in->npool + 1, sizeof(*s->set));
    s->vq = util_calloc(in->npool + 1, sizeof(*s->vq));
    s->victims = util_calloc(in->npool + 1, sizeof(*s->victims));
    s->budget = PREEMPT_SEARCH_MAX;
    if (in->domains != NULL && in->cache != NULL && in->preemptor->topo != NULL)
        s->topo = preemptdomain_constraint(in->preemptor->topo);
    s->in_domain = s->topo != NULL && s->topo->mode == TOPO_MODE_HARD;
    s->nodes = util_calloc(in->nqueues + 1, sizeof(*s->nodes));
    for (size_t i = 0; i < in->nqueues; i++) {
        const struct preempt_queue *q = &in->queues[i];
        s->nodes[i] = (struct reclaimtree_node){q->parent, q->capability, q->deserved, q->guarantee, q->allocated};
    }
    reclaimtree_init(&s->tree, s->nodes, in->nqueues);
    s->tree.root_cap = in->root_cap;
    s->tree.root_room = in->root_room;
}

static void sel_finish(struct sel *s)
{
    reclaimtree_finish(&s->tree);
    resources_finish(&s->block.have);
    resources_finish(&s->tmp);
    free(s->nodes);
    free(s->vq);
    free(s->victims);
    free(s->cand);
    free(s->set);
}

/* Why no set admits the preemptor. */
static char *nothing_message(const struct sel *s, size_t ncandidates)
{
    if (ncandidates == 0)
        return util_strdup("no admitted gang it may preempt or reclaim");
    if (!s->by_domain || s->topo->mode != TOPO_MODE_HARD)
        return util_strdup("evicting every gang it may preempt or reclaim would not admit it");
    char what[256];
    topology_constraint_text(s->topo, what, sizeof(what));
    return util_strdupf("evicting the gangs it may preempt or reclaim would not free %s for it", what);
}

int preempt_select(struct fit *f, const struct preempt_input *in, struct preempt_result *out, struct error *err)
{
    preempt_result_finish(out);
    const struct preempt_preemptor *p = in->preemptor;
    if (p->queue >= in->nqueues) {
        out->message = util_strdup("its queue is unknown");
        return 0;
    }
    struct sel s = {.f = f, .in = in, .p = p, .q = &in->queues[p->queue], .err = err};
    sel_init(&s);
    out->message = precondition(&s);
    if (out->message == NULL && fits_queue(&s) && fits_nodes(&s))
        out->message = util_strdup("it fits without evicting anything");
    size_t ncandidates = 0;
    if (out->message == NULL && !s.failed) {
        s.by_domain = s.topo != NULL && !fits_nodes(&s);
        s.kind = PREEMPT_KIND_PREEMPT;
        gather(&s);
        ncandidates = s.ncand;
        decide(&s);
        if (s.nset > 0 && !s.failed)
            finish_result(&s, out);
    }
    size_t nreclaim = 0;
    if (out->message == NULL && !s.failed && may_reclaim(&s)) {
        s.kind = PREEMPT_KIND_RECLAIM;
        reclaim(&s, out, &nreclaim);
    }
    ncandidates += nreclaim;
    if (out->message == NULL && !s.failed)
        out->message = nothing_message(&s, ncandidates);
    int rc = s.failed ? -1 : 0;
    if (s.failed)
        preempt_result_finish(out);
    sel_finish(&s);
    return rc;
}

char *preempt_victim_message(const struct preempt_input *in, const struct preempt_result *r)
{
    const struct preempt_preemptor *p = in->preemptor;
    return util_strdupf("%s by gang %s/%s (priority %" PRId32 ") in queue %s: %s",
                        r->kind == PREEMPT_KIND_RECLAIM ? "reclaimed" : "preempted", p->namespace_, p->name, p->priority,
                        p->queue < in->nqueues ? in->queues[p->queue].name : "?", r->message != NULL ? r->message : "");
}
