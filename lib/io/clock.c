#include "clock.h"

#include <errno.h>
#include <time.h>

static long long read_ms(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long clock_mono_ms(void)
{
    return read_ms(CLOCK_MONOTONIC);
}

long long clock_wall_ms(void)
{
    return read_ms(CLOCK_REALTIME);
}

void clock_sleep_ms(long long ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}
