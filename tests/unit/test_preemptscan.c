/*
 * lib/sched/scan/preemptscan.c: preemption over the cache after a decision pass, on
 * tests/fixtures/preemptscan/guide.json (the guide's queue, test-cluster-0
 * admitted and running, test-cluster-1 of priority 1000 waiting), and
 * variations of it made by upserting changed objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "declare.h"
#include "prioclass.h"
#include "cachefixture.h"
#include "fixtures.h"
#include "preemptscan.h"

/* A pass over c, then a scan; out initialised by the caller. */
static void pass_and_scan(struct cache *c, struct preemptscan_result *out)
{
    struct admit *a = admit_create(c);
    struct admit_result d;
    admit_result_init(&d);
    admit_pass(a, ADMIT_PASS_FULL, &d);
    struct error err = {{0}};
    if (preemptscan_run(c, &d, NULL, 0, out, &err) != 0)
        fail_msg("preemptscan_run: %s", err.message);
    admit_result_finish(&d);
    admit_destroy(a);
}

static json_t *object(json_t *fx, const char *kind, size_t i)
{
    return json_deep_copy(json_array_get(json_object_get(fx, kind), i));
}

static void upsert_new(struct cache *c, const char *kind, json_t *obj_new)
{
    cachefixture_upsert(c, kind, obj_new);
    json_decref(obj_new);
}

static int has_note(const struct preemptscan_result *r, const char *text)
{
    for (size_t i = 0; i < r->nnotes; i++) {
        if (strstr(r->notes[i], text) != NULL)
            return 1;
    }
    return 0;
}

static void test_guide(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_PREEMPT);
    assert_string_equal(r.cluster, "test-cluster-1");
    assert_string_equal(r.gang, "ray-test-cluster-1-pg");
    assert_int_equal(r.priority, 1000);
    assert_int_equal(r.nvictims, 1);
    assert_string_equal(r.victims[0].cluster, "test-cluster-0");
    assert_string_equal(r.victims[0].resource_version, "101");
    assert_int_equal(r.victims[0].npods, 3); /* whole: every pod of the gang */
    assert_string_equal(r.victims[0].pods[0].name, "test-cluster-0-head");
    assert_string_equal(
        r.victim_message,
        "preempted by gang default/test-cluster-1 (priority 1000) in queue kuberay-test-queue: cpu 2, memory 2Gi needed");
    assert_string_equal(
        r.preemptor_message,
        "preempting gang default/test-cluster-0 (priority 0) of queue kuberay-test-queue: cpu 2, memory 2Gi needed");
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

/* test-cluster-0 says volcano.sh/preemptable: "false": no preemption, and the note says why. */
static void test_not_preemptable(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = cachefixture_load(fx, 0);
    json_t *rc = object(fx, "rayclusters", 0);
    json_object_set_new(json_object_get(json_object_get(rc, "metadata"), "labels"), "volcano.sh/preemptable", json_string("false"));
    upsert_new(c, "rayclusters", rc);
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    assert_int_equal(r.nvictims, 0);
    assert_true(has_note(&r, "gang default/test-cluster-1: no admitted gang it may preempt or reclaim"));
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

/* The queue's policy Never; a policy that does not parse is the default (and noted). */
static void test_policy(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = cachefixture_load(fx, 0);
    json_t *q = object(fx, "queues", 0);
    json_object_set_new(json_object_get(q, "metadata"), "annotations", json_pack("{s:s}", "raygate.io/preemption", "Never"));
    upsert_new(c, "queues", json_incref(q));
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    assert_true(has_note(&r, "preemption policy is Never"));
    json_object_set_new(json_object_get(q, "metadata"), "annotations", json_pack("{s:s}", "raygate.io/preemption", "Sometimes"));
    upsert_new(c, "queues", q);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_PREEMPT);
    assert_true(has_note(&r, "queue kuberay-test-queue: raygate.io/preemption: \"Sometimes\" is not LowerPriority"));
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

/* Sets metadata.labels["volcano.sh/queue-name"] of obj (borrowed). */
static void set_queue_label(json_t *obj, const char *queue)
{
    json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "labels"), "volcano.sh/queue-name", json_string(queue));
}

/* test-cluster-1's pods (3 to 5) get priority 0, as test-cluster-0's, and queue (NULL: theirs). */
static void waiting_pods_priority_0(struct cache *c, json_t *fx, const char *queue)
{
    for (size_t i = 3; i < 6; i++) {
        json_t *p = object(fx, "pods", i);
        if (queue != NULL)
            set_queue_label(p, queue);
        json_object_set_new(json_object_get(p, "spec"), "priority", json_integer(0));
        upsert_new(c, "pods", p);
    }
}

/* Equal priority under LowerPriority: no preemption. */
static void test_equal_priority(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = cachefixture_load(fx, 0);
    waiting_pods_priority_0(c, fx, NULL);
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

/*
 * The reclaim case: the guide's queue deserving cpu 0, node-1 of cpu 4, and
 * test-cluster-1 at priority 0 in queue qa (deserved cpu 4, memory 6Gi; parent
 * when not NULL). Returns the cache (the caller destroys it).
 */
static struct cache *reclaim_case(json_t *fx, const char *parent)
{
    struct cache *c = cachefixture_load(fx, 0);
    json_t *qb = object(fx, "queues", 0), *qa = object(fx, "queues", 0), *node = object(fx, "nodes", 0);
    json_object_set_new(json_object_get(qb, "spec"), "deserved", json_pack("{s:s}", "cpu", "0"));
    json_object_set_new(json_object_get(qa, "metadata"), "name", json_string("qa"));
    json_object_set_new(json_object_get(qa, "spec"), "deserved", json_pack("{s:s, s:s}", "cpu", "4", "memory", "6Gi"));
    if (parent != NULL)
        json_object_set_new(json_object_get(qa, "spec"), "parent", json_string(parent));
    json_object_set_new(json_object_get(json_object_get(node, "status"), "allocatable"), "cpu", json_string("4"));
    upsert_new(c, "queues", qb);
    upsert_new(c, "queues", qa);
    upsert_new(c, "nodes", node);
    json_t *rc = object(fx, "rayclusters", 1);
    set_queue_label(rc, "qa");
    upsert_new(c, "rayclusters", rc);
    waiting_pods_priority_0(c, fx, "qa");
    return c;
}

/*
 * Reclaim is bounded by deserved, not by priority: test-cluster-1 (cpu 3) in
 * its own queue qa (deserved cpu 4), of the same priority as test-cluster-0,
 * waits on the nodes (node-1 has cpu 4) while the guide's queue, deserving
 * cpu 0, borrows cpu 3: test-cluster-0 is reclaimed.
 */
static void test_reclaim_equal_priority(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = reclaim_case(fx, NULL);
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_RECLAIM);
    assert_string_equal(r.cluster, "test-cluster-1");
    assert_int_equal(r.nvictims, 1);
    assert_string_equal(r.victims[0].cluster, "test-cluster-0");
    assert_string_equal(r.victim_message,
                        "reclaimed by gang default/test-cluster-1 (priority 0) in queue qa: cpu 3, memory 4Gi needed on the nodes");
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

/*
 * The tree: the reclaim of test_reclaim_equal_priority with qa under queue
 * eng. The preemptor must fit eng's capability too: cpu 2 refuses it, cpu 8
 * lets it reclaim; and the root's, a Queue named root.
 */
static void test_reclaim_tree(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = reclaim_case(fx, "eng");
    json_t *eng = object(fx, "queues", 0);
    json_object_set_new(json_object_get(eng, "metadata"), "name", json_string("eng"));
    json_object_set_new(json_object_get(eng, "spec"), "capability", json_pack("{s:s}", "cpu", "2"));
    upsert_new(c, "queues", json_incref(eng));
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    assert_true(has_note(&r, "gang default/test-cluster-1: evicting every gang it may preempt or reclaim would not admit it"));
    json_object_set_new(json_object_get(eng, "spec"), "capability", json_pack("{s:s}", "cpu", "8"));
    upsert_new(c, "queues", eng);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_RECLAIM);
    assert_int_equal(r.nvictims, 1);
    assert_string_equal(r.victims[0].cluster, "test-cluster-0");
    /* A Queue named root caps the whole tree: cpu 2 refuses it too. */
    json_t *root = object(fx, "queues", 0);
    json_object_set_new(json_object_get(root, "metadata"), "name", json_string("root"));
    json_object_set_new(json_object_get(root, "spec"), "capability", json_pack("{s:s}", "cpu", "2"));
    upsert_new(c, "queues", root);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

/* A preemption in flight (a victim not admitted whose pods are still there): no other. */
static void test_in_flight(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = cachefixture_load(fx, 0);
    json_t *rc = object(fx, "rayclusters", 0);
    json_object_set_new(json_object_get(rc, "metadata"), "annotations",
                        json_pack("{s:s}", "raygate.io/preempted-by", "default/test-cluster-1"));
    upsert_new(c, "rayclusters", rc);
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    assert_true(has_note(&r, "a preemption is in flight"));
    /* Its pods gone: the way is clear again (nothing admitted to preempt, and the waiting gang fits). */
    for (size_t i = 0; i < 3; i++)
        cache_delete_pod(c, "default",
                         json_string_value(
                             json_object_get(json_object_get(json_array_get(json_object_get(fx, "pods"), i), "metadata"), "name")));
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    assert_false(has_note(&r, "a preemption is in flight"));
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

/* A topology-constrained preemptor frees one rack (racks.json); without its constraint, a node in each. */
static void test_topology(void **state)
{
    (void)state;
    json_t *fx = fixture_json("preemptscan/racks.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.kind, PREEMPT_KIND_PREEMPT);
    assert_string_equal(r.cluster, "test-cluster-1");
    assert_int_equal(r.nvictims, 2);
    assert_string_equal(r.victims[0].cluster, "lo-a");
    assert_string_equal(r.victims[1].cluster, "mid-a");
    assert_non_null(r.domain);
    assert_string_equal(r.domain, "a");
    assert_non_null(strstr(r.victim_message, "needed on the nodes in one rack domain: a"));
    preemptscan_result_finish(&r);
    /* The same preemptor without a constraint: one node in each rack. */
    size_t i = json_array_size(json_object_get(fx, "rayclusters")) - 1;
    json_t *rc = object(fx, "rayclusters", i);
    json_object_del(json_object_get(rc, "metadata"), "annotations");
    json_object_set_new(json_object_get(rc, "metadata"), "resourceVersion", json_string("200"));
    upsert_new(c, "rayclusters", rc);
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    assert_int_equal(r.nvictims, 2);
    assert_string_equal(r.victims[0].cluster, "lo-a");
    assert_string_equal(r.victims[1].cluster, "lo-b");
    assert_null(r.domain);
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
}

/*
 * Reclaim by deserved derived by weight (raygate.io/reclaim-by-weight): the
 * case of test_reclaim_equal_priority with neither queue setting deserved.
 * Sets both queues' weights (qa's, then the guide's) and, when opt_in is not
 * NULL, the annotation on that queue ("qa", "kuberay-test-queue", or "eng":
 * a parent of both).
 */
static struct cache *by_weight_case(json_t *fx, int wa, int wb, const char *opt_in)
{
    struct cache *c = reclaim_case(fx, NULL);
    const char *names[] = {"qa", "kuberay-test-queue"};
    int weights[] = {wa, wb};
    for (size_t i = 0; i < 2; i++) {
        json_t *q = object(fx, "queues", 0);
        json_object_set_new(json_object_get(q, "metadata"), "name", json_string(names[i]));
        json_object_set_new(json_object_get(q, "spec"), "weight", json_integer(weights[i]));
        if (opt_in != NULL && strcmp(opt_in, "eng") == 0)
            json_object_set_new(json_object_get(q, "spec"), "parent", json_string("eng"));
        if (opt_in != NULL && strcmp(opt_in, names[i]) == 0)
            json_object_set_new(json_object_get(q, "metadata"), "annotations",
                                json_pack("{s:s}", "raygate.io/reclaim-by-weight", "true"));
        upsert_new(c, "queues", q);
    }
    if (opt_in != NULL && strcmp(opt_in, "eng") == 0) {
        json_t *eng = object(fx, "queues", 0);
        json_object_set_new(json_object_get(eng, "metadata"), "name", json_string("eng"));
        json_object_set_new(json_object_get(eng, "spec"), "capability", json_pack("{s:s}", "cpu", "8"));
        json_object_set_new(json_object_get(eng, "metadata"), "annotations",
                            json_pack("{s:s}", "raygate.io/reclaim-by-weight", "true"));
        upsert_new(c, "queues", eng);
    }
    return c;
}

/* The kind of preemption scanned on by_weight_case(fx, wa, wb, opt_in). */
static enum preempt_kind by_weight_kind(int wa, int wb, const char *opt_in)
{
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = by_weight_case(fx, wa, wb, opt_in);
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    enum preempt_kind kind = r.kind;
    if (kind == PREEMPT_KIND_RECLAIM) {
        assert_int_equal(r.nvictims, 1);
        assert_string_equal(r.victims[0].cluster, "test-cluster-0");
    }
    preemptscan_result_finish(&r);
    cache_destroy(c);
    json_decref(fx);
    return kind;
}

/*
 * node-1 has cpu 4; the guide's queue borrows cpu 3 with weight 0 (it
 * deserves nothing), qa (weight 1) waits for cpu 3: qa's derived deserved is
 * cpu 4. It reclaims only when both queues opt in (on themselves, or on a
 * parent of both). With equal weights qa deserves cpu 2 < 3: no reclaim.
 */
static void test_reclaim_by_weight(void **state)
{
    (void)state;
    assert_int_equal(by_weight_kind(1, 0, NULL), PREEMPT_KIND_NONE);
    assert_int_equal(by_weight_kind(1, 0, "qa"), PREEMPT_KIND_NONE); /* the borrower has no deserved: not a victim */
    assert_int_equal(by_weight_kind(1, 0, "kuberay-test-queue"), PREEMPT_KIND_NONE);
    assert_int_equal(by_weight_kind(1, 0, "eng"), PREEMPT_KIND_RECLAIM);
    assert_int_equal(by_weight_kind(1, 1, "eng"), PREEMPT_KIND_NONE);
}

/*
 * test-cluster-1 held by the webhook (--hold-gangs): suspended, no pod, its
 * members declared (declare.h), its class ray-high from its label. A declared
 * pod has no spec.priority: the gang's is the class's value, so it preempts
 * test-cluster-0 as in test_guide once the PriorityClass is known (1000),
 * and not while it is unknown (0, equal: LowerPriority preempts nothing).
 */
static void held_preemptor(int with_class)
{
    json_t *fx = fixture_json("preemptscan/guide.json");
    struct cache *c = cachefixture_load(fx, 0);
    struct prioclasses *s = prioclass_set_create();
    prioclass_use(c, s);
    json_t *pc = json_pack("{s:{s:s},s:i}", "metadata", "name", "ray-high", "value", 1000);
    json_t *other = json_pack("{s:{s:s},s:i,s:b}", "metadata", "name", "other", "value", 5000, "globalDefault", 0);
    prioclass_record(c, 0, other); /* another class: not the one named */
    if (with_class)
        prioclass_record(c, 0, pc);
    for (size_t i = 3; i < 6; i++) { /* KubeRay deleted them: suspended */
        const char *name =
            json_string_value(json_object_get(json_object_get(json_array_get(json_object_get(fx, "pods"), i), "metadata"), "name"));
        cache_delete_pod(c, "default", name);
    }
    json_t *rc = object(fx, "rayclusters", 1);
    json_t *meta = json_object_get(rc, "metadata");
    json_object_set_new(json_object_get(meta, "labels"), "ray.io/priority-class-name", json_string("ray-high"));
    json_object_set_new(meta, "annotations", json_pack("{s:s}", "raygate.io/held-suspended", "true"));
    json_object_set_new(json_object_get(rc, "spec"), "suspend", json_true());
    cachefixture_upsert(c, "rayclusters", rc);
    struct error err = {{0}};
    assert_int_equal(declare_sync_cluster(c, rc, &err), 0);
    json_decref(rc);
    struct preemptscan_result r;
    preemptscan_result_init(&r);
    pass_and_scan(c, &r);
    if (with_class) {
        assert_int_equal(r.kind, PREEMPT_KIND_PREEMPT);
        assert_string_equal(r.cluster, "test-cluster-1");
        assert_int_equal(r.priority, 1000);
        assert_int_equal(r.nvictims, 1);
        assert_string_equal(r.victims[0].cluster, "test-cluster-0");
    } else {
        assert_int_equal(r.kind, PREEMPT_KIND_NONE);
    }
    preemptscan_result_finish(&r);
    cache_destroy(c);
    prioclass_set_destroy(s);
    json_decref(pc);
    json_decref(other);
    json_decref(fx);
}

static void test_held_preemptor(void **state)
{
    (void)state;
    held_preemptor(1);
    held_preemptor(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guide),           cmocka_unit_test(test_topology),
        cmocka_unit_test(test_not_preemptable), cmocka_unit_test(test_policy),
        cmocka_unit_test(test_equal_priority),  cmocka_unit_test(test_held_preemptor),
        cmocka_unit_test(test_in_flight),       cmocka_unit_test(test_reclaim_equal_priority),
        cmocka_unit_test(test_reclaim_tree),    cmocka_unit_test(test_reclaim_by_weight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
