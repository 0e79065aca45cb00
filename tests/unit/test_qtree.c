/* Unit tests for lib/sched/qtree: the queue tree's capability, guarantee, deserved, share and pick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache.h"
#include "qtree.h"

/* A cache with one Ready node of cpu and the queues of the JSON array queues (borrowed text). */
static struct cache *load(const char *queues, const char *cpu)
{
    struct cache *c = cache_create();
    struct error err;
    json_t *node = json_pack("{s:{s:s},s:{s:{s:s,s:s},s:[{s:s,s:s}]}}", "metadata", "name", "n1", "status", "allocatable", "cpu",
                             cpu, "pods", "1000", "conditions", "type", "Ready", "status", "True");
    assert_int_equal(cache_upsert_node(c, node, &err), 0);
    json_decref(node);
    json_error_t jerr;
    json_t *arr = json_loads(queues, 0, &jerr);
    if (arr == NULL)
        fail_msg("fixture: %s", jerr.text);
    size_t i;
    json_t *q;
    json_array_foreach(arr, i, q) assert_int_equal(cache_upsert_queue(c, q, &err), 0);
    json_decref(arr);
    return c;
}

static size_t idx(const struct qtree *t, struct cache *c, const char *name)
{
    size_t i = qtree_index(t, cache_queue_get(c, name));
    assert_int_not_equal(i, QUEUETREE_ROOT);
    return i;
}

static uint32_t cpu_id(struct cache *c)
{
    return shape_resource_id(&c->shapes, "cpu");
}

/* cpu (millicores) of v, dense. */
static int64_t *vec(const struct qtree *t, uint32_t cpu, int64_t milli)
{
    static int64_t v[16];
    memset(v, 0, sizeof(v));
    assert_true(t->nres <= 16);
    v[cpu] = milli;
    return v;
}

#define Q(name, rest) "{\"metadata\":{\"name\":\"" name "\"},\"spec\":{" rest "}}"

/* docs/queues.md's tree: root -> eng (cpu 16) -> {train (deserved 8), infer (deserved 8)}, research (cpu 8). */
static const char *issue_tree =
    "[" Q("eng", "\"capability\":{\"cpu\":\"16\"}") "," Q("train", "\"parent\":\"eng\",\"deserved\":{\"cpu\":\"8\"}") "," Q(
        "infer", "\"parent\":\"eng\",\"deserved\":{\"cpu\":\"8\"}") "," Q("research", "\"capability\":{\"cpu\":\"8\"}") "]";

static void test_capability_every_level(void **state)
{
    (void)state;
    struct cache *c = load(issue_tree, "64");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t eng = idx(&t, c, "eng"), train = idx(&t, c, "train"), infer = idx(&t, c, "infer"), research = idx(&t, c, "research");
    assert_true(t.nested);
    assert_int_equal(t.queues[train].parent, eng);
    assert_int_equal(t.queues[train].cap[cpu], 16000); /* a child's capability defaults to its parent's */
    assert_int_equal(t.total[cpu], 64000);
    assert_false(qtree_leaf_usable(&t, eng));
    assert_true(qtree_leaf_usable(&t, train));
    struct qtree_block why;
    /* train borrows infer's idle room up to eng's 16 */
    qtree_add_alloc(&t, train, vec(&t, cpu, 12000), 1);
    assert_int_equal(t.queues[eng].alloc[cpu], 12000);
    assert_true(qtree_fits(&t, train, vec(&t, cpu, 4000), &why));
    assert_false(qtree_fits(&t, infer, vec(&t, cpu, 8000), &why));
    assert_int_equal(why.kind, QTREE_BLOCK_CAPABILITY);
    assert_int_equal(why.level, eng);
    struct util_buf b = {0};
    qtree_block_text(&t, infer, &why, c, &b);
    assert_string_equal(b.data, "queue eng (parent of infer): cpu 12 of 16 allocated");
    util_buf_finish(&b);
    /* research cannot exceed its 8 with eng idle */
    assert_true(qtree_fits(&t, research, vec(&t, cpu, 8000), &why));
    assert_false(qtree_fits(&t, research, vec(&t, cpu, 9000), &why));
    assert_int_equal(why.level, research);
    /* a gang naming eng: not a leaf, its children named */
    assert_false(qtree_fits(&t, eng, vec(&t, cpu, 1000), &why));
    assert_int_equal(why.kind, QTREE_BLOCK_NOT_LEAF);
    qtree_block_text(&t, eng, &why, c, &b);
    assert_string_equal(b.data, "queue eng has children (infer, train): only leaf queues hold gangs");
    util_buf_finish(&b);
    qtree_finish(&t);
    cache_destroy(c);
}

/* A child's capability above its parent's is the parent's; a root Queue caps the root's children together. */
static void test_capability_above_parent(void **state)
{
    (void)state;
    struct cache *c = load("[" Q("root", "\"capability\":{\"cpu\":\"10\"}") "," Q("p", "\"capability\":{\"cpu\":\"6\"}") "," Q(
                               "kid", "\"parent\":\"p\",\"capability\":{\"cpu\":\"9\"}") "," Q("other", "") "]",
                           "64");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t kid = idx(&t, c, "kid"), other = idx(&t, c, "other"), root = idx(&t, c, "root");
    assert_int_equal(t.queues[kid].cap[cpu], 6000);
    assert_int_equal(t.queues[other].cap[cpu], 10000);
    assert_false(qtree_leaf_usable(&t, root));
    struct util_buf rb = {0};
    qtree_children_text(&t, root, &rb); /* the root Queue's children are the root's */
    assert_string_equal(rb.data, "other, p");
    util_buf_finish(&rb);
    struct qtree_block why;
    assert_false(qtree_fits(&t, kid, vec(&t, cpu, 7000), &why));
    assert_int_equal(why.level, idx(&t, c, "p"));
    qtree_add_alloc(&t, other, vec(&t, cpu, 6000), 1);
    assert_false(qtree_fits(&t, kid, vec(&t, cpu, 5000), &why));
    assert_int_equal(why.level, root);
    struct util_buf b = {0};
    qtree_block_text(&t, kid, &why, c, &b);
    assert_string_equal(b.data, "queue root (the root): cpu 6 of 10 allocated");
    util_buf_finish(&b);
    qtree_finish(&t);
    cache_destroy(c);
}

/* Room guaranteed to infer and idle is not given to train; infer uses it; nor to a cousin across the root. */
static void test_guarantee_not_lent(void **state)
{
    (void)state;
    struct cache *c = load(
        "[" Q("eng", "\"capability\":{\"cpu\":\"16\"}") "," Q("train", "\"parent\":\"eng\"") "," Q(
            "infer",
            "\"parent\":\"eng\",\"guarantee\":{\"resource\":{\"cpu\":\"4\"}}") "," Q("ops", "\"guarantee\":{\"resource\":{\"cpu\":"
                                                                                            "\"8\"}}") "," Q("research", "") "]",
        "32");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t train = idx(&t, c, "train"), infer = idx(&t, c, "infer"), research = idx(&t, c, "research");
    struct qtree_block why;
    assert_true(qtree_fits(&t, train, vec(&t, cpu, 12000), &why));
    assert_false(qtree_fits(&t, train, vec(&t, cpu, 13000), &why));
    assert_int_equal(why.kind, QTREE_BLOCK_GUARANTEE);
    assert_int_equal(why.other, infer);
    struct util_buf b = {0};
    qtree_block_text(&t, train, &why, c, &b);
    assert_string_equal(b.data,
                        "queue infer's guarantee (cpu 4) is reserved under eng: the others there hold or reserve cpu 4 of 16");
    util_buf_finish(&b);
    qtree_add_alloc(&t, train, vec(&t, cpu, 12000), 1);
    assert_true(qtree_fits(&t, infer, vec(&t, cpu, 4000), &why)); /* its own guarantee */
    /* across the root: 32 total, ops reserves 8, eng's subtree at least 16 (12 + infer's 4) */
    assert_true(qtree_fits(&t, research, vec(&t, cpu, 8000), &why));
    assert_false(qtree_fits(&t, research, vec(&t, cpu, 9000), &why));
    assert_int_equal(why.kind, QTREE_BLOCK_GUARANTEE);
    assert_int_equal(why.other, idx(&t, c, "ops"));
    qtree_finish(&t);
    cache_destroy(c);
}

/* Water-filling by weight: 1:2:1 of 8; a capped queue's leftover shared again; weight 0; explicit kept; nested. */
static void test_derive_weights(void **state)
{
    (void)state;
    struct cache *c = load("[" Q("a", "\"weight\":1") "," Q("b", "\"weight\":2") "," Q("d", "\"weight\":1") "]", "8");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t a = idx(&t, c, "a"), b = idx(&t, c, "b"), d = idx(&t, c, "d");
    for (size_t i = 0; i < 3; i++)
        qtree_add_demand(&t, i, vec(&t, cpu, 100000), 1);
    qtree_derive(&t);
    assert_int_equal(t.queues[a].deserved[cpu], 2000);
    assert_int_equal(t.queues[b].deserved[cpu], 4000);
    assert_int_equal(t.queues[d].deserved[cpu], 2000);
    assert_false(t.queues[a].explicit_deserved);
    /* a asks for 1 only: 7 left for b and d, 2:1 */
    qtree_build(&t, c, c->shapes.nresources);
    qtree_add_demand(&t, a, vec(&t, cpu, 1000), 1);
    qtree_add_demand(&t, b, vec(&t, cpu, 100000), 1);
    qtree_add_demand(&t, d, vec(&t, cpu, 100000), 1);
    qtree_derive(&t);
    assert_int_equal(t.queues[a].deserved[cpu], 1000);
    assert_int_equal(t.queues[b].deserved[cpu], 4666);
    assert_int_equal(t.queues[d].deserved[cpu], 2333);
    qtree_finish(&t);
    cache_destroy(c);

    c = load(
        "[" Q("eng", "\"weight\":1") "," Q("train", "\"parent\":\"eng\",\"weight\":1") "," Q(
            "infer",
            "\"parent\":\"eng\","
            "\"weight\":3") "," Q("idle", "\"weight\":0") "," Q("fixed", "\"deserved\":{\"cpu\":\"4\"}") "," Q("research",
                                                                                                               "\"weight\":1") "]",
        "20");
    cpu = cpu_id(c);
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t names[4] = {idx(&t, c, "train"), idx(&t, c, "infer"), idx(&t, c, "idle"), idx(&t, c, "research")};
    for (size_t i = 0; i < 4; i++)
        qtree_add_demand(&t, names[i], vec(&t, cpu, 100000), 1);
    qtree_derive(&t);
    assert_int_equal(t.queues[idx(&t, c, "fixed")].deserved[cpu], 4000);
    assert_int_equal(t.queues[names[2]].deserved[cpu], 0);
    assert_int_equal(t.queues[idx(&t, c, "eng")].deserved[cpu], 8000);
    assert_int_equal(t.queues[names[3]].deserved[cpu], 8000);
    assert_int_equal(t.queues[names[0]].deserved[cpu], 2000);
    assert_int_equal(t.queues[names[1]].deserved[cpu], 6000);
    qtree_finish(&t);
    cache_destroy(c);
}

/* A resource is contended at a level when the siblings demand more than the parent's room (the root's: the nodes'). */
static void test_contended(void **state)
{
    (void)state;
    struct cache *c = load("[" Q("eng", "\"weight\":1") "," Q("train", "\"parent\":\"eng\"") "," Q(
                               "infer", "\"parent\":\"eng\"") "," Q("research", "\"weight\":1") "]",
                           "8");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t eng = idx(&t, c, "eng"), train = idx(&t, c, "train"), infer = idx(&t, c, "infer"), research = idx(&t, c, "research");
    qtree_add_demand(&t, train, vec(&t, cpu, 2000), 1);
    qtree_add_demand(&t, infer, vec(&t, cpu, 1000), 1);
    qtree_add_demand(&t, research, vec(&t, cpu, 5000), 1);
    qtree_derive(&t);
    /* The root's children ask 3 + 5 of 8: nobody is contended; under eng (deserved 3), 2 + 1 of 3: neither. */
    assert_false(qtree_contended(&t, eng, cpu));
    assert_false(qtree_contended(&t, research, cpu));
    assert_false(qtree_contended(&t, train, cpu));
    /* research asks one more: 9 of 8 at the root; eng's children still ask what eng deserves (3 of 3). */
    qtree_add_demand(&t, research, vec(&t, cpu, 1000), 1);
    qtree_derive(&t);
    assert_true(qtree_contended(&t, eng, cpu));
    assert_true(qtree_contended(&t, research, cpu));
    assert_false(qtree_contended(&t, infer, cpu));
    /* train asks one more: 4 of eng's 4 (eng deserves its demand: 4 of 8 by weight): not contended under eng. */
    qtree_add_demand(&t, train, vec(&t, cpu, 1000), 1);
    qtree_derive(&t);
    assert_int_equal(t.queues[eng].deserved[cpu], 4000);
    assert_false(qtree_contended(&t, train, cpu));
    /* infer asks two more: 6 of eng's 4 under eng. */
    qtree_add_demand(&t, infer, vec(&t, cpu, 2000), 1);
    qtree_derive(&t);
    assert_true(qtree_contended(&t, train, cpu));
    assert_true(qtree_contended(&t, infer, cpu));
    qtree_finish(&t);
    cache_destroy(c);
}

/* Share is the dominant alloc / deserved; the pick goes down the lowest share with work. */
static void test_share_and_pick(void **state)
{
    (void)state;
    struct cache *c = load(issue_tree, "64");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t train = idx(&t, c, "train"), infer = idx(&t, c, "infer"), research = idx(&t, c, "research");
    for (size_t i = 0; i < t.n; i++)
        qtree_add_demand(&t, i, vec(&t, cpu, 8000), 1);
    qtree_derive(&t);
    qtree_add_alloc(&t, train, vec(&t, cpu, 6000), 1);
    qtree_add_alloc(&t, infer, vec(&t, cpu, 2000), 1);
    assert_true(qtree_share(&t, train) > 0.74 && qtree_share(&t, train) < 0.76);
    unsigned char work[8] = {0};
    work[train] = work[infer] = 1;
    assert_int_equal(qtree_pick(&t, work), infer);
    work[research] = 1; /* research holds nothing: share 0 beats eng's */
    assert_int_equal(qtree_pick(&t, work), research);
    memset(work, 0, sizeof(work));
    assert_int_equal(qtree_pick(&t, work), QUEUETREE_ROOT);
    qtree_finish(&t);
    cache_destroy(c);
}

/* A queue of weight 0 deserves nothing: its gangs come after those of queues that deserve some, even when it holds nothing. */
static void test_pick_weight_zero(void **state)
{
    (void)state;
    struct cache *c = load("[" Q("a", "\"weight\":0") "," Q("b", "\"weight\":1") "]", "8");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t a = idx(&t, c, "a"), b = idx(&t, c, "b");
    qtree_add_demand(&t, a, vec(&t, cpu, 4000), 1);
    qtree_add_demand(&t, b, vec(&t, cpu, 4000), 1);
    qtree_derive(&t);
    qtree_add_alloc(&t, b, vec(&t, cpu, 3000), 1);
    unsigned char work[2] = {1, 1};
    assert_int_equal(qtree_pick(&t, work), b);
    work[b] = 0;
    assert_int_equal(qtree_pick(&t, work), a);
    qtree_finish(&t);
    cache_destroy(c);
}

/* A cycle closes the queues in it and under it, not the others. */
static void test_bad_tree(void **state)
{
    (void)state;
    struct cache *c = load(
        "[" Q("a", "\"parent\":\"b\"") "," Q("b", "\"parent\":\"a\"") "," Q("under", "\"parent\":\"a\"") "," Q("c", "") "]", "8");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    struct qtree_block why;
    assert_false(qtree_fits(&t, idx(&t, c, "b"), vec(&t, cpu, 1000), &why));
    assert_int_equal(why.kind, QTREE_BLOCK_BAD_TREE);
    struct util_buf b = {0};
    qtree_block_text(&t, idx(&t, c, "b"), &why, c, &b);
    assert_string_equal(b.data, "queue b is in a cycle: treated as Closed");
    util_buf_finish(&b);
    assert_false(qtree_fits(&t, idx(&t, c, "under"), vec(&t, cpu, 1000), &why));
    qtree_block_text(&t, idx(&t, c, "under"), &why, c, &b);
    assert_string_equal(b.data, "queue under is under queue a, which is in a cycle: treated as Closed");
    util_buf_finish(&b);
    assert_true(qtree_fits(&t, idx(&t, c, "c"), vec(&t, cpu, 1000), &why));
    qtree_add_alloc(&t, idx(&t, c, "under"), vec(&t, cpu, 1000), 1); /* ends, though its parents go round */
    qtree_fill(&t, c);
    assert_int_equal(t.n, 4);
    qtree_finish(&t);
    cache_destroy(c);
}

/*
 * Queues stored against queuespec.h's rules are closed with their subtree, each
 * saying why, and take nothing from their neighbours: p's guarantee of all 8
 * cpu is dropped, so ok1 still gets the whole node.
 */
static void test_bad_spec(void **state)
{
    (void)state;
    struct cache *c = load(
        "[" Q("bad", "\"capability\":{\"cpu\":\"-10\"}") "," Q(
            "p", "\"deserved\":{\"cpu\":\"-5\"},\"guarantee\":{\"resource\":{"
                 "\"cpu\":\"8\"}}") "," Q("kid", "\"parent\":\"p\"") "," Q("over",
                                                                           "\"capability\":{\"cpu\":\"2\"},\"deserved\":{\"cpu\":"
                                                                           "\"4\"}") "," Q("ok1",
                                                                                           "") "," Q("ok2",
                                                                                                     "\"guarantee\":{\"resource\":{"
                                                                                                     "\"cpu\":\"1\"}}") "]",
        "8");
    uint32_t cpu = cpu_id(c);
    struct qtree t;
    qtree_init(&t);
    qtree_build(&t, c, c->shapes.nresources);
    size_t bad = idx(&t, c, "bad"), p = idx(&t, c, "p"), kid = idx(&t, c, "kid"), over = idx(&t, c, "over");
    assert_int_equal(t.queues[bad].state, QUEUETREE_BAD_SPEC);
    assert_int_equal(t.queues[p].state, QUEUETREE_BAD_SPEC);
    assert_int_equal(t.queues[kid].state, QUEUETREE_BAD_ANCESTOR);
    assert_int_equal(t.queues[over].state, QUEUETREE_BAD_SPEC);
    assert_int_equal(t.queues[idx(&t, c, "ok2")].state, QUEUETREE_OK); /* a guarantee without deserved is kept */
    assert_int_equal(t.queues[p].guarantee[cpu], 0);
    assert_false(t.queues[p].explicit_deserved);
    assert_int_equal(t.queues[bad].cap[cpu], 0);
    struct qtree_block why;
    struct util_buf b = {0};
    const char *want[][2] = {
        {"bad", "queue bad is against the rules of its spec (spec.capability.cpu: -10 must be greater than or equal to 0): "
                "treated as Closed"},
        {"kid", "queue kid is under queue p, whose spec breaks a rule (spec.deserved.cpu: -5 must be greater than or equal to 0): "
                "treated as Closed"},
        {"over", "queue over is against the rules of its spec (spec.deserved.cpu: deserved[cpu]=4 must be <= capability[cpu]=2): "
                 "treated as Closed"},
    };
    for (size_t k = 0; k < 3; k++) {
        assert_false(qtree_fits(&t, idx(&t, c, want[k][0]), vec(&t, cpu, 1000), &why));
        assert_int_equal(why.kind, QTREE_BLOCK_BAD_TREE);
        qtree_block_text(&t, idx(&t, c, want[k][0]), &why, c, &b);
        assert_string_equal(b.data, want[k][1]);
        util_buf_finish(&b);
    }
    /* the neighbours: ok1 gets all but ok2's guarantee; what kid's gangs hold still counts up the tree */
    assert_true(qtree_fits(&t, idx(&t, c, "ok1"), vec(&t, cpu, 7000), &why));
    qtree_add_alloc(&t, kid, vec(&t, cpu, 2000), 1);
    assert_int_equal(t.queues[p].alloc[cpu], 2000);
    assert_false(qtree_fits(&t, idx(&t, c, "ok1"), vec(&t, cpu, 7000), &why));
    assert_true(qtree_fits(&t, idx(&t, c, "ok1"), vec(&t, cpu, 5000), &why));
    qtree_finish(&t);
    cache_destroy(c);
}

/* n's total cpu (millicores) built with memo and without it: asserted equal; returned. */
static int64_t memo_total(struct cache *c, struct qtree_total_memo *memo)
{
    struct qtree a, b;
    qtree_init(&a);
    qtree_init(&b);
    uint32_t nres = c->shapes.nresources;
    qtree_build_memo(&a, c, nres, memo);
    qtree_build(&b, c, nres);
    assert_int_equal(a.nres, b.nres);
    for (uint32_t k = 0; k < a.nres; k++)
        assert_int_equal(a.total[k], b.total[k]);
    int64_t cpu = a.total[cpu_id(c)];
    qtree_finish(&a);
    qtree_finish(&b);
    return cpu;
}

/* A pod outside any queue (foreign: what the root's total loses) of cpu millicores on n1, or deleted (cpu < 0). */
static void foreign_pod(struct cache *c, const char *name, int64_t cpu)
{
    if (cpu < 0) {
        cache_delete_pod(c, "default", name);
        return;
    }
    struct error err;
    json_t *pod = json_pack("{s:{s:s,s:s,s:s},s:{s:s,s:[{s:s,s:{s:{s:s}}}]},s:{s:s}}", "metadata", "name", name, "namespace",
                            "default", "uid", name, "spec", "nodeName", "n1", "containers", "name", "c", "resources", "requests",
                            "cpu", cpu == 500 ? "500m" : "1", "status", "phase", "Running");
    assert_int_equal(cache_upsert_pod(c, pod, &err), 0);
    json_decref(pod);
}

/* The total kept between builds follows the nodes and the pods outside any queue (cache nodes_gen). */
static void test_total_memo(void **state)
{
    (void)state;
    struct cache *c = load(issue_tree, "32");
    struct qtree_total_memo memo = {0};
    assert_int_equal(memo_total(c, &memo), 32000);
    assert_int_equal(memo_total(c, &memo), 32000); /* from the memo */
    foreign_pod(c, "f1", 500);
    assert_int_equal(memo_total(c, &memo), 31500);
    foreign_pod(c, "f2", 1000);
    assert_int_equal(memo_total(c, &memo), 30500);
    foreign_pod(c, "f1", -1);
    assert_int_equal(memo_total(c, &memo), 31000);
    struct error err;
    json_t *node = json_pack("{s:{s:s},s:{s:{s:s,s:s},s:[{s:s,s:s}]}}", "metadata", "name", "n1", "status", "allocatable", "cpu",
                             "40", "pods", "1000", "conditions", "type", "Ready", "status", "True");
    assert_int_equal(cache_upsert_node(c, node, &err), 0);
    json_decref(node);
    assert_int_equal(memo_total(c, &memo), 39000);
    cache_delete_node(c, "n1");
    assert_int_equal(memo_total(c, &memo), 0);
    qtree_total_memo_finish(&memo);
    cache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capability_every_level),
        cmocka_unit_test(test_capability_above_parent),
        cmocka_unit_test(test_guarantee_not_lent),
        cmocka_unit_test(test_derive_weights),
        cmocka_unit_test(test_contended),
        cmocka_unit_test(test_share_and_pick),
        cmocka_unit_test(test_pick_weight_zero),
        cmocka_unit_test(test_bad_tree),
        cmocka_unit_test(test_bad_spec),
        cmocka_unit_test(test_total_memo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
