/*
 * lib/sched/preempt/preempthold.c and its hook in admit.c: the room freed by a
 * preemption's victims is held for the preemptor, against its queue
 * (tests/fixtures/preempthold/queue.json) and on the nodes (nodes.json),
 * until the victims' pods are gone and it is admitted; the hold ends when the
 * preemptor is deleted or after PREEMPTHOLD_MAX_MS; and a victim's queue share
 * is released only when its pods are gone.
 *
 * In both fixtures test-cluster-0 (priority 0) was preempted by test-cluster-1
 * (priority 1000) at 10:03:00 and its pods are still bound; third (priority
 * 2000) arrived since.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "cachefixture.h"
#include "evict.h"
#include "fixtures.h"
#include "preempthold.h"

#define PREEMPTOR "test-cluster-1"

/* The time of the passes: 10 s after the eviction, unless a test moves it. */
static int64_t evicted_ms(void)
{
    int64_t ms = 0;
    if (evict_parse_time("2024-05-01T10:03:00Z", &ms) != 0)
        fail_msg("evict_parse_time");
    return ms;
}

/* One pass of a at now_ms; the decisions into d (finished and initialised again by the caller's next call). */
static void pass_at(struct admit *a, int64_t now_ms, struct admit_result *d)
{
    admit_result_finish(d);
    admit_result_init(d);
    admit_set_now(a, now_ms);
    admit_pass(a, ADMIT_PASS_FULL, d);
}

/* The decision of cluster in d, or NULL. */
static const struct admit_decision *decision(const struct admit_result *d, const char *cluster)
{
    for (size_t i = 0; i < d->len; i++) {
        if (strcmp(d->items[i].cluster, cluster) == 0 && d->items[i].action != ADMIT_ACTION_TAIL_WAIT)
            return &d->items[i];
    }
    return NULL;
}

static void assert_action(const struct admit_result *d, const char *cluster, enum admit_action action)
{
    const struct admit_decision *x = decision(d, cluster);
    if (x == NULL)
        fail_msg("no decision for %s", cluster);
    if (x->action != action)
        fail_msg("%s: %s (%s), want %s", cluster, admit_result_action_name(x->action), x->message ? x->message : "",
                 admit_result_action_name(action));
}

/* The controller's part after a pass: admitted gangs marked, their pods ungated. */
static void record(struct cache *c, const struct admit_result *d)
{
    for (size_t i = 0; i < d->len; i++) {
        const struct admit_decision *x = &d->items[i];
        if (x->action != ADMIT_ACTION_ADMIT)
            continue;
        struct cache_gang *g = cache_gang_get(c, x->namespace_, x->cluster);
        cache_gang_mark_admitted(c, g, "2024-05-01T10:03:10Z");
        for (size_t k = 0; k < x->npods; k++) {
            struct cache_pod *p = cache_pod_get(c, x->namespace_, x->pods[k].name);
            cache_pod_mark_ungated(c, p);
        }
    }
}

/* Deletes the first n pods of test-cluster-0 (the victim) from the cache. */
static void victim_pods_gone(struct cache *c, const json_t *fx, size_t n)
{
    const json_t *pods = json_object_get(fx, "pods");
    for (size_t i = 0; i < n; i++)
        cache_delete_pod(c, "default",
                         json_string_value(json_object_get(json_object_get(json_array_get(pods, i), "metadata"), "name")));
}

/* A test's world: a fixture loaded into a cache, an admit over it, and the decisions of its last pass. */
struct world {
    json_t *fx;
    struct cache *c;
    struct admit *a;
    struct admit_result d;
};

static int world_setup(void **state, const char *fixture)
{
    struct world *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return -1;
    w->fx = fixture_json(fixture);
    w->c = cachefixture_load(w->fx, 0);
    w->a = admit_create(w->c);
    admit_result_init(&w->d);
    *state = w;
    return 0;
}

static int setup_queue(void **state)
{
    return world_setup(state, "preempthold/queue.json");
}

static int setup_nodes(void **state)
{
    return world_setup(state, "preempthold/nodes.json");
}

static int setup_topology(void **state)
{
    return world_setup(state, "preempthold/topology.json");
}

static int teardown(void **state)
{
    struct world *w = *state;
    admit_result_finish(&w->d);
    admit_destroy(w->a);
    cache_destroy(w->c);
    json_decref(w->fx);
    free(w);
    return 0;
}

/*
 * Queue: while the victim's pods remain, the preemptor's minResources are
 * charged to the queue (small, cpu 1, would fit beside the victim alone);
 * once they are gone, the preemptor is weighed first and admitted, though
 * third has a higher priority and would otherwise take the queue's room.
 */
static void test_queue_held(void **state)
{
    struct world *w = *state;
    json_t *fx = w->fx;
    struct cache *c = w->c;
    struct admit *a = w->a;
    struct admit_result *d = &w->d;
    int64_t now = evicted_ms() + 10000;

    pass_at(a, now, d);
    record(c, d);
    assert_action(d, PREEMPTOR, ADMIT_ACTION_WAIT);
    assert_non_null(strstr(decision(d, PREEMPTOR)->message,
                           "its room is held until the pods of the gangs it preempted are gone (default/test-cluster-0)"));
    assert_action(d, "small", ADMIT_ACTION_WAIT); /* without the hold: admitted (cpu 3 + 1 of 4) */
    assert_action(d, "third", ADMIT_ACTION_WAIT);
    assert_action(d, "test-cluster-0", ADMIT_ACTION_WAIT);
    assert_int_equal(decision(d, "test-cluster-0")->reason, ADMIT_REASON_EVICTED);
    const struct preempthold_item *it = admit_held(a, cache_gang_get(c, "default", PREEMPTOR));
    assert_non_null(it);
    assert_true(it->victims_remain);
    assert_string_equal(it->victims, "default/test-cluster-0");

    /* One of its three pods gone (cpu 2 of the queue still held by the other two): still held. */
    victim_pods_gone(c, fx, 1);
    pass_at(a, now + 1000, d);
    record(c, d);
    assert_action(d, PREEMPTOR, ADMIT_ACTION_WAIT);
    assert_action(d, "small", ADMIT_ACTION_WAIT);
    assert_action(d, "third", ADMIT_ACTION_WAIT);

    /* All gone: the preemptor first, then small fits beside it; third (cpu 2) does not. */
    victim_pods_gone(c, fx, 3);
    pass_at(a, now + 2000, d);
    record(c, d);
    assert_action(d, PREEMPTOR, ADMIT_ACTION_ADMIT);
    assert_action(d, "third", ADMIT_ACTION_WAIT);
    assert_action(d, "small", ADMIT_ACTION_ADMIT);
    assert_int_equal(d->items[0].action, ADMIT_ACTION_ADMIT); /* weighed before every other gang */
    assert_string_equal(d->items[0].cluster, PREEMPTOR);
    assert_null(admit_held(a, cache_gang_get(c, "default", PREEMPTOR)));
    pass_at(a, now + 3000, d);
    assert_null(admit_held(a, cache_gang_get(c, "default", PREEMPTOR)));
}

/*
 * The victim's pods gone in the pass that follows a restart (nothing
 * remembered): nothing is held any more, and the gangs go in order. With the
 * hold remembered across the passes, the preemptor is weighed first one last
 * time (test_queue_held).
 */
static void test_restart_rebuilds(void **state)
{
    struct world *w = *state;
    struct cache *c = w->c;
    struct admit *a = w->a;
    struct admit_result *d = &w->d;
    int64_t now = evicted_ms() + 10000;
    /* A restarted controller: the hold comes from the victims' records alone. */
    pass_at(a, now, d);
    assert_non_null(admit_held(a, cache_gang_get(c, "default", PREEMPTOR)));
    admit_destroy(a);
    a = w->a = admit_create(c);
    pass_at(a, now, d);
    assert_non_null(admit_held(a, cache_gang_get(c, "default", PREEMPTOR)));
    assert_action(d, "small", ADMIT_ACTION_WAIT);
}

/* The preemptor deleted: the hold ends, small is admitted beside the victim's pods. */
static void test_preemptor_gone(void **state)
{
    struct world *w = *state;
    struct cache *c = w->c;
    struct admit *a = w->a;
    struct admit_result *d = &w->d;
    int64_t now = evicted_ms() + 10000;
    pass_at(a, now, d);
    record(c, d);
    assert_action(d, "small", ADMIT_ACTION_WAIT);
    cache_delete_raycluster(c, "default", PREEMPTOR);
    pass_at(a, now + 1000, d);
    record(c, d);
    assert_null(admit_held(a, cache_gang_get(c, "default", PREEMPTOR)));
    assert_action(d, "small", ADMIT_ACTION_ADMIT);
}

/* The victims' pods still there PREEMPTHOLD_MAX_MS after the eviction: the eviction gave up, and so does the hold. */
static void test_gives_up(void **state)
{
    struct world *w = *state;
    struct cache *c = w->c;
    struct admit *a = w->a;
    struct admit_result *d = &w->d;
    int64_t at = evicted_ms();
    pass_at(a, at + PREEMPTHOLD_MAX_MS - 1, d);
    assert_non_null(admit_held(a, cache_gang_get(c, "default", PREEMPTOR)));
    assert_action(d, "small", ADMIT_ACTION_WAIT);
    pass_at(a, at + PREEMPTHOLD_MAX_MS, d);
    assert_null(admit_held(a, cache_gang_get(c, "default", PREEMPTOR)));
    assert_action(d, "small", ADMIT_ACTION_ADMIT);
    /* No longer in flight either: other preemptions may start (preemptscan). */
    const struct cache_gang *v = cache_gang_get(c, "default", "test-cluster-0");
    assert_true(preempthold_in_flight(v, at + PREEMPTHOLD_MAX_MS - 1));
    assert_false(preempthold_in_flight(v, at + PREEMPTHOLD_MAX_MS));
}

/*
 * Nodes: node-1 has cpu 4, the victim's 3 pods fill 3. With one of them gone
 * the preemptor (3 pods of cpu 1) does not fit yet; its members are placed
 * where they fit, so that third (another queue, priority 2000, cpu 2) does
 * not take the room. Once the victim's pods are gone, the preemptor is
 * admitted and third still waits. Without the hold, third would be admitted
 * on the room of the first pod gone, and the preemptor never.
 */
static void test_nodes_held(void **state)
{
    struct world *w = *state;
    json_t *fx = w->fx;
    struct cache *c = w->c;
    struct admit *a = w->a;
    struct admit_result *d = &w->d;
    int64_t now = evicted_ms() + 10000;
    victim_pods_gone(c, fx, 1);
    pass_at(a, now, d);
    record(c, d);
    assert_action(d, PREEMPTOR, ADMIT_ACTION_WAIT);
    assert_int_equal(decision(d, PREEMPTOR)->reason, ADMIT_REASON_NODES);
    assert_action(d, "third", ADMIT_ACTION_WAIT);
    assert_int_equal(decision(d, "third")->reason, ADMIT_REASON_NODES);
    victim_pods_gone(c, fx, 3);
    pass_at(a, now + 1000, d);
    record(c, d);
    assert_action(d, PREEMPTOR, ADMIT_ACTION_ADMIT);
    assert_action(d, "third", ADMIT_ACTION_WAIT);
}

/*
 * A topology-constrained preemptor's room is held in the domain its victims
 * free (rack b), not on the first nodes with room (node-0, rack a, where it
 * can never go): third takes node-0 meanwhile; once the victim's pods are
 * gone the preemptor is admitted in rack b.
 */
static void test_topology_held(void **state)
{
    struct world *w = *state;
    for (int step = 0; step < 2; step++) {
        pass_at(w->a, evicted_ms() + 10000 + 1000 * step, &w->d);
        record(w->c, &w->d);
        if (step == 0) {
            assert_action(&w->d, PREEMPTOR, ADMIT_ACTION_WAIT);
            assert_non_null(strstr(decision(&w->d, PREEMPTOR)->message, "its room is held"));
            assert_action(&w->d, "third", ADMIT_ACTION_ADMIT);
            victim_pods_gone(w->c, w->fx, 3);
        }
    }
    assert_action(&w->d, PREEMPTOR, ADMIT_ACTION_ADMIT);
}

/* The preemptor deleted while it holds node room: third takes the room at once. */
static void test_nodes_preemptor_gone(void **state)
{
    struct world *w = *state;
    json_t *fx = w->fx;
    struct cache *c = w->c;
    struct admit *a = w->a;
    struct admit_result *d = &w->d;
    int64_t now = evicted_ms() + 10000;
    victim_pods_gone(c, fx, 1);
    pass_at(a, now, d);
    assert_action(d, "third", ADMIT_ACTION_WAIT);
    cache_delete_raycluster(c, "default", PREEMPTOR);
    pass_at(a, now + 1000, d);
    assert_action(d, "third", ADMIT_ACTION_ADMIT);
}

/*
 * A victim's queue share is released only when its pods are gone (kueue
 * #15980): with no preemptor to hold for (it names one that does not
 * exist), third (cpu 2) waits while the evicted victim's pods remain, bound
 * or terminating, and is admitted once they are gone.
 */
static void test_victim_share_until_gone(void **state)
{
    struct world *w = *state;
    json_t *fx = w->fx;
    struct cache *c = w->c;
    struct admit *a = w->a;
    struct admit_result *d = &w->d;
    cache_delete_raycluster(c, "default", PREEMPTOR);
    cache_delete_raycluster(c, "default", "small");
    int64_t now = evicted_ms() + 10000;
    pass_at(a, now, d);
    assert_null(admit_held(a, cache_gang_get(c, "default", PREEMPTOR)));
    assert_action(d, "third", ADMIT_ACTION_WAIT);
    assert_int_equal(decision(d, "third")->reason, ADMIT_REASON_QUEUE_CAPACITY);
    /* Terminating: still held. */
    const json_t *pods = json_object_get(fx, "pods");
    for (size_t i = 0; i < 3; i++) {
        json_t *p = json_deep_copy(json_array_get(pods, i));
        json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp", json_string("2024-05-01T10:03:01Z"));
        cachefixture_upsert(c, "pods", p);
        json_decref(p);
    }
    pass_at(a, now + 1000, d);
    assert_action(d, "third", ADMIT_ACTION_WAIT);
    victim_pods_gone(c, fx, 3);
    pass_at(a, now + 2000, d);
    assert_action(d, "third", ADMIT_ACTION_ADMIT);
}

/* cache_gang_mark_preempted holds before the watch shows the record, and stands against an upsert of the same resourceVersion. */
static void test_marked(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct cache_gang *v = cache_gang_get(c, "default", "test-cluster-0");
    struct evict_record rec = {.evicted_at_ms = evicted_ms(), .requeue_at_ms = evicted_ms(), .reason = EVICT_REASON_PREEMPTED};
    cache_gang_mark_evicted(c, v, &rec);
    cache_gang_mark_preempted(c, v, "default/" PREEMPTOR);
    struct preempthold *h = preempthold_create();
    const struct preempthold_item *items;
    assert_int_equal(preempthold_refresh(h, c, evicted_ms() + 1, &items), 1);
    assert_string_equal(items[0].g->name, PREEMPTOR);
    cachefixture_upsert(c, "rayclusters", json_array_get(json_object_get(fx, "rayclusters"), 0)); /* the same version again */
    assert_string_equal(v->preempted_by, "default/" PREEMPTOR);
    assert_int_equal(preempthold_refresh(h, c, evicted_ms() + 2, &items), 1);
    /* The cache's list of gangs with a preemptor (what a refresh walks): the victim, until its RayCluster goes. */
    assert_ptr_equal(c->preempted, v);
    assert_null(v->pre_next);
    cache_delete_raycluster(c, "default", "test-cluster-0");
    assert_null(c->preempted);
    /* Held once more, its victims gone (the one look after), until a pass lets it go. */
    assert_int_equal(preempthold_refresh(h, c, evicted_ms() + 3, &items), 1);
    assert_false(items[0].victims_remain);
    preempthold_forget(h, items[0].g);
    assert_int_equal(preempthold_refresh(h, c, evicted_ms() + 4, &items), 0);
    preempthold_destroy(h);
    cache_destroy(c);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_queue_held, setup_queue, teardown),
        cmocka_unit_test_setup_teardown(test_restart_rebuilds, setup_queue, teardown),
        cmocka_unit_test_setup_teardown(test_preemptor_gone, setup_queue, teardown),
        cmocka_unit_test_setup_teardown(test_gives_up, setup_queue, teardown),
        cmocka_unit_test_setup_teardown(test_nodes_held, setup_nodes, teardown),
        cmocka_unit_test_setup_teardown(test_nodes_preemptor_gone, setup_nodes, teardown),
        cmocka_unit_test_setup_teardown(test_topology_held, setup_topology, teardown),
        cmocka_unit_test_setup_teardown(test_victim_share_until_gone, setup_queue, teardown),
        cmocka_unit_test(test_marked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
