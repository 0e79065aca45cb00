/*
 * gate/apply/cacheguard.c: a thread that takes the guard while another holds
 * it waits until the holder lets it go, and then gets it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "cacheguard.h"

struct taker {
    struct cacheguard *g;
    atomic_int got; /* 1 once the taker holds g */
};

static void *take(void *arg)
{
    struct taker *t = arg;
    cacheguard_lock(t->g);
    atomic_store(&t->got, 1);
    cacheguard_unlock(t->g);
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_excludes(void **state)
{
    (void)state;
    struct taker t = {.g = cacheguard_create()};
    atomic_init(&t.got, 0);
    pthread_t th;
    cacheguard_lock(t.g);
    assert_int_equal(pthread_create(&th, NULL, take, &t), 0);
    sleep_ms(100); /* time enough for the taker to get it, were it free */
    assert_int_equal(atomic_load(&t.got), 0);
    cacheguard_unlock(t.g);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(atomic_load(&t.got), 1);
    cacheguard_lock(t.g); /* let go by the taker too */
    cacheguard_unlock(t.g);
    cacheguard_destroy(t.g);
    cacheguard_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_excludes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
