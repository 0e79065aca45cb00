/*
 * gate/hyperwatch.c, driven by tests/fixtures/hyperwatch/steps.json: HyperNode
 * watch events in order, and after each what the set holds (how many, and the
 * valid ones resolved against the fixture's nodes) and which InvalidHyperNode
 * Events hyperwatch_take_events hands over: one per invalid version of a
 * HyperNode's spec (metadata.generation, else resourceVersion), none for a
 * relabelling or a relist, posted in namespace default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cache.h"
#include "fixtures.h"
#include "hypernode.h"
#include "hyperwatch.h"

#define NOW "2026-11-25T10:00:00Z"

static enum kube_watch_event event_named(const char *where, const char *name)
{
    if (strcmp(name, "ADDED") == 0)
        return KUBE_WATCH_ADDED;
    if (strcmp(name, "MODIFIED") == 0)
        return KUBE_WATCH_MODIFIED;
    if (strcmp(name, "DELETED") == 0)
        return KUBE_WATCH_DELETED;
    fail_msg("%s: unknown event %s", where, name);
    return KUBE_WATCH_ADDED;
}

/* The names of the set's valid HyperNodes that hold a node of c, in resolve's order (new). */
static json_t *domain_names(const struct hyperwatch *hw, const struct cache *c)
{
    struct hypernode_domain *d = NULL;
    size_t n = hypernode_resolve(hyperwatch_set(hw), c, &d);
    json_t *names = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(names, json_string(d[i].name));
    hypernode_domains_free(d, n);
    return names;
}

/* Item it of l as the fixture gives it (new): the Event's fields that want names, and "ns", where it is posted. */
static json_t *event_view(const struct eventpost_item *it, const json_t *want)
{
    json_t *view = json_pack("{s:s}", "ns", it->ns);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)want, key, v)
    {
        json_t *got = json_object_get(it->event, key);
        if (strcmp(key, "ns") != 0 && got != NULL)
            json_object_set(view, key, got);
    }
    return view;
}

/* The Events of one step: as many as want, each as want says; they are new Events (no aggregated name). */
static void check_events(const char *where, struct hyperwatch *hw, const json_t *want)
{
    struct eventpost_list l;
    eventpost_list_init(&l);
    size_t n = hyperwatch_take_events(hw, &l, NOW, "test");
    if (n != json_array_size(want) || l.len != n)
        fail_msg("%s: %zu Events (%zu in the list), expected %zu", where, n, l.len, json_array_size(want));
    for (size_t i = 0; i < n; i++) {
        const json_t *w = json_array_get(want, i);
        json_t *got = event_view(&l.items[i], w);
        fixture_check_json(where, "event", got, w);
        json_decref(got);
        assert_null(l.items[i].name);
        assert_null(l.items[i].patch);
    }
    eventpost_list_finish(&l);
}

static void test_steps(void **state)
{
    (void)state;
    json_t *fx = fixture_json("hyperwatch/steps.json");
    struct cache *c = cache_create();
    struct error err;
    size_t i;
    json_t *node;
    json_array_foreach(json_object_get(fx, "nodes"), i, node)
    {
        if (cache_upsert_node(c, node, &err) != 0)
            fail_msg("node %zu: %s", i, err.message);
    }
    struct hyperwatch *hw = hyperwatch_create();
    const json_t *steps = json_object_get(fx, "steps");
    assert_true(json_array_size(steps) >= 10);
    json_t *step;
    json_array_foreach(steps, i, step)
    {
        char where[512];
        snprintf(where, sizeof(where), "step %zu (%s)", i, json_string_value(json_object_get(step, "comment")));
        hyperwatch_record(hw, event_named(where, json_string_value(json_object_get(step, "event"))),
                          json_object_get(step, "object"));
        json_t *count = json_integer((json_int_t)hypernode_count(hyperwatch_set(hw)));
        fixture_check_json(where, "count", count, json_object_get(step, "count"));
        json_decref(count);
        json_t *domains = domain_names(hw, c);
        fixture_check_json(where, "domains", domains, json_object_get(step, "domains"));
        json_decref(domains);
        check_events(where, hw, json_object_get(step, "events"));
    }
    hyperwatch_destroy(hw);
    cache_destroy(c);
    json_decref(fx);
}

/* Events found and not taken yet stay until taken, in the order found; destroy frees them (the ASan build: no leak). */
static void test_pending_kept(void **state)
{
    (void)state;
    json_t *fx = fixture_json("hyperwatch/steps.json");
    const json_t *steps = json_object_get(fx, "steps");
    struct hyperwatch *hw = hyperwatch_create();
    hyperwatch_record(hw, KUBE_WATCH_ADDED, json_object_get(json_array_get(steps, 1), "object"));    /* bad, generation 1 */
    hyperwatch_record(hw, KUBE_WATCH_MODIFIED, json_object_get(json_array_get(steps, 3), "object")); /* bad, generation 2 */
    struct eventpost_list l;
    eventpost_list_init(&l);
    assert_int_equal(hyperwatch_take_events(hw, &l, NOW, "test"), 2);
    assert_int_equal(l.len, 2);
    const json_t *want0 = json_object_get(json_array_get(json_object_get(json_array_get(steps, 1), "events"), 0), "message");
    const json_t *want1 = json_object_get(json_array_get(json_object_get(json_array_get(steps, 3), "events"), 0), "message");
    assert_true(json_equal(json_object_get(l.items[0].event, "message"), want0));
    assert_true(json_equal(json_object_get(l.items[1].event, "message"), want1));
    assert_int_equal(hyperwatch_take_events(hw, &l, NOW, "test"), 0);
    assert_int_equal(l.len, 2);
    eventpost_list_finish(&l);
    hyperwatch_record(hw, KUBE_WATCH_MODIFIED, json_object_get(json_array_get(steps, 5), "object")); /* broken again: pending */
    hyperwatch_destroy(hw);
    hyperwatch_destroy(NULL);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_pending_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
