#include "admit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "preempthold.h"
#include "quantity.h"
#include "resources.h"
#include "util.h"

static void sb_quantity(struct util_buf *b, const char *resource, int64_t value, uint8_t format)
{
    char buf[QUANTITY_FORMAT_MAX];
    struct quantity q = {value < 0 ? 0 : value, (enum quantity_format)format};
    quantity_format(&q, resources_unit(resource), buf, sizeof(buf));
    util_buf_printf(b, "%s", buf);
}

static const char *plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* ---- the result ---- */

/*
 * The result's strings come from chunks that never move: a pass names tens of
 * thousands of pods, and one malloc (and free) each would be a good part of it.
 */
struct admit_chunk {
    struct admit_chunk *next;
    size_t used, size;
    char data[];
};


void admit_result_init(struct admit_result *r)
{
    memset(r, 0, sizeof(*r));
}

void admit_result_finish(struct admit_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->len; i++) {
        struct admit_decision *d = &r->items[i];
        for (size_t j = 0; j < d->npods; j++) {
            json_decref(d->pods[j].keep_gates);
            free(d->pods[j].message);
        }
        free(d->pods);
        free(d->message);
    }
    free(r->items);
    free(r->queues);
    while (r->strings != NULL) {
        struct admit_chunk *next = r->strings->next;
        free(r->strings);
        r->strings = next;
    }
    admit_result_init(r);
}

/* n bytes that live as long as r. */
static char *result_alloc(struct admit_result *r, size_t n)
{
    struct admit_chunk *ch = r->strings;
    if (ch == NULL || ch->size - ch->used < n) {
        size_t size = n > 65536 ? n : 65536;
        ch = util_malloc(sizeof(*ch) + size);
        ch->next = r->strings;
        ch->used = 0;
        ch->size = size;
        r->strings = ch;
    }
    char *p = ch->data + ch->used;
    ch->used += n;
    return p;
}

const char *admit_action_name(enum admit_action action)
{
    switch (action) {
    case ADMIT_ACTION_ADMIT:
        return "admit";
    case ADMIT_ACTION_FINISH:
        return "finish";
    case ADMIT_ACTION_WAIT:
        return "wait";
    case ADMIT_ACTION_TAIL_ADMIT:
        return "tail-admit";
    case ADMIT_ACTION_TAIL_WAIT:
        return "tail-wait";
    }
    return "";
}

const char *admit_reason_name(enum admit_reason reason)
{
    switch (reason) {
    case ADMIT_REASON_NONE:
        return "";
    case ADMIT_REASON_QUEUE_MISSING:
        return "queue-missing";
    case ADMIT_REASON_QUEUE_CLOSED:
        return "queue-closed";
    case ADMIT_REASON_INVALID:
        return "invalid";
    case ADMIT_REASON_PODS:
        return "pods";
    case ADMIT_REASON_BLOCKED:
        return "blocked";
    case ADMIT_REASON_QUEUE_CAPACITY:
        return "queue-capacity";
    case ADMIT_REASON_NODES:
        return "nodes";
    case ADMIT_REASON_EVICTED:
        return "evicted";
    case ADMIT_REASON_DEACTIVATED:
        return "deactivated";
    }
    return "";
}

json_t *admit_ungate_patch(const struct admit_pod *p)
{
    return json_pack("{s:{s:s},s:{s:o}}", "metadata", "resourceVersion", p->resource_version, "spec", "schedulingGates",
                     p->keep_gates != NULL ? json_incref(p->keep_gates) : json_array());
}

/* ---- the pass ---- */

/*
 * What a pass knows of a queue it evaluates: the pass's own state, not the
 * cache's (cache.h), gone with the pass.
 */
struct qstate {
    struct cache_queue *q;
    int whole;                        /* all its gangs are evaluated, not only those waiting on node room */
    int64_t *held;                    /* dense by resource id: what admitted gangs hold */
    uint32_t held_gen;                /* bumped whenever held changes */
    const struct cache_gang *blocker; /* fifo: the complete gang that did not fit */
    /* The last "does not fit the queue" text after the gang's name, for gangs of this size while held is unchanged. */
    char *memo_text;
    const struct cache_rl *memo_rl;
    int64_t memo_member;
    uint32_t memo_gen;
};

/* A gang being evaluated. */
struct work {
    struct cache_gang *g;
    struct qstate *qs; /* its queue's */
    int32_t priority;
    struct cache_pod **live; /* the gang's members (its core), then its tail; creation order within each */
    size_t nlive;
    size_t ncore;   /* members found: live[0..ncore) */
    size_t ungated; /* live pods without our gate */
    int admitted;   /* in the cache, or by this pass */
    int done;       /* weighed already this pass (a held preemptor: weigh_held) */
};

/* Buffers a pass needs, kept in the cache between passes: big ones would otherwise be mapped and faulted in anew each time. */
enum scratch_kind {
    SCRATCH_RESV,
    SCRATCH_WORKS,
    SCRATCH_PODS,
    SCRATCH_UNBOUND,
    SCRATCH_HELD,
    SCRATCH_MARK_KEYS,
    SCRATCH_MARK_BITS,
    SCRATCH_COUNT,
};

/* The decision state kept across passes (admit.h). */
struct admit {
    struct cache *c;
    struct fit *fit;           /* the nodes' free room */
    struct evict_config evict; /* what holds evicted gangs back (admit_set_evict) */
    int64_t now_ms;            /* the time of the next passes (admit_set_now) */
    struct preempthold *hold;  /* the preemptors whose room is held (preempthold.h) */
    void *buf[SCRATCH_COUNT];
    size_t cap[SCRATCH_COUNT];
};

struct admit *admit_create(struct cache *c)
{
    struct admit *a = util_calloc(1, sizeof(*a));
    a->c = c;
    a->fit = fit_create(c);
    a->hold = preempthold_create();
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

void admit_destroy(struct admit *a)
{
    if (a == NULL)
        return;
    for (int i = 0; i < SCRATCH_COUNT; i++)
        free(a->buf[i]);
    fit_destroy(a->fit);
    preempthold_destroy(a->hold);
    free(a);
}

/* Buffer kind of at least n * size bytes, zeroed if zero; its contents are the caller's until the next call for that kind. */
static void *scratch(struct admit *s, enum scratch_kind kind, size_t n, size_t size, int zero)
{
    return util_scratch(&s->buf[kind], &s->cap[kind], n, size, zero);
}

/*
 * What a pass found of pods, by pointer (open addressing): the pass's own
 * marks, not the cache's. Only the live pods of the gangs it evaluates are
 * marked; their gang carries the union of their marks, so that a gang without
 * any costs no lookup per pod.
 */
enum {
    MARK_ADMITTED = 1 << 0, /* a pod this pass admitted */
    MARK_TAIL = 1 << 1,     /* a pod beyond its gang's members (order_core) */
};

struct marks {
    const void **keys;
    uint8_t *bits;
    size_t mask; /* slots - 1, slots a power of two at least twice the objects that may be marked */
};

struct pass {
    struct admit *a;
    struct cache *c;
    struct admit_result *out;
    uint32_t nres;
    struct qstate *queues; /* the queues this pass evaluates */
    size_t nqueues;
    struct marks marks;
    struct fit *fit;                      /* the nodes' free room (fit.h), a->fit */
    int64_t *hold_a, *hold_b, *hold_tail; /* nres each */
    char *size_text;                      /* gang_size_text() memo */
    const struct cache_rl *size_rl;
    int64_t size_member;
    const struct preempthold_item *held; /* the preemptors whose room is held (preempthold.h) */
    size_t nheld;
};

static size_t mark_slot(const struct marks *m, const void *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    size_t i = (size_t)h & m->mask;
    while (m->keys[i] != NULL && m->keys[i] != key)
        i = (i + 1) & m->mask;
    return i;
}

/* The pass's marks on a pod or gang (MARK_*), 0 when none. */
static unsigned marks_of(const struct pass *p, const void *key)
{
    size_t i = mark_slot(&p->marks, key);
    return p->marks.keys[i] == key ? p->marks.bits[i] : 0;
}

static unsigned pod_marks(const struct pass *p, const struct cache_pod *pod)
{
    return marks_of(p, pod);
}

static void mark(struct pass *p, const void *key, unsigned bits)
{
    size_t i = mark_slot(&p->marks, key);
    if (p->marks.keys[i] == NULL) {
        p->marks.keys[i] = key;
        p->marks.bits[i] = 0;
    }
    p->marks.bits[i] |= (uint8_t)bits;
}

static void pod_mark(struct pass *p, const struct cache_pod *pod, unsigned bits)
{
    mark(p, pod, bits);
    mark(p, pod->gang, bits);
}

/* Room for the marks of up to n pods and gangs. */
static void marks_init(struct pass *p, size_t n)
{
    size_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    p->marks.keys = scratch(p->a, SCRATCH_MARK_KEYS, slots, sizeof(*p->marks.keys), 1);
    p->marks.bits = scratch(p->a, SCRATCH_MARK_BITS, slots, sizeof(*p->marks.bits), 0);
    p->marks.mask = slots - 1;
}

static int pod_ungated(const struct pass *p, const struct cache_pod *pod)
{
    return !cache_pod_gated(pod) || (pod_marks(p, pod) & MARK_ADMITTED);
}

static int cmp_names(const char *ns_a, const char *a, const char *ns_b, const char *b)
{
    int r = strcmp(ns_a, ns_b);
    return r != 0 ? r : strcmp(a, b);
}

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* A pod's place in its gang's shape: 0 the head, 1 + i worker group i, ROLE_EXTRA a worker of a group
 * the shape counts no pods of (minReplicas 0, suspended), ROLE_UNKNOWN a pod its labels do not place. */
enum { ROLE_EXTRA = -1, ROLE_UNKNOWN = -2 };

static int pod_role(const struct cache_gang *g, const struct cache_pod *pod)
{
    if (pod->node_type == NULL)
        return ROLE_UNKNOWN;
    if (strcmp(pod->node_type, "head") == 0)
        return 0;
    if (pod->group == NULL)
        return ROLE_UNKNOWN;
    for (uint32_t i = 0; i < g->ngroups; i++) {
        if (g->groups[i].name != NULL && pod->group == g->groups[i].name) /* both interned */
            return 1 + (int)i;
    }
    return ROLE_EXTRA;
}

/*
 * Puts the gang's members first in live[0..nlive) (live is in creation order,
 * and each part stays so) and returns how many there are. The members are the
 * head and, per worker group, as many of its pods as minMember counts for it
 * (gang.h), told apart by their ray.io/node-type and ray.io/group labels;
 * never merely the first pods created: KubeRay creates them in the same
 * second, and a worker whose name sorts before the head's must not take the
 * head's place. Ungated pods are taken first (an admitted gang keeps the
 * members it has), then gated ones. Pods the labels do not place fill the
 * slots left.
 */
static size_t members_first(const struct cache_gang *g, struct cache_pod **live, size_t nlive)
{
    if (nlive == 0 || g->min_member <= 0)
        return 0;
    size_t ncore = 0;
    int64_t *need = util_calloc((size_t)g->ngroups + 1, sizeof(*need));
    int *role = util_calloc(nlive, sizeof(*role));
    uint8_t *member = util_calloc(nlive, sizeof(*member));
    int64_t left = 1;
    need[0] = 1;
    for (uint32_t i = 0; i < g->ngroups; i++) {
        need[1 + i] = g->groups[i].pods;
        left = sat_add(left, g->groups[i].pods);
    }
    for (size_t i = 0; i < nlive; i++)
        role[i] = pod_role(g, live[i]);
    for (int unknown = 0; unknown < 2; unknown++) {
        for (int ungated = 1; ungated >= 0; ungated--) {
            for (size_t i = 0; i < nlive && left > 0; i++) {
                if (member[i] || (!cache_pod_gated(live[i])) != ungated) /* nothing is admitted yet this pass */
                    continue;
                if (unknown ? role[i] != ROLE_UNKNOWN : (role[i] < 0 || need[role[i]] == 0))
                    continue;
                if (!unknown)
                    need[role[i]]--;
                member[i] = 1;
                left--;
                ncore++;
            }
        }
    }
    /* Stable partition: members, then the rest (the tail). */
    struct cache_pod **sorted = util_calloc(nlive, sizeof(*sorted));
    size_t k = 0;
    for (int pass = 1; pass >= 0; pass--) {
        for (size_t i = 0; i < nlive; i++) {
            if (member[i] == pass)
                sorted[k++] = live[i];
        }
    }
    memcpy(live, sorted, nlive * sizeof(*sorted));
    free(sorted);
    free(member);
    free(role);
    free(need);
    return ncore;
}

/* Puts the gang's members first in w->live (members_first), sets w->ncore, and marks the rest as its tail. */
static void order_core(struct pass *p, struct work *w)
{
    w->ncore = members_first(w->g, w->live, w->nlive);
    for (size_t i = w->ncore; i < w->nlive; i++)
        pod_mark(p, w->live[i], MARK_TAIL);
}

size_t admit_gang_members(const struct cache_gang *g, struct cache_pod ***out)
{
    struct cache_pod **live = util_calloc(g->npods + 1, sizeof(*live));
    size_t nlive = 0;
    struct cache_pod *pod;
    cache_gang_for_each_pod(pod, g) {
        if (cache_pod_live(pod))
            live[nlive++] = pod;
    }
    *out = live;
    return members_first(g, live, nlive);
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

/* ---- queue capability ---- */

/* Whether pod counts in what its gang holds, given whether it is admitted (ungated): until it has finished. */
static int pod_holds(const struct cache_pod *pod, int ungated)
{
    return ungated && pod->phase != CACHE_PHASE_SUCCEEDED && pod->phase != CACHE_PHASE_FAILED;
}

/*
 * What g holds in its queue (dense, into out), counting extra as ungated: the
 * larger of minResources and its members' requests (with its terminating pods'),
 * plus the requests of its ungated tail (pods beyond its members, order_core());
 * 0 once its ungated pods are gone. minResources stays held for a member being
 * replaced, so that its replacement needs no room the tail took meanwhile.
 */
static void gang_hold(const struct pass *p, const struct cache_gang *g, const struct cache_pod *extra, int64_t *out)
{
    int64_t *tail = p->hold_tail;
    memset(out, 0, p->nres * sizeof(*out));
    memset(tail, 0, p->nres * sizeof(*tail));
    size_t pods = 0;
    int marked = marks_of(p, g) != 0;
    for (const struct cache_pod *pod = g->pods; pod != NULL; pod = pod->gang_next) {
        unsigned marks = marked ? pod_marks(p, pod) : 0;
        if (!pod_holds(pod, !cache_pod_gated(pod) || (marks & MARK_ADMITTED) || pod == extra))
            continue;
        pods++;
        int64_t *sum = cache_pod_live(pod) && (marks & MARK_TAIL) ? tail : out;
        for (uint32_t k = 0; pod->request != NULL && k < pod->request->len; k++)
            sum[pod->request->items[k].id] += pod->request->items[k].value;
    }
    if (pods == 0)
        return;
    for (uint32_t k = 0; g->min_rl != NULL && k < g->min_rl->len; k++) {
        const struct cache_res *r = &g->min_rl->items[k];
        if (r->value > out[r->id])
            out[r->id] = r->value;
    }
    for (uint32_t k = 0; k < p->nres; k++)
        out[k] += tail[k];
}

/*
 * What the ungated, unfinished pods of a gang that is not admitted request (dense, into out). Its RayCluster
 * was deleted and created again under the same name while the old one's admitted pods still terminate, or
 * its pods were created before raygate: either way they use the queue's share until they are gone.
 */
static void ungated_requests(const struct pass *p, const struct cache_gang *g, int64_t *out)
{
    memset(out, 0, p->nres * sizeof(*out));
    int marked = (marks_of(p, g) & MARK_ADMITTED) != 0;
    for (const struct cache_pod *pod = g->pods; pod != NULL; pod = pod->gang_next) {
        int ungated = !cache_pod_gated(pod) || (marked && (pod_marks(p, pod) & MARK_ADMITTED));
        if (pod->phase == CACHE_PHASE_SUCCEEDED || pod->phase == CACHE_PHASE_FAILED || !ungated)
            continue;
        for (uint32_t k = 0; pod->request != NULL && k < pod->request->len; k++)
            out[pod->request->items[k].id] += pod->request->items[k].value;
    }
}

int admit_gang_hold(const struct cache *c, const struct cache_gang *g, struct resources *out, struct error *err)
{
    resources_finish(out);
    size_t pods = 0;
    for (const struct cache_pod *pod = g->pods; pod != NULL; pod = pod->gang_next) {
        if (!pod_holds(pod, !cache_pod_gated(pod)))
            continue;
        pods++;
        for (uint32_t k = 0; pod->request != NULL && k < pod->request->len; k++) {
            const struct cache_res *r = &pod->request->items[k];
            const char *name = cache_resource_name(c, r->id);
            const struct quantity *cur = resources_get(out, name);
            struct quantity sum = cur != NULL ? *cur : (struct quantity){0, (enum quantity_format)r->format};
            struct quantity add = {r->value, (enum quantity_format)r->format};
            if (quantity_add(&sum, &add) != 0) {
                util_format(err->message, sizeof(err->message), "gang ray-%s-pg: %s: the requests of its pods overflow",
                            cache_gang_group(g), name);
                return -1;
            }
            resources_set(out, name, &sum);
        }
    }
    if (pods == 0) {
        resources_finish(out);
        return 0;
    }
    for (uint32_t k = 0; g->min_rl != NULL && k < g->min_rl->len; k++) {
        const struct cache_res *r = &g->min_rl->items[k];
        const char *name = cache_resource_name(c, r->id);
        const struct quantity *cur = resources_get(out, name);
        if (cur == NULL || r->value > cur->value) {
            struct quantity q = {r->value, (enum quantity_format)r->format};
            resources_set(out, name, &q);
        }
    }
    return 0;
}

static void queue_add(const struct pass *p, struct qstate *qs, const int64_t *v, int sign)
{
    for (uint32_t k = 0; k < p->nres; k++)
        qs->held[k] += sign * v[k];
    qs->held_gen++;
}

/*
 * Checks need (dense, what the queue's holding would grow by) against q's
 * capability; returns 1 if it fits, else 0 with "cpu needs 3, 1 of 4 free; ..."
 * in *why (new). formats gives the format of each needed amount (NULL: the capability's).
 */
static int queue_fits(struct pass *p, const struct qstate *qs, const int64_t *need, const struct resources *formats, char **why)
{
    const struct cache_queue *q = qs->q;
    struct util_buf b = {0};
    for (uint32_t k = 0; q->capability != NULL && k < q->capability->len; k++) {
        const struct cache_res *cap = &q->capability->items[k];
        int64_t n = need[cap->id];
        if (n <= 0 || qs->held[cap->id] <= cap->value - n)
            continue;
        const char *name = cache_resource_name(p->c, cap->id);
        const struct quantity *fq = formats != NULL ? resources_get(formats, name) : NULL;
        util_buf_printf(&b, "%s%s needs ", b.len ? "; " : "", name);
        sb_quantity(&b, name, n, fq != NULL ? (uint8_t)fq->format : cap->format);
        util_buf_printf(&b, ", ");
        sb_quantity(&b, name, cap->value - qs->held[cap->id], cap->format);
        util_buf_printf(&b, " of ");
        sb_quantity(&b, name, cap->value, cap->format);
        util_buf_printf(&b, " free");
    }
    if (b.len == 0) {
        util_buf_finish(&b);
        return 1;
    }
    *why = util_buf_take(&b);
    return 0;
}

/* ---- decisions ---- */

static struct admit_decision *decide(struct pass *p, enum admit_action action, enum admit_reason reason,
                                     const struct work *w, char *message)
{
    struct admit_result *r = p->out;
    if (r->len == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->items = util_realloc(r->items, r->cap * sizeof(*r->items));
    }
    struct admit_decision *d = &r->items[r->len++];
    memset(d, 0, sizeof(*d));
    d->action = action;
    d->reason = reason;
    /* One allocation for the five names, owned by namespace_. */
    const char *uid = w->g->uid, *queue = w->g->queue != NULL ? w->g->queue->name : NULL;
    size_t lns = strlen(w->g->namespace_) + 1, lname = strlen(w->g->name) + 1;
    size_t luid = uid != NULL ? strlen(uid) + 1 : 0, lq = queue != NULL ? strlen(queue) + 1 : 0;
    char *block = result_alloc(r, lns + lname + luid + (lname + 7) + lq); /* "ray-" name "-pg" NUL */
    d->namespace_ = memcpy(block, w->g->namespace_, lns);
    d->cluster = memcpy(block + lns, w->g->name, lname);
    d->cluster_uid = uid != NULL ? memcpy(block + lns + lname, uid, luid) : NULL;
    d->gang = block + lns + lname + luid;
    memcpy(d->gang, "ray-", 4);
    memcpy(d->gang + 4, w->g->name, lname - 1);
    memcpy(d->gang + 4 + lname - 1, "-pg", 4);
    d->queue = queue != NULL ? memcpy(d->gang + lname + 7, queue, lq) : NULL;
    d->legacy = w->g->legacy;
    d->message = message;
    if (reason == ADMIT_REASON_NODES)
        cache_gang_set_node_wait(p->c, w->g, 1);
    return d;
}

static void decision_add_pod(struct admit_result *r, struct admit_decision *d, const struct cache_pod *pod)
{
    if (d->npods == d->pods_cap) {
        d->pods_cap = d->pods_cap ? d->pods_cap * 2 : 8;
        d->pods = util_realloc(d->pods, d->pods_cap * sizeof(*d->pods));
    }
    struct admit_pod *ap = &d->pods[d->npods++];
    size_t ln = strlen(pod->name) + 1, lu = strlen(pod->uid) + 1, lr = strlen(pod->resource_version) + 1;
    ap->name = result_alloc(r, ln + lu + lr);
    ap->uid = ap->name + ln;
    ap->resource_version = ap->uid + lu;
    memcpy(ap->name, pod->name, ln);
    memcpy(ap->uid, pod->uid, lu);
    memcpy(ap->resource_version, pod->resource_version, lr);
    ap->keep_gates = pod->nforeign_gates > 0 ? json_array() : NULL;
    ap->message = NULL;
    for (uint32_t i = 0; i < pod->nforeign_gates; i++)
        json_array_append_new(ap->keep_gates, json_pack("{s:s}", "name", pod->foreign_gates[i]));
}

/* " (3 pods; cpu 3, memory 4Gi)", what follows a gang's name */
static void sb_gang_size(struct util_buf *b, const struct cache_gang *g)
{
    util_buf_printf(b, " (%" PRId64 " %s", g->min_member, plural(g->min_member, "pod", "pods"));
    const char *sep = "; ";
    for (size_t i = 0; i < g->min_resources.len; i++) {
        const struct resource *r = &g->min_resources.items[i];
        if (r->quantity.value == 0)
            continue;
        util_buf_printf(b, "%s%s ", sep, r->name);
        sb_quantity(b, r->name, r->quantity.value, (uint8_t)r->quantity.format);
        sep = ", ";
    }
    util_buf_printf(b, ")");
}

/* sb_gang_size's text for g (borrowed, valid until the next call): gangs of one size, one formatting per pass. */
static const char *gang_size_text(struct pass *p, const struct cache_gang *g)
{
    if (p->size_text == NULL || p->size_rl != g->min_rl || p->size_member != g->min_member) {
        struct util_buf b = {0};
        sb_gang_size(&b, g);
        free(p->size_text);
        p->size_text = util_buf_take(&b);
        p->size_rl = g->min_rl;
        p->size_member = g->min_member;
    }
    return p->size_text;
}

static void wait_msg(struct pass *p, const struct work *w, enum admit_reason reason, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static void wait_msg(struct pass *p, const struct work *w, enum admit_reason reason, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    char *s = util_malloc((size_t)n + 1);
    va_start(ap, format);
    vsnprintf(s, (size_t)n + 1, format, ap);
    va_end(ap);
    decide(p, ADMIT_ACTION_WAIT, reason, w, s);
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
    pod_mark(p, pod, MARK_ADMITTED);
    w->ungated++;
    if (place_it && pod->node == NULL)
        fit_reserve(p->fit, pod);
}

/* A pod of the tail that is a head while a member is one: a second head pod, never autoscaled capacity. */
static int extra_head(const struct work *w, size_t i)
{
    if (i < w->ncore || pod_role(w->g, w->live[i]) != 0)
        return 0;
    for (size_t k = 0; k < w->ncore; k++) {
        if (pod_role(w->g, w->live[k]) == 0)
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
            d = decide(p, ADMIT_ACTION_TAIL_WAIT, ADMIT_REASON_PODS, w, util_strdup(why));
        decision_add_pod(p->out, d, pod);
        d->pods[d->npods - 1].message = why;
    }
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
        enum admit_reason reason = queue_unusable(q, &why);
        struct util_buf b = {0};
        if (reason == ADMIT_REASON_NONE) {
            gang_hold(p, w->g, NULL, p->hold_a);
            gang_hold(p, w->g, pod, p->hold_b);
            for (uint32_t k = 0; k < p->nres; k++)
                p->hold_b[k] -= p->hold_a[k];
            if (!queue_fits(p, qs, p->hold_b, NULL, &why)) {
                util_buf_printf(&b, "pod %s (", pod->name);
                fit_request_text(&b, p->c, pod->request);
                util_buf_printf(&b, ") does not fit queue %s: %s", q->name, why);
                free(why);
                why = util_buf_take(&b);
                reason = ADMIT_REASON_QUEUE_CAPACITY;
            }
        }
        if (reason == ADMIT_REASON_NONE) {
            char *nodes = NULL;
            struct cache_pod *one[1] = {pod};
            if (pod->node == NULL && fit_place(p->fit, one, 1, &nodes) == 0) {
                util_buf_printf(&b, "no node fits pod %s%s", pod->name, nodes);
                free(nodes);
                why = util_buf_take(&b);
                reason = ADMIT_REASON_NODES;
            } else {
                fit_commit(p->fit);
            }
        }
        if (reason != ADMIT_REASON_NONE) {
            struct admit_decision *d = decide(p, ADMIT_ACTION_TAIL_WAIT, reason, w, why);
            decision_add_pod(p->out, d, pod);
            d->pods[d->npods - 1].message = util_strdup(why);
            /* Those behind it wait with it, and are told so. */
            for (size_t j = i + 1; j < w->nlive; j++) {
                struct cache_pod *behind = w->live[j];
                if (pod_ungated(p, behind) || extra_head(w, j))
                    continue;
                decision_add_pod(p->out, d, behind);
                d->pods[d->npods - 1].message =
                    util_strdupf("waiting behind pod %s (autoscaled pods are admitted one at a time, in creation order): %s",
                                 pod->name, why);
            }
            extra_heads_wait(p, w, d);
            return;
        }
        queue_add(p, qs, p->hold_b, 1);
        pod_mark(p, pod, MARK_ADMITTED);
        w->ungated++;
        util_buf_printf(&b, "pod %s admitted by queue %s beyond the gang's %" PRId64 " %s", pod->name, q->name, w->g->min_member,
                  plural(w->g->min_member, "pod", "pods"));
        struct admit_decision *d = decide(p, ADMIT_ACTION_TAIL_ADMIT, ADMIT_REASON_NONE, w, util_buf_take(&b));
        decision_add_pod(p->out, d, pod);
    }
    extra_heads_wait(p, w, NULL);
}

/* An admitted gang: replace missing members at once, then its tail. */
static void evaluate_admitted(struct pass *p, struct work *w)
{
    struct cache_queue *q = w->qs->q;
    size_t need = 0;
    for (size_t i = 0; i < w->ncore; i++)
        need += !pod_ungated(p, w->live[i]);
    struct admit_decision *d = NULL;
    if (need > 0) {
        gang_hold(p, w->g, NULL, p->hold_a);
        queue_add(p, w->qs, p->hold_a, -1);
        for (size_t i = 0; i < w->ncore; i++) {
            struct cache_pod *pod = w->live[i];
            if (pod_ungated(p, pod))
                continue;
            if (d == NULL)
                d = decide(p, ADMIT_ACTION_FINISH, ADMIT_REASON_NONE, w, NULL);
            decision_add_pod(p->out, d, pod);
            admit_pod(p, w, pod, 1);
        }
        gang_hold(p, w->g, NULL, p->hold_a);
        queue_add(p, w->qs, p->hold_a, 1);
        if (d != NULL) {
            struct util_buf b = {0};
            util_buf_printf(&b, "admitted by queue %s earlier; scheduling gates removed from %zu %s", q->name, d->npods,
                      plural((int64_t)d->npods, "pod", "pods"));
            d->message = util_buf_take(&b);
        }
    }
    admit_tail(p, w);
}

/* Whether the gang's members include its head. */
static int has_head(const struct work *w)
{
    for (size_t i = 0; i < w->ncore; i++) {
        if (pod_role(w->g, w->live[i]) == 0)
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
    char gang[300];
    util_format(gang, sizeof(gang), "ray-%s-pg", cache_gang_group(g));
    decide(p, ADMIT_ACTION_WAIT, hold == EVICT_HOLD_BACKOFF ? ADMIT_REASON_EVICTED : ADMIT_REASON_DEACTIVATED, w,
           evict_hold_message(gang, hold, &p->a->evict, &g->record));
    return 1;
}

/* A pending gang that cannot be weighed yet (its queue unusable, its spec invalid, pods missing, a fifo blocker): decides WAIT and
 * returns 1. */
static int pending_not_ready(struct pass *p, const struct work *w)
{
    const struct cache_gang *g = w->g;
    const struct qstate *qs = w->qs;
    char *why = NULL;
    enum admit_reason unusable = queue_unusable(qs->q, &why);
    if (unusable != ADMIT_REASON_NONE) {
        decide(p, ADMIT_ACTION_WAIT, unusable, w, why);
        return 1;
    }
    if (!g->spec_ok) {
        wait_msg(p, w, ADMIT_REASON_INVALID, "invalid RayCluster: %s", g->spec_error != NULL ? g->spec_error : "");
        return 1;
    }
    if (pending_held(p, w))
        return 1;
    if (g->legacy && !has_head(w)) {
        wait_msg(p, w, ADMIT_REASON_PODS, "waiting for pods: %zu of %" PRId64 " created (the legacy operator creates the head first)",
                 w->ncore, g->min_member);
        return 1;
    }
    if (!g->legacy && (int64_t)w->ncore < g->min_member) {
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

/* A fifo queue stops at its first complete gang that does not fit. */
static void block_queue(struct qstate *qs, const struct cache_gang *g)
{
    if (qs->q->dequeue == CACHE_DEQUEUE_FIFO)
        qs->blocker = g;
}

/* Whether g's minResources fit its queue; if not, decides WAIT and returns 0. */
static int pending_fits_queue(struct pass *p, const struct work *w)
{
    const struct cache_gang *g = w->g;
    struct qstate *qs = w->qs;
    char *why = NULL;
    memset(p->hold_a, 0, p->nres * sizeof(*p->hold_a));
    for (uint32_t k = 0; g->min_rl != NULL && k < g->min_rl->len; k++)
        p->hold_a[g->min_rl->items[k].id] = g->min_rl->items[k].value;
    /* Most waiting gangs of a queue are alike and wait on the same shortage: their message is formatted once. */
    int same =
        qs->memo_text != NULL && qs->memo_rl == g->min_rl && qs->memo_member == g->min_member && qs->memo_gen == qs->held_gen;
    if (!same && queue_fits(p, qs, p->hold_a, &g->min_resources, &why))
        return 1;
    if (!same) {
        struct util_buf m = {0};
        util_buf_puts(&m, gang_size_text(p, g));
        util_buf_printf(&m, " does not fit queue %s: %s", qs->q->name, why);
        free(why);
        free(qs->memo_text);
        qs->memo_text = util_buf_take(&m);
        qs->memo_rl = g->min_rl;
        qs->memo_member = g->min_member;
        qs->memo_gen = qs->held_gen;
    }
    struct util_buf b = {0};
    util_buf_puts(&b, "gang ray-");
    util_buf_puts(&b, cache_gang_group(g));
    util_buf_puts(&b, "-pg");
    util_buf_puts(&b, qs->memo_text);
    decide(p, ADMIT_ACTION_WAIT, ADMIT_REASON_QUEUE_CAPACITY, w, util_buf_take(&b));
    block_queue(qs, g);
    return 0;
}

/* Places the gang's unbound members (its first minMember live pods) for good; if they do not fit, decides WAIT and returns 0. */
static int pending_fits_nodes(struct pass *p, const struct work *w)
{
    const struct cache_gang *g = w->g;
    size_t ncore = w->ncore, nplace = 0; /* minMember; fewer for a legacy gang whose workers are still to come */
    struct cache_pod **unbound = scratch(p->a, SCRATCH_UNBOUND, ncore, sizeof(*unbound), 0);
    for (size_t i = 0; i < ncore; i++) {
        if (w->live[i]->node == NULL)
            unbound[nplace++] = w->live[i];
    }
    fit_sort_larger_first(p->fit, unbound, nplace);
    char *why = NULL;
    size_t failed = fit_place_gang(p->fit, unbound, nplace, &why);
    if (failed == nplace) {
        fit_commit(p->fit);
        return 1;
    }
    struct util_buf b = {0};
    util_buf_puts(&b, "gang ray-");
    util_buf_puts(&b, cache_gang_group(g));
    util_buf_puts(&b, "-pg");
    util_buf_puts(&b, gang_size_text(p, g));
    util_buf_puts(&b, " does not fit the nodes: no node fits pod ");
    util_buf_puts(&b, unbound[failed]->name);
    util_buf_puts(&b, why);
    if (failed > 0)
        util_buf_printf(&b, " after placing %zu other %s of the gang", failed, plural((int64_t)failed, "pod", "pods"));
    free(why);
    decide(p, ADMIT_ACTION_WAIT, ADMIT_REASON_NODES, w, util_buf_take(&b));
    block_queue(w->qs, g);
    return 0;
}

/* ADMIT: the gang's members are placed; ungate them, charge the queue, then look at its tail. */
static void admit_gang(struct pass *p, struct work *w)
{
    struct cache_gang *g = w->g;
    struct qstate *qs = w->qs;
    ungated_requests(p, g, p->hold_a); /* what it held unadmitted, before its members count as ungated */
    queue_add(p, qs, p->hold_a, -1);
    struct admit_decision *d = decide(p, ADMIT_ACTION_ADMIT, ADMIT_REASON_NONE, w, NULL);
    for (size_t i = 0; i < w->ncore; i++) {
        struct cache_pod *pod = w->live[i];
        if (!pod_ungated(p, pod)) {
            decision_add_pod(p->out, d, pod);
            admit_pod(p, w, pod, 0); /* placed by pending_fits_nodes() */
        }
    }
    struct util_buf b = {0};
    util_buf_printf(&b, "admitted by queue %s; scheduling gates removed from %zu %s", qs->q->name, d->npods,
                    plural((int64_t)d->npods, "pod", "pods"));
    d->message = util_buf_take(&b);
    w->admitted = 1;
    gang_hold(p, g, NULL, p->hold_a);
    queue_add(p, qs, p->hold_a, 1);
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
}

/* Admitted pods the scheduler has not bound yet keep their room, whatever is decided next. */
static void reserve_admitted(struct pass *p)
{
    struct cache_pod **resv = scratch(p->a, SCRATCH_RESV, p->c->nreserving, sizeof(*resv), 0);
    size_t nresv = 0;
    for (struct cache_pod *pod = p->c->reserving; pod != NULL; pod = pod->resv_next)
        resv[nresv++] = pod;
    fit_sort_larger_first(p->fit, resv, nresv);
    for (size_t i = 0; i < nresv; i++)
        fit_reserve(p->fit, resv[i]);
}

/* Whether the pass evaluates gang g of a selected queue. */
static int gang_selected(const struct qstate *qs, const struct cache_gang *g)
{
    return g->present && (qs->whole || g->node_wait);
}

/* Records that the pass evaluates q (whole: all its gangs, else those waiting on node room), in the result too. */
static void select_queue(struct pass *p, struct cache_queue *q, int whole)
{
    if (p->nqueues % 16 == 0)
        p->queues = util_realloc(p->queues, (p->nqueues + 16) * sizeof(*p->queues));
    struct qstate *qs = &p->queues[p->nqueues++];
    memset(qs, 0, sizeof(*qs));
    qs->q = q;
    qs->whole = whole;
    if (whole)
        cache_queue_mark_clean(p->c, q);
    struct admit_result *r = p->out;
    if (r->queues_evaluated == r->queues_cap) {
        r->queues_cap = r->queues_cap ? r->queues_cap * 2 : 16;
        r->queues = util_realloc(r->queues, r->queues_cap * sizeof(*r->queues));
    }
    size_t len = strlen(q->name) + 1;
    r->queues[r->queues_evaluated++] = memcpy(result_alloc(r, len), q->name, len);
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
static size_t select_queues(struct pass *p, int all, int grew, size_t *npods)
{
    struct cache_queue *q;
    cache_queue_for_each(q, p->c) {
        int whole = all || q->dirty || (grew && q->node_waiters > 0 && q->dequeue == CACHE_DEQUEUE_FIFO) || holds_room(p, q);
        if (whole || (grew && q->node_waiters > 0))
            select_queue(p, q, whole);
    }
    int64_t *held = scratch(p->a, SCRATCH_HELD, p->nqueues * p->nres + 1, sizeof(*held), 1);
    size_t ngangs = 0;
    *npods = 0;
    for (size_t i = 0; i < p->nqueues; i++) {
        struct qstate *qs = &p->queues[i];
        qs->held = held + i * p->nres;
        struct cache_gang *g;
        cache_queue_for_each_gang(g, qs->q) {
            if (gang_selected(qs, g)) {
                ngangs++;
                *npods += g->npods;
            }
        }
    }
    return ngangs;
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
        if (first || pod->priority > w->priority)
            w->priority = pod->priority;
        first = 0;
    }
    order_core(p, w);
}

/* The gangs the selected queues evaluate (ngangs of them, npods pods), in the order they are decided. */
static struct work *collect_works(struct pass *p, size_t ngangs, size_t npods)
{
    struct work *works = scratch(p->a, SCRATCH_WORKS, ngangs, sizeof(*works), 1);
    struct cache_pod **pods = scratch(p->a, SCRATCH_PODS, npods, sizeof(*pods), 0);
    marks_init(p, npods + ngangs);
    size_t nworks = 0, used = 0;
    for (size_t i = 0; i < p->nqueues; i++) {
        struct cache_gang *g;
        cache_queue_for_each_gang(g, p->queues[i].q) {
            if (!gang_selected(&p->queues[i], g))
                continue;
            struct work *w = &works[nworks++];
            collect_work(p, w, &p->queues[i], g, pods + used);
            used += w->nlive; /* in creation order: the cache keeps each gang's pods so */
        }
    }
    /* Each evaluated gang gets a new verdict: forget the old one's node wait. */
    for (size_t i = 0; i < nworks; i++)
        cache_gang_set_node_wait(p->c, works[i].g, 0);
    qsort(works, nworks, sizeof(*works), cmp_work);
    return works;
}

/* What the admitted gangs of the selected queues hold (their tails known now), and the others' ungated pods. */
static void sum_held(struct pass *p)
{
    for (size_t i = 0; i < p->nqueues; i++) {
        struct cache_gang *g;
        cache_queue_for_each_gang(g, p->queues[i].q) {
            if (g->admitted)
                gang_hold(p, g, NULL, p->hold_a);
            else
                ungated_requests(p, g, p->hold_a);
            queue_add(p, &p->queues[i], p->hold_a, 1);
        }
    }
}

/*
 * A held preemptor that does not fit yet keeps its room (preempthold.h): its
 * minResources charged to its queue, its unbound members placed where they fit.
 */
static void hold_room(struct pass *p, struct work *w)
{
    const struct cache_gang *g = w->g;
    memset(p->hold_a, 0, p->nres * sizeof(*p->hold_a));
    for (uint32_t k = 0; g->min_rl != NULL && k < g->min_rl->len; k++)
        p->hold_a[g->min_rl->items[k].id] = g->min_rl->items[k].value;
    queue_add(p, w->qs, p->hold_a, 1);
    struct cache_pod **unbound = scratch(p->a, SCRATCH_UNBOUND, w->ncore, sizeof(*unbound), 0);
    size_t n = 0;
    for (size_t i = 0; i < w->ncore; i++) {
        if (w->live[i]->node == NULL)
            unbound[n++] = w->live[i];
    }
    fit_sort_larger_first(p->fit, unbound, n);
    for (size_t i = 0; i < n; i++)
        fit_reserve(p->fit, unbound[i]);
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
                    (d->reason == ADMIT_REASON_QUEUE_CAPACITY || d->reason == ADMIT_REASON_NODES);
        if (!waits || !it->victims_remain) {
            preempthold_forget(p->a->hold, w->g);
            continue;
        }
        hold_room(p, w);
        char *m = util_strdupf("%s; its room is held until the pods of the gangs it preempted are gone (%s)", d->message,
                               it->victims);
        free(d->message);
        d->message = m;
    }
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
    fit_begin(a->fit);
    reserve_admitted(&p);
    p.nheld = preempthold_refresh(a->hold, a->c, a->now_ms, &p.held);

    size_t npods;
    size_t ngangs = select_queues(&p, (flags & ADMIT_PASS_FULL) != 0, (changes & CACHE_CHANGED_CAPACITY) != 0, &npods);
    struct work *works = collect_works(&p, ngangs, npods);
    sum_held(&p);
    out->gangs_evaluated += ngangs;
    weigh_held(&p, works, ngangs);
    for (size_t i = 0; i < ngangs; i++) {
        if (works[i].done)
            continue;
        if (works[i].admitted)
            evaluate_admitted(&p, &works[i]);
        else
            evaluate_pending(&p, &works[i]);
    }
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
