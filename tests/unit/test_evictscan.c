/*
 * lib/sched/evictscan on the fixtures of tests/fixtures/evictscan/: cache states
 * (cachefixture.h) scanned at given times. Each run says which gangs are
 * evicted (reason, the pods to delete, the record, the message's start),
 * whose eviction is finished (its leftover pods), when to look again, and
 * which queue annotations were refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachefixture.h"
#include "evictscan.h"
#include "fixtures.h"
#include "flags.h"

static int64_t opt_time(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    int64_t ms = 0;
    if (s != NULL && evict_parse_time(s, &ms) != 0)
        fail_msg("bad time %s", s);
    return ms;
}

/* The run's flags: the defaults with "config" (durations as flags take them; partial_timeout is the flag's) applied. */
static void run_config(const json_t *run, struct evict_config *cfg)
{
    struct evict_config base;
    struct error err = {{0}};
    evict_config_default(&base);
    const json_t *j = json_object_get(run, "config");
    const char *partial = json_string_value(json_object_get(j, "partial_timeout"));
    if (partial != NULL && flags_parse_duration(partial, 0, EVICT_DURATION_MAX_MS, &base.partial_timeout_ms, &err) != 0)
        fail_msg("%s", err.message);
    if (evict_config_for_queue(&base, json_string_value(json_object_get(j, "placement_timeout")),
                               json_string_value(json_object_get(j, "pods_ready_timeout")), cfg, &err) != 0)
        fail_msg("%s", err.message);
}

/* Whether the entry's pods are exactly the names in want (order of the cache: creation, then name). */
static void check_pods(const char *what, const struct evictscan_gang *e, const json_t *want)
{
    if (e->npods != json_array_size(want))
        fail_msg("%s: %s has %zu pods to delete, expected %zu", what, e->cluster, e->npods, json_array_size(want));
    for (size_t k = 0; k < e->npods; k++) {
        if (strcmp(e->pods[k].name, json_string_value(json_array_get(want, k))) != 0)
            fail_msg("%s: %s pod %zu is %s", what, e->cluster, k, e->pods[k].name);
        if (strncmp(e->pods[k].uid, "uid-", 4) != 0)
            fail_msg("%s: %s has no uid", what, e->pods[k].name);
    }
}

static void check_evicted(const char *what, const struct evictscan_gang *e, const json_t *w)
{
    check_pods(what, e, json_object_get(w, "pods"));
    if (strcmp(evict_reason_name(e->reason), json_string_value(json_object_get(w, "reason"))) != 0)
        fail_msg("%s: %s evicted for %s", what, e->cluster, evict_reason_name(e->reason));
    assert_int_equal(e->record.count, json_integer_value(json_object_get(w, "count")));
    assert_int_equal(e->record.reason, e->reason);
    assert_string_equal(e->resource_version, "10");
    assert_true(strncmp(e->cluster_uid, "uid-", 4) == 0 && strcmp(e->cluster_uid + 4, e->cluster) == 0);
    int64_t lo = opt_time(w, "requeue_at_min"), hi = opt_time(w, "requeue_at_max");
    if ((lo > 0 && e->record.requeue_at_ms < lo) || (hi > 0 && e->record.requeue_at_ms > hi))
        fail_msg("%s: %s requeue-at %lld out of bounds", what, e->cluster, (long long)e->record.requeue_at_ms);
    const char *msg = json_string_value(json_object_get(w, "message"));
    if (strncmp(e->message, msg, strlen(msg)) != 0)
        fail_msg("%s: message\n  %s\nexpected to start\n  %s", what, e->message, msg);
}

static void check_run(const char *file, const json_t *run, const struct evictscan_result *r)
{
    char what[512];
    snprintf(what, sizeof(what), "%s: %s", file, json_string_value(json_object_get(run, "comment")));
    const json_t *want = json_object_get(run, "want");
    const json_t *ev = json_object_get(want, "evict"), *fin = json_object_get(want, "finish");
    size_t ne = 0, nf = 0;
    for (size_t i = 0; i < r->len; i++) {
        const struct evictscan_gang *e = &r->items[i];
        if (e->reason != EVICT_REASON_NONE) {
            if (ne >= json_array_size(ev))
                fail_msg("%s: %s evicted unexpectedly:\n  %s", what, e->cluster, e->message);
            const json_t *w = json_array_get(ev, ne++);
            if (strcmp(e->cluster, json_string_value(json_object_get(w, "cluster"))) != 0)
                fail_msg("%s: evicted %s", what, e->cluster);
            check_evicted(what, e, w);
        } else {
            if (nf >= json_array_size(fin))
                fail_msg("%s: %s's eviction finished unexpectedly", what, e->cluster);
            const json_t *w = json_array_get(fin, nf++);
            if (strcmp(e->cluster, json_string_value(json_object_get(w, "cluster"))) != 0)
                fail_msg("%s: finished %s", what, e->cluster);
            assert_null(e->message);
            check_pods(what, e, json_object_get(w, "pods"));
        }
    }
    if (ne != json_array_size(ev) || nf != json_array_size(fin))
        fail_msg("%s: %zu evicted and %zu finished, expected %zu and %zu", what, ne, nf, json_array_size(ev), json_array_size(fin));
    /* "next" in whole seconds (RFC 3339), or "next_ms" (Unix ms) for a deadline that is not. */
    int64_t next = json_is_integer(json_object_get(want, "next_ms")) ? json_integer_value(json_object_get(want, "next_ms"))
                                                                     : opt_time(want, "next");
    if (r->next_ms != next)
        fail_msg("%s: next %lld, expected %lld", what, (long long)r->next_ms, (long long)next);
    const json_t *warn = json_object_get(want, "warnings");
    if (r->nwarnings != json_array_size(warn))
        fail_msg("%s: %zu warnings (first: %s)", what, r->nwarnings, r->nwarnings > 0 ? r->warnings[0] : "-");
    for (size_t i = 0; i < r->nwarnings; i++) {
        const char *w = json_string_value(json_array_get(warn, i));
        if (strncmp(r->warnings[i], w, strlen(w)) != 0)
            fail_msg("%s: warning %s", what, r->warnings[i]);
    }
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t n, runs = 0;
    char **files = fixture_list("evictscan", &n);
    assert_true(n >= 3);
    for (size_t i = 0; i < n; i++) {
        json_t *fx = fixture_json(files[i]);
        for (int reverse = 0; reverse < 2; reverse++) {
            struct cache *c = cachefixture_load(fx, reverse);
            size_t k;
            const json_t *run;
            json_array_foreach(json_object_get(fx, "runs"), k, run)
            {
                struct evict_config cfg;
                run_config(run, &cfg);
                struct evictscan_result r;
                evictscan_result_init(&r);
                evictscan_run(c, &cfg, opt_time(run, "now"), opt_time(run, "floor"), (uint32_t)(k * 7919 + 1), &r);
                check_run(files[i], run, &r);
                evictscan_result_finish(&r);
                runs++;
            }
            cache_destroy(c);
        }
        json_decref(fx);
    }
    assert_true(runs >= 14);
    fixture_list_free(files, n);
}

/* The jitter: gangs evicted together get different requeue times from one random number, all within 60 s + 10%. */
static void test_jitter_spreads_gangs(void **state)
{
    (void)state;
    json_t *fx = fixture_json("evictscan/placement.json");
    json_t *rcs = json_object_get(fx, "rayclusters"), *pods = json_object_get(fx, "pods");
    /* Ten copies of "stuck" under other names. */
    json_t *stuck = json_deep_copy(json_array_get(rcs, 0));
    json_t *stuck_pods = json_array();
    for (size_t i = 0; i < 3; i++)
        json_array_append(stuck_pods, json_array_get(pods, i));
    for (int g = 0; g < 10; g++) {
        char name[32];
        snprintf(name, sizeof(name), "stuck-%d", g);
        json_t *rc = json_deep_copy(stuck);
        json_object_set_new(json_object_get(rc, "metadata"), "name", json_string(name));
        json_array_append_new(rcs, rc);
        for (size_t i = 0; i < 3; i++) {
            json_t *p = json_deep_copy(json_array_get(stuck_pods, i));
            json_t *meta = json_object_get(p, "metadata");
            char pname[48];
            snprintf(pname, sizeof(pname), "%s-%zu", name, i);
            json_object_set_new(meta, "name", json_string(pname));
            json_object_set_new(meta, "uid", json_string(pname));
            json_object_set_new(json_object_get(meta, "labels"), "ray.io/cluster", json_string(name));
            json_array_append_new(pods, p);
        }
    }
    struct cache *c = cachefixture_load(fx, 0);
    struct evict_config cfg;
    evict_config_default(&cfg);
    struct evictscan_result r;
    evictscan_result_init(&r);
    int64_t now = 1795428300000LL; /* 10:05:00 */
    assert_int_equal(evictscan_run(c, &cfg, now, 0, 12345, &r), 11);
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < r.len; i++) {
        int64_t at = r.items[i].record.requeue_at_ms;
        assert_true(at >= now + 60000 && at <= now + 66000);
        lo = at < lo ? at : lo;
        hi = at > hi ? at : hi;
    }
    assert_true(hi - lo >= 2000); /* spread, not one instant for all */
    evictscan_result_finish(&r);
    cache_destroy(c);
    json_decref(stuck_pods);
    json_decref(stuck);
    json_decref(fx);
}

/*
 * A running gang (every pod bound and Ready) is passed over without walking its pods (evictscan.h, "Cost"); when
 * one of its pods stops being Ready, the next scans judge it again: a deadline, then the eviction.
 */
static void test_running_gang_judged_again(void **state)
{
    (void)state;
    json_t *fx = fixture_json("evictscan/placement.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct evict_config cfg;
    struct error err = {{0}};
    evict_config_default(&cfg);
    if (evict_config_for_queue(&cfg, "0", "2m", &cfg, &err) != 0) /* stuck's unbound workers are not timed */
        fail_msg("%s", err.message);
    int64_t t1020 = 1795428000000LL + 20 * 60000;
    struct evictscan_result r;
    evictscan_result_init(&r);
    assert_int_equal(evictscan_run(c, &cfg, t1020, 0, 1, &r), 0);
    assert_int_equal(r.len, 0);
    assert_int_equal(r.next_ms, 0);
    evictscan_result_finish(&r);

    json_t *pod = json_deep_copy(json_array_get(json_object_get(fx, "pods"), 4)); /* healthy-w1 */
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")), "healthy-w1");
    json_object_set_new(pod, "status",
                        json_pack("{s:s,s:[{s:s,s:s,s:s},{s:s,s:s,s:s}]}", "phase", "Running", "conditions", "type", "PodScheduled",
                                  "status", "True", "lastTransitionTime", "2026-11-23T10:00:01Z", "type", "Ready", "status",
                                  "False", "lastTransitionTime", "2026-11-23T10:20:00Z"));
    assert_int_equal(cache_upsert_pod(c, pod, &err), 0);
    assert_int_equal(evictscan_run(c, &cfg, t1020 + 60000, 0, 1, &r), 0);
    assert_int_equal(r.next_ms, t1020 + 120000); /* Ready changed at 10:20, 2m */
    evictscan_result_finish(&r);
    assert_int_equal(evictscan_run(c, &cfg, t1020 + 120000, 0, 1, &r), 1);
    assert_string_equal(r.items[0].cluster, "healthy");
    assert_int_equal(r.items[0].reason, EVICT_REASON_PODS_READY_TIMEOUT);
    evictscan_result_finish(&r);
    json_decref(pod);
    cache_destroy(c);
    json_decref(fx);
}

/* Upserts a copy of pod (borrowed) named name, uid "uid-<name>", created at created, its gates gates (NULL: none), unbound. */
static void second_head(struct cache *c, const json_t *pod, const char *name, const char *created, const char *gate)
{
    json_t *p = json_deep_copy(pod);
    json_t *meta = json_object_get(p, "metadata");
    json_object_set_new(meta, "name", json_string(name));
    char uid[64];
    snprintf(uid, sizeof(uid), "uid-%s", name);
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(created));
    json_t *spec = json_object_get(p, "spec");
    json_object_del(spec, "nodeName");
    if (gate != NULL)
        json_object_set_new(spec, "schedulingGates", json_pack("[{s:s}]", "name", gate));
    json_object_set_new(p, "status", json_pack("{s:s}", "phase", "Pending"));
    struct error err = {{0}};
    assert_int_equal(cache_upsert_pod(c, p, &err), 0);
    json_decref(p);
}

/* The scan's entries for cluster: how many, and the pods of the last (its names joined by spaces into out). */
static size_t entries_for(const struct evictscan_result *r, const char *cluster, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = 0; i < r->len; i++) {
        if (strcmp(r->items[i].cluster, cluster) != 0)
            continue;
        k++;
        out[0] = '\0';
        for (size_t j = 0; j < r->items[i].npods; j++)
            snprintf(out + strlen(out), n - strlen(out), "%s%s", j ? " " : "", r->items[i].pods[j].name);
        assert_int_equal(r->items[i].reason, EVICT_REASON_NONE);
        assert_true(r->items[i].surplus);
    }
    return k;
}

/*
 * healthy, admitted and held (--hold-gangs), gets a second head: born
 * ungated it is deleted, the older head kept; gated it waits; not held
 * (gated mode) nothing is deleted. Its workers are never listed.
 */
static void test_surplus_heads(void **state)
{
    (void)state;
    json_t *fx = fixture_json("evictscan/placement.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct evict_config cfg;
    evict_config_default(&cfg);
    const json_t *head = json_array_get(json_object_get(fx, "pods"), 3);
    assert_string_equal(json_string_value(json_object_get(json_object_get(head, "metadata"), "name")), "healthy-head");
    json_t *rc = json_deep_copy(json_array_get(json_object_get(fx, "rayclusters"), 1));
    json_object_set_new(json_object_get(json_object_get(rc, "metadata"), "annotations"), "raygate.io/held-suspended",
                        json_string("true"));
    cachefixture_upsert(c, "rayclusters", rc);
    int64_t t = 1795428000000LL + 60000;
    char names[256];
    struct evictscan_result r;
    evictscan_result_init(&r);
    evictscan_run(c, &cfg, t, 0, 1, &r);
    assert_int_equal(entries_for(&r, "healthy", names, sizeof(names)), 0);
    evictscan_result_finish(&r);

    second_head(c, head, "healthy-head-2", "2026-11-23T10:00:30Z", NULL);
    evictscan_run(c, &cfg, t, 0, 1, &r);
    assert_int_equal(entries_for(&r, "healthy", names, sizeof(names)), 1);
    assert_string_equal(names, "healthy-head-2");
    evictscan_result_finish(&r);

    second_head(c, head, "healthy-head-2", "2026-11-23T10:00:30Z", "raygate.io/gang"); /* gated: it waits */
    evictscan_run(c, &cfg, t, 0, 1, &r);
    assert_int_equal(entries_for(&r, "healthy", names, sizeof(names)), 0);
    evictscan_result_finish(&r);

    second_head(c, head, "healthy-head-2", "2026-11-23T10:00:30Z", NULL);
    json_object_del(json_object_get(json_object_get(rc, "metadata"), "annotations"), "raygate.io/held-suspended");
    cachefixture_upsert(c, "rayclusters", rc); /* not held: as without --hold-gangs, nothing is deleted */
    evictscan_run(c, &cfg, t, 0, 1, &r);
    assert_int_equal(entries_for(&r, "healthy", names, sizeof(names)), 0);
    evictscan_result_finish(&r);
    json_decref(rc);
    cache_destroy(c);
    json_decref(fx);
}

/*
 * A dispatched RayJob's gang evicted for its lease: the RayJob's record
 * carries the lease's sighting, and the RayCluster KubeRay makes again from
 * the RayJob's annotations (another name, another uid, the same counter) is
 * expired at its first sighting: the lease counts from the record, not
 * afresh. Without the sighting in the record it got a new lease and was
 * admitted on the worker while the manager ran it elsewhere.
 */
static void test_rayjob_lease_record(void **state)
{
    (void)state;
    json_t *fx = fixture_json("evictscan/dispatch-lease.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct evict_config cfg;
    evict_config_default(&cfg);
    int64_t t21 = 0, t25 = 0;
    assert_int_equal(evict_parse_time("2026-11-23T10:00:21Z", &t21), 0);
    assert_int_equal(evict_parse_time("2026-11-23T10:00:25Z", &t25), 0);
    struct evictscan_result r;
    evictscan_result_init(&r);
    evictscan_run(c, &cfg, t21, 0, 1, &r);
    const struct evictscan_gang *e = NULL;
    for (size_t i = 0; i < r.len; i++)
        if (strcmp(r.items[i].cluster, "leased") == 0)
            e = &r.items[i];
    assert_non_null(e);
    assert_int_equal(e->reason, EVICT_REASON_DISPATCH_LEASE);
    assert_string_equal(e->lease_seen, "4@2026-11-23T10:00:00.000Z");
    json_t *record = evictscan_rayjob_record(e);
    assert_null(json_object_get(record, "raygate.io/admitted-at"));
    assert_string_equal(json_string_value(json_object_get(record, "raygate.io/dispatch-lease-seen")), e->lease_seen);

    /* KubeRay's new RayCluster: the RayJob's annotations (the lease and the record), another name and uid. */
    json_t *rc = json_deep_copy(json_array_get(json_object_get(fx, "rayclusters"), 0));
    json_t *meta = json_object_get(rc, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "name")), "leased");
    json_object_set_new(meta, "name", json_string("leased-again"));
    json_object_set_new(meta, "uid", json_string("uid-leased-again"));
    json_t *ann = json_object_get(meta, "annotations");
    json_object_del(ann, "raygate.io/admitted-at");
    json_object_update(ann, record);
    cache_set_clock(c, t25);
    cachefixture_upsert(c, "rayclusters", rc);
    const struct cache_gang *g = cache_gang_get(c, "default", "leased-again");
    assert_non_null(g);
    assert_int_equal(dispatchlease_check(g->lease, t25, NULL), DISPATCHLEASE_EXPIRED);
    json_decref(rc);
    json_decref(record);
    evictscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_jitter_spreads_gangs),
        cmocka_unit_test(test_running_gang_judged_again),
        cmocka_unit_test(test_surplus_heads),
        cmocka_unit_test(test_rayjob_lease_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
