#include "preemptscan.h"

#include <stdlib.h>
#include <string.h>

#include "declare.h"
#include "early.h"
#include "evict.h"
#include "fit.h"
#include "fithold.h"
#include "members.h"
#include "names.h"
#include "preempthold.h"
#include "qtree.h"
#include "queuetree.h"
#include "topodomain.h"
#include "util.h"

void preemptscan_result_init(struct preemptscan_result *r)
{
    memset(r, 0, sizeof(*r));
}

static void victim_finish(struct preemptscan_victim *v)
{
    free(v->namespace_);
    free(v->cluster);
    free(v->cluster_uid);
    free(v->resource_version);
    free(v->gang);
    free(v->queue);
    for (size_t i = 0; i < v->npods; i++) {
        free(v->pods[i].name);
        free(v->pods[i].uid);
    }
    free(v->pods);
}

void preemptscan_result_finish(struct preemptscan_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nvictims; i++)
        victim_finish(&r->victims[i]);
    free(r->victims);
    for (size_t i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    free(r->notes);
    free(r->namespace_);
    free(r->cluster);
    free(r->gang);
    free(r->queue);
    free(r->domain);
    free(r->victim_message);
    free(r->preemptor_message);
    memset(r, 0, sizeof(*r));
}

static void note(struct preemptscan_result *r, char *text_new)
{
    r->notes = util_realloc(r->notes, (r->nnotes + 1) * sizeof(*r->notes));
    r->notes[r->nnotes++] = text_new;
}

/* ---- what the selection sees ---- */

struct scan {
    const struct cache *c;
    struct preemptscan_result *out;
    struct error *err;
    struct cache_queue **cq; /* by index of queues */
    struct preempt_queue *queues;
    struct resources *qres; /* QRES per queue: capability, deserved, allocated (its subtree's), guarantee, its own gangs' */
    size_t nq;
    struct cache_gang **pg; /* by index of pool */
    struct preempt_gang *pool;
    struct resources *holds;
    struct cache_pod ***bound;
    size_t npool, cap;
    struct resources root_cap, root_room; /* the root's (qtree.h) */
    struct topodomains *domains;          /* the pass's (preempt_input.domains) */
};

/* out = rl's resources; NULL when rl is NULL. */
static const struct resources *from_rl(const struct cache *c, const struct shape_rl *rl, struct resources *out)
{
    resources_init(out);
    if (rl == NULL)
        return NULL;
    for (uint32_t k = 0; k < rl->len; k++) {
        struct quantity q = {rl->items[k].value, (enum quantity_format)rl->items[k].format};
        resources_set(out, cache_resource_name(c, rl->items[k].id), &q);
    }
    return out;
}

/* The highest priority of g's live pods (admit.h's order; declare_pod_priority); 0 without any. */
static int32_t gang_priority(const struct cache *c, const struct cache_gang *g)
{
    int32_t prio = 0;
    int first = 1;
    const struct cache_pod *p;
    cache_gang_for_each_pod(p, g) {
        if (!cache_pod_live(p))
            continue;
        int32_t v = declare_pod_priority(c, p);
        if (first || v > prio)
            prio = v;
        first = 0;
    }
    return prio;
}

enum { QRES_CAPABILITY, QRES_DESERVED, QRES_ALLOCATED, QRES_GUARANTEE, QRES_OWN, QRES };

static size_t queue_index(const struct scan *s, const struct cache_queue *q)
{
    for (size_t i = 0; i < s->nq; i++) {
        if (s->cq[i] == q)
            return i;
    }
    return SIZE_MAX;
}

/* What queue i's own gangs hold, into s->qres (QRES_OWN). */
static int own_hold(struct scan *s, size_t i)
{
    struct resources hold;
    struct error rerr;
    resources_init(&hold);
    struct cache_gang *g;
    int rc = 0;
    cache_queue_for_each_gang(g, s->cq[i]) {
        if (admit_gang_hold(s->c, g, &hold, &rerr) != 0 ||
            resources_add_scaled(&s->qres[QRES * i + QRES_OWN], &hold, 1, &rerr) != 0) {
            error_setf(s->err, "%s", rerr.message);
            rc = -1;
            break;
        }
    }
    resources_finish(&hold);
    return rc;
}

/* The tree (queuetree.h): each queue's parent, QUEUETREE_ROOT for a bad one; each allocation its subtree's. */
static int link_tree(struct scan *s)
{
    struct queuetree_in *in = util_calloc(s->nq + 1, sizeof(*in));
    struct queuetree_node *out = util_calloc(s->nq + 1, sizeof(*out));
    for (size_t i = 0; i < s->nq; i++)
        in[i] = (struct queuetree_in){s->cq[i]->name, s->cq[i]->parent, s->cq[i]->present};
    queuetree_build(in, s->nq, out, NULL);
    for (size_t i = 0; i < s->nq; i++)
        s->queues[i].parent = out[i].state == QUEUETREE_OK ? out[i].parent : QUEUETREE_ROOT;
    struct error rerr;
    int rc = 0;
    for (size_t i = 0; i < s->nq && rc == 0; i++) {
        size_t steps = 0; /* the links are a tree; the bound only guards */
        for (size_t q = i; q != QUEUETREE_ROOT && steps++ <= s->nq && rc == 0; q = s->queues[q].parent)
            rc = resources_add_scaled(&s->qres[QRES * q + QRES_ALLOCATED], &s->qres[QRES * i + QRES_OWN], 1, &rerr);
    }
    if (rc != 0)
        error_setf(s->err, "%s", rerr.message);
    free(out);
    free(in);
    return rc;
}

/* The root's capability and room, as qtree.h counts them. */
static void root_limits(struct scan *s, const struct qtree *t)
{
    for (uint32_t k = 0; k < t->nres; k++) {
        const char *name = cache_resource_name(s->c, k);
        struct quantity q = {t->root_cap[k], QUANTITY_DECIMAL_SI};
        if (q.value != QTREE_UNLIMITED)
            resources_set(&s->root_cap, name, &q);
        q.value = t->total[k] < q.value ? t->total[k] : q.value;
        resources_set(&s->root_room, name, &q);
    }
}

/* Whether queue i of t or an ancestor opts in to reclaim by its deserved derived by weight. */
static int by_weight(const struct qtree *t, size_t i)
{
    size_t steps = 0; /* the links are a tree; the bound only guards */
    for (; i != QUEUETREE_ROOT && steps++ <= t->n; i = t->queues[i].parent) {
        if (t->queues[i].q->reclaim_by_weight)
            return 1;
    }
    return 0;
}

/*
 * A queue without spec.deserved that opts in (NAMES_ANNOTATION_RECLAIM_BY_WEIGHT, on it or an ancestor) reclaims and
 * is reclaimed from by its deserved derived by weight (qtree_derive), in the resources contended at its level
 * (qtree_contended): elsewhere its derived deserved is its own demand, and a victim would always be "below" it. With
 * none contended it has no deserved: it neither reclaims nor is reclaimed from.
 */
static void derived_deserved(struct scan *s, const struct qtree *t)
{
    for (size_t i = 0; i < s->nq; i++) {
        size_t x = qtree_index(t, s->cq[i]);
        if (!s->cq[i]->present || s->queues[i].deserved != NULL || x == QUEUETREE_ROOT || t->queues[x].explicit_deserved ||
            t->queues[x].is_root || !by_weight(t, x))
            continue;
        struct resources *r = &s->qres[QRES * i + QRES_DESERVED];
        for (uint32_t k = 0; k < t->nres; k++) {
            struct quantity q = {t->queues[x].deserved[k], QUANTITY_DECIMAL_SI};
            if (qtree_contended(t, x, k))
                resources_set(r, cache_resource_name(s->c, k), &q);
        }
        s->queues[i].deserved = r->len > 0 ? r : NULL;
    }
}

static int build_queues(struct scan *s)
{
    struct cache_queue *q;
    cache_queue_for_each(q, s->c)
        s->nq++;
    s->cq = util_calloc(s->nq + 1, sizeof(*s->cq));
    s->queues = util_calloc(s->nq + 1, sizeof(*s->queues));
    s->qres = util_calloc(QRES * s->nq + 1, sizeof(*s->qres));
    size_t i = 0;
    cache_queue_for_each(q, s->c) {
        struct preempt_queue *pq = &s->queues[i];
        struct resources *r = &s->qres[QRES * i];
        s->cq[i] = q;
        pq->name = q->name;
        struct error perr = {{0}};
        if (preempt_policy_parse(q->preemption, &pq->policy, &perr) != 0)
            note(s->out, util_strdupf("queue %s: %s", q->name, perr.message));
        pq->capability = from_rl(s->c, q->present ? q->capability : NULL, &r[QRES_CAPABILITY]);
        pq->deserved = from_rl(s->c, q->present ? q->deserved : NULL, &r[QRES_DESERVED]);
        /* The Queue named root is the root itself, not a sibling whose guarantee the root's children leave room for. */
        int root = strcmp(q->name, QUEUETREE_ROOT_NAME) == 0;
        pq->guarantee = from_rl(s->c, q->present && !root ? q->guarantee : NULL, &r[QRES_GUARANTEE]);
        pq->reclaimable = q->reclaimable;
        resources_init(&r[QRES_ALLOCATED]);
        resources_init(&r[QRES_OWN]);
        pq->allocated = &r[QRES_ALLOCATED];
        if (own_hold(s, i++) != 0)
            return -1;
    }
    struct qtree t;
    qtree_init(&t);
    qtree_fill(&t, s->c);
    root_limits(s, &t);
    derived_deserved(s, &t);
    qtree_finish(&t);
    return link_tree(s);
}

/* Adds admitted gang g of queue qi to the pool. */
static int pool_add(struct scan *s, struct cache_gang *g, size_t qi)
{
    if (s->npool == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->pg = util_realloc(s->pg, s->cap * sizeof(*s->pg));
        s->pool = util_realloc(s->pool, s->cap * sizeof(*s->pool));
        s->holds = util_realloc(s->holds, s->cap * sizeof(*s->holds));
        s->bound = util_realloc(s->bound, s->cap * sizeof(*s->bound));
    }
    size_t i = s->npool++;
    struct preempt_gang *pg = &s->pool[i];
    memset(pg, 0, sizeof(*pg));
    s->pg[i] = g;
    resources_init(&s->holds[i]);
    s->bound[i] = util_calloc(g->npods + 1, sizeof(**s->bound));
    pg->namespace_ = g->namespace_;
    pg->name = g->name;
    pg->queue = qi;
    pg->priority = gang_priority(s->c, g);
    pg->created_ms = g->created * 1000;
    if (g->admitted_at == NULL || evict_parse_time(g->admitted_at, &pg->admitted_ms) != 0)
        pg->admitted_ms = 0; /* unknown: taken as the oldest */
    pg->preemptable = g->preemptable;
    struct error rerr;
    if (admit_gang_hold(s->c, g, &s->holds[i], &rerr) != 0) {
        error_setf(s->err, "%s", rerr.message);
        return -1;
    }
    pg->hold = &s->holds[i];
    struct cache_pod *p;
    cache_gang_for_each_pod(p, g) {
        if (p->counted != NULL)
            s->bound[i][pg->npods++] = p;
    }
    pg->pods = s->bound[i];
    return 0;
}

/* The possible victims: present, admitted gangs with a valid spec, not the legacy operator's (evictscan does not evict those
 * either). */
static int build_pool(struct scan *s)
{
    for (size_t qi = 0; qi < s->nq; qi++) {
        struct cache_gang *g;
        cache_queue_for_each_gang(g, s->cq[qi]) {
            if (g->present && g->admitted && g->spec_ok && !g->legacy && pool_add(s, g, qi) != 0)
                return -1;
        }
    }
    return 0;
}

static void scan_finish(struct scan *s)
{
    for (size_t i = 0; i < QRES * s->nq; i++)
        resources_finish(&s->qres[i]);
    resources_finish(&s->root_cap);
    resources_finish(&s->root_room);
    for (size_t i = 0; i < s->npool; i++) {
        resources_finish(&s->holds[i]);
        free(s->bound[i]);
    }
    free(s->cq);
    free(s->queues);
    free(s->qres);
    free(s->pg);
    free(s->pool);
    free(s->holds);
    free(s->bound);
}

/* ---- the preemptors ---- */

/* A victim of a preemption (raygate.io/preempted-by), not admitted again, whose pods are not all gone. */
static int any_in_flight(const struct cache *c, int64_t now_ms)
{
    for (const struct cache_gang *g = c->preempted; g != NULL; g = g->pre_next) {
        if (preempthold_in_flight(g, now_ms))
            return 1;
    }
    return 0;
}

/* Whether g's members all exist: one weighed early (early.h) waits for them before it preempts. */
static int complete(const struct cache_gang *g)
{
    struct cache_pod **live;
    size_t ncore = members_of(g, &live);
    free(live);
    return (int64_t)ncore >= g->min_member;
}

struct candidate {
    struct cache_gang *g;
    int32_t priority;
};

/* Highest priority first, then the older RayCluster, then namespace/name. */
static int cmp_preemptors(const void *pa, const void *pb)
{
    const struct candidate *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->g->created != b->g->created)
        return a->g->created < b->g->created ? -1 : 1;
    int r = strcmp(a->g->namespace_, b->g->namespace_);
    return r != 0 ? r : strcmp(a->g->name, b->g->name);
}

/* The gangs d left waiting on capacity (their queue's or an ancestor's, or a guarantee) or nodes, in the order they
 * are weighed; *n of them (caller frees). */
static struct candidate *preemptors(const struct cache *c, const struct admit_result *d, size_t *n)
{
    struct candidate *cs = util_calloc(d->len + 1, sizeof(*cs));
    *n = 0;
    for (size_t i = 0; i < d->len; i++) {
        const struct admit_decision *x = &d->items[i];
        if (x->action != ADMIT_ACTION_WAIT || (x->reason != ADMIT_REASON_QUEUE_CAPACITY && x->reason != ADMIT_REASON_QUEUE_TREE &&
                                               x->reason != ADMIT_REASON_NODES && x->reason != ADMIT_REASON_TOPOLOGY))
            continue;
        struct cache_gang *g = cache_gang_get(c, x->namespace_, x->cluster);
        if (g == NULL || !g->present || g->admitted || !g->spec_ok || g->legacy || g->queue == NULL || !complete(g))
            continue;
        cs[(*n)++] = (struct candidate){g, gang_priority(c, g)};
    }
    qsort(cs, *n, sizeof(*cs), cmp_preemptors);
    return cs;
}

static void victim_result(struct preemptscan_victim *v, const struct cache_gang *g, int32_t priority)
{
    memset(v, 0, sizeof(*v));
    v->namespace_ = util_strdup(g->namespace_);
    v->cluster = util_strdup(g->name);
    v->cluster_uid = util_strdup(g->uid);
    v->resource_version = util_strdup(g->resource_version);
    v->gang = names_podgroup(cache_gang_group(g));
    v->queue = util_strdup(g->queue != NULL ? g->queue->name : "");
    v->priority = priority;
    v->pods = util_calloc(g->npods + 1, sizeof(*v->pods));
    const struct cache_pod *p;
    cache_gang_for_each_pod(p, g) {
        if (cache_pod_live(p) && (!cache_pod_gated(p) || p->node != NULL)) {
            v->pods[v->npods].name = util_strdup(p->name);
            v->pods[v->npods].uid = util_strdup(p->uid);
            v->npods++;
        }
    }
}

/* Fills s->out with the preemption r chose for g. */
static void fill_result(struct scan *s, const struct preempt_input *in, const struct preempt_result *r, const struct cache_gang *g)
{
    struct preemptscan_result *out = s->out;
    out->kind = r->kind;
    out->namespace_ = util_strdup(g->namespace_);
    out->cluster = util_strdup(g->name);
    out->gang = names_podgroup(cache_gang_group(g));
    out->queue = util_strdup(g->queue->name);
    out->priority = in->preemptor->priority;
    out->domain = r->domain != NULL ? util_strdup(r->domain) : NULL;
    out->victim_message = preempt_victim_message(in, r);
    out->victims = util_calloc(r->nvictims + 1, sizeof(*out->victims));
    struct util_buf b = {0};
    util_buf_printf(&b, "%s ", r->kind == PREEMPT_KIND_RECLAIM ? "reclaiming from" : "preempting");
    for (size_t i = 0; i < r->nvictims; i++) {
        const struct preempt_gang *v = &in->pool[r->victims[i]];
        victim_result(&out->victims[out->nvictims++], s->pg[r->victims[i]], v->priority);
        util_buf_printf(&b, "%sgang %s/%s (priority %d) of queue %s", i ? ", " : "", v->namespace_, v->name, (int)v->priority,
                        in->queues[v->queue].name);
    }
    util_buf_printf(&b, ": %s", r->message);
    out->preemptor_message = util_buf_take(&b);
}

/* Weighs preemptor g on f; returns 1 when it found victims (s->out filled), 0 when not, -1 on overflow. */
static int weigh(struct scan *s, struct fit *f, const struct candidate *cand)
{
    struct cache_gang *g = cand->g;
    struct cache_pod **pods = util_calloc(g->npods + 1, sizeof(*pods));
    struct preempt_preemptor p = {.namespace_ = g->namespace_, .name = g->name, .priority = cand->priority};
    p.queue = queue_index(s, g->queue);
    p.created_ms = g->created * 1000;
    p.preempted_by = g->preempted_by;
    p.request = &g->min_resources;
    struct cache_pod *pod;
    cache_gang_for_each_pod(pod, g) {
        if (cache_pod_live(pod))
            pods[p.npods++] = pod;
    }
    fit_sort_larger_first(f, pods, p.npods);
    p.pods = pods;
    p.topo = g->topo;
    struct preempt_input in = {s->queues, s->nq, s->pool, s->npool, &p, &s->root_cap, &s->root_room, s->domains, s->c};
    struct preempt_result r;
    preempt_result_init(&r);
    int rc = preempt_select(f, &in, &r, s->err);
    if (rc == 0 && r.kind != PREEMPT_KIND_NONE)
        fill_result(s, &in, &r, g);
    else if (rc == 0)
        note(s->out, util_strdupf("gang %s/%s: %s", g->namespace_, g->name, r.message));
    rc = rc != 0 ? -1 : r.kind != PREEMPT_KIND_NONE;
    preempt_result_finish(&r);
    free(pods);
    return rc;
}

/* Admitted pods the scheduler has not bound yet keep their room, as in a pass (admit.c). */
static void reserve_admitted(const struct cache *c, struct fit *f)
{
    struct cache_pod **resv = util_calloc(c->nreserving + 1, sizeof(*resv));
    fithold_admitted(c, f, resv);
    free(resv);
}

int preemptscan_run(const struct cache *c, const struct admit_result *d, const struct hypernodes *h, int64_t now_ms,
                    struct preemptscan_result *out, struct error *err)
{
    preemptscan_result_finish(out);
    size_t n;
    struct candidate *cs = preemptors(c, d, &n);
    if (n == 0 || any_in_flight(c, now_ms)) {
        if (n > 0)
            note(out, util_strdup("a preemption is in flight: no other until its victims' pods are gone"));
        free(cs);
        return 0;
    }
    struct scan s = {.c = c, .out = out, .err = err};
    int rc = build_queues(&s) != 0 || build_pool(&s) != 0 ? -1 : 0;
    struct fit *f = fit_create(c);
    fit_begin(f);
    reserve_admitted(c, f);
    early_reserve(c, f);
    s.domains = topodomain_create();
    topodomain_set_hypernodes(s.domains, h);
    topodomain_begin(s.domains, f, c);
    for (size_t i = 0; i < n && rc == 0 && out->kind == PREEMPT_KIND_NONE; i++)
        rc = weigh(&s, f, &cs[i]) < 0 ? -1 : 0;
    topodomain_destroy(s.domains);
    fit_end(f);
    fit_destroy(f);
    scan_finish(&s);
    free(cs);
    if (rc != 0) {
        preemptscan_result_finish(out);
        return -1;
    }
    return 0;
}
