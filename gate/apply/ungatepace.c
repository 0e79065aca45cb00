#include "ungatepace.h"

#include <string.h>

void ungatepace_init(struct ungatepace *p, const struct ungatepace_config *cfg)
{
    memset(p, 0, sizeof(*p));
    if (cfg != NULL)
        p->cfg = *cfg;
    if (p->cfg.min_batch == 0)
        p->cfg.min_batch = UNGATEPACE_MIN_BATCH;
    if (p->cfg.max_batch == 0)
        p->cfg.max_batch = UNGATEPACE_MAX_BATCH;
    if (p->cfg.max_batch < p->cfg.min_batch)
        p->cfg.max_batch = p->cfg.min_batch;
    if (p->cfg.window_ms <= 0)
        p->cfg.window_ms = UNGATEPACE_WINDOW_MS;
    if (p->cfg.stall_ms <= 0)
        p->cfg.stall_ms = UNGATEPACE_STALL_MS;
    if (p->cfg.deadline_ms <= 0)
        p->cfg.deadline_ms = UNGATEPACE_DEADLINE_MS;
}

void ungatepace_observe(struct ungatepace *p, long long now_ms, size_t released_more, size_t bound)
{
    if (p->released == 0 && released_more > 0)
        p->progress_ms = p->first_ms = now_ms;
    p->released += released_more;
    if (bound > p->released)
        bound = p->released;
    if (bound > p->bound)
        p->progress_ms = now_ms;
    p->bound = bound;
    p->now_ms = now_ms;
    size_t last = (p->next + UNGATEPACE_SAMPLES - 1) % UNGATEPACE_SAMPLES;
    if (p->nsamples > 0 && now_ms - p->t[last] < UNGATEPACE_SAMPLE_MS)
        return; /* the ring spans the last UNGATEPACE_SAMPLES samples this far apart */
    p->t[p->next] = now_ms;
    p->b[p->next] = bound;
    p->next = (p->next + 1) % UNGATEPACE_SAMPLES;
    if (p->nsamples < UNGATEPACE_SAMPLES)
        p->nsamples++;
}

size_t ungatepace_rate(const struct ungatepace *p)
{
    if (p->nsamples == 0)
        return 0;
    size_t oldest = p->nsamples < UNGATEPACE_SAMPLES ? 0 : p->next;
    long long dt = p->now_ms - p->t[oldest];
    if (dt < UNGATEPACE_RATE_SPAN_MS || p->bound <= p->b[oldest])
        return 0; /* too short a time to tell a rate from a burst */
    return (size_t)((long long)(p->bound - p->b[oldest]) * 1000 / dt);
}

int ungatepace_behind(const struct ungatepace *p, long long now_ms)
{
    if (p->released == 0)
        return 0;
    if (p->released > p->bound && now_ms - p->progress_ms >= p->cfg.stall_ms)
        return 1; /* not binding: pacing cannot help, a partly released gang must not last */
    return now_ms - p->first_ms >= p->cfg.deadline_ms;
}

size_t ungatepace_batch(const struct ungatepace *p, long long now_ms, size_t left)
{
    if (left == 0)
        return 0;
    if (ungatepace_behind(p, now_ms))
        return left;
    size_t backlog = p->released - p->bound;
    size_t rate = ungatepace_rate(p);
    size_t target = p->cfg.min_batch;
    if (rate > 0 && (size_t)((long long)rate * p->cfg.window_ms / 1000) > target)
        target = (size_t)((long long)rate * p->cfg.window_ms / 1000);
    if (target > p->cfg.max_batch)
        target = p->cfg.max_batch;
    /* Refilled once half drained: batches of at least target/2, each one round of parallel PATCHes. */
    size_t n = backlog > target / 2 ? 0 : target - backlog;
    if (p->released == 0 && n < p->cfg.min_batch)
        n = p->cfg.min_batch;
    if (p->released > 0) { /* on the line from the first release to all by the deadline */
        long long total = (long long)(p->released + left);
        size_t due = (size_t)(total * (now_ms - p->first_ms) / p->cfg.deadline_ms);
        if (due > p->released && due - p->released > n)
            n = due - p->released;
    }
    return n < left ? n : left;
}
