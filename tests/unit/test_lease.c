/*
 * Leader election on a fake clock: acquisition, renewal, expiry judged by
 * local observation, loss (renew deadline, another holder), release, and two
 * electors racing through a fake API server that enforces resourceVersion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "lease.h"

#define WALL0 1795289475000000LL /* 2026-11-21T19:31:15Z in microseconds */

static struct lease_time at(long long ms)
{
    return (struct lease_time){.mono_ms = ms, .wall_us = WALL0 + ms * 1000};
}

static void init_elector(struct lease_elector *le, const char *identity)
{
    struct lease_config cfg = {
        .namespace_ = "raygate-system",
        .name = "raygate-gate",
        .identity = identity,
        .duration_ms = LEASE_DEFAULT_DURATION_MS,
        .renew_deadline_ms = LEASE_DEFAULT_RENEW_DEADLINE_MS,
        .retry_period_ms = LEASE_DEFAULT_RETRY_PERIOD_MS,
    };
    assert_int_equal(lease_config_check(&cfg), 0);
    lease_elector_init(le, &cfg);
}

static const char *spec_str(const json_t *lease, const char *field)
{
    return json_string_value(json_object_get(json_object_get(lease, "spec"), field));
}

static long long spec_int(const json_t *lease, const char *field)
{
    const json_t *v = json_object_get(json_object_get(lease, "spec"), field);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static const char *rv_of(const json_t *lease)
{
    return json_string_value(json_object_get(json_object_get(lease, "metadata"), "resourceVersion"));
}

/* ---------------------------------------------------------- a fake API server */

/* One Lease, with the apiserver's optimistic concurrency: create 409s if it exists, update 409s on a stale resourceVersion. */
struct fake_server {
    json_t *lease; /* owned; NULL: none */
    long rv;
    int writes;
};

/* The reply (new) to a's write, or NULL for a 409. */
static json_t *fake_write(struct fake_server *s, const struct lease_action *a)
{
    if (a->kind == LEASE_ACTION_CREATE) {
        if (s->lease != NULL)
            return NULL;
    } else if (a->kind == LEASE_ACTION_UPDATE) {
        const char *rv = rv_of(a->body);
        char cur[32];
        snprintf(cur, sizeof(cur), "%ld", s->rv);
        if (s->lease == NULL || rv == NULL || strcmp(rv, cur) != 0)
            return NULL;
    } else {
        fail_msg("no write to make");
    }
    json_decref(s->lease);
    s->lease = json_deep_copy(a->body);
    char rv[32];
    snprintf(rv, sizeof(rv), "%ld", ++s->rv);
    json_object_set_new(json_object_get(s->lease, "metadata"), "resourceVersion", json_string(rv));
    s->writes++;
    return json_deep_copy(s->lease);
}

/* client-go's tryAcquireOrRenew against the fake server, as gate/lead/leader.c runs it. */
static void attempt(struct lease_elector *le, struct fake_server *s, long long ms)
{
    struct lease_time now = at(ms);
    struct lease_action a;
    lease_action_init(&a);
    if (lease_elector_try_fast(le, &now, &a) == LEASE_ACTION_UPDATE) {
        json_t *reply = fake_write(s, &a);
        lease_elector_done(le, &a, reply);
        int ok = reply != NULL;
        json_decref(reply);
        if (ok) {
            lease_action_finish(&a);
            return;
        }
    }
    if (lease_elector_try(le, &now, s->lease, &a) != LEASE_ACTION_NONE) {
        json_t *reply = fake_write(s, &a);
        lease_elector_done(le, &a, reply);
        json_decref(reply);
    }
    lease_action_finish(&a);
}

/* ------------------------------------------------------------------- tests */

static void test_config_check(void **state)
{
    (void)state;
    struct lease_config ok = {"ns", "raygate-gate", "me", 15000, 10000, 2000};
    assert_int_equal(lease_config_check(&ok), 0);
    struct lease_config c = ok;
    c.renew_deadline_ms = 15000; /* must be below the lease duration */
    assert_int_equal(lease_config_check(&c), -1);
    c = ok;
    c.retry_period_ms = 10000; /* must be below the renew deadline */
    assert_int_equal(lease_config_check(&c), -1);
    c = ok;
    c.retry_period_ms = 0;
    assert_int_equal(lease_config_check(&c), -1);
    c = ok;
    c.duration_ms = 15500; /* the record holds whole seconds */
    assert_int_equal(lease_config_check(&c), -1);
    c = ok;
    c.identity = "";
    assert_int_equal(lease_config_check(&c), -1);
    c = ok;
    c.namespace_ = NULL;
    assert_int_equal(lease_config_check(&c), -1);
}

static void test_microtime(void **state)
{
    (void)state;
    char buf[40];
    assert_string_equal(lease_microtime(WALL0, buf, sizeof(buf)), "2026-11-21T19:31:15.000000Z");
    assert_string_equal(lease_microtime(WALL0 + 123456, buf, sizeof(buf)), "2026-11-21T19:31:15.123456Z");
    assert_string_equal(lease_microtime(999, buf, sizeof(buf)), "1970-01-01T00:00:00.000999Z");
    assert_string_equal(lease_microtime(-1, buf, sizeof(buf)), "1969-12-31T23:59:59.999999Z");
}

static void test_record_parse(void **state)
{
    (void)state;
    json_t *l = fixture_json("lease/held-by-other.json");
    struct lease_record r;
    assert_int_equal(lease_record_parse(l, &r), 0);
    assert_string_equal(r.holder, "gate-a_0badf00d");
    assert_int_equal(r.duration_s, 15);
    assert_string_equal(r.acquire_time, "2026-11-21T19:00:00.000000Z");
    assert_string_equal(r.renew_time, "2001-01-01T00:00:00.000000Z");
    assert_int_equal(r.transitions, 3);
    lease_record_finish(&r);
    json_decref(l);

    l = fixture_json("lease/no-spec.json");
    assert_int_equal(lease_record_parse(l, &r), 0);
    assert_string_equal(r.holder, "");
    assert_int_equal(r.duration_s, 0);
    lease_record_finish(&r);
    json_decref(l);

    l = fixture_json("lease/bad-types.json");
    assert_int_equal(lease_record_parse(l, &r), -1);
    assert_string_equal(r.holder, "");
    lease_record_finish(&r);
    json_decref(l);
}

/* ------------------------------------------------------------- the fixture */

/*
 * What the tests start from: an empty fake server, electors a (gate-a_1) and
 * b (gate-b_2), an empty action, and room for a Lease read from a fixture.
 */
struct world {
    struct fake_server s;
    struct lease_elector a, b;
    struct lease_action act;
    json_t *lease; /* owned; NULL: none */
};

static int world_setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    init_elector(&w->a, "gate-a_1");
    init_elector(&w->b, "gate-b_2");
    lease_action_init(&w->act);
    *state = w;
    return 0;
}

static int world_teardown(void **state)
{
    struct world *w = *state;
    lease_action_finish(&w->act);
    lease_elector_finish(&w->a);
    lease_elector_finish(&w->b);
    json_decref(w->s.lease);
    json_decref(w->lease);
    free(w);
    return 0;
}

/* A test that starts from the world. */
#define WORLD_TEST(f) cmocka_unit_test_setup_teardown(f, world_setup, world_teardown)

/* No Lease yet: create one naming us; once the server has it, we lead. */
static void test_acquire_by_create(void **state)
{
    struct world *w = *state;
    struct lease_elector *le = &w->b;
    struct lease_action *a = &w->act;
    struct lease_time now = at(1000);
    assert_int_equal(lease_elector_try_fast(le, &now, a), LEASE_ACTION_NONE);
    assert_int_equal(lease_elector_try(le, &now, NULL, a), LEASE_ACTION_CREATE);
    assert_string_equal(json_string_value(json_object_get(a->body, "kind")), "Lease");
    assert_string_equal(json_string_value(json_object_get(json_object_get(a->body, "metadata"), "name")), "raygate-gate");
    assert_string_equal(json_string_value(json_object_get(json_object_get(a->body, "metadata"), "namespace")), "raygate-system");
    assert_string_equal(spec_str(a->body, "holderIdentity"), "gate-b_2");
    assert_int_equal(spec_int(a->body, "leaseDurationSeconds"), 15);
    assert_string_equal(spec_str(a->body, "acquireTime"), "2026-11-21T19:31:16.000000Z");
    assert_string_equal(spec_str(a->body, "renewTime"), "2026-11-21T19:31:16.000000Z");
    assert_int_equal(spec_int(a->body, "leaseTransitions"), 0);
    assert_false(lease_elector_leading(le, 1000));

    /* A failed create (someone else created it first: 409) changes nothing. */
    lease_elector_done(le, a, NULL);
    assert_false(lease_elector_leading(le, 1000));
    assert_int_equal(lease_elector_check(le, 1000), 0);

    json_t *reply = fake_write(&w->s, a);
    lease_elector_done(le, a, reply);
    json_decref(reply);
    assert_true(lease_elector_leading(le, 1000));
    assert_int_equal(lease_elector_check(le, 1001), 1);
    assert_int_equal(lease_elector_check(le, 1002), 0);
}

/*
 * Another holder's lease expires by OUR observation, not by its renewTime
 * (which here is 25 years old): 15 s after we first saw the record, and not a
 * millisecond before. Then we take it: transitions + 1, on its resourceVersion.
 */
static void test_expiry_by_local_observation(void **state)
{
    struct world *w = *state;
    json_t *other = w->lease = fixture_json("lease/held-by-other.json");
    struct lease_elector *le = &w->b;
    struct lease_action *a = &w->act;
    struct lease_time t0 = at(5000);
    assert_int_equal(lease_elector_try(le, &t0, other, a), LEASE_ACTION_NONE);
    struct lease_time t = at(5000 + 14999);
    assert_int_equal(lease_elector_try_fast(le, &t, a), LEASE_ACTION_NONE);
    assert_int_equal(lease_elector_try(le, &t, other, a), LEASE_ACTION_NONE);
    t = at(5000 + 15000);
    assert_int_equal(lease_elector_try(le, &t, other, a), LEASE_ACTION_UPDATE);
    assert_string_equal(rv_of(a->body), "4711");
    assert_string_equal(spec_str(a->body, "holderIdentity"), "gate-b_2");
    assert_int_equal(spec_int(a->body, "leaseTransitions"), 4);
    assert_string_equal(spec_str(a->body, "acquireTime"), "2026-11-21T19:31:35.000000Z");
    assert_string_equal(spec_str(a->body, "renewTime"), "2026-11-21T19:31:35.000000Z");
    /* What we do not own survives: labels, other spec fields. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(a->body, "metadata"), "labels"),
                                                          "app.kubernetes.io/name")),
                        "raygate-gate");
    assert_string_equal(spec_str(a->body, "strategy"), "OldestEmulationVersion");
    assert_false(lease_elector_leading(le, t.mono_ms));
}

/* The holder renewing (the record changing) restarts our observation: its lease stays valid 15 s from the change. */
static void test_renewal_by_other_keeps_it_valid(void **state)
{
    struct world *w = *state;
    attempt(&w->a, &w->s, 0);
    assert_true(lease_elector_leading(&w->a, 0));
    for (long long ms = 1000; ms <= 60000; ms += 1000) {
        if (ms % 2000 == 0)
            attempt(&w->a, &w->s, ms); /* a renews every 2 s */
        attempt(&w->b, &w->s, ms);
        assert_true(lease_elector_leading(&w->a, ms));
        assert_false(lease_elector_leading(&w->b, ms));
    }
    assert_int_equal(spec_int(w->s.lease, "leaseTransitions"), 0);
}

/* Renewal: the fast path updates the Lease we last wrote, keeping acquireTime and transitions. */
static void test_renew_fast_path(void **state)
{
    struct world *w = *state;
    struct lease_elector *le = &w->a;
    attempt(le, &w->s, 0);
    assert_int_equal(w->s.writes, 1);
    char *acquired = strdup(spec_str(w->s.lease, "acquireTime"));

    struct lease_action *act = &w->act;
    struct lease_time t = at(2000);
    assert_int_equal(lease_elector_try_fast(le, &t, act), LEASE_ACTION_UPDATE);
    assert_string_equal(rv_of(act->body), "1");
    assert_string_equal(spec_str(act->body, "acquireTime"), acquired);
    assert_string_equal(spec_str(act->body, "renewTime"), "2026-11-21T19:31:17.000000Z");
    assert_int_equal(spec_int(act->body, "leaseTransitions"), 0);
    json_t *reply = fake_write(&w->s, act);
    assert_non_null(reply);
    lease_elector_done(le, act, reply);
    json_decref(reply);

    /* Leading now runs to 2 s + the renew deadline. */
    assert_true(lease_elector_leading(le, 2000 + 9999));
    assert_false(lease_elector_leading(le, 2000 + 10000));
    free(acquired);
}

/* A leader whose renewals fail stops leading at the renew deadline, though its lease is still valid for others. */
static void test_loss_at_renew_deadline(void **state)
{
    struct world *w = *state;
    struct lease_elector *le = &w->a;
    attempt(le, &w->s, 0);
    assert_int_equal(lease_elector_check(le, 0), 1);
    struct lease_action *a = &w->act;
    for (long long ms = 2000; ms < 10000; ms += 2000) {
        struct lease_time t = at(ms);
        assert_int_equal(lease_elector_try_fast(le, &t, a), LEASE_ACTION_UPDATE);
        lease_elector_done(le, a, NULL); /* the API server does not answer */
        assert_true(lease_elector_leading(le, ms));
        assert_int_equal(lease_elector_check(le, ms), 0);
    }
    assert_true(lease_elector_leading(le, 9999));
    assert_false(lease_elector_leading(le, 10000));
    assert_int_equal(lease_elector_check(le, 10000), -1);
    assert_int_equal(lease_elector_check(le, 10001), 0);

    /*
     * Still the holder by its last record (valid until 15 s), it may renew on
     * the same resourceVersion: that write succeeding proves nobody else took
     * it in between, so leading again is safe.
     */
    struct lease_time t = at(11000);
    assert_int_equal(lease_elector_try_fast(le, &t, a), LEASE_ACTION_UPDATE);
    json_t *reply = fake_write(&w->s, a);
    lease_elector_done(le, a, reply);
    json_decref(reply);
    assert_int_equal(lease_elector_check(le, 11000), 1);
}

/* A leader that reads a record naming someone else stops leading at once, not at its deadline. */
static void test_loss_on_other_holder(void **state)
{
    struct world *w = *state;
    struct lease_elector *le = &w->b;
    attempt(le, &w->s, 0);
    assert_true(lease_elector_leading(le, 0));
    lease_elector_check(le, 0);
    /* Someone overwrote the Lease (e.g. by hand). */
    json_t *other = w->lease = fixture_json("lease/held-by-other.json");
    struct lease_action *a = &w->act;
    struct lease_time t = at(1000);
    assert_int_equal(lease_elector_try(le, &t, other, a), LEASE_ACTION_NONE);
    assert_false(lease_elector_leading(le, 1000));
    assert_int_equal(lease_elector_check(le, 1000), -1);
    /* And the fast path is closed: the record is not ours. */
    assert_int_equal(lease_elector_try_fast(le, &t, a), LEASE_ACTION_NONE);
}

/*
 * The Lease deleted under a leader: it stops leading at once (a candidate may
 * be creating it this very moment), and leads again only if its own create wins.
 */
static void test_lease_deleted_under_leader(void **state)
{
    struct world *w = *state;
    attempt(&w->a, &w->s, 0);
    assert_true(lease_elector_leading(&w->a, 0));
    json_decref(w->s.lease);
    w->s.lease = NULL;
    /* The candidate sees it gone first and creates it. */
    attempt(&w->b, &w->s, 500);
    assert_true(lease_elector_leading(&w->b, 500));
    /* a's fast path fails (its resourceVersion is gone); the read finds b's record. */
    attempt(&w->a, &w->s, 2000);
    assert_false(lease_elector_leading(&w->a, 2000));

    /* Deleted again: a finds nothing, stops leading before creating, and its create wins. */
    json_decref(w->s.lease);
    w->s.lease = NULL;
    struct lease_action *act = &w->act;
    struct lease_time t = at(3000);
    assert_int_equal(lease_elector_try(&w->b, &t, NULL, act), LEASE_ACTION_CREATE);
    assert_false(lease_elector_leading(&w->b, 3000));
    json_t *reply = fake_write(&w->s, act);
    lease_elector_done(&w->b, act, reply);
    json_decref(reply);
    assert_true(lease_elector_leading(&w->b, 3000));
}

/* The fast path's update on a stale resourceVersion fails (409); the slow path re-reads and renews. */
static void test_conflict_then_reread(void **state)
{
    struct world *w = *state;
    struct fake_server *s = &w->s;
    struct lease_elector *le = &w->a;
    attempt(le, s, 0);
    /* Someone touched the Lease (a label), moving its resourceVersion but not the record. */
    json_object_set_new(json_object_get(s->lease, "metadata"), "labels", json_pack("{s:s}", "touched", "yes"));
    s->rv++;
    char rv[32];
    snprintf(rv, sizeof(rv), "%ld", s->rv);
    json_object_set_new(json_object_get(s->lease, "metadata"), "resourceVersion", json_string(rv));
    int before = s->writes;
    attempt(le, s, 2000);
    assert_int_equal(s->writes, before + 1);
    assert_true(lease_elector_leading(le, 2000 + 9999));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(json_object_get(s->lease, "metadata"), "labels"), "touched")), "yes");
    assert_int_equal(spec_int(s->lease, "leaseTransitions"), 0);
}

/* Release (graceful shutdown) empties the holder; a candidate takes over at its next try, not 15 s later. */
static void test_release_and_takeover(void **state)
{
    struct world *w = *state;
    attempt(&w->a, &w->s, 0);
    attempt(&w->b, &w->s, 100);
    assert_false(lease_elector_leading(&w->b, 100));

    struct lease_action *act = &w->act;
    struct lease_time t = at(3000);
    assert_int_equal(lease_elector_release(&w->a, &t, act), LEASE_ACTION_UPDATE);
    assert_false(lease_elector_leading(&w->a, 3000)); /* stops before the write */
    assert_string_equal(spec_str(act->body, "holderIdentity"), "");
    assert_int_equal(spec_int(act->body, "leaseDurationSeconds"), 1);
    assert_int_equal(spec_int(act->body, "leaseTransitions"), 0);
    json_t *reply = fake_write(&w->s, act);
    assert_non_null(reply);
    lease_elector_done(&w->a, act, reply);
    json_decref(reply);
    lease_action_finish(act);
    assert_false(lease_elector_leading(&w->a, 3000));
    /* Nothing more to release. */
    assert_int_equal(lease_elector_release(&w->a, &t, act), LEASE_ACTION_NONE);

    attempt(&w->b, &w->s, 3500);
    assert_true(lease_elector_leading(&w->b, 3500));
    assert_string_equal(spec_str(w->s.lease, "holderIdentity"), "gate-b_2");
    assert_int_equal(spec_int(w->s.lease, "leaseTransitions"), 1);
}

/* A released Lease read from the server (fixture) is taken on the first try. */
static void test_take_released(void **state)
{
    struct world *w = *state;
    w->lease = fixture_json("lease/released.json");
    struct lease_time t = at(0);
    assert_int_equal(lease_elector_try(&w->b, &t, w->lease, &w->act), LEASE_ACTION_UPDATE);
    assert_string_equal(rv_of(w->act.body), "5000");
    assert_int_equal(spec_int(w->act.body, "leaseTransitions"), 8);
    assert_int_equal(spec_int(w->act.body, "leaseDurationSeconds"), 15);
}

/* A Lease whose record cannot be read is left alone, and our state does not change. */
static void test_unreadable_record(void **state)
{
    struct world *w = *state;
    w->lease = fixture_json("lease/bad-types.json");
    struct lease_time t = at(0);
    assert_int_equal(lease_elector_try(&w->b, &t, w->lease, &w->act), LEASE_ACTION_NONE);
    assert_false(w->b.observed);
    assert_null(w->b.lease);
}

/*
 * Two electors through one fake server, in varying orders, with the leader
 * crashing (no more attempts) at a random point: never two leaders at once;
 * the survivor leads within lease duration + one retry of the crashed
 * leader's last successful renewal.
 */
static void test_two_electors_failover(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (int run = 0; run < 200; run++) {
        struct fake_server s = {0};
        struct lease_elector e[2];
        init_elector(&e[0], "gate-a_1");
        init_elector(&e[1], "gate-b_2");
        long long crash_ms = 3000 + (rand_r(&seed) % 40000);
        int crashed = -1;
        long long last_renew = -1, took_over = -1;
        /* Each elector tries every 2 s (leading) or 2-4.4 s (not: client-go's jitter), offset randomly. */
        long long next[2] = {rand_r(&seed) % 2000, rand_r(&seed) % 2000};
        for (long long ms = 0; ms < 90000; ms += 10) {
            if (crashed < 0 && ms >= crash_ms) {
                crashed = lease_elector_leading(&e[0], ms) ? 0 : lease_elector_leading(&e[1], ms) ? 1 : -1;
                if (crashed < 0) {
                    crash_ms += 1000; /* nobody leads yet: crash later */
                } else {
                    last_renew = e[crashed].renewed_ms;
                }
            }
            for (int i = 0; i < 2; i++) {
                if (i == crashed || ms < next[i])
                    continue;
                attempt(&e[i], &s, ms);
                next[i] = ms + (lease_elector_leading(&e[i], ms) ? 2000 : 2000 + rand_r(&seed) % 2401);
            }
            int l0 = lease_elector_leading(&e[0], ms) && crashed != 0;
            int l1 = lease_elector_leading(&e[1], ms) && crashed != 1;
            /* A crashed leader keeps "leading" in its own view until its deadline: that overlap would be the bug. */
            int c0 = crashed == 0 && lease_elector_leading(&e[0], ms);
            int c1 = crashed == 1 && lease_elector_leading(&e[1], ms);
            if ((l0 || c0) && (l1 || c1))
                fail_msg("run %d: two leaders at %lld ms", run, ms);
            if (crashed >= 0 && took_over < 0 && (crashed == 0 ? l1 : l0))
                took_over = ms;
        }
        assert_true(crashed >= 0);
        assert_true(took_over >= 0);
        /* Observed within 4.4 s of the renewal, expired 15 s later, taken at the next try (< 4.4 s). */
        if (took_over - last_renew > 15000 + 4400 + 4400)
            fail_msg("run %d: takeover %lld ms after the last renewal", run, took_over - last_renew);
        if (took_over - last_renew < 15000)
            fail_msg("run %d: takeover only %lld ms after the last renewal", run, took_over - last_renew);
        lease_elector_finish(&e[0]);
        lease_elector_finish(&e[1]);
        json_decref(s.lease);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_check),
        cmocka_unit_test(test_microtime),
        cmocka_unit_test(test_record_parse),
        WORLD_TEST(test_acquire_by_create),
        WORLD_TEST(test_expiry_by_local_observation),
        WORLD_TEST(test_renewal_by_other_keeps_it_valid),
        WORLD_TEST(test_renew_fast_path),
        WORLD_TEST(test_loss_at_renew_deadline),
        WORLD_TEST(test_loss_on_other_holder),
        WORLD_TEST(test_lease_deleted_under_leader),
        WORLD_TEST(test_conflict_then_reread),
        WORLD_TEST(test_release_and_takeover),
        WORLD_TEST(test_take_released),
        WORLD_TEST(test_unreadable_record),
        cmocka_unit_test(test_two_electors_failover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
