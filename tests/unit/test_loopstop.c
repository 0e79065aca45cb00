/*
 * dispatch/loopstop.c (on lib/io/stop.c) with a stand-in loop that
 * counts its stop requests and is poisoned by dispatchloop_destroy: any
 * request after it is counted (a use after free in raygate-dispatch).
 * Signals are real, raised on the test's threads as on the workers' watch
 * threads, which do not block them. The loop used to stay registered once
 * destroyed: a second SIGTERM during teardown stopped the freed loop.
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

#include "loopstop.h"

struct dispatch_loop {
    atomic_int requests;  /* dispatchloop_stop calls before its destroy */
    atomic_int used_dead; /* and after */
    atomic_int stopping;  /* a dispatchloop_stop has begun and not returned */
    atomic_int destroyed; /* poisoned */
    int slow;             /* dispatchloop_stop takes 200 ms, as a handler descheduled halfway */
    int stopping_at_destroy;
};

/* ---- the stand-ins, with the signatures of loop.h ---- */

void dispatchloop_stop(struct dispatch_loop *l)
{
    atomic_store(&l->stopping, 1);
    if (l->slow) {
        struct timespec d = {.tv_nsec = 200 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    if (atomic_load(&l->destroyed))
        atomic_fetch_add(&l->used_dead, 1); /* the real one sets a flag in the freed loop */
    else
        atomic_fetch_add(&l->requests, 1);
    atomic_store(&l->stopping, 0);
}

void dispatchloop_destroy(struct dispatch_loop *l)
{
    if (l == NULL)
        return;
    l->stopping_at_destroy = atomic_load(&l->stopping);
    atomic_store(&l->destroyed, 1);
}

/* A SIGTERM while running asks the loop to stop; one after loopstop_finish (a second SIGTERM) finds nothing. */
static void test_second_signal(void **state)
{
    (void)state;
    struct dispatch_loop l = {0};
    loopstop_register(&l);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(atomic_load(&l.requests), 1);
    loopstop_finish();
    assert_true(atomic_load(&l.destroyed));
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(raise(SIGINT), 0);
    assert_int_equal(atomic_load(&l.used_dead), 0);
    assert_int_equal(atomic_load(&l.requests), 1);
}

static void *watch_main(void *arg)
{
    (void)arg;
    raise(SIGTERM); /* handled on this thread, as on a watch thread */
    return NULL;
}

/* A handler on a watch thread, inside dispatchloop_stop when main tears down: the loop is freed only after it returned. */
static void test_signal_on_watch_thread(void **state)
{
    (void)state;
    struct dispatch_loop l = {.slow = 1};
    loopstop_register(&l);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, watch_main, NULL), 0);
    for (int i = 0; i < 5000 && !atomic_load(&l.stopping); i++) {
        struct timespec d = {.tv_nsec = 1000 * 1000};
        nanosleep(&d, NULL);
    }
    assert_true(atomic_load(&l.stopping));
    loopstop_finish();
    pthread_join(t, NULL);
    assert_false(l.stopping_at_destroy);
    assert_int_equal(atomic_load(&l.used_dead), 0);
    assert_int_equal(atomic_load(&l.requests), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_signal),
        cmocka_unit_test(test_signal_on_watch_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
