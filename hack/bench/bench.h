/*
 * bench: what hack/bench's in-process programs share (admit_bench.c,
 * admit_dra.c): the clocks, the load average, the samples they print, and
 * the synthetic objects' timestamps and uids.
 */
#ifndef RAYGATE_BENCH_H
#define RAYGATE_BENCH_H

#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "error.h"

/* "0.52 0.61 0.70" from /proc/loadavg (new reference). */
json_t *bench_loadavg(void);

/* clk's time in milliseconds. */
double bench_clock_ms(clockid_t clk);

/* CLOCK_MONOTONIC in milliseconds. */
double bench_now_ms(void);

/*
 * A measured stretch: wall time, and this thread's CPU time (the same on an
 * idle core; on a shared machine it leaves out the time other programs had
 * the core).
 */
struct bench_span {
    double wall, cpu;
};

struct bench_span bench_span_start(void);

/* Appends the time since s to samples {"wall": [...], "cpu": [...]}. */
void bench_span_add(json_t *samples, struct bench_span s);

/* Empty samples {"wall": [], "cpu": []} (new reference). */
json_t *bench_samples(void);

/* Prints "admit_bench: what" and exits 1. */
void bench_die(const char *what);

/* Dies with err's message when rc is not 0. */
void bench_check(int rc, const struct error *err);

/* Prints out (stolen; NULL: json_pack failed) on one line. */
void bench_print(json_t *out);

/* "2024-05-01T10:00:00Z" plus s seconds (s < 10 days). */
void bench_timestamp(long s, char *buf, size_t size);

/* A uid of kind ('c' RayCluster, 'p' pod, 'r' claim) and number n. */
void bench_uid(char *buf, size_t size, char kind, long n);

#endif
