/*
 * gate/apply/waitevents.c, driven by tests/fixtures/waitevents/steps.json: passes at
 * given CLOCK_MONOTONIC times over the cache of an admit fixture, each
 * changing the cache, then noting its decisions as apply_plan does
 * (admit_reason_changed, then waitevents_note) and flushing. After each pass
 * the GangWaiting Warnings added must be exactly those listed, in order, and
 * the flush must say when the next wait settles. The story: a wait told once
 * it settled, once, on the RayCluster and every gated head (one created
 * later too), with the latest message; another reason told anew, a reason
 * come back counted up; a gang admitted before its wait settled never told;
 * an autoscaling tail told on its first waiting pod with that pod's message;
 * a gang gone from the cache forgotten at the sweep.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "admit.h"
#include "cachefixture.h"
#include "fixtures.h"
#include "util.h"
#include "waitevents.h"

#define NOW "2026-11-25T10:00:00Z"

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static enum admit_action action_named(const char *where, const char *name)
{
    for (int a = ADMIT_ACTION_ADMIT; a <= ADMIT_ACTION_TAIL_WAIT; a++) {
        if (name != NULL && strcmp(admit_result_action_name((enum admit_action)a), name) == 0)
            return (enum admit_action)a;
    }
    fail_msg("%s: unknown action %s", where, name != NULL ? name : "(none)");
    return ADMIT_ACTION_WAIT;
}

static enum admit_reason reason_named(const char *where, const char *name)
{
    for (int r = ADMIT_REASON_NONE; name != NULL && r <= ADMIT_REASON_DEVICES; r++) {
        if (strcmp(admit_result_reason_name((enum admit_reason)r), name) == 0)
            return (enum admit_reason)r;
    }
    if (name != NULL)
        fail_msg("%s: unknown reason %s", where, name);
    return ADMIT_REASON_NONE;
}

/* The object named name in list (borrowed), or a failed test. */
static const json_t *named(const char *where, const json_t *list, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        if (strcmp(str(json_object_get(o, "metadata"), "name"), name) == 0)
            return o;
    }
    fail_msg("%s: no object %s in the state", where, name);
    return NULL;
}

static struct cache_pod *pod_named(const char *where, struct cache *c, const char *name)
{
    struct cache_pod *pod = cache_pod_get(c, "default", name);
    if (pod == NULL)
        fail_msg("%s: pod %s not cached", where, name);
    return pod;
}

/* One change of the cache, before a pass: as the watches (or apply, for admit and ungate) would make it. */
static void change_cache(const char *where, struct cache *c, const json_t *state, const json_t *op)
{
    const char *kind = str(op, "op");
    if (strcmp(kind, "admit") == 0) {
        struct cache_gang *g = cache_gang_get(c, "default", str(op, "cluster"));
        if (g == NULL)
            fail_msg("%s: gang %s not cached", where, str(op, "cluster"));
        cache_gang_mark_admitted(c, g, NOW);
    } else if (strcmp(kind, "ungate") == 0) {
        cache_pod_mark_ungated(c, pod_named(where, c, str(op, "pod")));
    } else if (strcmp(kind, "add_pod") == 0) {
        cachefixture_upsert(c, "pods", json_object_get(op, "object"));
    } else if (strcmp(kind, "restore_pod") == 0) {
        cachefixture_upsert(c, "pods", named(where, json_object_get(state, "pods"), str(op, "name")));
    } else if (strcmp(kind, "restore_raycluster") == 0) {
        cachefixture_upsert(c, "rayclusters", named(where, json_object_get(state, "rayclusters"), str(op, "name")));
    } else if (strcmp(kind, "delete_pod") == 0) {
        cache_delete_pod(c, "default", str(op, "name"));
    } else if (strcmp(kind, "delete_raycluster") == 0) {
        cache_delete_raycluster(c, "default", str(op, "name"));
    } else {
        fail_msg("%s: unknown cache op %s", where, kind);
    }
}

/* Decision j of a pass into r, built from the cache as admit builds them; a tail's pods with their own messages. */
static void add_decision(const char *where, struct admit_result *r, struct cache *c, const json_t *j)
{
    const struct cache_gang *g = cache_gang_get(c, "default", str(j, "cluster"));
    if (g == NULL)
        fail_msg("%s: gang %s not cached", where, str(j, "cluster"));
    const char *msg = str(j, "message");
    struct admit_decision *d = admit_result_add(r, action_named(where, str(j, "action")), reason_named(where, str(j, "reason")), g,
                                                msg != NULL ? util_strdup(msg) : NULL);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(j, "pods"), i, p)
    {
        admit_result_add_pod(r, d, pod_named(where, c, str(p, "name")));
        if (str(p, "message") != NULL)
            d->pods[d->npods - 1].message = util_strdup(str(p, "message"));
    }
}

/* An added Event as the fixture gives it (new). */
static json_t *event_view(const struct eventpost_item *it)
{
    const json_t *ev = it->event, *obj = json_object_get(ev, "involvedObject");
    char object[300];
    snprintf(object, sizeof(object), "%s/%s", str(obj, "kind"), str(obj, "name"));
    assert_string_equal(str(ev, "reason"), "GangWaiting");
    assert_string_equal(str(ev, "type"), "Warning");
    assert_string_equal(it->ns, "default");
    return json_pack("{s:s, s:s?, s:O, s:O, s:b}", "object", object, "name", it->name, "count", json_object_get(ev, "count"),
                     "message", json_object_get(ev, "message"), "repeat", it->patch_first);
}

/* One pass of the fixture: its cache changes, its decisions noted, the flush; then its Events and next checked. */
static void run_pass(const char *where, struct waitevents *w, struct cache *c, const json_t *state, const json_t *pass)
{
    size_t i;
    json_t *op;
    json_array_foreach(json_object_get(pass, "cache"), i, op) change_cache(where, c, state, op);
    struct eventpost_list l;
    eventpost_list_init(&l);
    struct waitevents_pass x = {&l, NOW, "test", (long long)json_integer_value(json_object_get(pass, "at"))};
    struct admit_result r;
    admit_result_init(&r);
    json_t *dj;
    json_array_foreach(json_object_get(pass, "decisions"), i, dj) add_decision(where, &r, c, dj);
    for (i = 0; i < r.len; i++) {
        admit_reason_changed(c, &r.items[i]);
        waitevents_note(w, c, &r.items[i], &x);
    }
    long long next = waitevents_flush(w, c, &x);
    admit_result_finish(&r);
    json_t *got = json_array();
    for (i = 0; i < l.len; i++)
        json_array_append_new(got, event_view(&l.items[i]));
    fixture_check_json(where, "events", got, json_object_get(pass, "events"));
    json_decref(got);
    eventpost_list_finish(&l);
    if (next != (long long)json_integer_value(json_object_get(pass, "next")))
        fail_msg("%s: next %lld, expected %lld", where, next, (long long)json_integer_value(json_object_get(pass, "next")));
}

static void test_story(void **state)
{
    (void)state;
    json_t *fx = fixture_json("waitevents/steps.json");
    json_t *st = fixture_json(str(fx, "state"));
    struct cache *c = cachefixture_load(st, 0);
    struct waitevents *w = waitevents_create(json_integer_value(json_object_get(fx, "settle_ms")));
    const json_t *passes = json_object_get(fx, "passes");
    assert_true(json_array_size(passes) >= 10);
    size_t i;
    json_t *pass;
    json_array_foreach(passes, i, pass)
    {
        char where[512];
        snprintf(where, sizeof(where), "pass %zu at %lld ms (%s)", i, (long long)json_integer_value(json_object_get(pass, "at")),
                 str(pass, "comment"));
        run_pass(where, w, c, st, pass);
    }
    waitevents_destroy(w);
    waitevents_destroy(NULL);
    cache_destroy(c);
    json_decref(st);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_story),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
