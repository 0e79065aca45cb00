/*
 * Eviction and requeue on a fake clock: the timeouts (fixture-driven:
 * tests/fixtures/evict/check.json), the backoff sequence, its cap and jitter,
 * the requeue limit, the reset by a spec change, the annotations written and
 * read back, and runs of many checks over simulated days in which a healthy
 * gang is never evicted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evict.h"
#include "fixtures.h"
#include "util.h"

#define S 1000LL
#define MIN (60 * S)
#define HOUR (60 * MIN)
#define DAY (24 * HOUR)
#define T0 1795428000000LL /* 2026-11-23T10:00:00Z */

static int64_t time_of(const char *s)
{
    int64_t ms;
    assert_int_equal(evict_parse_time(s, &ms), 0);
    return ms;
}

/* A time field of a fixture object: 0 when absent or null. */
static int64_t opt_time(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s == NULL ? 0 : time_of(s);
}

/* The defaults with a case's "config" applied as a Queue's annotations would be. */
static void config_from_json(const json_t *j, struct evict_config *cfg)
{
    struct evict_config base;
    struct error err = {{0}};
    evict_config_default(&base);
    assert_int_equal(evict_config_for_queue(&base, json_string_value(json_object_get(j, "placement_timeout")),
                                            json_string_value(json_object_get(j, "pods_ready_timeout")), cfg, &err),
                     0);
    assert_int_equal(evict_config_check(cfg, &err), 0);
}

static void run_check_case(const json_t *c)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    struct evict_config cfg;
    config_from_json(json_object_get(c, "config"), &cfg);
    const json_t *jm = json_object_get(c, "members");
    size_t n = json_array_size(jm);
    struct evict_member *members = util_calloc(n, sizeof(*members));
    for (size_t i = 0; i < n; i++) {
        const json_t *m = json_array_get(jm, i);
        members[i] = (struct evict_member){
            .name = json_string_value(json_object_get(m, "name")),
            .created_ms = opt_time(m, "created"),
            .bound = json_is_true(json_object_get(m, "bound")),
            .ready = json_is_true(json_object_get(m, "ready")),
            .bound_ms = opt_time(m, "bound_at"),
            .ready_change_ms = opt_time(m, "ready_change"),
            .message = json_string_value(json_object_get(m, "message")),
            .refused = json_is_true(json_object_get(m, "refused")),
        };
    }
    struct evict_gang g = {.admitted_ms = opt_time(c, "admitted_at"),
                           .leaving = json_is_true(json_object_get(c, "leaving")),
                           .members = members,
                           .nmembers = n};
    struct evict_verdict v;
    evict_verdict_init(&v);
    evict_check(&cfg, &g, opt_time(c, "now"), &v);

    const json_t *want = json_object_get(c, "want");
    const char *reason = json_string_value(json_object_get(want, "reason"));
    if (strcmp(evict_reason_name(v.reason), reason) != 0)
        fail_msg("%s: reason \"%s\", want \"%s\"", name, evict_reason_name(v.reason), reason);
    const json_t *late = json_object_get(want, "late");
    if (v.nlate != json_array_size(late))
        fail_msg("%s: %zu late members, want %zu", name, v.nlate, json_array_size(late));
    for (size_t i = 0; i < v.nlate; i++) {
        if (strcmp(members[v.late[i]].name, json_string_value(json_array_get(late, i))) != 0)
            fail_msg("%s: late[%zu] is %s", name, i, members[v.late[i]].name);
    }
    if (v.reason == EVICT_REASON_NONE) {
        int64_t recheck = opt_time(want, "recheck");
        if (v.recheck_ms != recheck)
            fail_msg("%s: recheck %lld, want %lld", name, (long long)v.recheck_ms, (long long)recheck);
    }
    evict_verdict_finish(&v);
    free(members);
}

static void test_check_fixtures(void **state)
{
    (void)state;
    json_t *f = fixture_json("evict/check.json");
    const json_t *cases = json_object_get(f, "cases");
    assert_true(json_array_size(cases) >= 10);
    for (size_t i = 0; i < json_array_size(cases); i++)
        run_check_case(json_array_get(cases, i));
    json_decref(f);
}

/* ---------------------------------------------------------- the fake clock */

/* A healthy gang checked every 10 s over 30 days with every timeout on: never evicted. */
static void test_healthy_gang_never_evicted(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    cfg.pods_ready_timeout_ms = 10 * MIN;
    struct evict_member m[3] = {
        {.name = "head", .created_ms = T0 - MIN, .bound = 1, .ready = 1, .bound_ms = T0 + S, .ready_change_ms = T0 + 40 * S},
        {.name = "w-1", .created_ms = T0 - MIN, .bound = 1, .ready = 1, .bound_ms = T0 + S, .ready_change_ms = T0 + 50 * S},
        {.name = "w-2", .created_ms = T0 - MIN, .bound = 1, .ready = 1, .bound_ms = T0 + S, .ready_change_ms = T0 + 55 * S},
    };
    struct evict_gang g = {.admitted_ms = T0, .members = m, .nmembers = 3};
    struct evict_verdict v;
    evict_verdict_init(&v);
    for (int64_t now = T0; now < T0 + 30 * DAY; now += 10 * S) {
        assert_int_equal(evict_check(&cfg, &g, now, &v), EVICT_REASON_NONE);
        assert_int_equal(v.recheck_ms, 0);
    }
    evict_verdict_finish(&v);
}

/* Bound, slow to become Ready: kept with the default flags; with a readiness timeout, evicted exactly at its deadline. */
static void test_slow_ready(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    struct evict_member m[2] = {
        {.name = "head", .created_ms = T0, .bound = 1, .ready = 0, .bound_ms = T0 + 2 * S, .ready_change_ms = T0 + 3 * S},
        {.name = "w-1", .created_ms = T0, .bound = 1, .ready = 0, .bound_ms = T0 + 2 * S, .ready_change_ms = T0 + 3 * S},
    };
    struct evict_gang g = {.admitted_ms = T0 + S, .members = m, .nmembers = 2};
    struct evict_verdict v;
    evict_verdict_init(&v);
    for (int64_t now = T0; now < T0 + 7 * DAY; now += MIN)
        assert_int_equal(evict_check(&cfg, &g, now, &v), EVICT_REASON_NONE);

    cfg.pods_ready_timeout_ms = 20 * MIN;
    int64_t due = T0 + 3 * S + 20 * MIN;
    assert_int_equal(evict_check(&cfg, &g, due - 1, &v), EVICT_REASON_NONE);
    assert_int_equal(v.recheck_ms, due);
    assert_int_equal(evict_check(&cfg, &g, due, &v), EVICT_REASON_PODS_READY_TIMEOUT);
    assert_int_equal(v.nlate, 2);
    assert_int_equal(v.timeout_ms, 20 * MIN);
    evict_verdict_finish(&v);
}

/*
 * Recovery, step by step: a gang placed for a day loses a member; its
 * replacement (created later) stays unbound; the gang is evicted exactly at the
 * replacement's creation + the placement timeout, and not before.
 */
static void test_recovery(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    struct evict_member m[2] = {
        {.name = "head", .created_ms = T0, .bound = 1, .ready = 1},
        {.name = "w-1", .created_ms = T0, .bound = 1, .ready = 1},
    };
    struct evict_gang g = {.admitted_ms = T0, .members = m, .nmembers = 2};
    struct evict_verdict v;
    evict_verdict_init(&v);
    int64_t replaced = T0 + DAY;
    for (int64_t now = T0; now < replaced; now += MIN)
        assert_int_equal(evict_check(&cfg, &g, now, &v), EVICT_REASON_NONE);
    m[1] = (struct evict_member){.name = "w-1b", .created_ms = replaced, .bound = 0, .message = "0/4 nodes are available"};
    int64_t now = replaced;
    for (; evict_check(&cfg, &g, now, &v) == EVICT_REASON_NONE; now = v.recheck_ms)
        assert_true(v.recheck_ms > now);
    assert_int_equal(now, replaced + 5 * MIN);
    assert_int_equal(v.reason, EVICT_REASON_PLACEMENT_TIMEOUT);
    assert_int_equal(v.nlate, 1);
    assert_int_equal(v.late[0], 1);

    /* Bound in time instead: kept. */
    m[1].bound = 1;
    m[1].ready = 1;
    assert_int_equal(evict_check(&cfg, &g, replaced + 5 * MIN, &v), EVICT_REASON_NONE);
    evict_verdict_finish(&v);
}

/* ---------------------------------------------------------- backoff and requeue */

static void test_backoff_sequence(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    /* 60s * 2^(n-1), capped at 1h, no jitter with random 0. */
    const int64_t want[] = {60, 120, 240, 480, 960, 1920, 3600, 3600, 3600};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_int_equal(evict_backoff_ms(&cfg, (int64_t)i + 1, 0), want[i] * S);
    /* No overflow, however many evictions. */
    assert_int_equal(evict_backoff_ms(&cfg, 64, UINT32_MAX), HOUR);
    assert_int_equal(evict_backoff_ms(&cfg, INT64_MAX, UINT32_MAX), HOUR);
}

static void test_backoff_jitter(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    /* Jitter in [0, delay / 10): the largest random value stays below delay * 1.1. */
    for (int64_t n = 1; n <= 6; n++) {
        int64_t d = evict_backoff_ms(&cfg, n, 0);
        int64_t hi = evict_backoff_ms(&cfg, n, UINT32_MAX);
        int64_t mid = evict_backoff_ms(&cfg, n, UINT32_MAX / 2);
        assert_true(hi > d);
        assert_true(hi < d + d / 10);
        assert_true(mid > d && mid < hi);
    }
    /* Jitter never passes the cap: 3000s + up to 300s against a 3100s maximum. */
    cfg.backoff_base_ms = 3000 * S;
    cfg.backoff_max_ms = 3100 * S;
    assert_int_equal(evict_backoff_ms(&cfg, 1, 0), 3000 * S);
    assert_int_equal(evict_backoff_ms(&cfg, 1, UINT32_MAX), 3100 * S);
    /* Spread: 1000 random values give distinct delays within the bounds. */
    evict_config_default(&cfg);
    int64_t lo = INT64_MAX, hi = 0;
    uint32_t x = 12345;
    for (int i = 0; i < 1000; i++) {
        x = x * 1664525u + 1013904223u;
        int64_t d = evict_backoff_ms(&cfg, 2, x);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    assert_true(lo >= 120 * S && hi < 132 * S);
    assert_true(hi - lo > 10 * S);
}

static void test_requeue_limit_and_spec_change(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    cfg.requeue_limit = 3;
    struct evict_record r = {0}, next;
    int64_t now = T0, until = 0;
    assert_int_equal(evict_hold(&cfg, &r, 1, now, &until), EVICT_HOLD_NONE);

    /* Evictions 1 and 2 back off (60s, 120s); the third deactivates. */
    const int64_t backoff[] = {60 * S, 120 * S};
    for (int i = 0; i < 2; i++) {
        evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 1, now, 0, &next);
        assert_int_equal(next.count, i + 1);
        assert_int_equal(next.evicted_at_ms, now);
        assert_int_equal(next.requeue_at_ms, now + backoff[i]);
        assert_int_equal(evict_hold(&cfg, &next, 1, now, &until), EVICT_HOLD_BACKOFF);
        assert_int_equal(until, now + backoff[i]);
        assert_int_equal(evict_hold(&cfg, &next, 1, now + backoff[i] - 1, &until), EVICT_HOLD_BACKOFF);
        assert_int_equal(evict_hold(&cfg, &next, 1, now + backoff[i], &until), EVICT_HOLD_NONE);
        r = next;
        now += backoff[i] + 10 * MIN;
    }
    evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 1, now, 0, &next);
    assert_int_equal(next.count, 3);
    assert_int_equal(next.requeue_at_ms, 0);
    assert_int_equal(evict_hold(&cfg, &next, 1, now, &until), EVICT_HOLD_DEACTIVATED);
    assert_int_equal(evict_hold(&cfg, &next, 1, now + 365 * DAY, &until), EVICT_HOLD_DEACTIVATED);
    char *msg = evict_hold_message("ray-x-pg", EVICT_HOLD_DEACTIVATED, &cfg, &next);
    assert_string_equal(
        msg, "gang ray-x-pg is deactivated after 3 evictions (requeue limit 3): change the RayCluster's spec to requeue it");
    free(msg);

    /* The user changes the spec (generation 2): admitted again at once, and the count starts over. */
    assert_int_equal(evict_hold(&cfg, &next, 2, now, &until), EVICT_HOLD_NONE);
    r = next;
    evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 2, now + HOUR, 0, &next);
    assert_int_equal(next.count, 1);
    assert_int_equal(next.generation, 2);
    assert_int_equal(next.requeue_at_ms, now + HOUR + 60 * S);

    /* A spec change also ends a backoff. */
    assert_int_equal(evict_hold(&cfg, &next, 3, now + HOUR, &until), EVICT_HOLD_NONE);

    /* A limit raised by the operator reactivates. */
    cfg.requeue_limit = 4;
    assert_int_equal(evict_hold(&cfg, &r, 1, now + 365 * DAY, &until), EVICT_HOLD_NONE);
    /* No limit: never deactivated. */
    cfg.requeue_limit = 0;
    r = (struct evict_record){0};
    for (int i = 0; i < 100; i++) {
        evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 1, now, 7, &next);
        assert_true(next.requeue_at_ms > now);
        r = next;
    }
    assert_int_equal(r.count, 100);
    assert_int_equal(r.requeue_at_ms, now + HOUR);
}

/* Preempted or reclaimed: no backoff and no count, the reason kept and read back. */
static void test_preempted_no_penalty(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    cfg.requeue_limit = 2;
    struct evict_record r = {0}, next;
    int64_t until = 0;
    evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 1, T0, 0, &r); /* one timeout before */
    assert_int_equal(r.count, 1);
    const enum evict_reason reasons[] = {EVICT_REASON_PREEMPTED, EVICT_REASON_RECLAIMED};
    for (int i = 0; i < 2; i++) {
        evict_record_next(&r, &cfg, reasons[i], 1, T0 + HOUR + 400, 0, &next);
        assert_int_equal(next.count, 1);
        assert_int_equal(next.evicted_at_ms, T0 + HOUR);
        assert_int_equal(next.requeue_at_ms, T0 + HOUR);
        assert_int_equal(next.reason, reasons[i]);
        assert_int_equal(evict_hold(&cfg, &next, 1, T0 + HOUR + 400, &until), EVICT_HOLD_NONE);
        /* Many preemptions never deactivate it. */
        struct evict_record again = next;
        for (int k = 0; k < 10; k++)
            evict_record_next(&again, &cfg, reasons[i], 1, T0 + 2 * HOUR, 0, &again);
        assert_int_equal(again.count, 1);
        assert_int_equal(evict_hold(&cfg, &again, 1, T0 + 2 * HOUR, &until), EVICT_HOLD_NONE);
    }
    /* Another generation: the count starts from 0. */
    evict_record_next(&r, &cfg, EVICT_REASON_PREEMPTED, 2, T0 + HOUR, 0, &next);
    assert_int_equal(next.count, 0);
    assert_string_equal(evict_reason_name(EVICT_REASON_PREEMPTED), "Preempted");
    assert_string_equal(evict_reason_name(EVICT_REASON_RECLAIMED), "Reclaimed");
    json_t *patch = evict_record_patch(&next, "raygate.io/admitted-at", NULL);
    struct evict_record back;
    struct error err = {{0}};
    assert_int_equal(evict_record_parse(json_object_get(json_object_get(patch, "metadata"), "annotations"), &back, &err), 0);
    assert_int_equal(back.reason, EVICT_REASON_PREEMPTED);
    json_decref(patch);
}

static void test_requeue_at_whole_seconds(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    struct evict_record r = {0}, next;
    /* now = T0 + 0.4 s, backoff 60 s + jitter: requeue-at rounds up, evicted-at down. */
    evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 1, T0 + 400, UINT32_MAX / 3, &next);
    assert_int_equal(next.evicted_at_ms, T0);
    assert_int_equal(next.requeue_at_ms % 1000, 0);
    assert_true(next.requeue_at_ms >= T0 + 400 + 60 * S);
    assert_true(next.requeue_at_ms < T0 + 400 + 66 * S + S);
}

/* ---------------------------------------------------------- annotations */

static void test_record_patch_round_trip(void **state)
{
    (void)state;
    struct evict_record rec = {
        .count = 2, .requeue_at_ms = T0 + 120 * S, .evicted_at_ms = T0, .generation = 4, .reason = EVICT_REASON_PLACEMENT_TIMEOUT};
    json_t *p = evict_record_patch(&rec, "raygate.io/admitted-at", "812");
    json_t *want = json_pack("{s:{s:{s:n, s:s, s:s, s:s, s:s, s:s}, s:s}}", "metadata", "annotations", "raygate.io/admitted-at",
                             "raygate.io/requeue-count", "2", "raygate.io/requeue-at", "2026-11-23T10:02:00Z",
                             "raygate.io/evicted-at", "2026-11-23T10:00:00Z", "raygate.io/evicted-generation", "4",
                             "raygate.io/evicted-reason", "PlacementTimeout", "resourceVersion", "812");
    assert_true(json_equal(p, want));
    json_decref(want);

    const json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
    struct evict_record back;
    struct error err = {{0}};
    assert_int_equal(evict_record_parse(ann, &back, &err), 0);
    assert_int_equal(back.count, rec.count);
    assert_int_equal(back.requeue_at_ms, rec.requeue_at_ms);
    assert_int_equal(back.evicted_at_ms, rec.evicted_at_ms);
    assert_int_equal(back.generation, rec.generation);
    assert_int_equal(back.reason, rec.reason);
    json_decref(p);

    /* Deactivated: requeue-at removed; no resourceVersion precondition. */
    rec.requeue_at_ms = 0;
    p = evict_record_patch(&rec, "raygate.io/admitted-at", NULL);
    ann = json_object_get(json_object_get(p, "metadata"), "annotations");
    assert_true(json_is_null(json_object_get(ann, EVICT_ANNOTATION_REQUEUE_AT)));
    assert_null(json_object_get(json_object_get(p, "metadata"), "resourceVersion"));
    json_decref(p);
}

static void test_record_parse(void **state)
{
    (void)state;
    json_t *f = fixture_json("evict/records.json");
    const json_t *cases = json_object_get(f, "cases");
    assert_true(json_array_size(cases) >= 10);
    for (size_t i = 0; i < json_array_size(cases); i++) {
        const json_t *c = json_array_get(cases, i);
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *error = json_string_value(json_object_get(c, "error"));
        const json_t *want = json_object_get(c, "want");
        struct evict_record r = {.count = 99};
        struct error err = {{0}};
        int rc = evict_record_parse(json_object_get(c, "annotations"), &r, &err);
        if (error != NULL) {
            /* Malformed: reads as never evicted (holds nothing back, deletes nothing), and says why. */
            if (rc != -1 || strstr(err.message, error) == NULL || r.count != 0 || r.evicted_at_ms != 0)
                fail_msg("%s: rc %d, \"%s\"", name, rc, err.message);
            assert_int_equal(evict_pod_leftover(0, &r, 1, 0, 1), 0);
            continue;
        }
        const char *reason = json_string_value(json_object_get(want, "reason"));
        if (rc != 0 || r.count != json_integer_value(json_object_get(want, "count")) ||
            r.requeue_at_ms != opt_time(want, "requeue_at") || r.evicted_at_ms != opt_time(want, "evicted_at") ||
            r.generation != json_integer_value(json_object_get(want, "generation")) ||
            strcmp(evict_reason_name((enum evict_reason)r.reason), reason != NULL ? reason : "") != 0)
            fail_msg("%s: rc %d (%s), count %lld", name, rc, err.message, (long long)r.count);
    }
    json_decref(f);
}

/* Queue annotations: durations as the flags take them (flags_parse_duration), within 0..720h; anything else is named and ignored.
 */
static void test_annotation_values(void **state)
{
    (void)state;
    const struct {
        const char *s;
        int64_t ms; /* -1: refused */
    } cases[] = {
        {"0", 0},        {"5m", 5 * MIN},
        {"90s", 90 * S}, {"1h30m", 90 * MIN},
        {"500ms", 500},  {"720h", 720 * HOUR},
        {"", -1},        {"5", -1},
        {"-5m", -1},     {"5x", -1},
        {"1.5h", -1},    {"721h", -1},
        {"5m ", -1},     {"99999999999999999999h", -1},
    };
    struct evict_config base, out;
    evict_config_default(&base);
    base.pods_ready_timeout_ms = 7 * MIN;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct error err = {{0}};
        int rc = evict_config_for_queue(&base, NULL, cases[i].s, &out, &err);
        if (cases[i].ms < 0
                ? rc != -1 || out.pods_ready_timeout_ms != 7 * MIN || strstr(err.message, "raygate.io/pods-ready-timeout") == NULL
                : rc != 0 || out.pods_ready_timeout_ms != cases[i].ms)
            fail_msg("\"%s\": rc %d, %lld ms, \"%s\"", cases[i].s, rc, (long long)out.pods_ready_timeout_ms, err.message);
    }
}

static void test_times(void **state)
{
    (void)state;
    char buf[32];
    assert_int_equal(time_of("2026-11-23T10:00:00Z"), T0);
    assert_int_equal(time_of("2026-11-23T10:00:00.123456Z"), T0);
    assert_string_equal(evict_format_time(T0, buf, sizeof(buf)), "2026-11-23T10:00:00Z");
    assert_string_equal(evict_format_time(T0 + 999, buf, sizeof(buf)), "2026-11-23T10:00:00Z");
    int64_t ms;
    const char *bad[] = {"",
                         "2026-11-23",
                         "2026-11-23T10:00:00",
                         "2026-11-23T10:00:00+01:00",
                         "2026-11-23T10:00:00.Z",
                         "2026-11-23T25:00:00Z",
                         "1969-12-31T23:59:59Z"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (evict_parse_time(bad[i], &ms) != -1)
            fail_msg("\"%s\" parsed", bad[i]);
    }
}

static void test_config(void **state)
{
    (void)state;
    struct evict_config base, out;
    struct error err = {{0}};
    evict_config_default(&base);
    assert_int_equal(evict_config_check(&base, &err), 0);
    assert_int_equal(base.placement_timeout_ms, 5 * MIN);
    assert_int_equal(base.pods_ready_timeout_ms, 0);
    assert_int_equal(base.backoff_base_ms, 60 * S);
    assert_int_equal(base.backoff_max_ms, HOUR);
    assert_int_equal(base.requeue_limit, 0);

    /* The Queue's annotations override the flags. */
    assert_int_equal(evict_config_for_queue(&base, "30s", "15m", &out, &err), 0);
    assert_int_equal(out.placement_timeout_ms, 30 * S);
    assert_int_equal(out.pods_ready_timeout_ms, 15 * MIN);
    assert_int_equal(evict_config_for_queue(&base, "0", NULL, &out, &err), 0);
    assert_int_equal(out.placement_timeout_ms, 0);
    assert_int_equal(out.backoff_base_ms, base.backoff_base_ms);

    /* A bad one is ignored (the flag's value stays) and named. */
    assert_int_equal(evict_config_for_queue(&base, "soon", "10m", &out, &err), -1);
    assert_int_equal(out.placement_timeout_ms, 5 * MIN);
    assert_int_equal(out.pods_ready_timeout_ms, 10 * MIN);
    assert_non_null(strstr(err.message, "raygate.io/placement-timeout: \"soon\""));
    assert_non_null(strstr(err.message, "the flag's value is used"));
    assert_int_equal(evict_config_for_queue(&base, NULL, "-1m", &out, &err), -1);
    assert_non_null(strstr(err.message, "raygate.io/pods-ready-timeout"));
    assert_int_equal(out.pods_ready_timeout_ms, 0);

    /* Inconsistent flags are named. */
    struct evict_config c = base;
    c.backoff_max_ms = 30 * S;
    assert_int_equal(evict_config_check(&c, &err), -1);
    assert_non_null(strstr(err.message, "--requeue-backoff-max"));
    c = base;
    c.backoff_base_ms = 0;
    assert_int_equal(evict_config_check(&c, &err), -1);
    assert_non_null(strstr(err.message, "--requeue-backoff-base"));
    c = base;
    c.requeue_limit = -1;
    assert_int_equal(evict_config_check(&c, &err), -1);
    assert_non_null(strstr(err.message, "--requeue-limit"));
    c = base;
    c.placement_timeout_ms = EVICT_DURATION_MAX_MS + 1;
    assert_int_equal(evict_config_check(&c, &err), -1);
    assert_non_null(strstr(err.message, "--placement-timeout"));
}

/* ---------------------------------------------------------- messages and pods */

static void test_messages(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    struct evict_member m[3] = {
        {.name = "x-head", .created_ms = T0, .bound = 1, .ready = 1},
        {.name = "x-worker-a", .created_ms = T0, .message = "0/4 nodes are available: persistentvolumeclaim \"data\" not found."},
        {.name = "x-worker-b", .created_ms = T0},
    };
    struct evict_gang g = {.admitted_ms = T0, .members = m, .nmembers = 3};
    struct evict_verdict v;
    evict_verdict_init(&v);
    assert_int_equal(evict_check(&cfg, &g, T0 + 5 * MIN, &v), EVICT_REASON_PLACEMENT_TIMEOUT);
    struct evict_record r = {0}, next;
    evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 1, T0 + 5 * MIN, 0, &next);
    char *msg = evict_message("ray-x-pg", &g, &v, &cfg, &next);
    assert_string_equal(msg, "gang ray-x-pg evicted: 2 of 3 members not bound to a node within the placement timeout (5m): "
                             "x-worker-a (0/4 nodes are available: persistentvolumeclaim \"data\" not found.), x-worker-b; "
                             "eviction 1, it may be admitted again at 2026-11-23T10:06:00Z");
    free(msg);
    msg = evict_hold_message("ray-x-pg", EVICT_HOLD_BACKOFF, &cfg, &next);
    assert_string_equal(msg, "gang ray-x-pg was evicted 1 time; it may be admitted again at 2026-11-23T10:06:00Z");
    free(msg);
    assert_null(evict_hold_message("ray-x-pg", EVICT_HOLD_NONE, &cfg, &next));

    /* Deactivated by this eviction. */
    cfg.requeue_limit = 1;
    evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 1, T0 + 5 * MIN, 0, &next);
    msg = evict_message("ray-x-pg", &g, &v, &cfg, &next);
    assert_non_null(strstr(msg, "; eviction 1 reached the requeue limit (1): deactivated until the RayCluster's spec changes"));
    free(msg);
    evict_verdict_finish(&v);
}

/* 300 late members with long scheduler messages: the message stays under the apiserver's 1 KiB, and says how many it left out. */
static void test_message_bounded(void **state)
{
    (void)state;
    struct evict_config cfg;
    evict_config_default(&cfg);
    enum { N = 300 };
    struct evict_member *m = util_calloc(N, sizeof(*m));
    char(*names)[32] = util_calloc(N, sizeof(*names));
    char quote[600];
    memset(quote, 'q', sizeof(quote) - 1);
    quote[sizeof(quote) - 1] = '\0';
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "big-worker-%03d", i);
        m[i] = (struct evict_member){.name = names[i], .created_ms = T0, .message = i % 2 ? quote : "line\nbreak"};
    }
    struct evict_gang g = {.admitted_ms = T0, .members = m, .nmembers = N};
    struct evict_verdict v;
    evict_verdict_init(&v);
    assert_int_equal(evict_check(&cfg, &g, T0 + HOUR, &v), EVICT_REASON_PLACEMENT_TIMEOUT);
    assert_int_equal(v.nlate, N);
    struct evict_record r = {0}, next;
    evict_record_next(&r, &cfg, EVICT_REASON_PLACEMENT_TIMEOUT, 1, T0 + HOUR, 0, &next);
    char *msg = evict_message("ray-big-pg", &g, &v, &cfg, &next);
    assert_true(strlen(msg) < 1024);
    assert_non_null(strstr(msg, "300 of 300 members"));
    assert_non_null(strstr(msg, "big-worker-000 (line break)"));
    assert_non_null(strstr(msg, " more; eviction 1"));
    assert_null(strchr(msg, '\n'));
    free(msg);
    evict_verdict_finish(&v);
    free(names);
    free(m);
}

static void test_leftover_pods(void **state)
{
    (void)state;
    struct evict_record none = {0}, rec = {.count = 1, .requeue_at_ms = T0 + MIN, .evicted_at_ms = T0, .generation = 1};
    /* Not admitted, evicted: ungated or bound live pods go; gated unbound ones (KubeRay's new pods) wait. */
    assert_int_equal(evict_pod_leftover(0, &rec, 1, 0, 0), 1);
    assert_int_equal(evict_pod_leftover(0, &rec, 1, 0, 1), 1);
    assert_int_equal(evict_pod_leftover(0, &rec, 1, 1, 1), 1);
    assert_int_equal(evict_pod_leftover(0, &rec, 1, 1, 0), 0);
    assert_int_equal(evict_pod_leftover(0, &rec, 0, 0, 1), 0);
    /* Admitted again, or never evicted: nothing is a leftover. */
    assert_int_equal(evict_pod_leftover(1, &rec, 1, 0, 1), 0);
    assert_int_equal(evict_pod_leftover(0, &none, 1, 0, 1), 0);
}

static void test_disruption_patch(void **state)
{
    (void)state;
    json_t *p = evict_disruption_patch("gang ray-x-pg evicted", "2026-11-23T10:05:00Z");
    json_t *want =
        json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status", "conditions", "type", "DisruptionTarget", "status", "True",
                  "reason", "EvictionByRaygate", "message", "gang ray-x-pg evicted", "lastTransitionTime", "2026-11-23T10:05:00Z");
    assert_true(json_equal(p, want));
    json_decref(want);
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_fixtures),
        cmocka_unit_test(test_healthy_gang_never_evicted),
        cmocka_unit_test(test_slow_ready),
        cmocka_unit_test(test_recovery),
        cmocka_unit_test(test_backoff_sequence),
        cmocka_unit_test(test_backoff_jitter),
        cmocka_unit_test(test_requeue_limit_and_spec_change),
        cmocka_unit_test(test_requeue_at_whole_seconds),
        cmocka_unit_test(test_preempted_no_penalty),
        cmocka_unit_test(test_record_patch_round_trip),
        cmocka_unit_test(test_record_parse),
        cmocka_unit_test(test_annotation_values),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_message_bounded),
        cmocka_unit_test(test_leftover_pods),
        cmocka_unit_test(test_disruption_patch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
