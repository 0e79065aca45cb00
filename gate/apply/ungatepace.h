/*
 * ungatepace: how many scheduling gates to remove next, so that the gates of a
 * big gang go at the rate kube-scheduler binds its pods (pure: times and
 * counts come in, a batch size goes out; gate/apply/ungate.c does the I/O).
 *
 * Removing a thousand gates at once costs a thousand PATCHes that compete,
 * on the API server, with the scheduler's binds; removing them one by one
 * leaves the scheduler idle. So the gates go in batches that keep a backlog of
 * released, unbound pods just large enough for the scheduler never to run
 * dry: the bind rate observed over the last moments (pods of the batch bound
 * per second), times window_ms, never below min_batch nor above max_batch.
 * The backlog is refilled to that target once half of it is bound, so each
 * batch is one round of parallel PATCHes, not a trickle of single ones.
 * Heads go first, alone (ungate.c orders them).
 *
 * A scheduler that stops binding (no bind for stall_ms while pods wait
 * released) is not helped by slower releases: the gang would only stay partly
 * released longer. Then every gate left goes at once.
 *
 * And an admitted gang must not stay partly released for long, whatever the
 * scheduler's pace (the e2e invariant checker's grace is 5 s): the releases
 * keep up with a straight line from the first gate to all of them by
 * deadline_ms, so a gang too big to bind in that time goes faster than it
 * binds, though still in batches.
 */
#ifndef RAYGATE_UNGATEPACE_H
#define RAYGATE_UNGATEPACE_H

#include <stddef.h>

#define UNGATEPACE_SAMPLES 8
#define UNGATEPACE_SAMPLE_MS 100    /* the rate is over the last 8 samples at least this far apart */
#define UNGATEPACE_RATE_SPAN_MS 200 /* no rate from a shorter span (0: the floor, min_batch) */

struct ungatepace_config {
    size_t min_batch;      /* 0: UNGATEPACE_MIN_BATCH */
    size_t max_batch;      /* 0: UNGATEPACE_MAX_BATCH */
    long long window_ms;   /* 0: UNGATEPACE_WINDOW_MS */
    long long stall_ms;    /* 0: UNGATEPACE_STALL_MS */
    long long deadline_ms; /* 0: UNGATEPACE_DEADLINE_MS */
};

#define UNGATEPACE_MIN_BATCH 16 /* ~0.3 s of a 2-core scheduler's binds */
#define UNGATEPACE_MAX_BATCH 256
#define UNGATEPACE_WINDOW_MS 500 /* released, unbound work kept ahead of the scheduler */
#define UNGATEPACE_STALL_MS 2000
#define UNGATEPACE_DEADLINE_MS 3000 /* the the last batch starts by then, 2 s left for its PATCHes in the 5 s grace */

/* Caller-owned state; ungatepace_init fills it. */
struct ungatepace {
    struct ungatepace_config cfg;
    long long t[UNGATEPACE_SAMPLES]; /* ring of (time, bound) observations */
    size_t b[UNGATEPACE_SAMPLES];
    size_t nsamples, next;
    long long now_ms;      /* the last observation */
    size_t released;       /* gates removed so far */
    size_t bound;          /* of those, bound at the last observation */
    long long progress_ms; /* when bound last grew (or the first release) */
    long long first_ms;    /* the first release */
};

/* cfg may be NULL (all defaults). */
void ungatepace_init(struct ungatepace *p, const struct ungatepace_config *cfg);

/*
 * One observation at now_ms (any monotonic clock, non-decreasing): bound of
 * the released pods are bound. released_more: gates removed since the last call.
 */
void ungatepace_observe(struct ungatepace *p, long long now_ms, size_t released_more, size_t bound);

/* Observed bind rate, pods per second, over the last ~0.8 s (0 until the observations span UNGATEPACE_RATE_SPAN_MS). */
size_t ungatepace_rate(const struct ungatepace *p);

/*
 * Whether the release is past pacing at now_ms: the scheduler stalled, or the
 * deadline passed. Then the gates left go as fast as the API server takes
 * them (ungate.c: more PATCHes in flight).
 */
int ungatepace_behind(const struct ungatepace *p, long long now_ms);

/*
 * How many of the left gates to remove now: 0 means wait and observe again.
 * Never more than left; left > 0 with nothing released yet: at least min_batch
 * (or left).
 */
size_t ungatepace_batch(const struct ungatepace *p, long long now_ms, size_t left);

#endif
