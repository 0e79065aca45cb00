#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

json_t *bench_loadavg(void)
{
    char buf[128] = "";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) == NULL)
            buf[0] = 0;
        fclose(f);
    }
    /* The first three fields: 1, 5 and 15 minutes. */
    char *p = buf;
    for (int n = 0; *p != 0; p++)
        if (*p == ' ' && ++n == 3)
            break;
    *p = 0;
    return json_string(buf);
}

double bench_clock_ms(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double bench_now_ms(void)
{
    return bench_clock_ms(CLOCK_MONOTONIC);
}

struct bench_span bench_span_start(void)
{
    return (struct bench_span){bench_now_ms(), bench_clock_ms(CLOCK_THREAD_CPUTIME_ID)};
}

void bench_span_add(json_t *samples, struct bench_span s)
{
    double cpu = bench_clock_ms(CLOCK_THREAD_CPUTIME_ID) - s.cpu, wall = bench_now_ms() - s.wall;
    json_array_append_new(json_object_get(samples, "wall"), json_real(wall));
    json_array_append_new(json_object_get(samples, "cpu"), json_real(cpu));
}

json_t *bench_samples(void)
{
    return json_pack("{s:[],s:[]}", "wall", "cpu");
}

void bench_die(const char *what)
{
    fprintf(stderr, "admit_bench: %s\n", what);
    exit(1);
}

void bench_check(int rc, const struct error *err)
{
    if (rc != 0)
        bench_die(err->message);
}

void bench_print(json_t *out)
{
    if (out == NULL)
        bench_die("cannot build the result");
    char *text = json_dumps(out, JSON_COMPACT);
    puts(text);
    free(text);
    json_decref(out);
}

void bench_timestamp(long s, char *buf, size_t size)
{
    unsigned long u = (unsigned long)s % (10 * 86400);
    snprintf(buf, size, "2024-05-%02luT%02lu:%02lu:%02luZ", 1 + u / 86400, (u / 3600) % 24, (u / 60) % 60, u % 60);
}

void bench_uid(char *buf, size_t size, char kind, long n)
{
    snprintf(buf, size, "%c0000000-0000-4000-8000-%012ld", kind, n);
}
