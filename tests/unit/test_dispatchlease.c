/*
 * The dispatch lease rule (dispatchlease.h) on a fake clock, driven by
 * fixtures (tests/fixtures/dispatchlease/): the parse of the two annotations
 * with its errors word for word, and sequences of sightings in which the lease
 * runs from the last change of the counter only; then the messages, and a
 * simulated day of renewals every quarter lease that never expires.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatchlease.h"
#include "fixtures.h"
#include "names.h"

static void test_parse(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatchlease/parse.json");
    const json_t *cases = json_object_get(fx, "cases");
    assert_true(json_array_size(cases) >= 10);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *counter = json_string_value(json_object_get(c, "counter"));
        const char *seconds = json_string_value(json_object_get(c, "seconds"));
        uint64_t got_counter = 42;
        int64_t got_seconds = 42;
        struct error err = {{0}};
        int rc = dispatchlease_parse(counter, seconds, &got_counter, &got_seconds, &err);
        if (rc != (int)json_integer_value(json_object_get(c, "rc")))
            fail_msg("case %zu (%s, %s): returned %d", i, counter, seconds, rc);
        if (rc == 1) {
            char text[32];
            snprintf(text, sizeof(text), "%llu", (unsigned long long)got_counter);
            assert_string_equal(text, json_string_value(json_object_get(c, "want_counter")));
            assert_int_equal(got_seconds, json_integer_value(json_object_get(c, "want_seconds")));
        } else {
            assert_int_equal(got_counter, 42); /* untouched unless a lease is returned */
            assert_int_equal(got_seconds, 42);
        }
        if (rc < 0)
            assert_string_equal(err.message, json_string_value(json_object_get(c, "error")));
    }
    json_decref(fx);
}

/* A RayCluster's metadata (new): uid and the two annotations (NULL: absent). */
static json_t *meta_of(const char *uid, const char *counter, const char *seconds)
{
    json_t *ann = json_object();
    if (counter != NULL)
        json_object_set_new(ann, NAMES_ANNOTATION_DISPATCH_LEASE, json_string(counter));
    if (seconds != NULL)
        json_object_set_new(ann, NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS, json_string(seconds));
    json_object_set_new(ann, "other", json_string("x"));
    return json_pack("{s:s, s:o}", "uid", uid, "annotations", ann);
}

static const char *state_name(enum dispatchlease_state s)
{
    return s == DISPATCHLEASE_EXPIRED ? "expired" : s == DISPATCHLEASE_BAD ? "bad" : "none";
}

static void run_step(const char *seq, size_t k, const json_t *step, struct dispatchlease **l)
{
    int64_t at = json_integer_value(json_object_get(step, "at"));
    if (json_object_get(step, "uid") != NULL) {
        json_t *meta = meta_of(json_string_value(json_object_get(step, "uid")), json_string_value(json_object_get(step, "counter")),
                               json_string_value(json_object_get(step, "seconds")));
        dispatchlease_observe(l, meta, at);
        json_decref(meta);
    }
    int64_t deadline = -1;
    enum dispatchlease_state s = dispatchlease_check(*l, at, &deadline);
    const char *want = json_string_value(json_object_get(step, "state"));
    if (strcmp(state_name(s), want) != 0)
        fail_msg("%s, step %zu (at %lld): %s, expected %s", seq, k, (long long)at, state_name(s), want);
    const json_t *wd = json_object_get(step, "deadline");
    if (wd != NULL && deadline != json_integer_value(wd))
        fail_msg("%s, step %zu: deadline %lld, expected %lld", seq, k, (long long)deadline, (long long)json_integer_value(wd));
    if (s != DISPATCHLEASE_NONE)
        assert_int_equal(deadline, 0);
    if (json_is_true(json_object_get(step, "absent")))
        assert_null(*l);
    const char *error = json_string_value(json_object_get(step, "error"));
    if (error != NULL)
        assert_string_equal((*l)->error, error);
}

static void test_observe(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatchlease/observe.json");
    const json_t *seqs = json_object_get(fx, "sequences");
    assert_true(json_array_size(seqs) >= 6);
    size_t i;
    const json_t *seq;
    json_array_foreach(seqs, i, seq)
    {
        struct dispatchlease *l = NULL;
        size_t k;
        const json_t *step;
        json_array_foreach(json_object_get(seq, "steps"), k, step)
        {
            run_step(json_string_value(json_object_get(seq, "name")), k, step, &l);
        }
        dispatchlease_drop(&l);
        assert_null(l);
    }
    json_decref(fx);
}

static void test_messages(void **state)
{
    (void)state;
    struct dispatchlease *l = NULL;
    json_t *meta = meta_of("u", "3", "20");
    dispatchlease_observe(&l, meta, 1000);
    json_decref(meta);
    assert_null(dispatchlease_wait_message("ray-a-pg", l, 20000)); /* running: no wait */
    assert_null(dispatchlease_wait_message("ray-a-pg", NULL, 20000));
    char *m = dispatchlease_wait_message("ray-a-pg", l, 26500);
    assert_string_equal(m,
                        "gang ray-a-pg waits: its dispatch lease (raygate.io/dispatch-lease) was not renewed for 25s (lease 20s); "
                        "it may be admitted again when the dispatcher renews it");
    free(m);
    m = dispatchlease_evict_message("ray-a-pg", l, 26500);
    assert_string_equal(m, "gang ray-a-pg evicted: its dispatch lease (raygate.io/dispatch-lease) was not renewed for 25s (lease "
                           "20s): the manager may run it elsewhere; its pods are deleted and it waits until the dispatcher renews "
                           "the lease");
    free(m);
    meta = meta_of("u", "3", "soon");
    dispatchlease_observe(&l, meta, 27000);
    json_decref(meta);
    m = dispatchlease_wait_message("ray-a-pg", l, 27000);
    assert_string_equal(m, "gang ray-a-pg waits: annotation raygate.io/dispatch-lease-seconds: \"soon\" is not a whole number of "
                           "seconds in 1..2592000");
    free(m);
    dispatchlease_drop(&l);
    dispatchlease_drop(&l); /* NULL is fine */
    dispatchlease_drop(NULL);
}

/* A day of renewals every lease/4 (jittered by up to a second) never expires; the first missed lease does, to the ms. */
static void test_day_of_renewals(void **state)
{
    (void)state;
    struct dispatchlease *l = NULL;
    const int64_t lease_ms = 120000, day = 24LL * 3600 * 1000;
    int64_t last = 0;
    uint64_t n = 0;
    for (int64_t t = 0; t < day; t += 1000) {
        if (t - last >= lease_ms / 4 + (int64_t)(n % 7) * 150) {
            char counter[24];
            snprintf(counter, sizeof(counter), "%llu", (unsigned long long)++n);
            json_t *meta = meta_of("u", counter, "120");
            dispatchlease_observe(&l, meta, t);
            json_decref(meta);
            last = t;
        }
        assert_int_equal(dispatchlease_check(l, t, NULL), DISPATCHLEASE_NONE);
    }
    assert_true(n > 2000);
    assert_int_equal(dispatchlease_check(l, last + lease_ms, NULL), DISPATCHLEASE_NONE);
    assert_int_equal(dispatchlease_check(l, last + lease_ms + 1, NULL), DISPATCHLEASE_EXPIRED);
    dispatchlease_drop(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_observe),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_day_of_renewals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
