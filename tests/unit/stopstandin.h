/*
 * stopstandin: the tests of a daemon's stop module on lib/io/stop.c
 * (webhook/serverstop.c, dispatch/loopstop.c), written once. The including
 * test defines, before including it, the daemon's target and its module:
 * STOPSTANDIN_TYPE (the target's struct tag), STOPSTANDIN_STOP and
 * STOPSTANDIN_DESTROY (the target's stop request and destroy, which this
 * header defines as stand-ins with the program's signatures: a target that
 * counts its stop requests and is poisoned by its destroy, so that any
 * request after it, a use after free in the program, is counted), and
 * STOPSTANDIN_REGISTER and STOPSTANDIN_FINISH (the stop module under test).
 * It defines test_second_signal and test_signal_on_watch_thread. Signals are
 * real, raised on the test's threads as on a daemon's watch threads, which do
 * not block them.
 */
#ifndef RAYGATE_STOPSTANDIN_H
#define RAYGATE_STOPSTANDIN_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

struct STOPSTANDIN_TYPE {
    atomic_int requests;  /* STOPSTANDIN_STOP calls before its destroy */
    atomic_int used_dead; /* and after */
    atomic_int stopping;  /* a STOPSTANDIN_STOP has begun and not returned */
    atomic_int destroyed; /* poisoned */
    int slow;             /* STOPSTANDIN_STOP takes 200 ms, as a handler descheduled halfway */
    int stopping_at_destroy;
};

/* ---- the stand-ins, with the program's signatures ---- */

void STOPSTANDIN_STOP(struct STOPSTANDIN_TYPE *l)
{
    atomic_store(&l->stopping, 1);
    if (l->slow) {
        struct timespec d = {.tv_nsec = 200 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    if (atomic_load(&l->destroyed))
        atomic_fetch_add(&l->used_dead, 1); /* the real one sets a flag in the freed target */
    else
        atomic_fetch_add(&l->requests, 1);
    atomic_store(&l->stopping, 0);
}

void STOPSTANDIN_DESTROY(struct STOPSTANDIN_TYPE *l)
{
    if (l == NULL)
        return;
    l->stopping_at_destroy = atomic_load(&l->stopping);
    atomic_store(&l->destroyed, 1);
}

/* A SIGTERM while it runs asks the target to stop; one after STOPSTANDIN_FINISH (a second SIGTERM) finds nothing. */
static void test_second_signal(void **state)
{
    (void)state;
    struct STOPSTANDIN_TYPE l = {0};
    STOPSTANDIN_REGISTER(&l);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(atomic_load(&l.requests), 1);
    STOPSTANDIN_FINISH();
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

/* A handler on a watch thread, inside STOPSTANDIN_STOP when main tears down: the target is freed only after it returned. */
static void test_signal_on_watch_thread(void **state)
{
    (void)state;
    struct STOPSTANDIN_TYPE l = {.slow = 1};
    STOPSTANDIN_REGISTER(&l);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, watch_main, NULL), 0);
    for (int i = 0; i < 5000 && !atomic_load(&l.stopping); i++) {
        struct timespec d = {.tv_nsec = 1000 * 1000};
        nanosleep(&d, NULL);
    }
    assert_true(atomic_load(&l.stopping));
    STOPSTANDIN_FINISH();
    pthread_join(t, NULL);
    assert_false(l.stopping_at_destroy);
    assert_int_equal(atomic_load(&l.used_dead), 0);
    assert_int_equal(atomic_load(&l.requests), 1);
}

#endif
