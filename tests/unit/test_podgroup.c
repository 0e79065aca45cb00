#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "cache.h"
#include "cachefixture.h"
#include "fixtures.h"
#include "jsonpatch.h"
#include "metrics.h"
#include "names.h"
#include "podgroup.h"
#include "qtree.h"
#include "queuemetrics.h" /* gate/: the gauges that mirror the queue status */

/* ---- a gang described in JSON (the transition fixtures) ---- */

struct gang_holder {
    struct podgroup_gang g;
    struct resources min;
    struct evict_record record;
};

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static enum admit_reason reason_named(const char *name)
{
    if (name == NULL)
        return ADMIT_REASON_NONE;
    for (int r = ADMIT_REASON_NONE; r <= ADMIT_REASON_DEVICES; r++) {
        if (strcmp(admit_result_reason_name((enum admit_reason)r), name) == 0)
            return (enum admit_reason)r;
    }
    fail_msg("unknown reason %s", name);
    return ADMIT_REASON_NONE;
}

/* Fills h from j (borrowed; its strings must outlive h). */
static void gang_from_json(const json_t *j, struct gang_holder *h)
{
    memset(&h->g, 0, sizeof(h->g));
    resources_init(&h->min);
    struct error err;
    if (resources_parse(&h->min, json_object_get(j, "minResources"), "minResources", 0, &err) != 0)
        fail_msg("%s", err.message);
    h->g.namespace_ = str(j, "namespace");
    h->g.cluster = str(j, "cluster");
    h->g.cluster_uid = str(j, "uid");
    h->g.rayjob = str(j, "rayjob");
    h->g.rayjob_uid = str(j, "rayjobUid");
    h->g.legacy = json_is_true(json_object_get(j, "legacy"));
    h->g.queue = str(j, "queue");
    h->g.priority_class = str(j, "priorityClass");
    h->g.spec_ok = json_object_get(j, "specOk") == NULL || json_is_true(json_object_get(j, "specOk"));
    h->g.min_member = json_integer_value(json_object_get(j, "minMember"));
    h->g.min_resources = &h->min;
    h->g.admitted = json_is_true(json_object_get(j, "admitted"));
    h->g.admitted_at = str(j, "admittedAt");
    h->g.reason = reason_named(str(j, "reason"));
    h->g.message = str(j, "message");
    h->g.pods_created = json_integer_value(json_object_get(j, "podsCreated"));
    h->g.running = json_integer_value(json_object_get(j, "running"));
    h->g.succeeded = json_integer_value(json_object_get(j, "succeeded"));
    h->g.failed = json_integer_value(json_object_get(j, "failed"));
    h->g.preempted_by = str(j, "preemptedBy");
    h->g.preempting = str(j, "preempting");
    /* "record": the eviction record's annotations (evict.h). */
    const json_t *rec = json_object_get(j, "record");
    if (rec != NULL) {
        struct error rerr = {{0}};
        if (evict_record_parse(rec, &h->record, &rerr) != 0)
            fail_msg("%s", rerr.message);
        h->g.record = &h->record;
    }
}

static const char *write_name(enum podgroup_write w)
{
    static const char *const names[] = {"none", "create", "patch", "foreign"};
    return names[w];
}

/*
 * Each scenario: steps of gang state (each step's "gang" merged onto the last)
 * against what the API shows after the previous step's write. The write is
 * the expected kind and body; after it, the same state writes nothing.
 */
static void test_transitions(void **state)
{
    (void)state;
    json_t *scenarios = fixture_json("podgroup/transitions.json");
    size_t i, nsteps = 0;
    json_t *sc;
    json_array_foreach(scenarios, i, sc)
    {
        const char *comment = str(sc, "comment");
        json_t *observed = json_incref(json_object_get(sc, "observed"));
        json_t *gang = json_object();
        size_t k;
        json_t *step;
        uint64_t prev_fp = 0;
        json_array_foreach(json_object_get(sc, "steps"), k, step)
        {
            char where[512];
            snprintf(where, sizeof(where), "%s, step %zu (%s)", comment, k + 1, str(step, "comment"));
            json_t *next = jsonpatch_merge_apply(gang, json_object_get(step, "gang"));
            json_decref(gang);
            gang = next;
            struct gang_holder h;
            gang_from_json(gang, &h);
            const char *now = str(step, "now");
            json_t *body = NULL;
            enum podgroup_write w = podgroup_sync(&h.g, observed, now, &body);
            if (strcmp(write_name(w), str(step, "write")) != 0)
                fail_msg("%s: wrote %s, expected %s", where, write_name(w), str(step, "write"));
            /* What status.c skips on: a step that writes (the PodGroup as the last step left it) moved the fingerprint. The
               RayCluster's resourceVersion moves with its spec: here, with minResources. */
            char *rv = fixture_dump(json_object_get(gang, "minResources"));
            uint64_t fp = podgroup_gang_fingerprint(&h.g, rv);
            free(rv);
            if (k > 0 && (w == PODGROUP_WRITE_CREATE || w == PODGROUP_WRITE_PATCH) && fp == prev_fp)
                fail_msg("%s: writes, yet its fingerprint is the last step's", where);
            prev_fp = fp;
            if (w == PODGROUP_WRITE_CREATE) {
                fixture_check_json(where, "body", body, json_object_get(step, "body"));
                /* The apiserver's copy: ours plus its metadata. */
                json_decref(observed);
                observed = json_deep_copy(body);
                json_object_set_new(json_object_get(observed, "metadata"), "uid", json_string("pg-uid"));
                json_object_set_new(json_object_get(observed, "metadata"), "resourceVersion", json_string("1"));
            } else if (w == PODGROUP_WRITE_PATCH) {
                fixture_check_json(where, "patch", body, json_object_get(step, "patch"));
                json_t *applied = jsonpatch_merge_apply(observed, body);
                json_decref(observed);
                observed = applied;
            } else {
                assert_null(body);
            }
            json_decref(body);
            /* Written: the same state again writes nothing (or stays foreign). */
            enum podgroup_write again = podgroup_sync(&h.g, observed, now, &body);
            if (again != (w == PODGROUP_WRITE_FOREIGN ? PODGROUP_WRITE_FOREIGN : PODGROUP_WRITE_NONE)) {
                char *b = fixture_dump(body);
                fail_msg("%s: after the write, %s again: %s", where, write_name(again), b);
            }
            /* The API keeps what a trimmed copy keeps: the controller's copy decides the same. */
            if (observed != NULL) {
                json_t *trimmed = podgroup_trim(observed);
                assert_int_equal(podgroup_sync(&h.g, trimmed, now, &body), again);
                json_decref(trimmed);
            }
            resources_finish(&h.min);
            nsteps++;
        }
        json_decref(gang);
        json_decref(observed);
    }
    assert_true(nsteps >= 23);
    json_decref(scenarios);
}

/* The Scheduled condition's message of a PodGroup body (borrowed from body), or NULL. */
static const char *scheduled_message(const json_t *body)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(body, "status"), "conditions"), i, c)
    {
        if (strcmp(str(c, "type"), "Scheduled") == 0)
            return str(c, "message");
    }
    return NULL;
}

/* An admitted gang's Scheduled condition says what kube-scheduler says of its native PodGroup, and a change of
   that alone is a change of the gang (its fingerprint): its PodGroup is compared again. */
static void test_native(void **state)
{
    struct podgroup_gang g = {.namespace_ = "team-a",
                              .cluster = "c",
                              .cluster_uid = "uid-c",
                              .queue = "q",
                              .spec_ok = 1,
                              .min_member = 3,
                              .admitted = 1,
                              .admitted_at = "2024-05-01T10:00:00Z"};
    json_t *body = NULL;
    assert_int_equal(podgroup_sync(&g, NULL, "2024-05-01T10:00:01Z", &body), PODGROUP_WRITE_CREATE);
    assert_string_equal(scheduled_message(body), "admitted by queue q");
    uint64_t before = podgroup_gang_fingerprint(&g, "1");
    json_decref(body);
    g.native = "kube-scheduler: waiting for 2 of 3 pods";
    assert_int_equal(podgroup_sync(&g, NULL, "2024-05-01T10:00:01Z", &body), PODGROUP_WRITE_CREATE);
    assert_string_equal(scheduled_message(body), "admitted by queue q; kube-scheduler: waiting for 2 of 3 pods");
    assert_true(podgroup_gang_fingerprint(&g, "1") != before);
    json_decref(body);
}

static void test_names(void **state)
{
    (void)state;
    char *n = names_podgroup("test-cluster-0");
    assert_string_equal(n, "ray-test-cluster-0-pg");
    char *c = names_podgroup_cluster(n);
    assert_string_equal(c, "test-cluster-0");
    free(n);
    free(c);
    c = names_podgroup_cluster("ray-a-pg");
    assert_string_equal(c, "a");
    free(c);
    assert_null(names_podgroup_cluster("ray--pg"));
    assert_null(names_podgroup_cluster("ray-x-pgx"));
    assert_null(names_podgroup_cluster("job-x-pg"));
    assert_null(names_podgroup_cluster("pg"));
    assert_null(names_podgroup_cluster(NULL));
    assert_string_equal(podgroup_phase_name(PODGROUP_PHASE_INQUEUE), "Inqueue");
}

static void test_discovery(void **state)
{
    (void)state;
    json_t *cases = fixture_json("podgroup/discovery.json");
    size_t i;
    json_t *c;
    assert_true(json_array_size(cases) >= 3);
    json_array_foreach(cases, i, c)
    {
        unsigned want = 0;
        size_t k;
        json_t *f;
        json_array_foreach(json_object_get(c, "flags"), k, f)
        {
            const char *name = json_string_value(f);
            want |= strcmp(name, "podgroups") == 0          ? PODGROUP_CRD_PODGROUPS
                    : strcmp(name, "podgroups/status") == 0 ? PODGROUP_CRD_PODGROUPS_STATUS
                    : strcmp(name, "queues") == 0           ? PODGROUP_CRD_QUEUES
                    : strcmp(name, "queues/status") == 0    ? PODGROUP_CRD_QUEUES_STATUS
                                                            : 0x100;
        }
        unsigned got = podgroup_discovery(json_object_get(c, "list"));
        if (got != want)
            fail_msg("%s: flags %#x, expected %#x", str(c, "comment"), got, want);
    }
    json_decref(cases);
}

/* ---- from the cache ---- */

/* One pass, carried out as the controller does: reasons recorded, admissions and gates marked. */
static void pass(struct cache *c, const char *now)
{
    struct admit_result r;
    admit_result_init(&r);
    struct admit *a = admit_create(c);
    admit_pass(a, ADMIT_PASS_FULL, &r);
    admit_destroy(a);
    for (size_t i = 0; i < r.len; i++) {
        const struct admit_decision *d = &r.items[i];
        admit_reason_changed(c, d);
        if (d->action == ADMIT_ACTION_WAIT || d->action == ADMIT_ACTION_TAIL_WAIT)
            continue;
        if (d->action == ADMIT_ACTION_ADMIT)
            cache_gang_mark_admitted(c, cache_gang_get(c, d->namespace_, d->cluster), now);
        for (size_t k = 0; k < d->npods; k++)
            cache_pod_mark_ungated(c, cache_pod_get(c, d->namespace_, d->pods[k].name));
    }
    admit_result_finish(&r);
}

/*
 * The typed wait reason from the cache: headless has 3 live pods but, with no
 * head, 2 members; its PodGroup says "pods" and 2, as the message does.
 */
static void test_wait_annotations(void **state)
{
    (void)state;
    json_t *fx = fixture_json("admit/pods-members-by-role.json");
    struct cache *c = cachefixture_load(fx, 0);
    pass(c, "2024-05-01T11:00:00Z");
    struct cache_gang *g = cache_gang_get(c, "default", "headless");
    assert_non_null(g);
    struct podgroup_gang pg;
    podgroup_gang_from_cache(g, &pg);
    assert_int_equal(pg.reason, ADMIT_REASON_PODS);
    assert_int_equal(pg.pods_created, 2);
    json_t *body = NULL;
    assert_int_equal(podgroup_sync(&pg, NULL, "2024-05-01T11:00:00Z", &body), PODGROUP_WRITE_CREATE);
    const json_t *ann = json_object_get(json_object_get(body, "metadata"), "annotations");
    assert_string_equal(str(ann, NAMES_ANNOTATION_WAIT_REASON), "pods");
    assert_string_equal(str(ann, NAMES_ANNOTATION_WAIT_PODS), "2");
    json_decref(body);
    /* Admitted: neither annotation is written. */
    podgroup_gang_from_cache(cache_gang_get(c, "default", "shaped"), &pg);
    assert_int_equal(podgroup_sync(&pg, NULL, "2024-05-01T11:00:00Z", &body), PODGROUP_WRITE_CREATE);
    assert_null(json_object_get(json_object_get(body, "metadata"), "annotations"));
    json_decref(body);
    cache_destroy(c);
    json_decref(fx);
}

struct gauges {
    struct metrics_registry *reg;
    struct queuemetrics *m;
};

static void gauges_init(struct gauges *gs)
{
    gs->reg = metrics_registry_create();
    gs->m = queuemetrics_create(gs->reg);
}

static void gauges_finish(struct gauges *gs)
{
    queuemetrics_destroy(gs->m);
    metrics_registry_destroy(gs->reg);
}

/* Every line of want (a JSON array of strings) is a line of text; every prefix in absent starts none. */
static void check_lines(const char *where, const char *text, const json_t *want, const json_t *absent)
{
    size_t i;
    json_t *l;
    json_array_foreach(want, i, l)
    {
        const char *line = json_string_value(l);
        size_t n = strlen(line);
        const char *p = text;
        int found = 0;
        while (!found && (p = strstr(p, line)) != NULL) {
            found = (p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0');
            p += n;
        }
        if (!found) {
            fprintf(stderr, "%s\n", text); /* cmocka cuts long failure messages */
            fail_msg("%s: no line \"%s\"", where, line);
        }
    }
    json_array_foreach(absent, i, l)
    {
        const char *prefix = json_string_value(l);
        for (const char *p = text; p != NULL && *p != '\0'; p = strchr(p, '\n') != NULL ? strchr(p, '\n') + 1 : NULL) {
            if (strncmp(p, prefix, strlen(prefix)) == 0) {
                fprintf(stderr, "%s\n", text);
                fail_msg("%s: a line starts \"%s\"", where, prefix);
            }
        }
    }
}

/* The queue status and its gauges, for the cached queue named in the case. */
static void check_queue(const char *where, struct cache *c, struct gauges *gs, const json_t *want)
{
    const char *name = str(want, "queue");
    struct cache_queue *q = cache_queue_get(c, name);
    if (q == NULL)
        fail_msg("%s: queue %s not cached", where, name);
    struct podgroup_queue_status st;
    struct error err;
    podgroup_queue_status_init(&st);
    assert_int_equal(podgroup_queue_status(c, q, &st, &err), 0);
    json_t *got = json_pack("{s:I,s:I,s:I,s:o}", "running", (json_int_t)st.running, "inqueue", (json_int_t)st.inqueue, "pending",
                            (json_int_t)st.pending, "allocated", resources_to_json(&st.allocated));
    fixture_check_json(where, "status", got, json_object_get(want, "status"));
    json_decref(got);
    json_t *patch = podgroup_queue_patch(json_object_get(want, "observed"), &st);
    const json_t *want_patch = json_object_get(want, "patch");
    if (json_is_null(want_patch)) {
        if (patch != NULL) {
            char *p = fixture_dump(patch);
            fail_msg("%s: patch %s, expected none", where, p);
        }
    } else {
        fixture_check_json(where, "patch", patch, want_patch);
        /* Once written, the same status is not written again. */
        json_t *after = jsonpatch_merge_apply(json_object_get(want, "observed"), json_object_get(patch, "status"));
        json_t *again = podgroup_queue_patch(after, &st);
        if (again != NULL) {
            char *p = fixture_dump(again);
            fail_msg("%s: written, and then patched again: %s", where, p);
        }
        json_decref(after);
    }
    json_decref(patch);
    queuemetrics_queue(gs->m, c, q, &st);
    char *text = metrics_render(gs->reg, NULL);
    check_lines(where, text, json_object_get(want, "metrics"), json_object_get(want, "absent"));
    free(text);
    podgroup_queue_status_finish(&st);
}

/* Queue status and gauges of decided states (the admit fixtures' states after one pass). */
static void test_queue_status(void **state)
{
    (void)state;
    json_t *cases = fixture_json("podgroup/queues.json");
    size_t i;
    json_t *cs;
    assert_true(json_array_size(cases) >= 5);
    json_array_foreach(cases, i, cs)
    {
        char where[512];
        snprintf(where, sizeof(where), "%s (%s)", str(cs, "comment"), str(cs, "state"));
        json_t *fx = fixture_json(str(cs, "state"));
        struct cache *c = cachefixture_load(fx, 0);
        pass(c, "2024-05-01T11:00:00Z");
        struct gauges gs;
        gauges_init(&gs);
        check_queue(where, c, &gs, cs);
        gauges_finish(&gs);
        cache_destroy(c);
        json_decref(fx);
    }
    json_decref(cases);
}

/* Queue name's status in tree t as the gate would write it on an empty status (new patch's "status"), its gauges in gs. */
static json_t *tree_status(struct cache *c, const struct qtree *t, struct gauges *gs, const char *name)
{
    struct cache_queue *q = cache_queue_get(c, name);
    if (q == NULL)
        fail_msg("queue %s not cached", name);
    struct podgroup_queue_status st;
    struct error err;
    podgroup_queue_status_init(&st);
    assert_int_equal(podgroup_queue_status(c, q, &st, &err), 0);
    podgroup_queue_tree(t, qtree_index(t, q), c, &st);
    json_t *patch = podgroup_queue_patch(NULL, &st);
    assert_non_null(patch);
    queuemetrics_queue(gs->m, c, q, &st);
    /* Once written, the same status is not written again. */
    json_t *after = jsonpatch_merge_apply(NULL, json_object_get(patch, "status"));
    json_t *again = podgroup_queue_patch(after, &st);
    if (again != NULL)
        fail_msg("queue %s: written, and then patched again: %s", name, fixture_dump(again));
    json_decref(after);
    podgroup_queue_status_finish(&st);
    json_t *status = json_incref(json_object_get(patch, "status"));
    json_decref(patch);
    return status;
}

/*
 * The queue tree in the Queue status (podgroup/tree.json): a parent's
 * allocated is its subtree's, deserved is marked derived or not, share has
 * two decimals, and the queues of a cycle, under it, or with a missing parent
 * say why they are outside the tree. Each field of "expect" is checked; the
 * gauges of "metrics" are rendered.
 */
static void test_queue_tree(void **state)
{
    (void)state;
    json_t *fx = fixture_json("podgroup/tree.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct qtree t;
    qtree_init(&t);
    qtree_fill(&t, c);
    struct gauges gs;
    gauges_init(&gs);
    const char *name;
    json_t *want;
    json_object_foreach(json_object_get(fx, "expect"), name, want)
    {
        json_t *got = tree_status(c, &t, &gs, name);
        const char *key;
        json_t *v;
        json_object_foreach(want, key, v)
        {
            char what[128];
            snprintf(what, sizeof(what), "status.%s", key);
            json_t *g = json_object_get(got, key);
            fixture_check_json(name, what, g != NULL ? g : json_null(), v);
        }
        json_decref(got);
    }
    char *text = metrics_render(gs.reg, NULL);
    check_lines("tree", text, json_object_get(fx, "metrics"), json_object_get(fx, "absent"));
    free(text);

    /* train loses its spec.deserved: its deserved is derived now, and the series of the explicit one goes. */
    struct error err;
    json_t *train = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "train", "spec", "parent", "ml");
    assert_int_equal(cache_upsert_queue(c, train, &err), 0);
    json_decref(train);
    qtree_fill(&t, c);
    json_decref(tree_status(c, &t, &gs, "train"));
    text = metrics_render(gs.reg, NULL);
    json_t *now = json_pack("[s]", "raygate_queue_deserved{queue=\"train\",resource=\"cpu\",derived=\"true\"} 4");
    json_t *gone = json_pack("[s]", "raygate_queue_deserved{queue=\"train\",resource=\"cpu\",derived=\"false\"}");
    check_lines("train derived", text, now, gone);
    json_decref(now);
    json_decref(gone);
    free(text);
    gauges_finish(&gs);
    qtree_finish(&t);
    cache_destroy(c);
    json_decref(fx);
}

static const json_t *find_object(const json_t *fx, const char *kind, const char *name)
{
    size_t i;
    const json_t *obj;
    json_array_foreach(json_object_get(fx, kind), i, obj)
    {
        if (strcmp(str(json_object_get(obj, "metadata"), "name"), name) == 0)
            return obj;
    }
    fail_msg("%s %s not in fixture", kind, name);
    return NULL;
}

/* A walkthrough stage's changes to the cluster: a pod bound and running, a pod or a RayCluster deleted. */
static void apply_changes(struct cache *c, const json_t *fx, const json_t *stage)
{
    const char *where = str(stage, "comment"), *now = str(stage, "now");
    struct error gerr;
    size_t k;
    json_t *ch;
    json_array_foreach(json_object_get(stage, "changes"), k, ch)
    {
        const char *op = str(ch, "op"), *kind = str(ch, "kind"), *name = str(ch, "name");
        if (strcmp(op, "run") == 0) {
            /* The scheduler bound the pod and it runs. */
            json_t *p = json_deep_copy(find_object(fx, "pods", name));
            json_object_del(json_object_get(p, "spec"), "schedulingGates");
            json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string("node-1"));
            json_object_set_new(json_object_get(p, "status"), "phase", json_string("Running"));
            json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_string(now));
            assert_int_equal(cache_upsert_pod(c, p, &gerr), 0);
            json_decref(p);
        } else if (strcmp(op, "delete") == 0 && strcmp(kind, "pods") == 0) {
            cache_delete_pod(c, "default", name);
        } else if (strcmp(op, "delete") == 0 && strcmp(kind, "rayclusters") == 0) {
            cache_delete_raycluster(c, "default", name);
        } else {
            fail_msg("%s: unknown change %s %s", where, op, kind);
        }
    }
}

/*
 * The Volcano guide's walkthrough from the cache: each stage's PodGroups (the
 * write against what the previous stage wrote), the Queue's status and the
 * gauges.
 */
static void test_walkthrough(void **state)
{
    (void)state;
    json_t *wt = fixture_json("podgroup/walkthrough.json");
    json_t *fx = fixture_json(str(wt, "state"));
    struct cache *c = cachefixture_load(fx, 0);
    struct gauges gs;
    gauges_init(&gs);
    json_t *observed = json_object(); /* "ns/name" -> the PodGroup as written */
    size_t i, k;
    json_t *stage;
    json_array_foreach(json_object_get(wt, "stages"), i, stage)
    {
        const char *where = str(stage, "comment");
        const char *now = str(stage, "now");
        apply_changes(c, fx, stage); /* what changed in the cluster before this stage's pass */
        pass(c, now);

        json_t *want_pgs = json_object_get(stage, "podgroups");
        const char *key;
        json_t *want;
        json_object_foreach(want_pgs, key, want)
        {
            char cluster[256];
            snprintf(cluster, sizeof(cluster), "%s", strchr(key, '/') + 1);
            struct cache_gang *g = cache_gang_get(c, "default", cluster);
            assert_non_null(g);
            assert_true(podgroup_wanted(g));
            struct podgroup_gang pg;
            podgroup_gang_from_cache(g, &pg);
            json_t *body = NULL;
            char w[512];
            snprintf(w, sizeof(w), "%s: %s", where, key);
            enum podgroup_write wr = podgroup_sync(&pg, json_object_get(observed, key), now, &body);
            if (strcmp(write_name(wr), str(want, "write")) != 0)
                fail_msg("%s: wrote %s, expected %s", w, write_name(wr), str(want, "write"));
            if (wr == PODGROUP_WRITE_CREATE) {
                fixture_check_json(w, "body", body, json_object_get(want, "body"));
                json_object_set(observed, key, body);
            } else if (wr == PODGROUP_WRITE_PATCH) {
                fixture_check_json(w, "patch", body, json_object_get(want, "patch"));
                json_object_set_new(observed, key, jsonpatch_merge_apply(json_object_get(observed, key), body));
            }
            json_decref(body);
        }
        /* A gang whose RayCluster is gone has no PodGroup to write. */
        json_t *gone;
        json_array_foreach(json_object_get(stage, "unwanted"), k, gone)
        {
            struct cache_gang *g = cache_gang_get(c, "default", json_string_value(gone));
            assert_true(g == NULL || !podgroup_wanted(g));
        }
        check_queue(where, c, &gs, json_object_get(stage, "queue"));
    }
    /* The queue is deleted and its gangs with it: its series go. */
    cache_delete_queue(c, "kuberay-test-queue");
    cache_delete_raycluster(c, "default", "test-cluster-1");
    for (k = 0; k < json_array_size(json_object_get(fx, "pods")); k++)
        cache_delete_pod(c, "default", str(json_object_get(json_array_get(json_object_get(fx, "pods"), k), "metadata"), "name"));
    assert_null(cache_queue_get(c, "kuberay-test-queue"));
    queuemetrics_sweep(gs.m, c);
    char *text = metrics_render(gs.reg, NULL);
    assert_null(strstr(text, "kuberay-test-queue"));
    free(text);

    json_decref(observed);
    gauges_finish(&gs);
    cache_destroy(c);
    json_decref(fx);
    json_decref(wt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transitions),      cmocka_unit_test(test_names),      cmocka_unit_test(test_discovery),
        cmocka_unit_test(test_queue_status),     cmocka_unit_test(test_queue_tree), cmocka_unit_test(test_walkthrough),
        cmocka_unit_test(test_wait_annotations), cmocka_unit_test(test_native),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
