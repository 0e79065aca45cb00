/*
 * admitpass: the state of one admission pass (admit.h), shared by the modules
 * a pass is made of (admit.c: the verdicts; admitselect.c: which gangs a pass
 * weighs; admittopo.c: topology-constrained gangs), and the decisions they all
 * record through it (admitpass.c). Private to them: nobody else includes it.
 * What a pass computes lives here and is gone with the pass, never in the
 * cache (cache.h). Pure.
 */
#ifndef RAYGATE_ADMITPASS_H
#define RAYGATE_ADMITPASS_H

#include <stddef.h>
#include <stdint.h>

#include "admitresult.h"
#include "cache.h"
#include "evict.h"
#include "fit.h"
#include "marks.h"
#include "preempthold.h"
#include "qtree.h"
#include "topodomain.h"
#include "topoplace.h"
#include "util.h"

/*
 * What a pass knows of a queue it evaluates: the pass's own state, not the
 * cache's (cache.h), gone with the pass.
 */
struct qstate {
    struct cache_queue *q;
    size_t ti;                        /* its index in the pass's tree */
    int whole;                        /* all its gangs are evaluated, not only those waiting on node room */
    int64_t *held;                    /* dense by resource id: what admitted gangs hold */
    uint32_t held_gen;                /* bumped whenever held changes */
    const struct cache_gang *blocker; /* fifo: the complete gang that did not fit */
    /* The last "does not fit the queue" text after the gang's name, for gangs of this size while held is unchanged. */
    char *memo_text;
    const struct shape_rl *memo_rl;
    int64_t memo_member;
    uint32_t memo_gen;
};

/* A gang a pass evaluates, and its queue's state (admitselect.h). */
struct admit_selected {
    struct cache_gang *g;
    struct qstate *qs;
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
    size_t ncopies; /* pending, weighed early (early.h): its members still to come, weighed as copies */
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
    SCRATCH_SELECTED,
    SCRATCH_QINDEX,
    SCRATCH_COUNT,
};

/* The decision state kept across passes (admit.h). */
struct admit {
    struct cache *c;
    struct fit *fit;                     /* the nodes' free room */
    struct evict_config evict;           /* what holds evicted gangs back (admit_set_evict) */
    int64_t now_ms;                      /* the time of the next passes (admit_set_now) */
    struct preempthold *hold;            /* the preemptors whose room is held (preempthold.h) */
    const struct hypernodes *hypernodes; /* admit_set_hypernodes(); NULL: none */
    uint64_t hypernodes_gen;             /* their generation at the last pass */
    struct topodomains *topo;            /* the domains of topology constraints (topodomain.h) */
    int early;                           /* admit_set_early(): gangs weighed before their pods all exist (early.h) */
    struct qtree_total_memo total;       /* the queue tree's total between passes (qtree.h) */
    void *buf[SCRATCH_COUNT];
    size_t cap[SCRATCH_COUNT];
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
    const struct shape_rl *size_rl;
    int64_t size_member;
    const struct preempthold_item *held; /* the preemptors whose room is held (preempthold.h) */
    size_t nheld;
    struct qtree tree;               /* the queue tree (qtree.h), its alloc kept with the queues' held; empty for one flat queue */
    int linked;                      /* treepass_linked(): the queues are more than flat ones */
    struct topoplace_out placed;     /* the last topology-constrained gang placed (admittopo.h) */
    struct admit_selected *selected; /* the gangs admitselect_queues selected, nselected (scratch) */
    size_t nselected;
};

/* Buffer kind of at least n * size bytes, zeroed if zero; its contents are the caller's until the next call for that kind. */
static inline void *admitpass_scratch(struct admit *s, enum scratch_kind kind, size_t n, size_t size, int zero)
{
    return util_scratch(&s->buf[kind], &s->cap[kind], n, size, zero);
}

/* Marks pod and its gang with bits. */
static inline void admitpass_pod_mark(struct pass *p, const struct cache_pod *pod, unsigned bits)
{
    marks_set(&p->marks, pod, bits);
    marks_set(&p->marks, pod->gang, bits);
}

/*
 * Records a decision for w's gang in the pass's result: action, reason and
 * message (steals). A gang waiting on the nodes or a topology domain is
 * marked a node waiter in the cache. Returns the decision (the result's).
 */
struct admit_decision *admitpass_decide(struct pass *p, enum admit_action action, enum admit_reason reason, const struct work *w,
                                        char *message);

/* " (3 pods; cpu 3, memory 4Gi)", what follows a gang's name (borrowed until the next call). */
const char *admitpass_size_text(struct pass *p, const struct cache_gang *g);

/* Appends "gang ray-<cluster>-pg" for g to b. */
void admitpass_put_name(const struct cache_gang *g, struct util_buf *b);

/* Appends "gang ray-<cluster>-pg (3 pods; cpu 3)" for g to b. */
void admitpass_put_gang(struct pass *p, const struct cache_gang *g, struct util_buf *b);

/* A fifo queue stops at its first complete gang that does not fit: g blocks qs's queue if it is fifo. */
void admitpass_block_queue(struct qstate *qs, const struct cache_gang *g);

/* Decides WAIT for w's gang with reason and message (steals), and blocks its queue if fifo. */
void admitpass_wait(struct pass *p, const struct work *w, enum admit_reason reason, char *message);

/* Adds sign * v (dense) to what qs's queue holds, and to its path in the tree. */
static inline void admitpass_queue_add(struct pass *p, struct qstate *qs, const int64_t *v, int sign)
{
    for (uint32_t k = 0; k < p->nres; k++)
        qs->held[k] += sign * v[k];
    qs->held_gen++;
    if (qs->ti != QUEUETREE_ROOT)
        qtree_add_alloc(&p->tree, qs->ti, v, sign);
}

#endif
