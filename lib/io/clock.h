/*
 * clock: the programs' one reading of the clocks, and a sleep that resumes
 * after signals. I/O side only: policy modules get the time passed in
 * (tests/unit/check_layout.py).
 */
#ifndef RAYGATE_CLOCK_H
#define RAYGATE_CLOCK_H

/* Milliseconds of CLOCK_MONOTONIC: for intervals and deadlines. */
long long clock_mono_ms(void);

/* Milliseconds since the epoch (CLOCK_REALTIME): for times written to the API. */
long long clock_wall_ms(void);

/* Sleeps ms milliseconds (nothing when ms <= 0), resuming after a signal. */
void clock_sleep_ms(long long ms);

#endif
