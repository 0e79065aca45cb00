/* qtree: the gate controller's queue tree (qtree.h). */
#include "qtree.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hold.h"
#include "marks.h"

enum { ARR_CAP, ARR_GUARANTEE, ARR_DESERVED, ARR_ALLOC, ARR_DEMAND, ARR_COUNT };

void qtree_init(struct qtree *t)
{
    memset(t, 0, sizeof(*t));
    t->root_first = QUEUETREE_ROOT;
}

void qtree_finish(struct qtree *t)
{
    if (t->queues != NULL && t->n > 0)
        free(t->queues[0].cap);
    free(t->queues);
    free(t->total);
    qtree_init(t);
}

static int cmp_queue_name(const void *a, const void *b)
{
    return strcmp(((const struct qtree_queue *)a)->q->name, ((const struct qtree_queue *)b)->q->name);
}

size_t qtree_index(const struct qtree *t, const struct cache_queue *q)
{
    if (q == NULL || t->n == 0)
        return QUEUETREE_ROOT;
    struct qtree_queue key = {.q = (struct cache_queue *)q};
    const struct qtree_queue *hit = bsearch(&key, t->queues, t->n, sizeof(*t->queues), cmp_queue_name);
    return hit != NULL && hit->q == q ? (size_t)(hit - t->queues) : QUEUETREE_ROOT;
}

/* Dense values of rl into v (nres; fill elsewhere). */
static void rl_into(const struct shape_rl *rl, int64_t *v, uint32_t nres)
{
    for (uint32_t k = 0; rl != NULL && k < rl->len; k++) {
        if (rl->items[k].id < nres)
            v[rl->items[k].id] = rl->items[k].value;
    }
}

/* Queue i's own spec.capability in resource k, QTREE_UNLIMITED when unlisted. */
static int64_t own_cap(const struct qtree *t, size_t i, uint32_t k)
{
    const struct shape_rl *rl = t->queues[i].q->capability;
    for (uint32_t j = 0; rl != NULL && j < rl->len; j++) {
        if (rl->items[j].id == k)
            return rl->items[j].value;
    }
    return QTREE_UNLIMITED;
}

/* Every queue of c, sorted by name, with its arrays; links from queuetree. */
static void build_links(struct qtree *t, const struct cache *c)
{
    struct cache_queue *q;
    size_t n = 0;
    cache_queue_for_each(q, c)
        n++;
    t->n = n;
    t->queues = util_calloc(n + 1, sizeof(*t->queues));
    size_t i = 0;
    cache_queue_for_each(q, c)
        t->queues[i++].q = q;
    qsort(t->queues, n, sizeof(*t->queues), cmp_queue_name);
    struct queuetree_in *in = util_calloc(n + 1, sizeof(*in));
    struct queuetree_node *out = util_calloc(n + 1, sizeof(*out));
    for (i = 0; i < n; i++)
        in[i] = (struct queuetree_in){t->queues[i].q->name, t->queues[i].q->parent, t->queues[i].q->present};
    queuetree_build(in, n, out, &t->root_first);
    int64_t *block = util_calloc((size_t)ARR_COUNT * t->nres * n + 1, sizeof(*block));
    for (i = 0; i < n; i++) {
        struct qtree_queue *e = &t->queues[i];
        e->parent = out[i].parent;
        e->first_child = out[i].first_child;
        e->next_sibling = out[i].next_sibling;
        e->nchildren = out[i].nchildren;
        e->depth = out[i].depth;
        e->state = out[i].state;
        e->bad = out[i].state != QUEUETREE_OK ? in[out[i].bad].name : NULL;
        e->is_root = out[i].is_root;
        e->weight = e->q->weight;
        e->explicit_deserved = e->q->deserved != NULL;
        int64_t *base = block + (size_t)ARR_COUNT * t->nres * i;
        e->cap = base;
        e->guarantee = base + t->nres;
        e->deserved = base + 2 * (size_t)t->nres;
        e->alloc = base + 3 * (size_t)t->nres;
        e->demand = base + 4 * (size_t)t->nres;
        if (e->q->parent != NULL || e->q->guarantee != NULL)
            t->nested = 1;
    }
    free(in);
    free(out);
}

/* Queues in an order where a parent comes before its children (only those reachable from the root); returns how many. */
static size_t top_down(const struct qtree *t, size_t *order)
{
    size_t len = 0;
    for (size_t c = t->root_first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
        order[len++] = c;
    for (size_t at = 0; at < len; at++) {
        for (size_t c = t->queues[order[at]].first_child; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
            order[len++] = c;
    }
    return len;
}

/* The nodes' allocatable (Ready, schedulable) less what pods outside any queue request there. */
static void sum_total(struct qtree *t, const struct cache *c)
{
    struct cache_node *node;
    cache_node_for_each(node, c) {
        if (!node->present || !node->ready || node->unschedulable)
            continue;
        for (uint32_t k = 0; node->allocatable != NULL && k < node->allocatable->len; k++) {
            uint32_t id = node->allocatable->items[k].id;
            if (id < t->nres)
                t->total[id] = util_sat_add(t->total[id], node->allocatable->items[k].value);
        }
        for (uint32_t k = 0; k < node->nused && k < t->nres; k++)
            t->total[k] = util_sat_add(t->total[k], -node->foreign[k]);
    }
    for (uint32_t k = 0; k < t->nres; k++) {
        if (t->total[k] < 0)
            t->total[k] = 0;
    }
}

/* rl's value of resource k, QUEUESPEC_UNSET when it does not list it. */
static int64_t rl_value(const struct shape_rl *rl, uint32_t k)
{
    for (uint32_t j = 0; rl != NULL && j < rl->len; j++) {
        if (rl->items[j].id == k)
            return rl->items[j].value;
    }
    return QUEUESPEC_UNSET;
}

/*
 * The rule queue i's own quantities break (queuespec.h), into e->spec; 1 when
 * one closes it: a negative quantity, or deserved above capability. A
 * guarantee above deserved does not: raygate derives deserved and honours the
 * guarantee either way (the webhook refuses new ones, as Volcano does).
 */
static int own_rule(struct qtree *t, const struct cache *c, size_t i)
{
    struct qtree_queue *e = &t->queues[i];
    for (uint32_t k = 0; k < t->nres; k++) {
        enum queuespec_rule r = queuespec_resource(cache_resource_name(c, k), rl_value(e->q->capability, k),
                                                   rl_value(e->q->deserved, k), rl_value(e->q->guarantee, k), &e->spec);
        if (r != QUEUESPEC_OK && r != QUEUESPEC_GUARANTEE_ABOVE_DESERVED)
            return 1;
    }
    e->spec.rule = QUEUESPEC_OK;
    return 0;
}

/*
 * Closes the queues whose spec breaks a rule (QUEUETREE_BAD_SPEC) and their
 * subtrees (BAD_ANCESTOR), and takes back what they would reserve: their
 * guarantees, explicit deserved and negative capabilities (qtree.h).
 * order[0..len): parents before children.
 */
static void mark_spec(struct qtree *t, const struct cache *c, const size_t *order, size_t len)
{
    for (size_t j = 0; j < len; j++) {
        struct qtree_queue *e = &t->queues[order[j]];
        if (e->state == QUEUETREE_OK && !e->is_root && own_rule(t, c, order[j])) {
            e->state = QUEUETREE_BAD_SPEC;
            e->bad = e->q->name;
        }
    }
    for (size_t j = 0; j < len; j++) {
        struct qtree_queue *e = &t->queues[order[j]];
        const struct qtree_queue *up = e->parent != QUEUETREE_ROOT ? &t->queues[e->parent] : NULL;
        if (e->state == QUEUETREE_OK && up != NULL && up->state != QUEUETREE_OK) {
            e->state = QUEUETREE_BAD_ANCESTOR;
            e->bad = up->bad;
        }
        if (e->state == QUEUETREE_OK)
            continue;
        e->explicit_deserved = 0;
        for (uint32_t k = 0; k < t->nres; k++) {
            e->guarantee[k] = 0;
            e->deserved[k] = 0;
            if (e->cap[k] < 0)
                e->cap[k] = 0;
        }
    }
}

static int qtree_deserves_nothing(const struct qtree *t, size_t i);

/* Queue i's key for qtree_pick_ranked(), after its alloc or deserved changed. */
static void set_key(struct qtree *t, size_t i)
{
    double key = qtree_deserves_nothing(t, i) ? QTREE_SHARE_MAX : qtree_share(t, i);
    struct qtree_keylog *log = t->keylog;
    if (key != t->queues[i].key && log != NULL && !log->logged[i]) {
        if (log->n == log->cap) {
            log->cap = log->cap != 0 ? 2 * log->cap : 16;
            log->idx = util_realloc(log->idx, log->cap * sizeof(*log->idx));
        }
        log->idx[log->n++] = i;
        log->logged[i] = 1;
    }
    t->queues[i].key = key;
}

static void set_keys(struct qtree *t)
{
    for (size_t i = 0; i < t->n; i++)
        set_key(t, i);
}

void qtree_total_memo_finish(struct qtree_total_memo *m)
{
    free(m->total);
    memset(m, 0, sizeof(*m));
}

/* t->total from memo while valid, else summed (and kept in memo, unless NULL). */
static void total_of(struct qtree *t, const struct cache *c, struct qtree_total_memo *memo)
{
    if (memo != NULL && memo->gen == c->nodes_gen + 1 && memo->nres == t->nres) {
        memcpy(t->total, memo->total, t->nres * sizeof(*t->total));
        return;
    }
    sum_total(t, c);
    if (memo == NULL)
        return;
    free(memo->total);
    memo->total = util_calloc(t->nres + 1, sizeof(*memo->total));
    memcpy(memo->total, t->total, t->nres * sizeof(*t->total));
    memo->nres = t->nres;
    memo->gen = c->nodes_gen + 1;
}

void qtree_build(struct qtree *t, const struct cache *c, uint32_t nres)
{
    qtree_build_memo(t, c, nres, NULL);
}

void qtree_build_memo(struct qtree *t, const struct cache *c, uint32_t nres, struct qtree_total_memo *memo)
{
    qtree_finish(t);
    t->nres = nres;
    t->total = util_calloc(2 * (size_t)nres + 1, sizeof(*t->total));
    t->root_cap = t->total + nres;
    build_links(t, c);
    for (uint32_t k = 0; k < nres; k++)
        t->root_cap[k] = QTREE_UNLIMITED;
    for (size_t i = 0; i < t->n; i++) {
        struct qtree_queue *e = &t->queues[i];
        for (uint32_t k = 0; k < nres; k++)
            e->cap[k] = own_cap(t, i, k);
        rl_into(e->q->guarantee, e->guarantee, nres);
        rl_into(e->q->deserved, e->deserved, nres);
        if (e->is_root)
            memcpy(t->root_cap, e->cap, nres * sizeof(*e->cap));
    }
    size_t *order = util_calloc(t->n + 1, sizeof(*order));
    size_t len = top_down(t, order);
    mark_spec(t, c, order, len);
    for (size_t j = 0; j < len; j++) {
        struct qtree_queue *e = &t->queues[order[j]];
        const int64_t *up = e->parent == QUEUETREE_ROOT ? t->root_cap : t->queues[e->parent].cap;
        for (uint32_t k = 0; k < nres; k++) {
            if (up[k] < e->cap[k])
                e->cap[k] = up[k];
        }
    }
    free(order);
    total_of(t, c, memo);
    set_keys(t);
}

static void add_path(struct qtree *t, size_t i, const int64_t *v, int sign, int arr)
{
    for (size_t at = i; at != QUEUETREE_ROOT; at = t->queues[at].parent) {
        struct qtree_queue *e = &t->queues[at];
        int64_t *dst = arr == ARR_ALLOC ? e->alloc : e->demand;
        for (uint32_t k = 0; k < t->nres; k++)
            dst[k] = util_sat_add(dst[k], sign * v[k]);
        if (arr == ARR_ALLOC)
            set_key(t, at);
        if (e->state == QUEUETREE_CYCLE || e->state == QUEUETREE_SELF_PARENT || e->state == QUEUETREE_MISSING_PARENT)
            break; /* a cycle's parents lead back to it; the others' parent is the root (a closed queue's spec: on up) */
        if (e->state == QUEUETREE_BAD_ANCESTOR && e->parent != QUEUETREE_ROOT && t->queues[e->parent].state == QUEUETREE_CYCLE)
            break;
    }
}

void qtree_add_alloc(struct qtree *t, size_t i, const int64_t *v, int sign)
{
    if (i < t->n)
        add_path(t, i, v, sign, ARR_ALLOC);
}

void qtree_add_demand(struct qtree *t, size_t i, const int64_t *v, int sign)
{
    if (i < t->n)
        add_path(t, i, v, sign, ARR_DEMAND);
}

/* w * room / wsum without overflow (room >= 0, wsum >= w > 0). */
static int64_t portion(int64_t room, uint64_t w, uint64_t wsum)
{
    long double p = (long double)room * (long double)w / (long double)wsum;
    return p >= (long double)INT64_MAX ? INT64_MAX : (int64_t)p;
}

/* Water-fills resource k's room among the children of the parent whose first child is first. */
static void fill_children(struct qtree *t, size_t first, uint32_t k, int64_t room)
{
    for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling) {
        if (t->queues[c].explicit_deserved)
            room = util_sat_add(room, -t->queues[c].deserved[k]);
        else
            t->queues[c].deserved[k] = -1; /* not settled */
    }
    for (int changed = 1; changed;) {
        changed = 0;
        uint64_t wsum = 0;
        int64_t room0 = room; /* every portion of a round is of the room the round starts with */
        for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling) {
            if (t->queues[c].deserved[k] < 0)
                wsum += t->queues[c].weight;
        }
        for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling) {
            struct qtree_queue *e = &t->queues[c];
            if (e->deserved[k] >= 0)
                continue;
            int64_t limit = e->cap[k] < e->demand[k] ? e->cap[k] : e->demand[k];
            int64_t p = (room0 <= 0 || e->weight == 0) ? 0 : portion(room0, e->weight, wsum);
            if (e->weight == 0 || limit <= p) { /* capped: settle, and share what it leaves again */
                e->deserved[k] = e->weight == 0 ? 0 : (limit > 0 ? limit : 0);
                room = util_sat_add(room, -e->deserved[k]);
                changed = 1;
            }
        }
    }
    uint64_t wsum = 0;
    for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
        wsum += t->queues[c].deserved[k] < 0 ? t->queues[c].weight : 0;
    for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling) {
        if (t->queues[c].deserved[k] < 0)
            t->queues[c].deserved[k] = room > 0 ? portion(room, t->queues[c].weight, wsum) : 0;
    }
}

void qtree_derive(struct qtree *t)
{
    int64_t *rootroom = util_calloc(t->nres + 1, sizeof(*rootroom));
    for (uint32_t k = 0; k < t->nres; k++)
        rootroom[k] = t->total[k] < t->root_cap[k] ? t->total[k] : t->root_cap[k];
    for (uint32_t k = 0; k < t->nres; k++)
        fill_children(t, t->root_first, k, rootroom[k]);
    free(rootroom);
    size_t *order = util_calloc(t->n + 1, sizeof(*order));
    size_t len = top_down(t, order);
    for (size_t j = 0; j < len; j++) {
        const struct qtree_queue *e = &t->queues[order[j]];
        if (e->first_child == QUEUETREE_ROOT)
            continue;
        for (uint32_t k = 0; k < t->nres; k++)
            fill_children(t, e->first_child, k, e->deserved[k]);
    }
    free(order);
    set_keys(t);
}

double qtree_share(const struct qtree *t, size_t i)
{
    const struct qtree_queue *e = &t->queues[i];
    double share = 0;
    int counted = 0, holds = 0;
    for (uint32_t k = 0; k < t->nres; k++) {
        if (e->alloc[k] > 0)
            holds = 1;
        if (e->deserved[k] <= 0)
            continue;
        counted = 1;
        double s = (double)(e->alloc[k] > 0 ? e->alloc[k] : 0) / (double)e->deserved[k];
        if (s > share)
            share = s;
    }
    return counted || !holds ? share : QTREE_SHARE_MAX;
}

/* Whether queue i deserves nothing at all (weight 0, or no room): it comes after every queue that deserves some. */
static int qtree_deserves_nothing(const struct qtree *t, size_t i)
{
    for (uint32_t k = 0; k < t->nres; k++) {
        if (t->queues[i].deserved[k] > 0)
            return 0;
    }
    return 1;
}

int qtree_leaf_usable(const struct qtree *t, size_t i)
{
    const struct qtree_queue *e = &t->queues[i];
    return e->state == QUEUETREE_OK && e->q->present && e->nchildren == 0 && !e->is_root;
}

/* ---- fitting a gang ---- */

/* What subtree i holds or reserves of resource k: the larger of its guarantee and its children's (a leaf: its alloc). */
static int64_t footprint(const struct qtree *t, size_t i, uint32_t k)
{
    const struct qtree_queue *e = &t->queues[i];
    int64_t inner = 0;
    if (e->first_child == QUEUETREE_ROOT) {
        inner = e->alloc[k];
    } else {
        for (size_t c = e->first_child; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
            inner = util_sat_add(inner, footprint(t, c, k));
    }
    return inner > e->guarantee[k] ? inner : e->guarantee[k];
}

/* The room parent p (QUEUETREE_ROOT: the root) gives its children in resource k. */
static int64_t room_of(const struct qtree *t, size_t p, uint32_t k)
{
    if (p != QUEUETREE_ROOT)
        return t->queues[p].cap[k];
    return t->total[k] < t->root_cap[k] ? t->total[k] : t->root_cap[k];
}

int qtree_contended(const struct qtree *t, size_t i, uint32_t k)
{
    size_t p = t->queues[i].parent;
    size_t first = p == QUEUETREE_ROOT ? t->root_first : t->queues[p].first_child;
    int64_t room = p == QUEUETREE_ROOT ? room_of(t, p, k) : t->queues[p].deserved[k];
    int64_t sum = 0;
    for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
        sum = util_sat_add(sum, t->queues[c].demand[k]);
    return sum > room;
}

/* The Queue named "root", or QUEUETREE_ROOT. */
static size_t root_queue(const struct qtree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->queues[i].is_root)
            return i;
    }
    return QUEUETREE_ROOT;
}

/* Whether the root's children hold so much that need would exceed the root Queue's capability. */
static int root_blocks(const struct qtree *t, const int64_t *need, struct qtree_block *why)
{
    size_t r = root_queue(t);
    for (uint32_t k = 0; r != QUEUETREE_ROOT && k < t->nres; k++) {
        if (need[k] <= 0 || t->root_cap[k] == QTREE_UNLIMITED)
            continue;
        int64_t held = 0;
        for (size_t c = t->root_first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
            held = util_sat_add(held, t->queues[c].alloc[k]);
        if (util_sat_add(held, need[k]) > t->root_cap[k]) {
            *why = (struct qtree_block){QTREE_BLOCK_CAPABILITY, r, QUEUETREE_ROOT, k, held, t->root_cap[k]};
            return 1;
        }
    }
    return 0;
}

static int capability_blocks(const struct qtree *t, size_t i, const int64_t *need, struct qtree_block *why)
{
    for (size_t at = i; at != QUEUETREE_ROOT; at = t->queues[at].parent) {
        for (uint32_t k = 0; k < t->nres; k++) {
            int64_t cap = own_cap(t, at, k);
            if (need[k] > 0 && cap != QTREE_UNLIMITED && util_sat_add(t->queues[at].alloc[k], need[k]) > cap) {
                *why = (struct qtree_block){QTREE_BLOCK_CAPABILITY, at, QUEUETREE_ROOT, k, t->queues[at].alloc[k], cap};
                return 1;
            }
        }
    }
    return 0;
}

/* The sibling of at (children of p) with the most guaranteed room it does not use, in resource k. */
static size_t idlest_guarantee(const struct qtree *t, size_t p, size_t at, uint32_t k)
{
    size_t best = QUEUETREE_ROOT;
    int64_t most = 0;
    size_t first = p == QUEUETREE_ROOT ? t->root_first : t->queues[p].first_child;
    for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling) {
        int64_t idle = util_sat_add(t->queues[c].guarantee[k], -t->queues[c].alloc[k]);
        if (c != at && idle > most) {
            most = idle;
            best = c;
        }
    }
    return best;
}

/* Resource k: whether room guaranteed to others would be used, walking up from leaf i with need. */
static int guarantee_blocks_k(const struct qtree *t, size_t i, int64_t need, uint32_t k, struct qtree_block *why)
{
    int64_t before = footprint(t, i, k);
    int64_t after = util_sat_add(t->queues[i].alloc[k], need);
    after = after > t->queues[i].guarantee[k] ? after : t->queues[i].guarantee[k];
    for (size_t at = i; at != QUEUETREE_ROOT && after > before; at = t->queues[at].parent) {
        size_t p = t->queues[at].parent;
        size_t first = p == QUEUETREE_ROOT ? t->root_first : t->queues[p].first_child;
        int64_t sum = 0;
        for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
            sum = util_sat_add(sum, c == at ? after : footprint(t, c, k));
        int64_t room = room_of(t, p, k);
        size_t other = idlest_guarantee(t, p, at, k);
        if (room != QTREE_UNLIMITED && sum > room && other != QUEUETREE_ROOT) {
            *why = (struct qtree_block){QTREE_BLOCK_GUARANTEE, at, other, k, util_sat_add(sum, -after), room};
            return 1;
        }
        if (p == QUEUETREE_ROOT)
            break;
        before = footprint(t, p, k);
        after = sum > t->queues[p].guarantee[k] ? sum : t->queues[p].guarantee[k]; /* sum: p's children, with need */
    }
    return 0;
}

int qtree_fits(const struct qtree *t, size_t i, const int64_t *need, struct qtree_block *why)
{
    memset(why, 0, sizeof(*why));
    why->level = i;
    why->other = QUEUETREE_ROOT;
    if (t->queues[i].state != QUEUETREE_OK) {
        why->kind = QTREE_BLOCK_BAD_TREE;
        return 0;
    }
    if (t->queues[i].nchildren > 0 || t->queues[i].is_root) {
        why->kind = QTREE_BLOCK_NOT_LEAF;
        return 0;
    }
    if (capability_blocks(t, i, need, why) || root_blocks(t, need, why))
        return 0;
    for (uint32_t k = 0; k < t->nres; k++) {
        if (need[k] > 0 && guarantee_blocks_k(t, i, need[k], k, why))
            return 0;
    }
    return 1;
}

const struct queuespec_problem *qtree_bad_spec(const struct qtree *t, const struct cache *c, size_t i)
{
    const struct qtree_queue *e = &t->queues[i];
    if (e->state == QUEUETREE_BAD_SPEC)
        return &e->spec;
    if (e->state != QUEUETREE_BAD_ANCESTOR || e->bad == NULL)
        return NULL;
    size_t a = qtree_index(t, cache_queue_get(c, e->bad));
    return a != QUEUETREE_ROOT && t->queues[a].state == QUEUETREE_BAD_SPEC ? &t->queues[a].spec : NULL;
}

/* ---- words ---- */

static void put_quantity(struct util_buf *b, const char *name, int64_t v)
{
    int binary = strcmp(name, "memory") == 0 || strcmp(name, "ephemeral-storage") == 0;
    resources_put_quantity(b, name, v, binary ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI);
}

void qtree_children_text(const struct qtree *t, size_t i, struct util_buf *b)
{
    size_t first = i == QUEUETREE_ROOT || t->queues[i].is_root ? t->root_first : t->queues[i].first_child;
    for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
        util_buf_printf(b, "%s%s", c == first ? "" : ", ", t->queues[c].q->name);
}

/* "queue eng (parent of train)", "queue train", "queue root (the root)" */
static void put_level(const struct qtree *t, size_t level, size_t leaf, struct util_buf *b)
{
    util_buf_printf(b, "queue %s", t->queues[level].q->name);
    if (t->queues[level].is_root) {
        util_buf_puts(b, " (the root)");
        return;
    }
    if (level == leaf)
        return;
    size_t child = leaf;
    while (child != QUEUETREE_ROOT && t->queues[child].parent != level)
        child = t->queues[child].parent;
    util_buf_printf(b, " (%s of %s)", child == leaf ? "parent" : "ancestor", t->queues[leaf].q->name);
}

void qtree_block_text(const struct qtree *t, size_t leaf, const struct qtree_block *why, const struct cache *c, struct util_buf *b)
{
    const struct qtree_queue *e = &t->queues[why->level];
    const char *res =
        why->kind == QTREE_BLOCK_CAPABILITY || why->kind == QTREE_BLOCK_GUARANTEE ? cache_resource_name(c, why->res) : "";
    switch (why->kind) {
    case QTREE_FITS:
        break;
    case QTREE_BLOCK_CAPABILITY:
        put_level(t, why->level, leaf, b);
        util_buf_printf(b, ": %s ", res);
        put_quantity(b, res, why->have);
        util_buf_puts(b, " of ");
        put_quantity(b, res, why->limit);
        util_buf_puts(b, " allocated");
        break;
    case QTREE_BLOCK_GUARANTEE: {
        const struct qtree_queue *o = &t->queues[why->other];
        util_buf_printf(b, "queue %s's guarantee (%s ", o->q->name, res);
        put_quantity(b, res, o->guarantee[why->res]);
        util_buf_printf(b, ") is reserved under %s", o->parent == QUEUETREE_ROOT ? "the root" : t->queues[o->parent].q->name);
        util_buf_printf(b, ": the others there hold or reserve %s ", res);
        put_quantity(b, res, why->have);
        util_buf_puts(b, " of ");
        put_quantity(b, res, why->limit);
        break;
    }
    case QTREE_BLOCK_NOT_LEAF:
        if (e->is_root && t->root_first == QUEUETREE_ROOT) {
            util_buf_printf(b, "queue %s is the root: only leaf queues hold gangs", e->q->name);
            break;
        }
        util_buf_printf(b, "queue %s has children (", e->q->name);
        qtree_children_text(t, why->level, b);
        util_buf_puts(b, "): only leaf queues hold gangs");
        break;
    case QTREE_BLOCK_BAD_TREE:
        if (e->state == QUEUETREE_BAD_SPEC || (e->state == QUEUETREE_BAD_ANCESTOR && qtree_bad_spec(t, c, why->level) != NULL)) {
            char text[320];
            queuespec_text(qtree_bad_spec(t, c, why->level), text, sizeof(text));
            if (e->state == QUEUETREE_BAD_SPEC)
                util_buf_printf(b, "queue %s is against the rules of its spec (%s): treated as Closed", e->q->name, text);
            else
                util_buf_printf(b, "queue %s is under queue %s, whose spec breaks a rule (%s): treated as Closed", e->q->name,
                                e->bad, text);
        } else if (e->state == QUEUETREE_BAD_ANCESTOR)
            util_buf_printf(b, "queue %s is under queue %s, which is %s: treated as Closed", e->q->name, e->bad,
                            queuetree_state_text(t->queues[qtree_index(t, cache_queue_get(c, e->bad))].state));
        else
            util_buf_printf(b, "queue %s is %s: treated as Closed", e->q->name, queuetree_state_text(e->state));
        break;
    }
}

/* ---- fair sharing ---- */

/* Whether subtree i has a leaf with work (into work[], post-order). */
static int mark_work(const struct qtree *t, size_t i, const unsigned char *has_work, unsigned char *work)
{
    int any = has_work[i] != 0;
    for (size_t c = t->queues[i].first_child; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
        any |= mark_work(t, c, has_work, work);
    work[i] = (unsigned char)any;
    return any;
}

size_t qtree_pick(const struct qtree *t, const unsigned char *has_work)
{
    unsigned char *work = util_calloc(t->n + 1, 1);
    size_t *rank = util_calloc(t->n + 1, sizeof(*rank));
    for (size_t c = t->root_first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling)
        mark_work(t, c, has_work, work);
    for (size_t i = 0; i < t->n; i++)
        rank[i] = work[i] ? i : QTREE_RANK_NONE; /* ties: the lower name, which is the lower index */
    size_t picked = qtree_pick_ranked(t, rank);
    free(work);
    free(rank);
    return picked != QUEUETREE_ROOT && has_work[picked] ? picked : QUEUETREE_ROOT;
}

size_t qtree_pick_ranked(const struct qtree *t, const size_t *rank)
{
    size_t first = t->root_first, picked = QUEUETREE_ROOT;
    while (first != QUEUETREE_ROOT) {
        size_t best = QUEUETREE_ROOT;
        double best_share = 0;
        for (size_t c = first; c != QUEUETREE_ROOT; c = t->queues[c].next_sibling) {
            if (rank[c] == QTREE_RANK_NONE)
                continue;
            double s = t->queues[c].key;
            if (best == QUEUETREE_ROOT || s < best_share || (s == best_share && rank[c] < rank[best])) {
                best = c;
                best_share = s;
            }
        }
        if (best == QUEUETREE_ROOT)
            break;
        picked = best;
        first = t->queues[best].first_child;
    }
    return picked;
}

/* ---- the tree outside a pass ---- */

void qtree_fill(struct qtree *t, const struct cache *c)
{
    uint32_t nres = c->shapes.nresources;
    qtree_build(t, c, nres);
    int64_t *v = util_calloc(2 * (size_t)nres + 1, sizeof(*v));
    const void *keys[16] = {0};
    uint8_t bits[16];
    struct marks m;
    marks_init(&m, keys, bits, 16);
    for (size_t i = 0; i < t->n; i++) {
        struct cache_gang *g;
        cache_queue_for_each_gang(g, t->queues[i].q) {
            if (g->admitted)
                hold_gang(&m, nres, g, NULL, v, v + nres);
            else
                hold_ungated(&m, nres, g, v);
            qtree_add_alloc(t, i, v, 1);
            qtree_add_demand(t, i, v, 1);
            if (g->present && !g->admitted) {
                memset(v, 0, nres * sizeof(*v));
                rl_into(g->min_rl, v, nres);
                qtree_add_demand(t, i, v, 1);
            }
        }
    }
    free(v);
    qtree_derive(t);
}
