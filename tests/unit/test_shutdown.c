/*
 * gate/shutdown.c (on lib/io/stop.c) with stand-ins for the controller and
 * the leader that record every call, in order, and are poisoned by their
 * destroy: any use after it is counted (a use after free in the real
 * program). Signals are real, raised on the test's threads. The stand-in
 * controller_destroy asks the leader once more, as the real one's threads
 * (the status writer's, the watcher's) may until controller_destroy joins
 * them: the leader used to be destroyed first, and read freed then. And a
 * signal after shutdown_finish, or one being handled on another thread while
 * it runs, must not reach the destroyed controller: a second SIGTERM used to
 * stop the freed one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "shutdown.h"

struct leader {
    int stopped;   /* leader_stop ran: the Lease released, leading no more */
    int destroyed; /* poisoned */
};

struct controller {
    struct leader *leader; /* what its threads ask before every write */
    int destroyed;         /* poisoned */
    int stops;             /* controller_stop calls */
    int led_at_destroy;    /* its threads' last question, answered yes: they could still write */
    int slow;              /* controller_stop takes 200 ms, as a handler descheduled halfway */
    atomic_int stopping;   /* a controller_stop has begun and not returned */
    int stopping_at_destroy;
};

static char calls[256]; /* the stand-ins' calls in order, space-separated */
static atomic_int used_after_destroy;

static void record(const char *call)
{
    if (calls[0] != '\0')
        strncat(calls, " ", sizeof(calls) - strlen(calls) - 1);
    strncat(calls, call, sizeof(calls) - strlen(calls) - 1);
}

/* ---- the stand-ins, with the signatures of leader.h and controller.h ---- */

void leader_stop(struct leader *l)
{
    if (l == NULL)
        return;
    used_after_destroy += l->destroyed;
    l->stopped = 1;
    record("leader_stop");
}

void leader_destroy(struct leader *l)
{
    if (l == NULL)
        return;
    used_after_destroy += l->destroyed;
    l->stopped = 1;
    l->destroyed = 1;
    record("leader_destroy");
}

int leader_is_leading(struct leader *l)
{
    used_after_destroy += l->destroyed;
    return !l->stopped;
}

void controller_stop(struct controller *c)
{
    atomic_store(&c->stopping, 1);
    if (c->slow)
        usleep(200 * 1000);
    used_after_destroy += c->destroyed; /* the real one writes c's flag and its eventfd */
    c->stops++;
    atomic_store(&c->stopping, 0);
}

void controller_destroy(struct controller *c)
{
    if (c == NULL)
        return;
    used_after_destroy += c->destroyed;
    if (c->leader != NULL)
        c->led_at_destroy = leader_is_leading(c->leader);
    c->stopping_at_destroy = atomic_load(&c->stopping);
    c->destroyed = 1;
    record("controller_destroy");
}

static int setup(void **state)
{
    (void)state;
    calls[0] = '\0';
    used_after_destroy = 0;
    return 0;
}

/*
 * The Lease released first (nothing writes from then on), then the
 * controller and its threads, then the leader they asked. Without the fix:
 * "leader_destroy controller_destroy", and the controller's last question
 * reads the destroyed leader.
 */
static void test_order(void **state)
{
    (void)state;
    struct leader l = {0};
    struct controller c = {.leader = &l};
    shutdown_register(&c);
    shutdown_finish(&l);
    assert_int_equal(used_after_destroy, 0);
    assert_string_equal(calls, "leader_stop controller_destroy leader_destroy");
    assert_false(c.led_at_destroy);
    assert_true(c.destroyed && l.destroyed);
}

/* Without leader election (no leader) the controller alone; without a controller (its create failed) the leader alone. */
static void test_either_missing(void **state)
{
    (void)state;
    struct controller c = {0};
    shutdown_register(&c);
    shutdown_finish(NULL);
    assert_string_equal(calls, "controller_destroy");
    calls[0] = '\0';
    struct leader l = {0};
    shutdown_register(NULL);
    shutdown_finish(&l);
    assert_string_equal(calls, "leader_stop leader_destroy");
    assert_int_equal(used_after_destroy, 0);
}

/* A signal before shutdown_finish stops the controller; one after finds none (without the fix: it stopped the destroyed one). */
static void test_signal_after_finish(void **state)
{
    (void)state;
    struct leader l = {0};
    struct controller c = {.leader = &l};
    shutdown_register(&c);
    assert_ptr_equal(shutdown_controller(), &c);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(c.stops, 1);
    shutdown_finish(&l);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(used_after_destroy, 0);
    assert_int_equal(c.stops, 1);
    assert_null(shutdown_controller());
}

static void *signal_main(void *arg)
{
    (void)arg;
    raise(SIGTERM); /* handled on this thread */
    return NULL;
}

/*
 * A handler on another thread that found the controller just before
 * shutdown_finish forgot it: the controller is destroyed only once that
 * handler is done with it.
 */
static void test_signal_in_flight(void **state)
{
    (void)state;
    struct leader l = {0};
    struct controller c = {.leader = &l, .slow = 1};
    shutdown_register(&c);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, signal_main, NULL), 0);
    for (int i = 0; i < 5000 && !atomic_load(&c.stopping); i++)
        usleep(1000);
    assert_true(atomic_load(&c.stopping));
    shutdown_finish(&l);
    pthread_join(t, NULL);
    assert_false(c.stopping_at_destroy);
    assert_int_equal(used_after_destroy, 0);
    assert_int_equal(c.stops, 1);
    assert_true(c.destroyed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_order, setup),
        cmocka_unit_test_setup(test_either_missing, setup),
        cmocka_unit_test_setup(test_signal_after_finish, setup),
        cmocka_unit_test_setup(test_signal_in_flight, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
