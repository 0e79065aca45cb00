#include "admitselect.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "declare.h"
#include "hold.h"
#include "members.h"
#include "treepass.h"

/* Room for the marks of up to n pods and gangs. */
static void pass_marks_init(struct pass *p, size_t n)
{
    size_t slots = marks_slots(n);
    marks_init(&p->marks, admitpass_scratch(p->a, SCRATCH_MARK_KEYS, slots, sizeof(*p->marks.keys), 1),
               admitpass_scratch(p->a, SCRATCH_MARK_BITS, slots, sizeof(*p->marks.bits), 0), slots);
}

static int cmp_names(const char *ns_a, const char *a, const char *ns_b, const char *b)
{
    int r = strcmp(ns_a, ns_b);
    return r != 0 ? r : strcmp(a, b);
}

/* Puts the gang's members first in w->live (members_first), sets w->ncore, and marks the rest as its tail. */
static void order_core(struct pass *p, struct work *w)
{
    w->ncore = members_order(w->g, w->live, w->nlive);
    for (size_t i = w->ncore; i < w->nlive; i++)
        admitpass_pod_mark(p, w->live[i], MARKS_TAIL);
}

static int cmp_work(const void *pa, const void *pb)
{
    const struct work *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->g->created != b->g->created)
        return a->g->created < b->g->created ? -1 : 1;
    return cmp_names(a->g->namespace_, a->g->name, b->g->namespace_, b->g->name);
}

/* Whether the pass evaluates gang g of a selected queue. */
static int gang_selected(const struct qstate *qs, const struct cache_gang *g)
{
    return g->present && (qs->whole || g->node_wait);
}

/* For qstate_of's search: queues by address. */
static int cmp_qindex(const void *a, const void *b)
{
    uintptr_t qa = (uintptr_t)((const struct admit_selected *)a)->qs->q, qb = (uintptr_t)((const struct admit_selected *)b)->qs->q;
    return qa < qb ? -1 : qa > qb;
}

/* q's state among the selected queues (idx: one entry per queue, sorted by cmp_qindex), or NULL. */
static struct qstate *qstate_of(const struct admit_selected *idx, size_t n, const struct cache_queue *q)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (idx[mid].qs->q == q)
            return idx[mid].qs;
        if ((uintptr_t)idx[mid].qs->q < (uintptr_t)q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Visits the selected gangs (see select_gangs) into sel, or only counts them (sel NULL); returns how many. */
static size_t visit_selected(struct pass *p, const struct admit_selected *idx, struct admit_selected *sel)
{
    size_t n = 0, waiting = 0;
    for (size_t i = 0; i < p->nqueues; i++) {
        struct qstate *qs = &p->queues[i];
        waiting += !qs->whole;
        struct cache_gang *g;
        for (g = qs->whole ? qs->q->gangs : NULL; g != NULL; g = g->queue_next) {
            if (!gang_selected(qs, g))
                continue;
            if (sel != NULL)
                sel[n] = (struct admit_selected){g, qs};
            n++;
        }
    }
    for (struct cache_gang *g = waiting > 0 ? p->c->node_waiters : NULL; g != NULL; g = g->nw_next) {
        struct qstate *qs = g->queue != NULL ? qstate_of(idx, p->nqueues, g->queue) : NULL;
        if (qs == NULL || qs->whole || !gang_selected(qs, g))
            continue;
        if (sel != NULL)
            sel[n] = (struct admit_selected){g, qs};
        n++;
    }
    return n;
}

/*
 * p->selected: every gang of a queue selected whole, then the gangs waiting
 * on node room of the queues selected for them only, read from the cache's
 * list of such gangs: a running gang's release wakes those of every queue,
 * and walking their queues' every gang cost more than weighing them.
 */
static void select_gangs(struct pass *p)
{
    struct admit_selected *idx = admitpass_scratch(p->a, SCRATCH_QINDEX, p->nqueues + 1, sizeof(*idx), 0);
    for (size_t i = 0; i < p->nqueues; i++)
        idx[i] = (struct admit_selected){NULL, &p->queues[i]};
    qsort(idx, p->nqueues, sizeof(*idx), cmp_qindex);
    size_t n = visit_selected(p, idx, NULL);
    p->selected = admitpass_scratch(p->a, SCRATCH_SELECTED, n + 1, sizeof(*p->selected), 0);
    p->nselected = visit_selected(p, idx, p->selected);
}

/* Records that the pass evaluates q (whole: all its gangs, else those waiting on node room), in the result too. */
static void select_queue(struct pass *p, struct cache_queue *q, int whole)
{
    if (p->nqueues % 16 == 0)
        p->queues = util_realloc(p->queues, (p->nqueues + 16) * sizeof(*p->queues));
    struct qstate *qs = &p->queues[p->nqueues++];
    memset(qs, 0, sizeof(*qs));
    qs->q = q;
    qs->ti = QUEUETREE_ROOT; /* admitselect_sum_held() */
    qs->whole = whole;
    if (whole)
        cache_queue_mark_clean(p->c, q);
    admit_result_add_queue(p->out, q->name);
}

/* Whether a held preemptor (preempthold.h) is of q: q is evaluated whole in every pass while it is held. */
static int holds_room(const struct pass *p, const struct cache_queue *q)
{
    for (size_t i = 0; i < p->nheld; i++) {
        if (p->held[i].g->queue == q)
            return 1;
    }
    return 0;
}

/*
 * The queues to evaluate: every gang of a queue whose objects changed (or of
 * every queue in a full pass, or of a held preemptor's); and, when room may
 * have appeared on the nodes, the gangs that last waited on node room,
 * wherever they are. A gang waiting
 * on its unchanged queue, or for pods, would wait again: more room on the
 * nodes changes nothing for it. A fifo queue is taken whole, since its
 * blocker decides for those behind it. Sets each queue's held (zero), and
 * *npods to the pods of the gangs to evaluate; returns how many gangs.
 */
size_t admitselect_queues(struct pass *p, int all, int grew, size_t *npods)
{
    struct cache_queue *q;
    cache_queue_for_each(q, p->c) {
        int whole = all || q->dirty || (grew && q->node_waiters > 0 && q->dequeue == CACHE_DEQUEUE_FIFO) || holds_room(p, q);
        if (whole || (grew && q->node_waiters > 0))
            select_queue(p, q, whole);
    }
    int64_t *held = admitpass_scratch(p->a, SCRATCH_HELD, p->nqueues * p->nres + 1, sizeof(*held), 1);
    for (size_t i = 0; i < p->nqueues; i++)
        p->queues[i].held = held + i * p->nres;
    select_gangs(p);
    *npods = 0;
    for (size_t i = 0; i < p->nselected; i++)
        *npods += p->selected[i].g->npods;
    return p->nselected;
}

/* Fills w for gang g: its live pods (into live, in creation order), priority, and members. */
static void collect_work(struct pass *p, struct work *w, struct qstate *qs, struct cache_gang *g, struct cache_pod **live)
{
    w->g = g;
    w->qs = qs;
    w->live = live;
    w->admitted = g->admitted;
    int first = 1;
    struct cache_pod *pod;
    cache_gang_for_each_pod(pod, g) {
        if (!cache_pod_live(pod))
            continue;
        w->live[w->nlive++] = pod;
        if (!cache_pod_gated(pod))
            w->ungated++;
        int32_t prio = declare_pod_priority(p->c, pod);
        if (first || prio > w->priority)
            w->priority = prio;
        first = 0;
    }
    order_core(p, w);
}

/*
 * Whether admitted gang g decides nothing in this pass: every live pod of it
 * is ungated (cache_gang's nopen, kept by the cache), so there is no member to
 * finish nor tail pod to admit (evaluate_admitted). Its pods are not walked: in
 * a flood into one queue, every pass would walk every running gang's pods.
 */
static int decides_nothing(const struct cache_gang *g)
{
    return g->admitted && g->nopen == g->nlive;
}

/* The gangs the selected queues evaluate (at most ngangs of them, npods pods), in the order they are decided. */
struct work *admitselect_works(struct pass *p, size_t ngangs, size_t npods, size_t *nout)
{
    struct work *works = admitpass_scratch(p->a, SCRATCH_WORKS, ngangs, sizeof(*works), 1);
    struct cache_pod **pods = admitpass_scratch(p->a, SCRATCH_PODS, npods, sizeof(*pods), 0);
    pass_marks_init(p, npods + ngangs);
    size_t nworks = 0, used = 0;
    for (size_t i = 0; i < p->nselected; i++) {
        struct cache_gang *g = p->selected[i].g;
        if (decides_nothing(g))
            continue;
        struct work *w = &works[nworks++];
        collect_work(p, w, p->selected[i].qs, g, pods + used);
        used += w->nlive; /* in creation order: the cache keeps each gang's pods so */
    }
    /* Each evaluated gang gets a new verdict: forget the old one's node wait. */
    for (size_t i = 0; i < nworks; i++)
        cache_gang_set_node_wait(p->c, works[i].g, 0);
    qsort(works, nworks, sizeof(*works), cmp_work);
    *nout = nworks;
    return works;
}

/*
 * The tree, when a queue's verdicts depend on others' (the tree is more than
 * flat queues) or several queues take turns by share: built, then the alloc
 * and demand of the queues the pass does not evaluate, then deserved
 * (treepass.h). Otherwise (one flat queue) the pass goes without it: an empty
 * tree, every queue's ti QUEUETREE_ROOT.
 */
static void load_tree(struct pass *p)
{
    if (!p->linked && p->nqueues <= 1)
        return;
    qtree_build_memo(&p->tree, p->c, p->nres, &p->a->total);
    for (size_t i = 0; i < p->nqueues; i++)
        p->queues[i].ti = qtree_index(&p->tree, p->queues[i].q);
    unsigned char *skip = util_calloc(p->tree.n + 1, 1);
    for (size_t i = 0; i < p->nqueues; i++) {
        if (p->queues[i].ti != QUEUETREE_ROOT)
            skip[p->queues[i].ti] = 1;
    }
    treepass_load(&p->tree, &p->marks, skip, p->hold_a, p->hold_tail);
    free(skip);
}

/* What the admitted gangs of the selected queues hold (their tails known now), and the others' ungated pods. */
void admitselect_sum_held(struct pass *p)
{
    load_tree(p);
    for (size_t i = 0; i < p->nqueues; i++) {
        struct cache_gang *g;
        cache_queue_for_each_gang(g, p->queues[i].q) {
            if (g->admitted)
                hold_gang(&p->marks, p->nres, g, NULL, p->hold_a, p->hold_tail);
            else
                hold_ungated(&p->marks, p->nres, g, p->hold_a);
            admitpass_queue_add(p, &p->queues[i], p->hold_a, 1);
        }
    }
}

/* Whether some queue's objects changed since the last pass that evaluated it. */
int admitselect_any_dirty(const struct cache *c)
{
    struct cache_queue *q;
    cache_queue_for_each(q, c) {
        if (q->dirty)
            return 1;
    }
    return 0;
}
