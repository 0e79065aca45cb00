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
#include "util.h"

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

/* A RayCluster's metadata (new): uid, the two annotations and the sighting record (NULL: absent). */
static json_t *meta_seen(const char *uid, const char *counter, const char *seconds, const char *seen)
{
    json_t *ann = json_object();
    if (seen != NULL)
        json_object_set_new(ann, NAMES_ANNOTATION_DISPATCH_LEASE_SEEN, json_string(seen));
    if (counter != NULL)
        json_object_set_new(ann, NAMES_ANNOTATION_DISPATCH_LEASE, json_string(counter));
    if (seconds != NULL)
        json_object_set_new(ann, NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS, json_string(seconds));
    json_object_set_new(ann, "other", json_string("x"));
    return json_pack("{s:s, s:o}", "uid", uid, "annotations", ann);
}

static json_t *meta_of(const char *uid, const char *counter, const char *seconds)
{
    return meta_seen(uid, counter, seconds, NULL);
}

static const char *state_name(enum dispatchlease_state s)
{
    return s == DISPATCHLEASE_EXPIRED ? "expired" : s == DISPATCHLEASE_BAD ? "bad" : "none";
}

/* The record the gate would write of *l now (want_record; JSON null: none), and, with written, its write done. */
static void check_record(const char *seq, size_t k, const json_t *step, struct dispatchlease **l, int wanted)
{
    const json_t *want = json_object_get(step, "want_record");
    uint64_t counter = 0;
    json_t *patch = dispatchlease_record_patch(*l, "u-pre", &counter);
    assert_int_equal(wanted, patch != NULL);
    if (want != NULL) {
        const char *got = json_string_value(json_object_get(json_object_get(json_object_get(patch, "metadata"), "annotations"),
                                                            NAMES_ANNOTATION_DISPATCH_LEASE_SEEN));
        if (!util_streq(json_string_value(want), got))
            fail_msg("%s, step %zu: record %s, expected %s", seq, k, got ? got : "none",
                     json_string_value(want) ? json_string_value(want) : "none");
    }
    if (patch != NULL)
        assert_string_equal(json_string_value(json_object_get(json_object_get(patch, "metadata"), "uid")), "u-pre");
    if (json_is_true(json_object_get(step, "written"))) {
        assert_non_null(patch);
        dispatchlease_mark_recorded(*l, counter);
        assert_false(dispatchlease_record_wanted(*l));
    }
    json_decref(patch);
}

static void run_step(const char *seq, size_t k, const json_t *step, struct dispatchlease **l)
{
    int64_t at = json_integer_value(json_object_get(step, "at"));
    if (json_is_true(json_object_get(step, "restart")))
        dispatchlease_drop(l); /* a new gate process: nothing remembered */
    int wanted = dispatchlease_record_wanted(*l);
    if (json_object_get(step, "uid") != NULL) {
        json_t *meta =
            meta_seen(json_string_value(json_object_get(step, "uid")), json_string_value(json_object_get(step, "counter")),
                      json_string_value(json_object_get(step, "seconds")), json_string_value(json_object_get(step, "seen")));
        wanted = dispatchlease_observe(l, meta, at);
        json_decref(meta);
    }
    assert_int_equal(wanted, dispatchlease_record_wanted(*l));
    check_record(seq, k, step, l, wanted);
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
                        "gang ray-a-pg waits: its dispatch lease (raygate.io/dispatch-lease) was not renewed for 26s (lease 20s); "
                        "it may be admitted again when the dispatcher renews it");
    free(m);
    m = dispatchlease_evict_message("ray-a-pg", l, 26500);
    assert_string_equal(m, "gang ray-a-pg evicted: its dispatch lease (raygate.io/dispatch-lease) was not renewed for 26s (lease "
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

/* The record's text, both ways (seen.json's "parse"): errors word for word; what parses is formatted to the ms. */
static void test_seen_parse(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatchlease/seen.json");
    const json_t *cases = json_object_get(fx, "parse");
    assert_true(json_array_size(cases) >= 10);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *value = json_string_value(json_object_get(c, "value"));
        struct dispatchlease_seen got = {.counter = 42, .at_ms = 42};
        struct error err = {{0}};
        int rc = dispatchlease_seen_parse(value, &got, &err);
        if (rc != (int)json_integer_value(json_object_get(c, "rc")))
            fail_msg("case %zu (%s): returned %d (%s)", i, value, rc, err.message);
        if (rc != 1) {
            assert_int_equal(got.counter, 42); /* untouched */
            assert_int_equal(got.at_ms, 42);
            if (rc < 0)
                assert_string_equal(err.message, json_string_value(json_object_get(c, "error")));
            continue;
        }
        char text[32], buf[DISPATCHLEASE_SEEN_SIZE];
        snprintf(text, sizeof(text), "%llu", (unsigned long long)got.counter);
        assert_string_equal(text, json_string_value(json_object_get(c, "counter")));
        assert_int_equal(got.at_ms, json_integer_value(json_object_get(c, "at_ms")));
        assert_string_equal(dispatchlease_seen_format(&got, buf, sizeof(buf)), json_string_value(json_object_get(c, "format")));
        struct dispatchlease_seen back;
        assert_int_equal(dispatchlease_seen_parse(buf, &back, &err), 1); /* what is written reads back the same */
        assert_true(back.counter == got.counter && back.at_ms == got.at_ms);
    }
    json_decref(fx);
}

/* The policy of one sighting (seen.json's "sight"): what the gate remembers, the object's counter and record, now. */
static void test_sight(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatchlease/seen.json");
    const json_t *cases = json_object_get(fx, "sight");
    assert_true(json_array_size(cases) >= 10);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const json_t *m = json_object_get(c, "mem"), *want = json_object_get(c, "want");
        struct dispatchlease mem = {.valid = 1, .seconds = 20};
        if (json_is_object(m)) {
            mem.counted = 1;
            mem.counter = strtoull(json_string_value(json_object_get(m, "counter")), NULL, 10);
            mem.seen_ms = json_integer_value(json_object_get(m, "seen_ms"));
            mem.unknown = json_is_true(json_object_get(m, "unknown"));
        }
        struct dispatchlease_sighting got;
        dispatchlease_sight(json_is_object(m) ? &mem : NULL, strtoull(json_string_value(json_object_get(c, "counter")), NULL, 10),
                            json_integer_value(json_object_get(c, "seconds")), json_string_value(json_object_get(c, "recorded")),
                            json_integer_value(json_object_get(c, "now")), &got);
        if (got.seen_ms != json_integer_value(json_object_get(want, "seen_ms")) ||
            got.recorded != json_is_true(json_object_get(want, "recorded")) ||
            got.unknown != json_is_true(json_object_get(want, "unknown")))
            fail_msg("%s: seen_ms %lld recorded %d unknown %d", name, (long long)got.seen_ms, got.recorded, got.unknown);
        if (!json_is_object(m)) { /* a first sighting: the same with a lease not counted yet */
            struct dispatchlease_sighting again;
            dispatchlease_sight(&mem, strtoull(json_string_value(json_object_get(c, "counter")), NULL, 10),
                                json_integer_value(json_object_get(c, "seconds")),
                                json_string_value(json_object_get(c, "recorded")), json_integer_value(json_object_get(c, "now")),
                                &again);
            assert_memory_equal(&got, &again, sizeof(got));
        }
    }
    json_decref(fx);
}

/* Whatever the record holds, a first sighting never counts from later than now: the record only ever shortens a lease. */
static void test_record_never_extends(void **state)
{
    (void)state;
    static const char *const records[] = {NULL,
                                          "",
                                          "x",
                                          "5@1970-01-01T00:00:59.999Z",
                                          "5@2100-01-01T00:00:00Z",
                                          "6@2100-01-01T00:00:00Z",
                                          "5@1970-01-01T00:00:00Z",
                                          "5@1970-01-01T00:00:10.001Z"};
    for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++) {
        for (int64_t now = 0; now <= 120000; now += 7919) {
            struct dispatchlease_sighting s;
            dispatchlease_sight(NULL, 5, 20, records[i], now, &s);
            if (s.seen_ms > now)
                fail_msg("record %s at %lld: counted from %lld", records[i] ? records[i] : "(none)", (long long)now,
                         (long long)s.seen_ms);
        }
    }
}

/* The messages of a lease counted as run out because its record did not parse. */
static void test_unknown_messages(void **state)
{
    (void)state;
    struct dispatchlease *l = NULL;
    json_t *meta = meta_seen("u", "3", "20", "soon");
    assert_int_equal(dispatchlease_observe(&l, meta, 100000), 1);
    json_decref(meta);
    assert_int_equal(dispatchlease_check(l, 100000, NULL), DISPATCHLEASE_EXPIRED);
    char *m = dispatchlease_wait_message("ray-a-pg", l, 100000);
    assert_string_equal(m, "gang ray-a-pg waits: its dispatch lease (raygate.io/dispatch-lease, lease 20s) counts as run out: when "
                           "it was last renewed is unknown (raygate.io/dispatch-lease-seen did not parse when this gate "
                           "started); it may be admitted again when the dispatcher renews it");
    free(m);
    m = dispatchlease_evict_message("ray-a-pg", l, 100000);
    assert_non_null(
        strstr(m, "gang ray-a-pg evicted: its dispatch lease (raygate.io/dispatch-lease, lease 20s) counts as run out"));
    free(m);
    dispatchlease_mark_recorded(l, 2); /* another counter: still wanted */
    assert_true(dispatchlease_record_wanted(l));
    dispatchlease_mark_recorded(l, 3);
    assert_false(dispatchlease_record_wanted(l));
    assert_null(dispatchlease_record_patch(l, "u", NULL));
    dispatchlease_mark_recorded(NULL, 3); /* NULL is fine */
    assert_false(dispatchlease_record_wanted(NULL));
    dispatchlease_drop(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_observe),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_day_of_renewals),
        cmocka_unit_test(test_seen_parse),
        cmocka_unit_test(test_sight),
        cmocka_unit_test(test_record_never_extends),
        cmocka_unit_test(test_unknown_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
