/*
 * lib/io/stop.c with a stand-in target that counts its stops and is
 * poisoned by its destroy: any stop after it is counted (a use after free in
 * a daemon). Real signals, raised on the test's threads, run the real
 * handler.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "stop.h"

struct target {
    atomic_int stops;     /* stop calls that found it alive */
    atomic_int used_dead; /* stop calls after its destroy */
    atomic_int stopping;  /* a stop has begun and not returned */
    atomic_int destroyed; /* poisoned */
    int slow;             /* stop takes 200 ms, as a handler descheduled halfway */
    int stopping_at_destroy;
};

static void target_stop(void *arg)
{
    struct target *t = arg;
    atomic_store(&t->stopping, 1);
    if (t->slow) {
        struct timespec d = {.tv_nsec = 200 * 1000 * 1000};
        nanosleep(&d, NULL); /* async-signal-safe */
    }
    if (atomic_load(&t->destroyed))
        atomic_fetch_add(&t->used_dead, 1);
    else
        atomic_fetch_add(&t->stops, 1);
    atomic_store(&t->stopping, 0);
}

/* What a daemon does once its run returned: unregister, then free. */
static void target_destroy(struct target *t)
{
    stop_unregister();
    t->stopping_at_destroy = atomic_load(&t->stopping);
    atomic_store(&t->destroyed, 1);
}

/* SIGTERM and SIGINT both reach the registered target. */
static void test_signals_stop(void **state)
{
    (void)state;
    struct target t = {0};
    struct stop_target st = {.stop = target_stop, .arg = &t};
    stop_register(&st);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(raise(SIGINT), 0);
    assert_int_equal(atomic_load(&t.stops), 2);
    target_destroy(&t);
    assert_int_equal(atomic_load(&t.used_dead), 0);
}

/* A signal after the teardown (a second SIGTERM) stops nothing: the freed target is never touched. */
static void test_signal_after_unregister(void **state)
{
    (void)state;
    struct target t = {0};
    struct stop_target st = {.stop = target_stop, .arg = &t};
    stop_register(&st);
    assert_int_equal(raise(SIGTERM), 0);
    target_destroy(&t);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(raise(SIGINT), 0);
    assert_int_equal(atomic_load(&t.stops), 1);
    assert_int_equal(atomic_load(&t.used_dead), 0);
}

static void *raise_main(void *arg)
{
    (void)arg;
    raise(SIGTERM); /* this thread's: the handler runs here, not on the test's thread */
    return NULL;
}

/*
 * A handler on another thread that read the target just before the
 * teardown: the target is freed only once that handler is done with it.
 */
static void test_signal_in_flight(void **state)
{
    (void)state;
    struct target t = {.slow = 1};
    struct stop_target st = {.stop = target_stop, .arg = &t};
    stop_register(&st);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, raise_main, NULL), 0);
    for (int i = 0; i < 5000 && !atomic_load(&t.stopping); i++) {
        struct timespec d = {.tv_nsec = 1000 * 1000};
        nanosleep(&d, NULL);
    }
    assert_true(atomic_load(&t.stopping));
    target_destroy(&t);
    pthread_join(th, NULL);
    assert_false(t.stopping_at_destroy);
    assert_int_equal(atomic_load(&t.used_dead), 0);
    assert_int_equal(atomic_load(&t.stops), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signals_stop),
        cmocka_unit_test(test_signal_after_unregister),
        cmocka_unit_test(test_signal_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
