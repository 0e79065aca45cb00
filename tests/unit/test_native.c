/*
 * gate/apply/native.c: the native gang step's state and writes. What the watch of
 * native PodGroups delivers (native_record) and what native_seen then says;
 * what a decision's gang wants of the step (native_want, on decisions built as
 * admit.c builds them and on a real pass) and which admitted gangs drifted
 * (native_drift), on the cache of tests/fixtures/native/gangs.json; and the
 * writes of native_ensure against the fake API server of fakeapi.h, whose
 * answers (409, 500) the tests script per path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "admit.h"
#include "cachefixture.h"
#include "fakeapi.h"
#include "fixtures.h"
#include "log.h"
#include "native.h"
#include "util.h"

#define NS "team-a"
#define WORKLOADS NATIVEGANG_API "/namespaces/" NS "/workloads"
#define PODGROUPS NATIVEGANG_API "/namespaces/" NS "/podgroups"

static json_t *fx; /* tests/fixtures/native/gangs.json */

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static long long num(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static const char *op_name(enum nativegang_op op)
{
    return op == NATIVEGANG_NONE ? "NONE" : op == NATIVEGANG_CREATE ? "CREATE" : op == NATIVEGANG_PATCH ? "PATCH" : "?";
}

/* ------------------------------------------------------------------ what the watch saw */

static enum kube_watch_event event_named(const char *s)
{
    return strcmp(s, "DELETED") == 0 ? KUBE_WATCH_DELETED : strcmp(s, "MODIFIED") == 0 ? KUBE_WATCH_MODIFIED : KUBE_WATCH_ADDED;
}

/* Records each PodGroup of objects (borrowed) as ADDED. */
static void record_all(struct native *n, const json_t *objects)
{
    size_t i;
    const json_t *o;
    json_array_foreach(objects, i, o)
    {
        native_record(n, KUBE_WATCH_ADDED, o);
    }
}

/* Fails unless native_seen of key ("ns/name") is want (borrowed: {minCount, scheduled, message}; null: unseen). */
static void assert_seen(const char *about, const struct native *n, const char *key, const json_t *want)
{
    char ns[64];
    const char *slash = strchr(key, '/');
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
    struct nativegang_seen seen = {.min_count = -7, .scheduled = -7, .message = "unset"};
    int rc = native_seen(n, ns, slash + 1, &seen);
    if (json_is_null(want)) {
        if (rc != -1)
            fail_msg("%s: %s: native_seen %d (minCount %lld), want -1: unseen", about, key, rc, (long long)seen.min_count);
        return;
    }
    const char *message = str(want, "message");
    if (rc != 0 || seen.min_count != num(want, "minCount") || seen.scheduled != num(want, "scheduled") ||
        !util_streq(seen.message, message))
        fail_msg("%s: %s: native_seen %d: minCount %lld scheduled %d message %s; want minCount %lld scheduled %lld message %s",
                 about, key, rc, (long long)seen.min_count, seen.scheduled, seen.message ? seen.message : "(null)",
                 num(want, "minCount"), num(want, "scheduled"), message ? message : "(null)");
}

/* The fixture's "record": watch events one after another, and what native_seen says after each. */
static void test_record(void **state)
{
    (void)state;
    struct native *n = native_create(NATIVE_AUTO);
    size_t i;
    const json_t *step;
    json_array_foreach(json_object_get(fx, "record"), i, step)
    {
        native_record(n, event_named(str(step, "event")), json_object_get(step, "object"));
        const char *key;
        json_t *want;
        json_object_foreach(json_object_get(step, "seen"), key, want)
        {
            assert_seen(str(step, "about"), n, key, want);
        }
    }
    native_destroy(n);
    native_destroy(NULL);
}

/* ------------------------------------------------------------------ what a decision wants */

/* Fails unless w is want (borrowed: {op, name, minCount, priorityClass, ownerApiVersion, ownerKind, ownerName, ownerUid}). */
static void assert_want(const char *about, const struct native_want *w, const json_t *want)
{
    const struct nativegang_spec *s = &w->spec;
    if (strcmp(op_name(w->op), str(want, "op")) != 0 || !util_streq(s->namespace_, NS) || !util_streq(s->name, str(want, "name")) ||
        s->min_count != num(want, "minCount") || !util_streq(s->priority_class, str(want, "priorityClass")) ||
        !util_streq(s->owner_api_version, str(want, "ownerApiVersion")) || !util_streq(s->owner_kind, str(want, "ownerKind")) ||
        !util_streq(s->owner_name, str(want, "ownerName")) || !util_streq(s->owner_uid, str(want, "ownerUid"))) {
        char *text = json_dumps(want, JSON_COMPACT);
        fail_msg("%s: got %s %s/%s minCount %lld priority class %s owner %s %s %s %s; want %s", about, op_name(w->op),
                 s->namespace_, s->name, (long long)s->min_count, s->priority_class != NULL ? s->priority_class : "(none)",
                 s->owner_api_version, s->owner_kind, s->owner_name, s->owner_uid, text);
    }
}

/* An ADMIT of cluster's gang releasing all its pods, built as admit.c builds one, into res. */
static const struct admit_decision *admit_of(struct cache *c, struct admit_result *res, const char *cluster)
{
    struct cache_gang *g = cache_gang_get(c, NS, cluster);
    if (g == NULL)
        fail_msg("no gang %s/%s in the fixture", NS, cluster);
    struct admit_decision *d = admit_result_add(res, ADMIT_ACTION_ADMIT, ADMIT_REASON_NONE, g, NULL);
    const struct cache_pod *p;
    cache_gang_for_each_pod(p, g) {
        admit_result_add_pod(res, d, p);
    }
    assert_true(d->npods >= 2);
    return d;
}

/* The fixture's "want": for each case, a native state (enabled or not, the PodGroups seen) and an ADMIT of one gang. */
static void test_want(void **state)
{
    (void)state;
    struct cache *c = cachefixture_load(fx, 0);
    size_t i;
    const json_t *tc;
    json_array_foreach(json_object_get(fx, "want"), i, tc)
    {
        const char *about = str(tc, "about");
        struct native *n = native_create(NATIVE_AUTO);
        if (json_is_true(json_object_get(tc, "enabled")))
            native_set_enabled(n);
        record_all(n, json_object_get(tc, "seen"));
        struct admit_result res;
        admit_result_init(&res);
        const struct admit_decision *d = admit_of(c, &res, str(tc, "cluster"));
        struct native_want w = {.op = NATIVEGANG_PATCH};
        int got = native_want(n, c, d, &w);
        const json_t *want = json_object_get(tc, "want");
        if (got != (json_is_null(want) ? 0 : 1))
            fail_msg("%s: native_want returned %d", about, got);
        if (got)
            assert_want(about, &w, want);
        else if (w.spec.name != NULL || w.op != NATIVEGANG_NONE)
            fail_msg("%s: no want, yet out was filled (%s %s)", about, op_name(w.op), w.spec.name);
        native_want_finish(&w);
        assert_null(w.spec.name);
        admit_result_finish(&res);
        native_destroy(n);
    }
    cache_destroy(c);
}

/* The fixture's "pass": a real admission pass, its ADMIT decisions (pods by uid) and what each wants, nothing seen. */
static void test_want_from_pass(void **state)
{
    (void)state;
    struct cache *c = cachefixture_load(fx, 0);
    struct admit *a = admit_create(c);
    struct admit_result res;
    admit_result_init(&res);
    admit_pass(a, ADMIT_PASS_FULL, &res);
    struct native *n = native_create(NATIVE_ON);
    native_set_enabled(n);
    const json_t *expect = json_object_get(json_object_get(fx, "pass"), "ADMIT");
    size_t admits = 0;
    for (size_t i = 0; i < res.len; i++) {
        const struct admit_decision *d = &res.items[i];
        if (d->action != ADMIT_ACTION_ADMIT)
            continue;
        const json_t *want = json_object_get(expect, d->cluster);
        if (want == NULL)
            fail_msg("an ADMIT of %s the fixture does not expect", d->cluster);
        admits++;
        struct native_want w;
        int got = native_want(n, c, d, &w);
        const char *op = got ? op_name(w.op) : NULL;
        if (!util_streq(op, json_string_value(want)))
            fail_msg("ADMIT of %s: want %s, expected %s", d->cluster, op ? op : "none",
                     json_is_null(want) ? "none" : json_string_value(want));
        native_want_finish(&w);
    }
    assert_int_equal(admits, json_object_size(expect));
    native_destroy(n);
    admit_result_finish(&res);
    admit_destroy(a);
    cache_destroy(c);
}

/* The fixture's "drift": of the admitted gangs, those whose pods name their group seen with another minCount. */
static void test_drift(void **state)
{
    (void)state;
    struct cache *c = cachefixture_load(fx, 0);
    const json_t *drift = json_object_get(fx, "drift"), *want = json_object_get(drift, "want");
    struct native *n = native_create(NATIVE_AUTO);
    record_all(n, json_object_get(drift, "seen"));
    struct native_want out[8];
    memset(out, 0, sizeof(out));
    assert_int_equal(native_drift(n, c, out, 8), 0); /* not enabled */

    native_set_enabled(n);
    size_t k = native_drift(n, c, out, 8);
    assert_int_equal(k, json_array_size(want));
    for (size_t i = 0; i < k; i++) {
        assert_want(str(drift, "about"), &out[i], json_array_get(want, i));
        native_want_finish(&out[i]);
    }
    assert_int_equal(native_drift(n, c, out, 0), 0); /* at most max */

    /* A Failed pod that named the group of drifted-plain (whose live pods name none) makes no drift. */
    json_t *dead =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:{s:s}, s:i, s:[{s:s}]}, s:{s:s}}", "apiVersion", "v1",
                  "kind", "Pod", "metadata", "name", "drifted-plain-old", "namespace", NS, "uid", "uid-drifted-plain-old",
                  "creationTimestamp", "2026-01-10T10:00:00Z", "labels", "ray.io/cluster", "drifted-plain", "volcano.sh/queue-name",
                  "q", "ray.io/node-type", "worker", "spec", "schedulingGroup", "podGroupName", "ray-drifted-plain-pg", "priority",
                  9, "containers", "name", "ray", "status", "phase", "Failed");
    struct error err = {{0}};
    assert_int_equal(cache_upsert_pod(c, dead, &err), 0);
    json_decref(dead);
    k = native_drift(n, c, out, 8);
    assert_int_equal(k, json_array_size(want));
    for (size_t i = 0; i < k; i++)
        native_want_finish(&out[i]);

    /* The watch then shows the patch: no drift left. */
    for (size_t i = 0; i < json_array_size(want); i++) {
        json_t *pg =
            json_pack("{s:{s:s, s:s}, s:{s:{s:{s:I}}}}", "metadata", "name", str(json_array_get(want, i), "name"), "namespace", NS,
                      "spec", "schedulingPolicy", "gang", "minCount", (json_int_t)num(json_array_get(want, i), "minCount"));
        native_record(n, KUBE_WATCH_MODIFIED, pg);
        json_decref(pg);
    }
    assert_int_equal(native_drift(n, c, out, 8), 0);
    native_destroy(n);
    cache_destroy(c);
}

/* ------------------------------------------------------------------ writes */

struct api {
    json_t *state;
    struct fake *f;
    struct kube_client *k;
    int leading, asked;
};

static int api_setup(void **state)
{
    struct api *w = calloc(1, sizeof(*w));
    w->state = fake_cluster_state_new();
    struct kube_client_options o = {.backoff_base_ms = 1, .backoff_max_ms = 1};
    w->f = fake_cluster_start(w->state, &w->k, &o);
    w->leading = 1;
    *state = w;
    return 0;
}

static int api_teardown(void **state)
{
    struct api *w = *state;
    fake_cluster_stop(w->f, w->k, w->state);
    free(w);
    return 0;
}

static int may_write(void *arg)
{
    struct api *w = arg;
    w->asked++;
    return w->leading;
}

/* The fake's next answers to writes of path: codes (steals). */
static void script(struct api *w, const char *path, json_t *codes)
{
    pthread_mutex_lock(&w->f->lock);
    json_object_set_new(json_object_get(w->state, "script"), path, codes);
    pthread_mutex_unlock(&w->f->lock);
}

/* Three gangs' specs: a RayCluster's, a RayJob's, another RayCluster's. */
static const struct nativegang_spec specs[] = {
    {.namespace_ = NS,
     .name = "ray-a-pg",
     .min_count = 3,
     .priority_class = "high",
     .owner_api_version = "ray.io/v1",
     .owner_kind = "RayCluster",
     .owner_name = "a",
     .owner_uid = "uid-a"},
    {.namespace_ = NS,
     .name = "ray-job-pg",
     .min_count = 2,
     .owner_api_version = "ray.io/v1",
     .owner_kind = "RayJob",
     .owner_name = "job",
     .owner_uid = "uid-job"},
    {.namespace_ = NS,
     .name = "ray-c-pg",
     .min_count = 5,
     .priority_class = "low",
     .owner_api_version = "ray.io/v1",
     .owner_kind = "RayCluster",
     .owner_name = "c",
     .owner_uid = "uid-c"},
};

/* The body of request i of log (new reference); fails unless it is method on target. */
static json_t *request(json_t *log, size_t i, const char *method, const char *target)
{
    if (i >= json_array_size(log))
        fail_msg("request %zu: none (%zu made), want %s %s", i, json_array_size(log), method, target);
    if (strcmp(log_field(log, i, "method"), method) != 0 || strcmp(log_field(log, i, "target"), target) != 0)
        fail_msg("request %zu: %s %s, want %s %s", i, log_field(log, i, "method"), log_field(log, i, "target"), method, target);
    json_t *body = json_loads(log_field(log, i, "body"), 0, NULL);
    assert_non_null(body);
    return body;
}

/* The gang's minCount in a Workload, a PodGroup or a minCount patch (borrowed body); -1 when absent. */
static long long min_count_of(const json_t *body)
{
    const json_t *spec = json_object_get(body, "spec"), *templates = json_object_get(spec, "podGroupTemplates");
    const json_t *policy = templates != NULL ? json_object_get(json_array_get(templates, 0), "schedulingPolicy")
                                             : json_object_get(spec, "schedulingPolicy");
    const json_t *v = json_object_get(json_object_get(policy, "gang"), "minCount");
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

/* Fails unless body (stolen) is a kind of s's gang, with its name, minCount and controller. */
static void assert_object(json_t *body, const char *kind, const struct nativegang_spec *s)
{
    const json_t *meta = json_object_get(body, "metadata");
    const json_t *refs = json_object_get(meta, "ownerReferences"), *ref = json_array_get(refs, 0);
    assert_string_equal(str(body, "kind"), kind);
    assert_string_equal(str(meta, "name"), s->name);
    assert_string_equal(str(meta, "namespace"), s->namespace_);
    assert_int_equal(min_count_of(body), s->min_count);
    assert_int_equal(json_array_size(refs), 1);
    assert_string_equal(str(ref, "apiVersion"), s->owner_api_version);
    assert_string_equal(str(ref, "kind"), s->owner_kind);
    assert_string_equal(str(ref, "name"), s->owner_name);
    assert_string_equal(str(ref, "uid"), s->owner_uid);
    assert_true(json_is_true(json_object_get(ref, "controller")));
    json_decref(body);
}

/* Fails unless request i of log is the merge patch of s's PodGroup to s's minCount. */
static void assert_patch(json_t *log, size_t i, const struct nativegang_spec *s)
{
    char target[256];
    snprintf(target, sizeof(target), "%s/%s", PODGROUPS, s->name);
    json_t *body = request(log, i, "PATCH", target), *want = nativegang_min_count_patch(s->min_count);
    assert_string_equal(log_field(log, i, "content_type"), "application/merge-patch+json");
    assert_int_equal(min_count_of(body), s->min_count);
    assert_true(json_equal(body, want));
    json_decref(body);
    json_decref(want);
}

/* CREATE: the Workload, then the PodGroup, both controlled by the gang's owner (a RayJob's: the RayJob). */
static void test_ensure_create(void **state)
{
    struct api *w = *state;
    for (size_t s = 0; s < 2; s++) {
        enum nativegang_op ops[] = {NATIVEGANG_CREATE};
        int ok[] = {-1};
        native_ensure(w->k, &specs[s], ops, 1, ok, may_write, w);
        assert_int_equal(ok[0], 1);
        json_t *log = fake_log(w->f);
        assert_int_equal(json_array_size(log), 2 * (s + 1));
        assert_object(request(log, 2 * s, "POST", WORKLOADS), "Workload", &specs[s]);
        assert_object(request(log, 2 * s + 1, "POST", PODGROUPS), "PodGroup", &specs[s]);
        json_decref(log);
    }
}

/* CREATE of a PodGroup that exists (409): patched to the gang's minCount, and that is a success. */
static void test_ensure_conflict(void **state)
{
    struct api *w = *state;
    script(w, PODGROUPS, json_pack("[i]", 409));
    enum nativegang_op ops[] = {NATIVEGANG_CREATE};
    int ok[] = {-1};
    native_ensure(w->k, &specs[0], ops, 1, ok, NULL, NULL);
    assert_int_equal(ok[0], 1);
    json_t *log = fake_log(w->f);
    assert_int_equal(json_array_size(log), 3);
    json_decref(request(log, 0, "POST", WORKLOADS));
    json_decref(request(log, 1, "POST", PODGROUPS));
    assert_patch(log, 2, &specs[0]);
    json_decref(log);
}

/* ensure's one call on specs[0] with op, after which ok must be 0 and the fake have answered made requests in all. */
static void ensure_fails(struct api *w, enum nativegang_op op, size_t made)
{
    int ok[] = {-1};
    native_ensure(w->k, &specs[0], &op, 1, ok, may_write, w);
    if (ok[0] != 0)
        fail_msg("%s: ok %d after a failed write", op_name(op), ok[0]);
    json_t *log = fake_log(w->f);
    assert_int_equal(json_array_size(log), made);
    json_decref(log);
}

/* A failed write of the PodGroup (its POST, the patch after a 409, a PATCH) is no success. */
static void test_ensure_failure(void **state)
{
    struct api *w = *state;
    char one[256];
    snprintf(one, sizeof(one), "%s/%s", PODGROUPS, specs[0].name);
    script(w, PODGROUPS, json_pack("[i]", 500));
    ensure_fails(w, NATIVEGANG_CREATE, 2); /* the Workload, the PodGroup: no patch */
    script(w, PODGROUPS, json_pack("[i]", 409));
    script(w, one, json_pack("[i]", 500));
    ensure_fails(w, NATIVEGANG_CREATE, 5);
    script(w, one, json_pack("[i]", 500));
    ensure_fails(w, NATIVEGANG_PATCH, 6);
    json_t *log = fake_log(w->f);
    assert_patch(log, 4, &specs[0]);
    assert_patch(log, 5, &specs[0]);
    json_decref(log);
}

/* A failed write of the Workload (not 409) is no success either, and no PodGroup is written without it. */
static void test_ensure_workload_failure(void **state)
{
    struct api *w = *state;
    script(w, WORKLOADS, json_pack("[i]", 500));
    ensure_fails(w, NATIVEGANG_CREATE, 1); /* the Workload only */
    script(w, WORKLOADS, json_pack("[i]", 409));
    enum nativegang_op op = NATIVEGANG_CREATE;
    int ok[] = {-1};
    native_ensure(w->k, &specs[0], &op, 1, ok, NULL, NULL);
    assert_int_equal(ok[0], 1); /* an existing Workload is fine: the PodGroup is written */
    json_t *log = fake_log(w->f);
    assert_int_equal(json_array_size(log), 3);
    json_decref(request(log, 2, "POST", PODGROUPS));
    json_decref(log);
}

/* One call: a NONE costs no request; a CREATE and a PATCH are written; all ok. */
static void test_ensure_mixed(void **state)
{
    struct api *w = *state;
    enum nativegang_op ops[] = {NATIVEGANG_NONE, NATIVEGANG_CREATE, NATIVEGANG_PATCH};
    int ok[] = {-1, -1, -1};
    native_ensure(w->k, specs, ops, 3, ok, may_write, w);
    assert_int_equal(ok[0], 1);
    assert_int_equal(ok[1], 1);
    assert_int_equal(ok[2], 1);
    json_t *log = fake_log(w->f);
    assert_int_equal(json_array_size(log), 3);
    assert_object(request(log, 0, "POST", WORKLOADS), "Workload", &specs[1]);
    assert_object(request(log, 1, "POST", PODGROUPS), "PodGroup", &specs[1]);
    assert_patch(log, 2, &specs[2]);
    json_decref(log);

    /* Nothing but NONEs: no request at all. */
    enum nativegang_op none[] = {NATIVEGANG_NONE, NATIVEGANG_NONE};
    int ok2[] = {-1, -1};
    native_ensure(w->k, specs, none, 2, ok2, may_write, w);
    assert_int_equal(ok2[0], 1);
    assert_int_equal(ok2[1], 1);
    log = fake_log(w->f);
    assert_int_equal(json_array_size(log), 3);
    json_decref(log);
}

/* Not leading: no request; what needed a write is not ok (its gates stay), what needed none is. */
static void test_ensure_not_leading(void **state)
{
    struct api *w = *state;
    w->leading = 0;
    enum nativegang_op ops[] = {NATIVEGANG_NONE, NATIVEGANG_CREATE, NATIVEGANG_PATCH};
    int ok[] = {-1, -1, -1};
    native_ensure(w->k, specs, ops, 3, ok, may_write, w);
    assert_int_equal(w->asked, 1);
    assert_int_equal(ok[0], 1);
    assert_int_equal(ok[1], 0);
    assert_int_equal(ok[2], 0);
    json_t *log = fake_log(w->f);
    assert_int_equal(json_array_size(log), 0);
    json_decref(log);
}

static int group_setup(void **state)
{
    (void)state;
    fx = fixture_json("native/gangs.json");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    json_decref(fx);
    return 0;
}

int main(void)
{
    log_set_level(LOG_LEVEL_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_want),
        cmocka_unit_test(test_want_from_pass),
        cmocka_unit_test(test_drift),
        cmocka_unit_test_setup_teardown(test_ensure_create, api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_ensure_conflict, api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_ensure_failure, api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_ensure_workload_failure, api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_ensure_mixed, api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_ensure_not_leading, api_setup, api_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
