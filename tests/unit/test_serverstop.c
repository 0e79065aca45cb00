/*
 * webhook/serverstop.c (on lib/io/stop.c) with a stand-in server that
 * counts its stop requests and is poisoned by server_destroy: any request
 * after it is counted (a use after free in raygate-webhook). Signals are
 * real, raised on the test's threads as on the webhook's watch threads,
 * which do not block them: a handler there used to read the server main
 * was destroying.
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

#include "serverstop.h"

struct server {
    atomic_int requests;  /* server_request_stop calls before its destroy */
    atomic_int used_dead; /* and after */
    atomic_int stopping;  /* a server_request_stop has begun and not returned */
    atomic_int destroyed; /* poisoned */
    int slow;             /* server_request_stop takes 200 ms, as a handler descheduled halfway */
    int stopping_at_destroy;
};

/* ---- the stand-ins, with the signatures of server.h ---- */

void server_request_stop(struct server *s)
{
    atomic_store(&s->stopping, 1);
    if (s->slow) {
        struct timespec d = {.tv_nsec = 200 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    if (atomic_load(&s->destroyed))
        atomic_fetch_add(&s->used_dead, 1); /* the real one sets a flag in the freed server */
    else
        atomic_fetch_add(&s->requests, 1);
    atomic_store(&s->stopping, 0);
}

void server_destroy(struct server *s)
{
    if (s == NULL)
        return;
    s->stopping_at_destroy = atomic_load(&s->stopping);
    atomic_store(&s->destroyed, 1);
}

/* A SIGTERM while serving asks the server to stop; one after serverstop_finish (a second SIGTERM) finds nothing. */
static void test_second_signal(void **state)
{
    (void)state;
    struct server s = {0};
    serverstop_register(&s);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(atomic_load(&s.requests), 1);
    serverstop_finish();
    assert_true(atomic_load(&s.destroyed));
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(raise(SIGINT), 0);
    assert_int_equal(atomic_load(&s.used_dead), 0);
    assert_int_equal(atomic_load(&s.requests), 1);
}

static void *watch_main(void *arg)
{
    (void)arg;
    raise(SIGTERM); /* handled on this thread, as on a watch thread */
    return NULL;
}

/* A handler on a watch thread, inside server_request_stop when main tears down: the server is freed only after it returned. */
static void test_signal_on_watch_thread(void **state)
{
    (void)state;
    struct server s = {.slow = 1};
    serverstop_register(&s);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, watch_main, NULL), 0);
    for (int i = 0; i < 5000 && !atomic_load(&s.stopping); i++) {
        struct timespec d = {.tv_nsec = 1000 * 1000};
        nanosleep(&d, NULL);
    }
    assert_true(atomic_load(&s.stopping));
    serverstop_finish();
    pthread_join(t, NULL);
    assert_false(s.stopping_at_destroy);
    assert_int_equal(atomic_load(&s.used_dead), 0);
    assert_int_equal(atomic_load(&s.requests), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_signal),
        cmocka_unit_test(test_signal_on_watch_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
