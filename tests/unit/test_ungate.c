/*
 * gate/apply/ungate.c: gate removal against the fake API server of fakeapi.h, whose
 * pods keep their schedulingGates and resourceVersion like the real one
 * (a merge patch with a stale resourceVersion gets 409), and whose answers
 * each test scripts per pod: errors, cut connections, changes under our feet.
 * And the spread bookkeeping and the owner verdict (pure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "log.h"
#include "ungate.h"
#include "ungatepace.h"
#include "names.h"

#define GATE NAMES_GATE
#define PODS_PATH "/api/v1/namespaces/ray/pods/"

/*
 * The fake's pods (f->arg): name -> {"uid", "rv" (int), "gates" [...],
 * "script" [...], "removed_ms", "patches"}. A script entry is the answer to the
 * pod's next PATCH: a status code (429 comes with Retry-After: 0), "cut"
 * (close without an answer), "apply-cut" (apply, then close without an
 * answer), "bump" (the pod changes first: the PATCH's resourceVersion is
 * stale). With the script spent, a PATCH is applied as the API server does.
 */
static json_t *pods_new(void)
{
    return json_object();
}

static void pod_add(json_t *pods, const char *name, int rv, json_t *script_new)
{
    json_object_set_new(pods, name,
                        json_pack("{s:s+,s:i,s:[{s:s},{s:s}],s:o,s:I,s:i}", "uid", "uid-", name, "rv", rv, "gates", "name",
                                  "other.io/x", "name", GATE, "script", script_new, "removed_ms", (json_int_t)-1, "patches", 0));
}

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *pod_json(const char *name, json_t *p)
{
    char rv[32];
    snprintf(rv, sizeof(rv), "%lld", (long long)json_integer_value(json_object_get(p, "rv")));
    return json_pack("{s:s,s:{s:s,s:s,s:O,s:s},s:{s:O}}", "kind", "Pod", "metadata", "name", name, "namespace", "ray", "uid",
                     json_object_get(p, "uid"), "resourceVersion", rv, "spec", "schedulingGates", json_object_get(p, "gates"));
}

static int has_gate(json_t *gates)
{
    size_t i;
    json_t *g;
    json_array_foreach(gates, i, g) if (strcmp(json_string_value(json_object_get(g, "name")), GATE) == 0) return 1;
    return 0;
}

/* Applies a merge patch's schedulingGates as the API server would: 409 on a stale resourceVersion. Returns the status. */
static int apply(json_t *p, json_t *patch)
{
    const char *want = json_string_value(json_object_get(json_object_get(patch, "metadata"), "resourceVersion"));
    char rv[32];
    snprintf(rv, sizeof(rv), "%lld", (long long)json_integer_value(json_object_get(p, "rv")));
    if (want == NULL || strcmp(want, rv) != 0)
        return 409;
    json_t *gates = json_object_get(json_object_get(patch, "spec"), "schedulingGates");
    if (gates != NULL) {
        int had = has_gate(json_object_get(p, "gates"));
        json_object_set(p, "gates", gates);
        if (had && !has_gate(gates))
            json_object_set_new(p, "removed_ms", json_integer(mono_ms()));
    }
    json_object_set_new(p, "rv", json_integer(json_integer_value(json_object_get(p, "rv")) + 1));
    return 200;
}

static int pods_handler(struct fake *f, const struct fake_req *req)
{
    json_t *pods = f->arg;
    if (strncmp(req->target, PODS_PATH, strlen(PODS_PATH)) != 0) {
        respond_status(req, 404, "NotFound", "no such path", NULL);
        return 0;
    }
    const char *name = req->target + strlen(PODS_PATH);
    pthread_mutex_lock(&f->lock);
    json_t *p = json_object_get(pods, name);
    if (p == NULL) {
        pthread_mutex_unlock(&f->lock);
        respond_status(req, 404, "NotFound", "pods not found", NULL);
        return 0;
    }
    if (strcmp(req->method, "GET") == 0) {
        json_t *body = pod_json(name, p);
        pthread_mutex_unlock(&f->lock);
        respond_json(req, 200, NULL, body);
        return 0;
    }
    json_object_set_new(p, "patches", json_integer(json_integer_value(json_object_get(p, "patches")) + 1));
    json_t *script = json_object_get(p, "script");
    json_t *step = json_incref(json_array_get(script, 0));
    json_array_remove(script, 0);
    json_t *patch = json_loadb(req->body, req->body_len, 0, NULL);
    int keep = 0;
    if (json_is_integer(step)) {
        int code = (int)json_integer_value(step);
        pthread_mutex_unlock(&f->lock);
        respond_status(req, code, code == 429 ? "TooManyRequests" : "InternalError", "scripted failure",
                       code == 429 ? "Retry-After: 0\r\n" : NULL);
    } else if (step != NULL && strcmp(json_string_value(step), "cut") == 0) {
        pthread_mutex_unlock(&f->lock);
        keep = -1;
    } else {
        const char *s = step != NULL ? json_string_value(step) : "";
        if (strcmp(s, "bump") == 0)
            json_object_set_new(p, "rv", json_integer(json_integer_value(json_object_get(p, "rv")) + 1));
        int st = apply(p, patch);
        json_t *body = pod_json(name, p);
        pthread_mutex_unlock(&f->lock);
        if (strcmp(s, "apply-cut") == 0) {
            keep = -1;
            json_decref(body);
        } else if (st == 409) {
            json_decref(body);
            respond_status(req, 409, "Conflict", "the object has been modified; please apply your changes to the latest version",
                           NULL);
        } else {
            respond_json(req, st, NULL, body);
        }
    }
    json_decref(patch);
    json_decref(step);
    return keep;
}

/* The fake's view of pod name (under its lock): field as an integer. */
static long long pod_int(struct fake *f, const char *name, const char *field)
{
    pthread_mutex_lock(&f->lock);
    long long v = json_integer_value(json_object_get(json_object_get(f->arg, name), field));
    pthread_mutex_unlock(&f->lock);
    return v;
}

static int pod_gated(struct fake *f, const char *name)
{
    pthread_mutex_lock(&f->lock);
    int g = has_gate(json_object_get(json_object_get(f->arg, name), "gates"));
    pthread_mutex_unlock(&f->lock);
    return g;
}

/* The admit_pods the controller would pass: names, uids and the resourceVersions its cache saw. */
struct gang {
    size_t n;
    struct admit_pod pods[8];
    struct ungate_job jobs[8];
    char names[8][16], uids[8][24], rvs[8][16];
};

static void gang_init(struct gang *g, size_t n, const char *const *names, const int *rvs)
{
    memset(g, 0, sizeof(*g));
    g->n = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(g->names[i], sizeof(g->names[i]), "%s", names[i]);
        snprintf(g->uids[i], sizeof(g->uids[i]), "uid-%s", names[i]);
        snprintf(g->rvs[i], sizeof(g->rvs[i]), "%d", rvs[i]);
        g->pods[i] = (struct admit_pod){.name = g->names[i], .uid = g->uids[i], .resource_version = g->rvs[i]};
        g->pods[i].keep_gates = json_pack("[{s:s}]", "name", "other.io/x");
        g->jobs[i] = (struct ungate_job){.ns = "ray", .pod = &g->pods[i]};
    }
}

static void gang_finish(struct gang *g)
{
    for (size_t i = 0; i < g->n; i++)
        json_decref(g->pods[i].keep_gates);
}

static struct kube_client *client(struct fake *f)
{
    struct kube_client_options o = {.backoff_base_ms = 10, .backoff_max_ms = 20};
    return client_for(f, "tok", NULL, &o);
}

/*
 * The drill's case: a gang admitted, and the API server (just restarted,
 * overloaded) answers its gates' PATCHes with everything but a success:
 * one pod goes through, the others get a 500, a cut connection, a stale
 * resourceVersion after a cut (the cut PATCH was applied), 429s past the
 * client's own retries, a 503 then a pod that changed meanwhile. Every gate
 * must be gone before ungate_pods returns.
 */
static void test_retries_until_gone(void **state)
{
    (void)state;
    json_t *pods = pods_new();
    pod_add(pods, "p0", 10, json_array());
    pod_add(pods, "p1", 10, json_pack("[i,i]", 500, 500));
    pod_add(pods, "p2", 10, json_pack("[s,s]", "cut", "cut"));
    pod_add(pods, "p3", 10, json_pack("[s]", "apply-cut"));
    pod_add(pods, "p4", 10, json_pack("[i,i,i,i,i,i,i,i]", 429, 429, 429, 429, 429, 429, 429, 429));
    pod_add(pods, "p5", 10, json_pack("[i,s,s]", 503, "bump", "bump"));
    struct fake *f = fake_start(pods_handler, pods);
    struct kube_client *k = client(f);
    static const char *const names[] = {"p0", "p1", "p2", "p3", "p4", "p5"};
    static const int rvs[] = {10, 10, 10, 10, 10, 10};
    struct gang g;
    gang_init(&g, 6, names, rvs);

    long long t0 = mono_ms();
    assert_int_equal(ungate_pods(k, g.jobs, g.n, NULL), 0);
    long long t1 = mono_ms();
    for (size_t i = 0; i < g.n; i++) {
        assert_int_equal(g.jobs[i].ok, 1);
        assert_true(g.jobs[i].removed_ms >= t0 && g.jobs[i].removed_ms <= t1);
        assert_false(pod_gated(f, names[i])); /* the API server's own view */
        long long r = pod_int(f, names[i], "removed_ms");
        assert_true(r >= t0 && r <= t1);
    }
    /* Retried within the call (not left to a later pass), as often as it took. */
    assert_true(pod_int(f, "p1", "patches") >= 3);
    assert_true(pod_int(f, "p4", "patches") >= 9);
    /* The other gate stays. */
    json_t *p0 = json_object_get(pods, "p0");
    assert_int_equal(json_array_size(json_object_get(p0, "gates")), 1);

    gang_finish(&g);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(pods);
}

/* Gone pods end the retries: a 404, or a new pod under the same name (not ours to release). */
static void test_gone(void **state)
{
    (void)state;
    json_t *pods = pods_new();
    pod_add(pods, "p0", 10, json_array());
    pod_add(pods, "p1", 10, json_array());
    struct fake *f = fake_start(pods_handler, pods);
    struct kube_client *k = client(f);
    static const char *const names[] = {"p0", "p1", "missing"};
    static const int rvs[] = {10, 9, 10};
    struct gang g;
    gang_init(&g, 3, names, rvs);
    snprintf(g.uids[1], sizeof(g.uids[1]), "uid-old"); /* p1 was replaced: another uid now */

    assert_int_equal(ungate_pods(k, g.jobs, g.n, NULL), 0);
    assert_true(g.jobs[0].ok && g.jobs[0].removed_ms >= 0);
    assert_true(g.jobs[1].ok && g.jobs[1].removed_ms < 0);
    assert_true(g.jobs[2].ok && g.jobs[2].removed_ms < 0);
    assert_true(pod_gated(f, "p1"));
    assert_int_equal(pod_int(f, "p1", "patches"), 1);

    gang_finish(&g);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(pods);
}

/* What retrying cannot cure is tried a few times; what it can, until the time limit; both then reported. */
static void test_limits(void **state)
{
    (void)state;
    json_t *pods = pods_new();
    json_t *forbidden = json_array(), *down = json_array();
    for (int i = 0; i < 1000; i++) {
        json_array_append_new(forbidden, json_integer(403));
        json_array_append_new(down, json_integer(503));
    }
    pod_add(pods, "p0", 10, forbidden);
    pod_add(pods, "p1", 10, down);
    struct fake *f = fake_start(pods_handler, pods);
    struct kube_client *k = client(f);
    static const char *const names[] = {"p0", "p1"};
    static const int rvs[] = {10, 10};
    struct gang g;
    gang_init(&g, 2, names, rvs);

    long long t0 = mono_ms();
    struct ungate_options o = {.persist_ms = 600, .step_ms = 10};
    assert_int_equal(ungate_pods(k, g.jobs, g.n, &o), 2);
    assert_true(mono_ms() - t0 >= 600); /* the retryable one was retried until the limit */
    assert_false(g.jobs[0].ok);
    assert_false(g.jobs[1].ok);
    assert_int_equal(pod_int(f, "p0", "patches"), UNGATE_HOPELESS_TRIES);
    assert_true(pod_int(f, "p1", "patches") > UNGATE_HOPELESS_TRIES);

    gang_finish(&g);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(pods);
}

static int rounds_left;

static int may_write_twice(void *arg)
{
    (void)arg;
    return rounds_left-- > 0;
}

/* Leadership lost: no more writes, whatever is left. */
static void test_may_write(void **state)
{
    (void)state;
    json_t *pods = pods_new();
    pod_add(pods, "p0", 10, json_pack("[i,i,i,i]", 500, 500, 500, 500));
    struct fake *f = fake_start(pods_handler, pods);
    struct kube_client *k = client(f);
    static const char *const names[] = {"p0"};
    static const int rvs[] = {10};
    struct gang g;
    gang_init(&g, 1, names, rvs);

    rounds_left = 2;
    struct ungate_options o = {.may_write = may_write_twice};
    assert_int_equal(ungate_pods(k, g.jobs, g.n, &o), 1);
    assert_int_equal(pod_int(f, "p0", "patches"), 2);
    assert_true(pod_gated(f, "p0"));

    gang_finish(&g);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(pods);
}

/* --- spread ------------------------------------------------------------------------ */

static void jobs_at(struct ungate_job *jobs, size_t n, const long long *removed)
{
    for (size_t i = 0; i < n; i++) {
        jobs[i].ok = removed[i] != -2;
        jobs[i].removed_ms = removed[i] == -2 ? -1 : removed[i];
    }
}

static void test_spread(void **state)
{
    (void)state;
    struct ungate_spread *s = ungate_spread_create();
    struct ungate_job j[3];

    /* All at once: the spread within the pass. */
    jobs_at(j, 3, (const long long[]){1000, 1040, 1010});
    assert_int_equal(ungate_spread_note(s, "ns", "a", 1, j, 3, 1100), 40);
    assert_int_equal(ungate_spread_pending(s), 0);
    /* A later FINISH of a gang admitted whole (a replaced pod) is no spread. */
    jobs_at(j, 1, (const long long[]){9000});
    assert_int_equal(ungate_spread_note(s, "ns", "a", 0, j, 1, 9000), -1);

    /* Half left behind (-2: not ok): followed until a FINISH removes the rest. */
    jobs_at(j, 3, (const long long[]){2000, -2, -2});
    assert_int_equal(ungate_spread_note(s, "ns", "b", 1, j, 3, 2000), -1);
    assert_int_equal(ungate_spread_pending(s), 1);
    jobs_at(j, 2, (const long long[]){3500, -2});
    assert_int_equal(ungate_spread_note(s, "ns", "b", 0, j, 2, 3500), -1);
    jobs_at(j, 1, (const long long[]){5200});
    assert_int_equal(ungate_spread_note(s, "ns", "b", 0, j, 1, 5200), 3200);
    assert_int_equal(ungate_spread_pending(s), 0);

    /* None removed by the admission: the spread starts at the first one removed. */
    jobs_at(j, 2, (const long long[]){-2, -2});
    assert_int_equal(ungate_spread_note(s, "ns", "c", 1, j, 2, 100), -1);
    jobs_at(j, 2, (const long long[]){700, 750});
    assert_int_equal(ungate_spread_note(s, "ns", "c", 0, j, 2, 800), 50);
    /* A pod gone (404: ok, nothing removed) does not move the end. */
    jobs_at(j, 2, (const long long[]){100, -2});
    assert_int_equal(ungate_spread_note(s, "ns", "d", 1, j, 2, 100), -1);
    jobs_at(j, 1, (const long long[]){-1});
    assert_int_equal(ungate_spread_note(s, "ns", "d", 0, j, 1, 5000), 0);

    /* A new admission of the same name starts over; a gang deleted half released is forgotten after an hour. */
    jobs_at(j, 2, (const long long[]){100, -2});
    assert_int_equal(ungate_spread_note(s, "ns", "e", 1, j, 2, 100), -1);
    jobs_at(j, 2, (const long long[]){200, 210});
    assert_int_equal(ungate_spread_note(s, "ns", "e", 1, j, 2, 300), 10);
    jobs_at(j, 2, (const long long[]){100, -2});
    assert_int_equal(ungate_spread_note(s, "other", "e", 1, j, 2, 100), -1);
    assert_int_equal(ungate_spread_pending(s), 1);
    jobs_at(j, 1, (const long long[]){1});
    assert_int_equal(ungate_spread_note(s, "ns", "z", 1, j, 1, 100 + 3600LL * 1000 + 1), 0);
    assert_int_equal(ungate_spread_pending(s), 0);

    ungate_spread_destroy(s);
    ungate_spread_destroy(NULL);
}

/* --- owner verdict ------------------------------------------------------------------ */

/* A FINISH or TAIL_ADMIT releases pods only of a RayCluster that exists as the cache knows it. */
static void test_owner_verdict(void **state)
{
    (void)state;
    json_t *live = json_pack("{s:{s:s, s:s}}", "metadata", "name", "a", "uid", "u1");
    json_t *deleting =
        json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", "a", "uid", "u1", "deletionTimestamp", "2026-11-23T18:47:31Z");
    assert_int_equal(ungate_owner_verdict(200, live, "u1"), 0);
    assert_int_equal(ungate_owner_verdict(200, live, NULL), 0);
    /* Deleted meanwhile (the cache was behind), recreated under the same name, or going. */
    assert_int_equal(ungate_owner_verdict(404, NULL, "u1"), 1);
    assert_int_equal(ungate_owner_verdict(200, live, "u0"), 1);
    assert_int_equal(ungate_owner_verdict(200, deleting, "u1"), 1);
    assert_int_equal(ungate_owner_verdict(200, deleting, NULL), 1);
    /* Errors tell nothing: the act is tried again by a later pass. */
    assert_int_equal(ungate_owner_verdict(500, NULL, "u1"), -1);
    assert_int_equal(ungate_owner_verdict(429, NULL, "u1"), -1);
    assert_int_equal(ungate_owner_verdict(0, NULL, "u1"), -1);
    assert_int_equal(ungate_owner_verdict(200, NULL, "u1"), -1);
    json_decref(live);
    json_decref(deleting);
}

/* ------------------------------------------------------------------ paced release */

#define BIG 41 /* a head (named last) and 40 workers */

struct big {
    struct admit_pod pods[BIG];
    struct ungate_job jobs[BIG];
    char names[BIG][16], uids[BIG][24];
};

static struct fake *big_start(struct big *b, json_t *pods)
{
    memset(b, 0, sizeof(*b));
    for (size_t i = 0; i < BIG; i++) {
        if (i + 1 == BIG)
            snprintf(b->names[i], sizeof(b->names[i]), "head");
        else
            snprintf(b->names[i], sizeof(b->names[i]), "w%02zu", i);
        snprintf(b->uids[i], sizeof(b->uids[i]), "uid-%s", b->names[i]);
        pod_add(pods, b->names[i], 10, json_array());
        b->pods[i] = (struct admit_pod){.name = b->names[i], .uid = b->uids[i], .resource_version = "10", .head = i + 1 == BIG};
        b->pods[i].keep_gates = json_pack("[{s:s}]", "name", "other.io/x");
        b->jobs[i] = (struct ungate_job){.ns = "ray", .pod = &b->pods[i]};
    }
    return fake_start(pods_handler, pods);
}

static void big_finish(struct big *b)
{
    for (size_t i = 0; i < BIG; i++)
        json_decref(b->pods[i].keep_gates);
}

/* A scheduler that binds per_look of the released pods each time it is asked; each look recorded. */
struct sched {
    size_t per_look, binds, looks;
    size_t released[256]; /* released (n) at each look */
    size_t max_backlog;
};

static size_t sched_bound(void *arg, const struct ungate_job *jobs, const size_t *order, size_t n)
{
    struct sched *s = arg;
    for (size_t i = 0; i < n; i++)
        assert_true(jobs[order[i]].ok); /* only released pods are asked about */
    if (s->looks < 256)
        s->released[s->looks] = n;
    s->looks++;
    s->binds = s->binds + s->per_look < n ? s->binds + s->per_look : n;
    if (n - s->binds > s->max_backlog)
        s->max_backlog = n - s->binds;
    return s->binds;
}

/*
 * With bind feedback, the head's gate goes first and alone, then the workers'
 * in batches that keep the backlog of released, unbound pods bounded (the
 * floor, UNGATEPACE_MIN_BATCH), not all 40 at once.
 */
static void test_paced_head_first(void **state)
{
    (void)state;
    json_t *pods = pods_new();
    struct big b;
    struct fake *f = big_start(&b, pods);
    struct kube_client *k = client(f);
    struct sched s = {.per_look = 2};
    /*
     * No stall or deadline on a slow machine: the batches are the binds' alone.
     * A window of 1 ms keeps the target at the floor whatever the machine's
     * speed: on a busy one the looks spread over more than the rate's span,
     * and a rate of 2 binds per slow look times the default 0.5 s window grew
     * the backlog past the floor.
     */
    struct ungatepace_config pace = {.stall_ms = 600000, .deadline_ms = 600000, .window_ms = 1};
    struct ungate_options o = {.bound = sched_bound, .arg = &s, .pace_tick_ms = 1, .pace = &pace};

    assert_int_equal(ungate_pods(k, b.jobs, BIG, &o), 0);
    long long head_ms = pod_int(f, "head", "removed_ms");
    for (size_t i = 0; i < BIG; i++) {
        assert_true(b.jobs[i].ok);
        assert_false(pod_gated(f, b.names[i]));
        if (i + 1 < BIG)
            assert_true(pod_int(f, b.names[i], "removed_ms") >= head_ms);
    }
    assert_true(s.looks > 3);
    assert_int_equal(s.released[0], 1); /* the head alone */
    assert_int_equal(s.released[1], 1 + UNGATEPACE_MIN_BATCH);
    assert_true(s.max_backlog <= UNGATEPACE_MIN_BATCH);

    big_finish(&b);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(pods);
}

/* Without feedback (bound NULL), every gate goes in one go, the head's first in order. */
static void test_unpaced(void **state)
{
    (void)state;
    json_t *pods = pods_new();
    struct big b;
    struct fake *f = big_start(&b, pods);
    struct kube_client *k = client(f);
    struct ungate_options o = {.concurrency = 1};

    assert_int_equal(ungate_pods(k, b.jobs, BIG, &o), 0);
    long long head_ms = pod_int(f, "head", "removed_ms");
    for (size_t i = 0; i + 1 < BIG; i++)
        assert_true(pod_int(f, b.names[i], "removed_ms") >= head_ms);

    big_finish(&b);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(pods);
}

/* A scheduler that binds nothing: pacing cannot help; after the stall time every gate goes. */
static void test_paced_stall(void **state)
{
    (void)state;
    json_t *pods = pods_new();
    struct big b;
    struct fake *f = big_start(&b, pods);
    struct kube_client *k = client(f);
    struct sched s = {.per_look = 0};
    struct ungate_options o = {.bound = sched_bound, .arg = &s, .pace_tick_ms = 5};

    long long t0 = mono_ms();
    assert_int_equal(ungate_pods(k, b.jobs, BIG, &o), 0);
    long long t1 = mono_ms();
    for (size_t i = 0; i < BIG; i++)
        assert_false(pod_gated(f, b.names[i]));
    assert_true(t1 - t0 >= UNGATEPACE_STALL_MS);
    assert_true(t1 - t0 < UNGATEPACE_STALL_MS + 5000);

    big_finish(&b);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(pods);
}

int main(void)
{
    log_set_level(LOG_LEVEL_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retries_until_gone), cmocka_unit_test(test_gone),    cmocka_unit_test(test_limits),
        cmocka_unit_test(test_may_write),          cmocka_unit_test(test_spread),  cmocka_unit_test(test_owner_verdict),
        cmocka_unit_test(test_paced_head_first),   cmocka_unit_test(test_unpaced), cmocka_unit_test(test_paced_stall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
