/*
 * gate/shutdown.c with stand-ins for the controller and the leader that
 * record every call, in order, and are poisoned by their destroy: any use
 * after it is counted (a use after free in the real program). The stand-in
 * controller_destroy asks the leader once more, as the real one's threads
 * (the status writer's, the watcher's) may until controller_destroy joins
 * them: the leader used to be destroyed first, and read freed then.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

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
};

static char calls[256]; /* the stand-ins' calls in order, space-separated */
static int used_after_destroy;

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
    used_after_destroy += c->destroyed;
    c->stops++;
}

void controller_destroy(struct controller *c)
{
    if (c == NULL)
        return;
    used_after_destroy += c->destroyed;
    if (c->leader != NULL)
        c->led_at_destroy = leader_is_leading(c->leader);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_order, setup),
        cmocka_unit_test_setup(test_either_missing, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
