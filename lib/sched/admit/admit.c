#include "admit.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "admitpass.h"
#include "admitselect.h"
#include "admittopo.h"
#include "devices.h"
#include "dispatchlease.h"
#include "early.h"
#include "fairorder.h"
#include "fit.h"
#include "fithold.h"
#include "hold.h"
#include "marks.h"
#include "members.h"
#include "names.h"
#include "preemptdomain.h"
#include "preempthold.h"
#include "qtree.h"
#include "resources.h"
#include "treepass.h"
#include "util.h"

/* ---- the pass ---- */

struct admit *admit_create(struct cache *c)
{
    struct admit *a = util_calloc(1, sizeof(*a));
    a->c = c;
    a->fit = fit_create(c);
    a->hold = preempthold_create();
    a->topo = topodomain_create();
    evict_config_default(&a->evict);
    return a;
}

void admit_set_evict(struct admit *a, const struct evict_config *cfg)
{
    a->evict = *cfg;
}

void admit_set_now(struct admit *a, int64_t now_ms)
{
    a->now_ms = now_ms;
}

void admit_set_early(struct admit *a, int on)
{
    a->early = on != 0;
}

void admit_set_hypernodes(struct admit *a, const struct hypernodes *h)
{
    a->hypernodes = h;
    topodomain_set_hypernodes(a->topo, h);
}

void admit_destroy(struct admit *a)
{
    if (a == NULL)
        return;
    for (int i = 0; i < SCRATCH_COUNT; i++)
        free(a->buf[i]);
    fit_destroy(a->fit);
    preempthold_destroy(a->hold);
    topodomain_destroy(a->topo);
    qtree_total_memo_finish(&a->total);
    free(a);
}

static int pod_ungated(const struct pass *p, const struct cache_pod *pod)
{
    return !cache_pod_gated(pod) || (marks_get(&p->marks, pod) & MARKS_ADMITTED);
}

size_t admit_gang_members(const struct cache_gang *g, struct cache_pod ***out)
{
    return members_of(g, out);
}

/* ---- queue capability ---- */

int admit_gang_hold(const struct cache *c, const struct cache_gang *g, struct resources *out, struct error *err)
{
    return hold_resources(c, g, out, err);
}

const struct resources *admit_gang_hold_ref(const struct cache *c, const struct cache_gang *g, struct resources *scratch,
                                            struct error *err)
{
    return hold_resources_ref(c, g, scratch, err);
}

/* ---- decisions ---- */

static void wait_msg(struct pass *p, const struct work *w, enum admit_reason reason, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static void wait_msg(struct pass *p, const struct work *w, enum admit_reason reason, const char *format, ...)
{
    struct util_buf b = {0};
    va_list ap;
    va_start(ap, format);
    util_buf_vprintf(&b, format, ap);
    va_end(ap);
    admitpass_decide(p, ADMIT_ACTION_WAIT, reason, w, util_buf_take(&b));
}

static int queue_closed(const struct cache_queue *q)
{
    return q->state != NULL && (strcmp(q->state, "Closed") == 0 || strcmp(q->state, "Closing") == 0);
}

/* A queue that is missing or closed: the reason (and message in *why), else NONE. */
static enum admit_reason queue_unusable(const struct cache_queue *q, char **why)
{
    struct util_buf b = {0};
    if (!q->present) {
        util_buf_printf(&b, "queue %s does not exist", q->name);
        *why = util_buf_take(&b);
        return ADMIT_REASON_QUEUE_MISSING;
    }
    if (queue_closed(q)) {
        util_buf_printf(&b, "queue %s is %s", q->name, q->state);
        *why = util_buf_take(&b);
        return ADMIT_REASON_QUEUE_CLOSED;
    }
    return ADMIT_REASON_NONE;
}

/* Marks pod admitted by this pass and reserves its room. */
static void admit_pod(struct pass *p, struct work *w, struct cache_pod *pod, int place_it)
{
    admitpass_pod_mark(p, pod, MARKS_ADMITTED);
    w->ungated++;
    if (place_it && pod->node == NULL)
        fithold_reserve(p->fit, pod);
}

/* A pod of the tail that is a head while a member is one: a second head pod, never autoscaled capacity. */
static int extra_head(const struct work *w, size_t i)
{
    if (i < w->ncore || members_role(w->g, w->live[i]) != 0)
        return 0;
    for (size_t k = 0; k < w->ncore; k++) {
        if (members_role(w->g, w->live[k]) == 0)
            return 1;
    }
    return 0;
}

/*
 * A second head pod (KubeRay made it from a stale view after an apiserver
 * restart, or a user did) stays gated and takes no room: KubeRay stops
 * reconciling a RayCluster with two heads until one is deleted ("Please delete
 * extra head pods"), so ungating it would only hold a node for nothing. Its
 * pods are added to d, the tail's wait, or to a wait of their own.
 */
static void extra_heads_wait(struct pass *p, struct work *w, struct admit_decision *d)
{
    for (size_t i = w->ncore; i < w->nlive; i++) {
        struct cache_pod *pod = w->live[i];
        if (pod_ungated(p, pod) || !extra_head(w, i))
            continue;
        char *why = util_strdupf("pod %s is a second head pod of RayCluster %s: it stays gated and holds no room until "
                                 "one of the heads is deleted (KubeRay does not reconcile a cluster with two heads)",
                                 pod->name, w->g->name);
        if (d == NULL)
            d = admitpass_decide(p, ADMIT_ACTION_TAIL_WAIT, ADMIT_REASON_PODS, w, util_strdup(why));
        admit_result_add_pod(p->out, d, pod);
        d->pods[d->npods - 1].message = why;
    }
}

/*
 * Whether growth (dense, what an admitted gang's hold grows by) fits its
 * queue and every level above it (qtree.h); else the reason, and what is
 * short in *why (new). One blocked by room guaranteed to another queue waits
 * on room, as one short of node room does.
 */
static enum admit_reason growth_fits_queue(struct pass *p, struct work *w, const int64_t *growth, char **why)
{
    struct qstate *qs = w->qs;
    enum admit_reason reason = queue_unusable(qs->q, why);
    if (reason != ADMIT_REASON_NONE)
        return reason;
    int guarantee = 0;
    struct util_buf t = {0};
    if (!hold_fits(p->c, qs->q, qs->held, growth, NULL, why))
        reason = ADMIT_REASON_QUEUE_CAPACITY;
    else if (p->linked) /* flat queues: the leaf's own capability is all there is */
        reason = treepass_fits(&p->tree, qs->ti, growth, p->c, &t, &guarantee);
    if (reason != ADMIT_REASON_NONE && *why == NULL)
        *why = util_buf_take(&t);
    util_buf_finish(&t);
    if (guarantee)
        cache_gang_set_node_wait(p->c, w->g, 1);
    return reason;
}

/*
 * Whether tail pod fits its gang's queue and every level above it, with what
 * it adds to the gang's hold in p->hold_b; else the reason, and its message
 * in *why (new).
 */
static enum admit_reason tail_fits_queue(struct pass *p, struct work *w, const struct cache_pod *pod, char **why)
{
    hold_gang(&p->marks, p->nres, w->g, NULL, p->hold_a, p->hold_tail);
    hold_gang(&p->marks, p->nres, w->g, pod, p->hold_b, p->hold_tail);
    for (uint32_t k = 0; k < p->nres; k++)
        p->hold_b[k] -= p->hold_a[k];
    char *short_ = NULL;
    enum admit_reason reason = growth_fits_queue(p, w, p->hold_b, &short_);
    if (reason == ADMIT_REASON_NONE)
        return reason;
    struct util_buf b = {0};
    util_buf_printf(&b, "pod %s (", pod->name);
    fit_request_text(&b, p->c, pod->request);
    util_buf_printf(&b, ") does not fit queue %s: %s", w->qs->q->name, short_ != NULL ? short_ : "");
    free(short_);
    *why = util_buf_take(&b);
    return reason;
}

/* Tail pod i waits (reason, why: taken): one TAIL_WAIT, told on it and on those behind it, and the extra heads. */
static void tail_wait(struct pass *p, struct work *w, size_t i, enum admit_reason reason, char *why)
{
    struct cache_pod *pod = w->live[i];
    struct admit_decision *d = admitpass_decide(p, ADMIT_ACTION_TAIL_WAIT, reason, w, why);
    admit_result_add_pod(p->out, d, pod);
    d->pods[d->npods - 1].message = util_strdup(why);
    /* Those behind it wait with it, and are told so. */
    for (size_t j = i + 1; j < w->nlive; j++) {
        struct cache_pod *behind = w->live[j];
        if (pod_ungated(p, behind) || extra_head(w, j))
            continue;
        admit_result_add_pod(p->out, d, behind);
        d->pods[d->npods - 1].message = util_strdupf(
            "waiting behind pod %s (autoscaled pods are admitted one at a time, in creation order): %s", pod->name, why);
    }
    extra_heads_wait(p, w, d);
}

/*
 * Whether tail pod may be admitted now, and where it goes (fit): its queue
 * takes it, no member of its gang is still to be bound (the room
 * the pass found for the member is the member's; kube-scheduler, seeing the
 * tail too, could give it to the tail and leave the gang partly placed), and
 * the nodes take it. Else the reason, and its message in *why (new).
 */
static enum admit_reason tail_fits(struct pass *p, struct work *w, struct cache_pod *pod, char **why)
{
    enum admit_reason reason = tail_fits_queue(p, w, pod, why);
    if (reason != ADMIT_REASON_NONE)
        return reason;
    for (size_t i = 0; i < w->ncore; i++) {
        if (w->live[i]->node == NULL) {
            *why = util_strdupf("pod %s waits for the gang's pod %s to be bound: autoscaled pods come after the gang's own",
                                pod->name, w->live[i]->name);
            return ADMIT_REASON_NODES;
        }
    }
    struct cache_pod *one[1] = {pod};
    char *nodes = NULL;
    if (pod->node != NULL)
        return reason;
    if (fit_place(p->fit, one, 1, &nodes) == 0) {
        *why = util_strdupf("no node fits pod %s%s", pod->name, nodes);
        free(nodes);
        return ADMIT_REASON_NODES;
    }
    fit_commit(p->fit);
    return ADMIT_REASON_NONE;
}

/* Pods beyond the gang's minMember, one at a time in creation order; a second head waits (extra_heads_wait). */
static void admit_tail(struct pass *p, struct work *w)
{
    struct qstate *qs = w->qs;
    struct cache_queue *q = qs->q;
    for (size_t i = 0; i < w->nlive; i++) {
        struct cache_pod *pod = w->live[i];
        if (pod_ungated(p, pod) || extra_head(w, i))
            continue;
        char *why = NULL;
        enum admit_reason reason = tail_fits(p, w, pod, &why);
        if (reason != ADMIT_REASON_NONE) {
            tail_wait(p, w, i, reason, why);
            return;
        }
        admitpass_queue_add(p, qs, p->hold_b, 1);
        admitpass_pod_mark(p, pod, MARKS_ADMITTED);
        w->ungated++;
        struct util_buf b = {0};
        util_buf_printf(&b, "pod %s admitted by queue %s beyond the gang's %" PRId64 " %s", pod->name, q->name, w->g->min_member,
                        util_plural(w->g->min_member, "pod", "pods"));
        struct admit_decision *d = admitpass_decide(p, ADMIT_ACTION_TAIL_ADMIT, ADMIT_REASON_NONE, w, util_buf_take(&b));
        admit_result_add_pod(p->out, d, pod);
        admittopo_finish(p, w, d, pod); /* an autoscaled pod of a constrained set goes to its set's domain */
    }
    extra_heads_wait(p, w, NULL);
}

/*
 * Members that replace others of an admitted gang (a pod deleted and made
 * again) while those still terminate: the gang's hold grows by them (the old
 * pods still count) until the old are gone. Marks the gated members admitted
 * and returns 1 when that growth fits the queue and every level above it;
 * else unmarks them, makes their wait (TAIL_WAIT, told on each pod, into
 * *wait) and returns 0. A gang whose hold does not grow (members never ungated, after a
 * refused gate removal or a restart) goes on at once: its hold was counted.
 */
static int members_fit(struct pass *p, struct work *w, struct admit_decision **wait)
{
    hold_gang(&p->marks, p->nres, w->g, NULL, p->hold_a, p->hold_tail);
    for (size_t i = 0; i < w->ncore; i++) {
        if (!pod_ungated(p, w->live[i]))
            admitpass_pod_mark(p, w->live[i], MARKS_ADMITTED | MARKS_REPLACING);
    }
    hold_gang(&p->marks, p->nres, w->g, NULL, p->hold_b, p->hold_tail);
    int grows = 0;
    for (uint32_t k = 0; k < p->nres; k++) {
        p->hold_b[k] -= p->hold_a[k];
        grows |= p->hold_b[k] > 0;
    }
    char *short_ = NULL;
    enum admit_reason reason = grows ? growth_fits_queue(p, w, p->hold_b, &short_) : ADMIT_REASON_NONE;
    struct admit_decision *d = NULL;
    for (size_t i = 0; i < w->ncore; i++) {
        struct cache_pod *pod = w->live[i];
        if (!(marks_get(&p->marks, pod) & MARKS_REPLACING))
            continue;
        marks_clear(&p->marks, pod, MARKS_REPLACING | (reason != ADMIT_REASON_NONE ? MARKS_ADMITTED : 0));
        if (reason == ADMIT_REASON_NONE)
            continue;
        char *why = util_strdupf("pod %s replaces a member of admitted gang ray-%s-pg while the pods it replaces still "
                                 "terminate: it waits for them to go, as queue %s has no room for both: %s",
                                 pod->name, cache_gang_group(w->g), w->qs->q->name, short_ != NULL ? short_ : "");
        if (d == NULL)
            d = admitpass_decide(p, ADMIT_ACTION_TAIL_WAIT, reason, w, util_strdup(why));
        admit_result_add_pod(p->out, d, pod);
        d->pods[d->npods - 1].message = why;
    }
    free(short_);
    if (reason == ADMIT_REASON_NONE)
        admitpass_queue_add(p, w->qs, p->hold_b, 1);
    *wait = d;
    return reason == ADMIT_REASON_NONE;
}

/* The tail of a gang whose replaced members wait (members_fit): each of its pods waits behind them, and is told so. */
static void tail_waits_behind(struct pass *p, struct work *w, struct admit_decision *d)
{
    for (size_t i = w->ncore; i < w->nlive && d != NULL; i++) {
        struct cache_pod *pod = w->live[i];
        if (pod_ungated(p, pod) || extra_head(w, i))
            continue;
        admit_result_add_pod(p->out, d, pod);
        d->pods[d->npods - 1].message =
            util_strdupf("waiting behind pod %s, a replaced member of the gang (autoscaled pods are admitted after its members)",
                         d->pods[0].name);
    }
    extra_heads_wait(p, w, d);
}

/* An admitted gang: replace missing members at once (members_fit), then its tail. */
static void evaluate_admitted(struct pass *p, struct work *w)
{
    if (dispatchlease_check(w->g->lease, p->a->now_ms, NULL) == DISPATCHLEASE_EXPIRED)
        return; /* the next eviction scan takes it back (evictscan.h): meanwhile none of its pods is ungated */
    struct cache_queue *q = w->qs->q;
    size_t need = 0;
    for (size_t i = 0; i < w->ncore; i++)
        need += !pod_ungated(p, w->live[i]);
    if (need == 0) {
        admit_tail(p, w);
        return;
    }
    struct admit_decision *wait = NULL;
    if (!members_fit(p, w, &wait)) {
        tail_waits_behind(p, w, wait);
        return;
    }
    struct admit_decision *d = admitpass_decide(p, ADMIT_ACTION_FINISH, ADMIT_REASON_NONE, w, NULL);
    for (size_t i = 0; i < w->ncore; i++) {
        struct cache_pod *pod = w->live[i];
        if (!(marks_get(&p->marks, pod) & MARKS_ADMITTED) || !cache_pod_gated(pod))
            continue;
        admit_result_add_pod(p->out, d, pod);
        admittopo_finish(p, w, d, pod);
        w->ungated++;
        if (pod->node == NULL && !early_reserves(w->g)) /* else its copy holds its room (early.h) */
            fithold_reserve(p->fit, pod);
    }
    struct util_buf b = {0};
    util_buf_printf(&b, "admitted by queue %s earlier; scheduling gates removed from %zu %s", q->name, d->npods,
                    util_plural((int64_t)d->npods, "pod", "pods"));
    d->message = util_buf_take(&b);
    admit_tail(p, w);
}

/* Whether the gang's members include its head. */
static int has_head(const struct work *w)
{
    for (size_t i = 0; i < w->ncore; i++) {
        if (members_role(w->g, w->live[i]) == 0)
            return 1;
    }
    return 0;
}

/*
 * An evicted gang (evict.h) waits while its old pods are being deleted, during
 * its requeue backoff, and once deactivated: decides WAIT and returns 1.
 */
static int pending_held(struct pass *p, const struct work *w)
{
    const struct cache_gang *g = w->g;
    if (g->record.count <= 0 && g->record.evicted_at_ms <= 0)
        return 0;
    size_t left = 0;
    struct cache_pod *pod;
    cache_gang_for_each_pod(pod, g) {
        left += evict_pod_leftover(0, &g->record, cache_pod_live(pod), cache_pod_gated(pod), pod->node != NULL);
    }
    if (left > 0) {
        wait_msg(p, w, ADMIT_REASON_EVICTED, "gang ray-%s-pg is being evicted: %zu of its pods still to be deleted",
                 cache_gang_group(g), left);
        return 1;
    }
    int64_t until = 0;
    enum evict_hold hold = evict_hold(&p->a->evict, &g->record, g->generation, p->a->now_ms, &until);
    if (hold == EVICT_HOLD_NONE)
        return 0;
    char *gang = names_podgroup(cache_gang_group(g));
    admitpass_decide(p, ADMIT_ACTION_WAIT, hold == EVICT_HOLD_BACKOFF ? ADMIT_REASON_EVICTED : ADMIT_REASON_DEACTIVATED, w,
                     evict_hold_message(gang, hold, &p->a->evict, &g->record));
    free(gang);
    return 1;
}

/*
 * A gang dispatched from a manager (dispatchlease.h) whose lease expired, or
 * whose lease annotations do not parse, waits; it blocks no fifo queue, as an
 * evicted gang does not: decides WAIT and returns 1.
 */
static int pending_lease(struct pass *p, const struct work *w)
{
    const struct cache_gang *g = w->g;
    if (dispatchlease_check(g->lease, p->a->now_ms, NULL) == DISPATCHLEASE_NONE)
        return 0;
    char *gang = names_podgroup(cache_gang_group(g));
    admitpass_decide(p, ADMIT_ACTION_WAIT, ADMIT_REASON_DISPATCH_LEASE, w,
                     dispatchlease_wait_message(gang, g->lease, p->a->now_ms));
    free(gang);
    return 1;
}

/* Whether incomplete gang w may be weighed now, its members to come as copies (early.h): sets w->ncopies. */
static int weigh_early(struct pass *p, struct work *w)
{
    if (!p->a->early || !early_applies(w->g))
        return 0;
    int complete;
    w->ncopies = early_missing(w->g, w->live, w->ncore, w->live, w->nlive, NULL, &complete);
    if (!complete)
        w->ncopies = 0;
    return complete;
}

/* A pending gang that cannot be weighed yet (its queue unusable, its spec invalid, pods missing, a fifo blocker): decides WAIT and
 * returns 1. */
static int pending_not_ready(struct pass *p, struct work *w)
{
    const struct cache_gang *g = w->g;
    const struct qstate *qs = w->qs;
    char *why = NULL;
    enum admit_reason unusable = queue_unusable(qs->q, &why);
    if (unusable == ADMIT_REASON_NONE && p->linked)
        unusable = treepass_unusable(&p->tree, qs->ti, p->c, &why);
    if (unusable != ADMIT_REASON_NONE) {
        admitpass_decide(p, ADMIT_ACTION_WAIT, unusable, w, why);
        return 1;
    }
    if (!g->spec_ok) {
        wait_msg(p, w, ADMIT_REASON_INVALID, "invalid RayCluster: %s", g->spec_error != NULL ? g->spec_error : "");
        return 1;
    }
    if (pending_lease(p, w) || pending_held(p, w))
        return 1;
    const char *devices = devices_gang_wait(g);
    if (devices != NULL) {
        wait_msg(p, w, ADMIT_REASON_DEVICES, "its devices cannot be counted: %s", devices);
        return 1;
    }
    if (g->legacy && !has_head(w)) {
        wait_msg(p, w, ADMIT_REASON_PODS,
                 "waiting for pods: %zu of %" PRId64 " created (the legacy operator creates the head first)", w->ncore,
                 g->min_member);
        return 1;
    }
    if (!g->legacy && (int64_t)w->ncore < g->min_member && !weigh_early(p, w)) {
        wait_msg(p, w, ADMIT_REASON_PODS, "waiting for pods: %zu of %" PRId64 " created", w->ncore, g->min_member);
        return 1;
    }
    if (qs->blocker != NULL) {
        wait_msg(p, w, ADMIT_REASON_BLOCKED, "queue %s is fifo: waiting behind gang ray-%s-pg", qs->q->name,
                 cache_gang_group(qs->blocker));
        return 1;
    }
    return 0;
}

/*
 * Whether g's minResources (in p->hold_a) fit every level above its queue
 * (qtree.h); if not, decides WAIT naming the level and returns 0. One blocked
 * by room guaranteed to another queue waits on room, as one short of node
 * room does.
 */
static int pending_fits_tree(struct pass *p, const struct work *w)
{
    struct util_buf t = {0}, b = {0};
    int guarantee = 0;
    if (!p->linked) /* flat queues: every queue is a leaf, its own capability all there is (hold_fits) */
        return 1;
    enum admit_reason r = treepass_fits(&p->tree, w->qs->ti, p->hold_a, p->c, &t, &guarantee);
    if (r == ADMIT_REASON_NONE)
        return 1;
    admitpass_put_gang(p, w->g, &b);
    util_buf_printf(&b, " does not fit queue %s: ", w->qs->q->name);
    util_buf_append(&b, t.data, t.len);
    util_buf_finish(&t);
    admitpass_decide(p, ADMIT_ACTION_WAIT, r, w, util_buf_take(&b));
    if (guarantee)
        cache_gang_set_node_wait(p->c, w->g, 1);
    admitpass_block_queue(w->qs, w->g);
    return 0;
}

/* Whether g's minResources fit its queue and the levels above it; if not, decides WAIT and returns 0. */
static int pending_fits_queue(struct pass *p, const struct work *w)
{
    const struct cache_gang *g = w->g;
    struct qstate *qs = w->qs;
    char *why = NULL;
    treepass_min_dense(g, p->nres, p->hold_a);
    /* Most waiting gangs of a queue are alike and wait on the same shortage: their message is formatted once. */
    int same =
        qs->memo_text != NULL && qs->memo_rl == g->min_rl && qs->memo_member == g->min_member && qs->memo_gen == qs->held_gen;
    if (!same && hold_fits(p->c, qs->q, qs->held, p->hold_a, &g->min_resources, &why))
        return pending_fits_tree(p, w);
    if (!same) {
        struct util_buf m = {0};
        util_buf_puts(&m, admitpass_size_text(p, g));
        util_buf_printf(&m, " does not fit queue %s: %s", qs->q->name, why);
        free(why);
        free(qs->memo_text);
        qs->memo_text = util_buf_take(&m);
        qs->memo_rl = g->min_rl;
        qs->memo_member = g->min_member;
        qs->memo_gen = qs->held_gen;
    }
    struct util_buf b = {0};
    admitpass_put_name(g, &b);
    util_buf_puts(&b, qs->memo_text);
    admitpass_decide(p, ADMIT_ACTION_WAIT, ADMIT_REASON_QUEUE_CAPACITY, w, util_buf_take(&b));
    admitpass_block_queue(qs, g);
    return 0;
}

/* Whether unbound[i] (pending_fits_nodes', sorted) stands for a member to come: a pod met before it in unbound (a copy). */
static int unbound_copy(const struct work *w, struct cache_pod *const *unbound, size_t i)
{
    if (w->ncopies == 0)
        return 0;
    for (size_t k = 0; k < i; k++) {
        if (unbound[k] == unbound[i])
            return 1;
    }
    return 0;
}

/* Places the gang's unbound members (its first minMember live pods) for good; if they do not fit, decides WAIT and returns 0. */
static int pending_fits_nodes(struct pass *p, const struct work *w)
{
    const struct cache_gang *g = w->g;
    size_t ncore = w->ncore, nplace = 0; /* minMember; fewer for a legacy gang whose workers are still to come */
    struct cache_pod **unbound = admitpass_scratch(p->a, SCRATCH_UNBOUND, ncore + w->ncopies, sizeof(*unbound), 0);
    for (size_t i = 0; i < ncore; i++) {
        if (w->live[i]->node == NULL)
            unbound[nplace++] = w->live[i];
    }
    if (w->ncopies > 0) { /* weighed early: the members to come, as copies of pods of their roles */
        int complete;
        nplace += early_missing(g, w->live, ncore, w->live, w->nlive, unbound + nplace, &complete);
    }
    fit_sort_larger_first(p->fit, unbound, nplace);
    if (g->topo != NULL)
        return admittopo_place(p, w, unbound, nplace);
    char *why = NULL;
    size_t failed = fit_place_gang(p->fit, unbound, nplace, &why);
    if (failed == nplace) {
        fit_commit(p->fit);
        return 1;
    }
    struct util_buf b = {0};
    admitpass_put_gang(p, g, &b);
    util_buf_puts(&b, " does not fit the nodes: no node fits pod ");
    if (unbound_copy(w, unbound, failed))
        util_buf_puts(&b, "to come like ");
    util_buf_puts(&b, unbound[failed]->name);
    util_buf_puts(&b, why);
    if (failed > 0) { /* a message per gang waiting on the nodes, each pass: without printf's cost */
        util_buf_puts(&b, " after placing ");
        util_buf_put_uint(&b, failed);
        util_buf_puts(&b, util_plural((int64_t)failed, " other pod of the gang", " other pods of the gang"));
    }
    free(why);
    admitpass_decide(p, ADMIT_ACTION_WAIT, ADMIT_REASON_NODES, w, util_buf_take(&b));
    admitpass_block_queue(w->qs, g);
    return 0;
}

/* ADMIT: the gang's members are placed; ungate them, charge the queue, then look at its tail. */
static void admit_gang(struct pass *p, struct work *w)
{
    struct cache_gang *g = w->g;
    struct qstate *qs = w->qs;
    hold_ungated(&p->marks, p->nres, g, p->hold_a); /* what it held unadmitted, before its members count as ungated */
    admitpass_queue_add(p, qs, p->hold_a, -1);
    struct admit_decision *d = admitpass_decide(p, ADMIT_ACTION_ADMIT, ADMIT_REASON_NONE, w, NULL);
    for (size_t i = 0; i < w->ncore; i++) {
        struct cache_pod *pod = w->live[i];
        if (!pod_ungated(p, pod)) {
            admit_result_add_pod(p->out, d, pod);
            if (g->topo != NULL)
                admittopo_pod(p, w, d, pod);
            admit_pod(p, w, pod, 0); /* placed by pending_fits_nodes() */
        }
    }
    struct util_buf b = {0}; /* "admitted by queue Q; scheduling gates removed from N pods" */
    util_buf_puts(&b, "admitted by queue ");
    util_buf_puts(&b, qs->q->name);
    /* Held (heldsuspend.h): its pods are declared ones; KubeRay makes the real ones once resumed, born ungated. */
    util_buf_puts(&b, g->held ? "; RayCluster resumed: " : "; scheduling gates removed from ");
    util_buf_put_uint(&b, d->npods);
    util_buf_puts(&b, d->npods == 1 ? " pod" : " pods");
    if (g->held)
        util_buf_puts(&b, " to be created without the scheduling gate");
    if (w->ncopies > 0)
        util_buf_printf(&b, ", and from %zu more as they are created", w->ncopies);
    d->message = util_buf_take(&b);
    if (g->topo != NULL)
        admittopo_admitted(p, d);
    w->admitted = 1;
    hold_gang(&p->marks, p->nres, g, NULL, p->hold_a, p->hold_tail);
    admitpass_queue_add(p, qs, p->hold_a, 1);
    admit_tail(p, w);
}

/* A gang not admitted yet: the checks in order (admit.h), the first that fails decides WAIT. */
static void evaluate_pending(struct pass *p, struct work *w)
{
    if (pending_not_ready(p, w) || !pending_fits_queue(p, w) || !pending_fits_nodes(p, w))
        return;
    admit_gang(p, w);
}

/* ---- setup ---- */

static void pass_init(struct pass *p, struct admit *a, struct admit_result *out)
{
    memset(p, 0, sizeof(*p));
    p->a = a;
    p->c = a->c;
    p->out = out;
    p->nres = p->c->shapes.nresources;
    p->fit = a->fit;
    p->hold_a = util_calloc(p->nres, sizeof(*p->hold_a));
    p->hold_b = util_calloc(p->nres, sizeof(*p->hold_b));
    p->hold_tail = util_calloc(p->nres, sizeof(*p->hold_tail));
    qtree_init(&p->tree);
}

static void pass_finish(struct pass *p)
{
    fit_end(p->fit);
    for (size_t i = 0; i < p->nqueues; i++)
        free(p->queues[i].memo_text);
    free(p->queues);
    free(p->hold_a);
    free(p->hold_b);
    free(p->hold_tail);
    free(p->size_text);
    qtree_finish(&p->tree);
    topoplace_out_finish(&p->placed);
}

/* Admitted pods the scheduler has not bound yet keep their room, whatever is decided next. */
static void reserve_admitted(struct pass *p)
{
    fithold_admitted(p->c, p->fit, admitpass_scratch(p->a, SCRATCH_RESV, p->c->nreserving, sizeof(struct cache_pod *), 0));
    early_prune(p->c);
    early_reserve(p->c, p->fit); /* and admitted gangs' members to come, or gated (a replaced pod's successor too) */
}

/*
 * A held preemptor that does not fit yet keeps its room (preempthold.h): its
 * minResources charged to its queue, its unbound members placed where they fit
 * (a topology-constrained one's in the domain its victims free, preemptdomain.h).
 */
static void hold_room(struct pass *p, struct work *w, const struct preempthold_item *it)
{
    treepass_min_dense(w->g, p->nres, p->hold_a);
    admitpass_queue_add(p, w->qs, p->hold_a, 1);
    struct cache_pod **unbound = admitpass_scratch(p->a, SCRATCH_UNBOUND, w->ncore, sizeof(*unbound), 0);
    size_t n = 0;
    for (size_t i = 0; i < w->ncore; i++) {
        if (w->live[i]->node == NULL)
            unbound[n++] = w->live[i];
    }
    fit_sort_larger_first(p->fit, unbound, n);
    if (w->g->topo != NULL &&
        preemptdomain_hold(p->fit, p->a->topo, p->c, w->g->topo, unbound, n, it->victim_gangs, it->nvictim_gangs) != NULL)
        return;
    for (size_t i = 0; i < n; i++)
        fithold_place(p->fit, unbound[i]);
}

static struct work *find_work(struct work *works, size_t n, const struct cache_gang *g)
{
    for (size_t i = 0; i < n; i++) {
        if (works[i].g == g)
            return &works[i];
    }
    return NULL;
}

/*
 * The held preemptors (preempthold.h), weighed before every other gang. One
 * that waits on its queue or the nodes while its victims' pods remain keeps
 * its room (hold_room), and its message says so; one admitted, or that does
 * not fit with its victims gone, or waits for another reason, is let go.
 */
static void weigh_held(struct pass *p, struct work *works, size_t n)
{
    for (size_t k = 0; k < p->nheld; k++) {
        const struct preempthold_item *it = &p->held[k];
        struct work *w = find_work(works, n, it->g);
        if (w == NULL || w->admitted || w->done)
            continue;
        w->done = 1;
        size_t at = p->out->len;
        evaluate_pending(p, w);
        struct admit_decision *d = p->out->len > at ? &p->out->items[at] : NULL;
        int waits = d != NULL && d->action == ADMIT_ACTION_WAIT &&
                    (d->reason == ADMIT_REASON_QUEUE_CAPACITY || d->reason == ADMIT_REASON_QUEUE_TREE ||
                     d->reason == ADMIT_REASON_NODES || d->reason == ADMIT_REASON_TOPOLOGY);
        if (!waits || !it->victims_remain) {
            preempthold_forget(p->a->hold, w->g);
            continue;
        }
        hold_room(p, w, it);
        char *m =
            util_strdupf("%s; its room is held until the pods of the gangs it preempted are gone (%s)", d->message, it->victims);
        free(d->message);
        d->message = m;
    }
}

/*
 * Every gang not weighed yet: those of queues the tree does not let hold gangs
 * first, then one at a time from the leaf whose turn it is by fair share, each
 * leaf's in their order (fairorder.h).
 */
static void weigh_fair(struct pass *p, struct work *works, size_t n)
{
    size_t *leaf = util_calloc(n + 1, sizeof(*leaf));
    /* An admitted gang with no pod gated decides nothing: it takes no turn (a turn is O(queues)). */
    for (size_t i = 0; i < n; i++)
        leaf[i] = works[i].admitted && works[i].ungated == works[i].nlive ? QUEUETREE_ROOT : works[i].qs->ti;
    struct fairorder fo;
    fairorder_init(&fo, &p->tree, leaf, n);
    for (size_t k; (k = fairorder_next(&fo)) != FAIRORDER_END;) {
        struct work *w = &works[k];
        if (w->done)
            continue;
        if (w->admitted)
            evaluate_admitted(p, w);
        else
            evaluate_pending(p, w);
    }
    fairorder_finish(&fo);
    free(leaf);
}

const struct preempthold_item *admit_held(const struct admit *a, const struct cache_gang *g)
{
    return preempthold_get(a->hold, g);
}

size_t admit_pass(struct admit *a, unsigned flags, struct admit_result *out)
{
    struct pass p;
    pass_init(&p, a, out);
    size_t before = out->len;
    unsigned changes = cache_take_changes(a->c);
    if (changes & CACHE_CHANGED_NODES)
        fit_nodes_changed(a->fit);
    uint64_t hn = a->hypernodes != NULL ? hypernode_generation(a->hypernodes) : 0;
    if (hn != a->hypernodes_gen) /* the domains changed: gangs waiting on room may fit now */
        changes |= CACHE_CHANGED_CAPACITY;
    a->hypernodes_gen = hn;
    fit_begin(a->fit);
    topodomain_begin(a->topo, a->fit, a->c);
    reserve_admitted(&p);
    p.nheld = preempthold_refresh(a->hold, a->c, a->now_ms, &p.held);
    p.linked = treepass_linked(a->c);
    /* A gang's verdict depends on its ancestors and their other children: in a tree, any change weighs every queue. */
    int all = (flags & ADMIT_PASS_FULL) != 0 || (p.linked && admitselect_any_dirty(a->c));
    size_t npods;
    size_t ngangs = admitselect_queues(&p, all, (changes & CACHE_CHANGED_CAPACITY) != 0, &npods);
    size_t nworks;
    struct work *works = admitselect_works(&p, ngangs, npods, &nworks);
    admitselect_sum_held(&p);
    out->gangs_evaluated += ngangs;
    weigh_held(&p, works, nworks);
    weigh_fair(&p, works, nworks);
    pass_finish(&p);
    return out->len - before;
}

int admit_reason_changed(struct cache *c, const struct admit_decision *d)
{
    struct cache_gang *g = cache_gang_get(c, d->namespace_, d->cluster);
    if (g == NULL)
        return 0;
    int tail = d->action == ADMIT_ACTION_TAIL_WAIT || d->action == ADMIT_ACTION_TAIL_ADMIT;
    int reason = tail ? g->tail_reason : g->last_reason;
    const char *message = tail ? g->tail_message : g->last_message;
    int waiting = d->action == ADMIT_ACTION_WAIT || d->action == ADMIT_ACTION_TAIL_WAIT;
    /* Not news: the same reason and message, or another count of "waiting for pods: n of m created". */
    if (waiting && reason == (int)d->reason && message != NULL && d->message != NULL &&
        (strcmp(message, d->message) == 0 || d->reason == ADMIT_REASON_PODS)) {
        if (strcmp(message, d->message) != 0) /* not news, but the PodGroup condition shows the current count */
            cache_gang_set_reason(c, g, tail, reason, d->message);
        return 0;
    }
    /* A new story for the gang (or its tail, whose pods are the only gated ones once it is admitted): every pod is
     * to be told again. */
    cache_gang_clear_told(c, g);
    if (waiting)
        cache_gang_set_reason(c, g, tail, (int)d->reason, d->message);
    else
        cache_gang_set_reason(c, g, tail, 0, NULL);
    return 1;
}
