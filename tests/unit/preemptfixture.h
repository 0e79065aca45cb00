/*
 * preemptfixture: the fixtures of lib/sched/preempt/preempt.c's selection
 * (tests/fixtures/preempt/, tests/fixtures/preemptdomain/), for test_preempt
 * and test_preemptdomain. A fixture holds "nodes" and "pods" in shorthand
 * ({"name", "cpu", "memory", "pods", "labels"}; a pod's "node" binds it,
 * "selector" is its nodeSelector, "cluster" its ray.io/cluster label) that the test writes out as API objects
 * into a cache, an "input" (queues, gangs, preemptor; optionally the root's
 * "root_cap" and "root_room") and "cases". A case replaces root_cap and
 * root_room, and the input's "queues", "gangs" or "preemptor" fields it names
 * (by queue or gang name; "preemptor": its fields), runs preempt_select() on a
 * fresh pass and expects "kind", "victims" (gang names, in the order chosen),
 * "message", "event" (preempt_victim_message) and "domain" (the domain freed;
 * absent: none). A preemptor's "topo" ({"required": KEY} or {"preferred":
 * KEY}) is its gang-wide topology constraint by node label. Every case also
 * checks that the pass's room is as it was: the preemptor's pods place (or
 * not) the same after the selection, and that a second selection agrees.
 */
#ifndef RAYGATE_TEST_PREEMPTFIXTURE_H
#define RAYGATE_TEST_PREEMPTFIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cachefixture.h"
#include "fit.h"
#include "fixtures.h"
#include "preempt.h"
#include "topodomain.h"

static inline json_t *node_object(const json_t *n)
{
    json_t *alloc = json_pack("{s:s, s:s, s:s}", "cpu", json_string_value(json_object_get(n, "cpu")), "memory",
                              json_string_value(json_object_get(n, "memory")), "pods",
                              json_object_get(n, "pods") ? json_string_value(json_object_get(n, "pods")) : "110");
    json_t *labels = json_object_get(n, "labels") ? json_deep_copy(json_object_get(n, "labels")) : json_object();
    return json_pack("{s:s, s:s, s:{s:s, s:o}, s:{}, s:{s:o, s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind", "Node", "metadata",
                     "name", json_string_value(json_object_get(n, "name")), "labels", labels, "spec", "status", "allocatable",
                     alloc, "conditions", "type", "Ready", "status", "True");
}

static inline json_t *pod_object(const json_t *p)
{
    const char *name = json_string_value(json_object_get(p, "name"));
    char uid[128];
    snprintf(uid, sizeof(uid), "uid-%s", name);
    json_t *requests = json_object();
    const char *keys[] = {"cpu", "memory"};
    for (size_t i = 0; i < 2; i++) {
        if (json_object_get(p, keys[i]) != NULL)
            json_object_set(requests, keys[i], json_object_get(p, keys[i]));
    }
    json_t *spec =
        json_pack("{s:[{s:s, s:s, s:{s:o}}]}", "containers", "name", "main", "image", "x", "resources", "requests", requests);
    const json_t *node = json_object_get(p, "node");
    if (node != NULL)
        json_object_set(spec, "nodeName", (json_t *)node);
    if (json_object_get(p, "selector") != NULL)
        json_object_set(spec, "nodeSelector", json_object_get(p, "selector"));
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}, s:o, s:{s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            "name", name, "namespace", "default", "uid", uid, "resourceVersion", "1", "creationTimestamp",
                            "2024-05-01T10:00:00Z", "spec", spec, "status", "phase", node != NULL ? "Running" : "Pending");
    const char *cluster = json_string_value(json_object_get(p, "cluster"));
    if (cluster != NULL)
        json_object_set_new(json_object_get(obj, "metadata"), "labels", json_pack("{s:s}", NAMES_LABEL_CLUSTER, cluster));
    return obj;
}

static inline struct cache *load_cache(const json_t *fx)
{
    struct cache *c = cache_create();
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(fx, "nodes"), i, x)
    {
        json_t *obj = node_object(x);
        cachefixture_upsert(c, "nodes", obj);
        json_decref(obj);
    }
    json_array_foreach(json_object_get(fx, "pods"), i, x)
    {
        json_t *obj = pod_object(x);
        cachefixture_upsert(c, "pods", obj);
        json_decref(obj);
    }
    return c;
}

/* The items of base (an array of objects with "name"), each with the fields over[name] (an object) replaces. New reference. */
static inline json_t *merged(const json_t *base, const json_t *over)
{
    json_t *out = json_deep_copy(base);
    size_t i;
    json_t *x;
    json_array_foreach(out, i, x)
    {
        const json_t *o = json_object_get(over, json_string_value(json_object_get(x, "name")));
        if (o != NULL)
            json_object_update(x, (json_t *)o);
    }
    return out;
}

/* The case's state, owned by the test. */
struct built {
    size_t nq, ng;
    struct preempt_queue *queues;
    struct resources
        *res; /* QR per queue (capability, deserved, allocated, guarantee), 1 per gang, 1 for the preemptor, 2 for the root */
    struct preempt_gang *gangs;
    struct cache_pod ***gang_pods;
    struct preempt_preemptor p;
    struct topo_request topo;
    struct preempt_input in;
};

#define QR 4

/* *slot = the parsed resource list j (NULL when j is absent or null). */
static inline const struct resources *rl(struct resources *slot, const json_t *j)
{
    resources_init(slot);
    if (j == NULL || json_is_null(j))
        return NULL;
    struct error err;
    if (resources_parse(slot, j, "fixture", 0, &err) != 0)
        fail_msg("%s", err.message);
    return slot;
}

static inline size_t queue_index(const struct built *b, const char *name)
{
    for (size_t i = 0; i < b->nq; i++) {
        if (strcmp(b->queues[i].name, name) == 0)
            return i;
    }
    fail_msg("no queue %s", name);
    return 0;
}

static inline struct cache_pod **pods_named(const struct cache *c, const json_t *names, size_t *n)
{
    *n = json_array_size(names);
    struct cache_pod **pods = calloc(*n + 1, sizeof(*pods));
    for (size_t i = 0; i < *n; i++) {
        pods[i] = cache_pod_get(c, "default", json_string_value(json_array_get(names, i)));
        if (pods[i] == NULL)
            fail_msg("pod %s not cached", json_string_value(json_array_get(names, i)));
    }
    return pods;
}

static inline void build_queues(struct built *b, const json_t *queues)
{
    b->nq = json_array_size(queues);
    b->queues = calloc(b->nq + 1, sizeof(*b->queues));
    for (size_t i = 0; i < b->nq; i++) {
        const json_t *q = json_array_get(queues, i);
        struct preempt_queue *pq = &b->queues[i];
        pq->name = json_string_value(json_object_get(q, "name"));
        struct error err;
        if (preempt_policy_parse(json_string_value(json_object_get(q, "policy")), &pq->policy, &err) != 0)
            fail_msg("%s", err.message);
        pq->capability = rl(&b->res[QR * i], json_object_get(q, "capability"));
        pq->deserved = rl(&b->res[QR * i + 1], json_object_get(q, "deserved"));
        pq->allocated = rl(&b->res[QR * i + 2], json_object_get(q, "allocated"));
        pq->guarantee = rl(&b->res[QR * i + 3], json_object_get(q, "guarantee"));
        pq->reclaimable = !json_is_false(json_object_get(q, "reclaimable"));
    }
    /* "parent": a queue's name (absent: a child of the root); the fixture gives each parent's "allocated" as its subtree's. */
    for (size_t i = 0; i < b->nq; i++) {
        const char *parent = json_string_value(json_object_get(json_array_get(queues, i), "parent"));
        b->queues[i].parent = parent != NULL ? queue_index(b, parent) : QUEUETREE_ROOT;
    }
}

static inline void build_gangs(struct built *b, const struct cache *c, const json_t *gangs)
{
    b->ng = json_array_size(gangs);
    b->gangs = calloc(b->ng + 1, sizeof(*b->gangs));
    b->gang_pods = calloc(b->ng + 1, sizeof(*b->gang_pods));
    for (size_t i = 0; i < b->ng; i++) {
        const json_t *g = json_array_get(gangs, i);
        struct preempt_gang *pg = &b->gangs[i];
        pg->namespace_ = "default";
        pg->name = json_string_value(json_object_get(g, "name"));
        pg->queue = queue_index(b, json_string_value(json_object_get(g, "queue")));
        pg->priority = (int32_t)json_integer_value(json_object_get(g, "priority"));
        pg->created_ms = json_integer_value(json_object_get(g, "created"));
        pg->admitted_ms = json_integer_value(json_object_get(g, "admitted"));
        pg->preemptable = cache_preemptable(json_string_value(json_object_get(g, "preemptable_label")),
                                            json_string_value(json_object_get(g, "preemptable_annotation")));
        pg->evicting = json_is_true(json_object_get(g, "evicting"));
        pg->hold = rl(&b->res[QR * b->nq + i], json_object_get(g, "hold"));
        b->gang_pods[i] = pods_named(c, json_object_get(g, "pods"), &pg->npods);
        pg->pods = b->gang_pods[i];
    }
}

/* The case's field key, else the input's (NULL when neither has it). */
static inline const json_t *case_or_input(const json_t *cs, const json_t *in, const char *key)
{
    const json_t *v = json_object_get(cs, key);
    return v != NULL ? v : json_object_get(in, key);
}

/* r from "topo" ({"required": KEY} or {"preferred": KEY}; NULL: none), built here so the fixture says exactly what it asks. */
static inline void topo_from(struct topo_request *r, const json_t *j)
{
    memset(r, 0, sizeof(*r));
    const char *req = json_string_value(json_object_get(j, "required"));
    const char *pref = json_string_value(json_object_get(j, "preferred"));
    if (req == NULL && pref == NULL)
        return;
    r->gang.mode = req != NULL ? TOPO_MODE_HARD : TOPO_MODE_SOFT;
    r->gang.by = TOPO_BY_LABEL;
    r->gang.key = util_strdup(req != NULL ? req : pref);
}

static inline void build(struct built *b, const struct cache *c, struct fit *f, struct topodomains *t, const json_t *in,
                         const json_t *cs)
{
    memset(b, 0, sizeof(*b));
    json_t *queues = merged(json_object_get(in, "queues"), json_object_get(cs, "queues"));
    json_t *gangs = merged(json_object_get(in, "gangs"), json_object_get(cs, "gangs"));
    json_t *p = json_deep_copy(json_object_get(in, "preemptor"));
    if (json_object_get(cs, "preemptor") != NULL)
        json_object_update(p, json_object_get(cs, "preemptor"));
    b->res = calloc(QR * json_array_size(queues) + json_array_size(gangs) + 3, sizeof(*b->res));
    build_queues(b, queues);
    build_gangs(b, c, gangs);
    b->p.namespace_ = "default";
    b->p.name = util_strdup(json_string_value(json_object_get(p, "name")));
    b->p.queue = queue_index(b, json_string_value(json_object_get(p, "queue")));
    b->p.priority = (int32_t)json_integer_value(json_object_get(p, "priority"));
    b->p.created_ms = json_integer_value(json_object_get(p, "created"));
    b->p.preempted_by = util_strdup(json_string_value(json_object_get(p, "preempted_by")));
    b->p.evictions_in_flight = json_is_true(json_object_get(p, "in_flight"));
    b->p.request = rl(&b->res[QR * b->nq + b->ng], json_object_get(p, "request"));
    b->p.pods = pods_named(c, json_object_get(p, "pods"), &b->p.npods);
    fit_sort_larger_first(f, b->p.pods, b->p.npods);
    topo_from(&b->topo, json_object_get(p, "topo"));
    b->p.topo = b->topo.gang.mode != TOPO_MODE_NONE ? &b->topo : NULL;
    b->in = (struct preempt_input){b->queues, b->nq, b->gangs, b->ng, &b->p, NULL, NULL, NULL, NULL};
    b->in.domains = t;
    b->in.cache = c;
    b->in.root_cap = rl(&b->res[QR * b->nq + b->ng + 1], case_or_input(cs, in, "root_cap"));
    b->in.root_room = rl(&b->res[QR * b->nq + b->ng + 2], case_or_input(cs, in, "root_room"));
    /* Names borrowed from the JSON live as long as the fixture: keep the merged copies with it. */
    json_array_append_new((json_t *)json_object_get(cs, "_keep"), queues);
    json_array_append_new((json_t *)json_object_get(cs, "_keep"), gangs);
    json_decref(p);
}

static inline void unbuild(struct built *b)
{
    for (size_t i = 0; i < QR * b->nq + b->ng + 3; i++)
        resources_finish(&b->res[i]);
    for (size_t i = 0; i < b->ng; i++)
        free(b->gang_pods[i]);
    free(b->gang_pods);
    free(b->gangs);
    free(b->queues);
    free(b->res);
    free(b->p.pods);
    free((char *)b->p.name);
    free((char *)b->p.preempted_by);
    free(b->topo.gang.key);
}

static inline size_t place_count(struct fit *f, const struct built *b)
{
    size_t mark = fit_mark(f);
    char *why = NULL;
    size_t placed = fit_place(f, b->p.pods, b->p.npods, &why);
    free(why);
    fit_undo(f, mark);
    return placed;
}

static inline void check_result(const char *where, const struct built *b, const json_t *cs, const struct preempt_result *r)
{
    const char *kind = json_string_value(json_object_get(cs, "kind"));
    if (strcmp(preempt_kind_name(r->kind), kind != NULL ? kind : "") != 0)
        fail_msg("%s: kind \"%s\", expected \"%s\" (%s)", where, preempt_kind_name(r->kind), kind, r->message);
    const json_t *victims = json_object_get(cs, "victims");
    struct util_buf got = {0};
    for (size_t i = 0; i < r->nvictims; i++)
        util_buf_printf(&got, "%s%s", i ? "," : "", b->gangs[r->victims[i]].name);
    struct util_buf want = {0};
    for (size_t i = 0; i < json_array_size(victims); i++)
        util_buf_printf(&want, "%s%s", i ? "," : "", json_string_value(json_array_get(victims, i)));
    char *g = util_buf_take(&got), *w = util_buf_take(&want);
    if (strcmp(g, w) != 0)
        fail_msg("%s: victims [%s], expected [%s] (%s)", where, g, w, r->message);
    free(g);
    free(w);
    assert_true((r->kind == PREEMPT_KIND_NONE) == (r->nvictims == 0));
    const char *message = json_string_value(json_object_get(cs, "message"));
    if (message != NULL && (r->message == NULL || strcmp(message, r->message) != 0))
        fail_msg("%s: message \"%s\", expected \"%s\"", where, r->message, message);
    const char *domain = json_string_value(json_object_get(cs, "domain"));
    if ((domain == NULL) != (r->domain == NULL) || (domain != NULL && strcmp(domain, r->domain) != 0))
        fail_msg("%s: domain \"%s\", expected \"%s\"", where, r->domain ? r->domain : "(none)", domain ? domain : "(none)");
    const char *event = json_string_value(json_object_get(cs, "event"));
    if (event != NULL) {
        char *e = preempt_victim_message(&b->in, r);
        if (strcmp(e, event) != 0)
            fail_msg("%s: event \"%s\", expected \"%s\"", where, e, event);
        free(e);
    }
}

static inline size_t preemptfixture_run(const char *file)
{
    json_t *fx = fixture_json(file);
    struct cache *c = load_cache(fx);
    struct fit *f = fit_create(c);
    struct topodomains *t = topodomain_create();
    size_t k;
    json_t *cs;
    json_array_foreach(json_object_get(fx, "cases"), k, cs)
    {
        char where[512];
        snprintf(where, sizeof(where), "%s: %s", file, json_string_value(json_object_get(cs, "comment")));
        json_object_set_new(cs, "_keep", json_array());
        fit_begin(f);
        topodomain_begin(t, f, c);
        struct built b;
        build(&b, c, f, t, json_object_get(fx, "input"), cs);
        size_t before = place_count(f, &b);
        struct preempt_result r;
        preempt_result_init(&r);
        struct error err = {{0}};
        if (preempt_select(f, &b.in, &r, &err) != 0)
            fail_msg("%s: %s", where, err.message);
        check_result(where, &b, cs, &r);
        if (place_count(f, &b) != before)
            fail_msg("%s: the pass's room changed", where);
        /* Twice, the same: nothing a selection remembers changes the next. */
        struct preempt_result again;
        preempt_result_init(&again);
        assert_int_equal(preempt_select(f, &b.in, &again, &err), 0);
        check_result(where, &b, cs, &again);
        preempt_result_finish(&again);
        preempt_result_finish(&r);
        unbuild(&b);
        fit_end(f);
    }
    size_t n = json_array_size(json_object_get(fx, "cases"));
    topodomain_destroy(t);
    fit_destroy(f);
    cache_destroy(c);
    json_decref(fx);
    return n;
}

/* Runs every fixture of folder dir (at least min_files of them, min_cases cases in all). */
static inline void preemptfixture_run_dir(const char *dir, size_t min_files, size_t min_cases)
{
    size_t nfiles, ncases = 0;
    char **files = fixture_list(dir, &nfiles);
    assert_true(nfiles >= min_files);
    for (size_t i = 0; i < nfiles; i++)
        ncases += preemptfixture_run(files[i]);
    assert_true(ncases >= min_cases);
    fixture_list_free(files, nfiles);
}

#endif
