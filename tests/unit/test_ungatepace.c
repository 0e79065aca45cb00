/*
 * gate/apply/ungatepace.c: batch sizes from the observed bind rate, the
 * backlog refilled at half, the floor and the ceiling, and the stall rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ungatepace.h"

/* Nothing released yet: the first batch is min_batch (or what is left). */
static void test_first_batch(void **state)
{
    (void)state;
    struct ungatepace p;
    ungatepace_init(&p, NULL);
    assert_int_equal(ungatepace_batch(&p, 0, 1000), UNGATEPACE_MIN_BATCH);
    assert_int_equal(ungatepace_batch(&p, 0, 5), 5);
    assert_int_equal(ungatepace_batch(&p, 0, 0), 0);
    assert_int_equal(ungatepace_rate(&p), 0);
}

/* The backlog (released, unbound) is only refilled once half of it is bound, and then back to the target. */
static void test_refill_at_half(void **state)
{
    (void)state;
    struct ungatepace_config cfg = {.min_batch = 16, .max_batch = 256, .window_ms = 100, .stall_ms = 5000, .deadline_ms = 100000};
    struct ungatepace p;
    ungatepace_init(&p, &cfg);
    ungatepace_observe(&p, 0, 16, 0);
    assert_int_equal(ungatepace_batch(&p, 0, 984), 0); /* 16 waiting to bind: enough */
    ungatepace_observe(&p, 100, 0, 7);
    assert_int_equal(ungatepace_batch(&p, 100, 984), 0); /* 9 waiting, over half of 16 */
    ungatepace_observe(&p, 200, 0, 8);
    /* 8 waiting: refill to the floor (8 in 200 ms = 40/s, times 100 ms is 4 < 16). */
    assert_int_equal(ungatepace_rate(&p), 40);
    assert_int_equal(ungatepace_batch(&p, 200, 984), 8);
    /* A wider window: 40/s times 1 s is 40 waiting wanted: 32 more. */
    p.cfg.window_ms = 1000;
    assert_int_equal(ungatepace_batch(&p, 200, 984), 32);
}

/* A fast scheduler gets bigger batches, up to max_batch; the rate is over the last samples only. */
static void test_batch_follows_rate(void **state)
{
    (void)state;
    struct ungatepace_config cfg = {.min_batch = 8, .max_batch = 100, .window_ms = 1000, .stall_ms = 5000, .deadline_ms = 100000};
    struct ungatepace p;
    ungatepace_init(&p, &cfg);
    ungatepace_observe(&p, 0, 8, 0);
    size_t released = 8, bound = 0;
    long long t = 0;
    /* Slow at first: 10 pods/s. */
    for (int i = 0; i < UNGATEPACE_SAMPLES; i++) {
        t += 100;
        bound += 1;
        size_t more = ungatepace_batch(&p, t, 1000);
        ungatepace_observe(&p, t, 0, bound);
        released += more;
        ungatepace_observe(&p, t, more, bound);
    }
    assert_in_range(ungatepace_rate(&p), 9, 11);
    size_t slow_target = 10 > cfg.min_batch ? 10 : cfg.min_batch;
    assert_true(released - bound <= slow_target);
    /* Then fast: 300 pods/s over the last samples: the target is capped at max_batch. */
    for (int i = 0; i < UNGATEPACE_SAMPLES; i++) {
        t += 100;
        bound = bound + 30 <= released ? bound + 30 : released;
        ungatepace_observe(&p, t, 0, bound);
        size_t more = ungatepace_batch(&p, t, 2000 - released);
        released += more;
        ungatepace_observe(&p, t, more, bound);
    }
    assert_true(ungatepace_rate(&p) >= 250);
    assert_true(released - bound <= cfg.max_batch);
    assert_true(released - bound > cfg.max_batch / 2);
}

/* Nothing bound for stall_ms while pods wait released: every gate left goes. */
static void test_stall_releases_all(void **state)
{
    (void)state;
    struct ungatepace_config cfg = {.min_batch = 16, .stall_ms = 1000, .deadline_ms = 100000};
    struct ungatepace p;
    ungatepace_init(&p, &cfg);
    ungatepace_observe(&p, 0, 16, 0);
    ungatepace_observe(&p, 999, 0, 0);
    assert_int_equal(ungatepace_batch(&p, 999, 500), 0);
    assert_false(ungatepace_behind(&p, 999));
    assert_true(ungatepace_behind(&p, 1000));
    assert_int_equal(ungatepace_batch(&p, 1000, 500), 500);
    /* A bind restarts the clock. */
    ungatepace_observe(&p, 1200, 0, 1);
    assert_int_equal(ungatepace_batch(&p, 2100, 500), 0);
    assert_int_equal(ungatepace_batch(&p, 2200, 500), 500);
}

/* A slow scheduler: the releases still keep up with the line to all gates by the deadline, then all go. */
static void test_deadline(void **state)
{
    (void)state;
    struct ungatepace_config cfg = {.min_batch = 10, .max_batch = 10, .window_ms = 100, .stall_ms = 100000, .deadline_ms = 4000};
    struct ungatepace p;
    ungatepace_init(&p, &cfg);
    ungatepace_observe(&p, 0, 10, 0);
    /* 1 s in, 8 bound (8/s): the rate wants 10 waiting, so 8 more; the line wants 1000 * 1/4 = 250 released. */
    ungatepace_observe(&p, 1000, 0, 8);
    assert_int_equal(ungatepace_batch(&p, 1000, 990), 240);
    ungatepace_observe(&p, 1000, 240, 8);
    /* At 2 s: 500 due, 250 released. */
    ungatepace_observe(&p, 2000, 0, 16);
    assert_int_equal(ungatepace_batch(&p, 2000, 750), 250);
    /* Past the deadline: everything left, and the release is behind. */
    assert_false(ungatepace_behind(&p, 3999));
    ungatepace_observe(&p, 4000, 250, 30);
    assert_true(ungatepace_behind(&p, 4000));
    assert_int_equal(ungatepace_batch(&p, 4000, 500), 500);
}

/* Bound counts above released are clamped (a pod bound before our view of its release). */
static void test_bound_clamped(void **state)
{
    (void)state;
    struct ungatepace p;
    ungatepace_init(&p, NULL);
    ungatepace_observe(&p, 0, 4, 9);
    assert_int_equal(p.bound, 4);
    assert_int_equal(ungatepace_batch(&p, 10, 100), UNGATEPACE_MIN_BATCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_batch),        cmocka_unit_test(test_refill_at_half), cmocka_unit_test(test_batch_follows_rate),
        cmocka_unit_test(test_stall_releases_all), cmocka_unit_test(test_bound_clamped),  cmocka_unit_test(test_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
