/*
 * lib/sched/cache/dracache.c, devices.c, lib/dra/draset.c, ledger.c and
 * lib/gang/model/gangclaims.c together: DRA device claims counted in a queue and on
 * the nodes by an admission pass. Two kwok-like nodes each publish four
 * devices of driver gpu.example.com; class gpu.example.com maps them to
 * example.com/gpu; gangs are a head and N workers, each worker with one
 * device from template one-gpu.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "dispatchsim.h"
#include "cachefixture.h"
#include "dracache.h"
#include "draset.h"
#include "fit.h"
#include "ledger.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (j == NULL)
        fail_msg("fixture JSON: %s at %d: %s", e.text, e.line, text);
    return j;
}

static unsigned record(struct cache *c, enum draset_kind kind, int deleted, const char *text)
{
    json_t *obj = parse(text);
    struct error err;
    unsigned bits = dracache_record(c, kind, deleted, obj, &err);
    json_decref(obj);
    if (err.message[0] != '\0')
        fail_msg("record: %s", err.message);
    return bits;
}

static void upsert(struct cache *c, const char *kind, const char *text)
{
    json_t *obj = parse(text);
    cachefixture_upsert(c, kind, obj);
    json_decref(obj);
}

#define CLASS                                                                                                                      \
    "{\"metadata\":{\"name\":\"gpu.example.com\"},\"spec\":{\"extendedResourceName\":\"example.com/gpu\","                         \
    "\"selectors\":[{\"cel\":{\"expression\":\"device.driver == \\\"gpu.example.com\\\"\"}}]}}"
#define TEMPLATE                                                                                                                   \
    "{\"metadata\":{\"name\":\"one-gpu\",\"namespace\":\"ns\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":"          \
    "\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\"}}]}}}}"

static void add_slice(struct cache *c, const char *node, int devices)
{
    char buf[2048];
    int n = snprintf(buf, sizeof(buf),
                     "{\"metadata\":{\"name\":\"%s-gpu\"},\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"%s\","
                     "\"pool\":{\"name\":\"%s\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[",
                     node, node, node);
    for (int i = 0; i < devices; i++)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s{\"name\":\"gpu-%d\",\"attributes\":{\"index\":{\"int\":%d}}}",
                      i ? "," : "", i, i);
    snprintf(buf + n, sizeof(buf) - (size_t)n, "]}}");
    record(c, DRASET_SLICE, 0, buf);
    char nodejson[512];
    snprintf(nodejson, sizeof(nodejson),
             "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"128Gi\",\"pods\":"
             "\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             node);
    upsert(c, "nodes", nodejson);
}

/* The JSON of RayCluster rc (new): a head and workers one-device workers in queue q. */
static json_t *raycluster(const char *rc, const char *q, int workers)
{
    char buf[2048];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\","
             "\"uid\":\"u-%s\",\"labels\":{\"volcano.sh/queue-name\":\"%s\"}},\"spec\":{\"headGroupSpec\":{\"template\":"
             "{\"spec\":{\"containers\":[{\"name\":\"h\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},"
             "\"workerGroupSpecs\":[{\"groupName\":\"w\",\"replicas\":%d,\"minReplicas\":%d,\"maxReplicas\":%d,"
             "\"template\":{\"spec\":{\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"one-gpu\"}],"
             "\"containers\":[{\"name\":\"w\",\"resources\":{\"requests\":{\"cpu\":\"1\"},\"claims\":[{\"name\":\"gpu\"}]}}]}}}]}}",
             rc, rc, q, workers, workers, workers);
    return parse(buf);
}

/* RayCluster rc (raycluster()) with its pods gated. */
static void add_gang(struct cache *c, const char *rc, const char *q, int workers)
{
    char buf[2048];
    json_t *obj = raycluster(rc, q, workers);
    cachefixture_upsert(c, "rayclusters", obj);
    json_decref(obj);
    for (int i = 0; i <= workers; i++) {
        snprintf(buf, sizeof(buf),
                 "{\"metadata\":{\"name\":\"%s-%d\",\"namespace\":\"ns\",\"uid\":\"u-%s-%d\",\"creationTimestamp\":"
                 "\"2026-11-28T00:00:0%dZ\",\"labels\":{\"ray.io/cluster\":\"%s\",\"volcano.sh/queue-name\":\"%s\","
                 "\"ray.io/node-type\":\"%s\",\"ray.io/group\":\"%s\"}},\"spec\":{\"schedulingGates\":[{\"name\":"
                 "\"raygate.io/gang\"}],%s\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
                 "\"status\":{\"phase\":\"Pending\"}}",
                 rc, i, rc, i, i, rc, q, i == 0 ? "head" : "worker", i == 0 ? "headgroup" : "w",
                 i == 0 ? "" : "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"one-gpu\"}],");
        upsert(c, "pods", buf);
    }
}

static void add_queue(struct cache *c, const char *q, const char *gpus)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"capability\":{\"cpu\":\"100\",\"example.com/gpu\":\"%s\"}},"
             "\"status\":{\"state\":\"Open\"}}",
             q, gpus);
    upsert(c, "queues", buf);
}

/* The decision on cluster rc in r, or NULL. */
static const struct admit_decision *decision(const struct admit_result *r, const char *rc)
{
    for (size_t i = 0; i < r->len; i++) {
        if (strcmp(r->items[i].cluster, rc) == 0)
            return &r->items[i];
    }
    return NULL;
}

struct world {
    struct draset *s;
    struct cache *c;
    struct admit *a;
    struct admit_result r;
};

static void world_init(struct world *w)
{
    memset(w, 0, sizeof(*w));
    w->s = draset_create();
    w->c = cache_create();
    dracache_use(w->c, w->s);
    record(w->c, DRASET_CLASS, 0, CLASS);
    record(w->c, DRASET_TEMPLATE, 0, TEMPLATE);
    add_slice(w->c, "n1", 4);
    add_slice(w->c, "n2", 4);
    w->a = admit_create(w->c);
    admit_result_init(&w->r);
}

static void world_pass(struct world *w)
{
    admit_result_finish(&w->r);
    admit_result_init(&w->r);
    dracache_prepare(w->c);
    admit_pass(w->a, ADMIT_PASS_FULL, &w->r);
}

static void world_finish(struct world *w)
{
    admit_result_finish(&w->r);
    admit_destroy(w->a);
    cache_destroy(w->c);
    draset_destroy(w->s);
}

static void expect(const struct world *w, const char *rc, enum admit_action action, const char *message_part)
{
    const struct admit_decision *d = decision(&w->r, rc);
    if (d == NULL)
        fail_msg("no decision on %s", rc);
    if (d->action != action || (message_part != NULL && (d->message == NULL || strstr(d->message, message_part) == NULL)))
        fail_msg("%s: action %d, message \"%s\"; expected action %d with \"%s\"", rc, d->action,
                 d->message != NULL ? d->message : "", action, message_part != NULL ? message_part : "");
}

/* The queue counts devices: capability 6, two gangs of 4: the second waits naming example.com/gpu. */
static void test_queue_counts_devices(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    add_queue(w.c, "q", "6");
    add_gang(w.c, "a", "q", 4);
    add_gang(w.c, "b", "q", 4);
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_ADMIT, NULL);
    expect(&w, "b", ADMIT_ACTION_WAIT, "example.com/gpu needs 4, 2 of 6 free");
    world_finish(&w);
}

/* The nodes count devices: 8 on the nodes, all but 3 held by claims; a gang of 4 waits on the nodes. */
static void test_nodes_count_devices(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    add_queue(w.c, "q", "100");
    record(w.c, DRASET_CLAIM, 0,
           "{\"metadata\":{\"name\":\"other\",\"namespace\":\"x\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","
           "\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"count\":5}}]}},\"status\":{\"allocation\":{\"devices\":{"
           "\"results\":[{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"},"
           "{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-1\"},"
           "{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-2\"},"
           "{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"n2\",\"device\":\"gpu-0\"},"
           "{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"n2\",\"device\":\"gpu-1\"}]}}}}");
    add_gang(w.c, "a", "q", 4);
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_WAIT, "at most 0 free on one node (example.com/gpu: DRA devices the nodes' ResourceSlices");
    /* A class whose selector goes beyond the evaluated subset: every device of its driver counts, and the wait says so. */
    record(w.c, DRASET_CLASS, 0,
           "{\"metadata\":{\"name\":\"gpu.example.com\"},\"spec\":{\"extendedResourceName\":\"example.com/gpu\","
           "\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com' && "
           "device.attributes['gpu.example.com'].model.matches('^a1')\"}}]}}");
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_WAIT, "every device of its driver counted");
    /* The claim is deleted: its devices are free again, and the gang fits. */
    record(w.c, DRASET_CLAIM, 1, "{\"metadata\":{\"name\":\"other\",\"namespace\":\"x\"}}");
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_ADMIT, NULL);
    world_finish(&w);
}

/* One-gpu with a request selector of its own: a device whose index is below max (each node has indexes 0 to 3). */
static void template_below(struct cache *c, int max)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"one-gpu\",\"namespace\":\"ns\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{"
             "\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"selectors\":[{\"cel\":{"
             "\"expression\":\"device.attributes[\\\"gpu.example.com\\\"].index < %d\"}}]}}]}}}}",
             max);
    record(c, DRASET_TEMPLATE, 0, buf);
}

/*
 * A request's own selectors count on the nodes: with index < 1, one device per node selected, 2 in all, a gang of 4
 * workers waits on the nodes naming the selector; with index < 2 (4 in all) it is admitted. The queue counts the
 * class's resource all along (capability 4: a variant never shows there).
 */
static void test_request_selectors(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    add_queue(w.c, "q", "4");
    template_below(w.c, 1);
    add_gang(w.c, "a", "q", 4);
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_WAIT, "gpu.example.com devices where device.attributes[\"gpu.example.com\"].index < 1");
    int v = draset_resource_index(w.s, "gpu.example.com devices where device.attributes[\"gpu.example.com\"].index < 1");
    assert_true(v > 0);
    struct ledger_node n1 = {.name = "n1"};
    int64_t total = -1;
    assert_int_equal(ledger_free(w.s, &n1, (size_t)v, &total), 1);
    assert_int_equal(total, 1);
    assert_int_equal(ledger_free(w.s, &n1, 0, NULL), 4);
    template_below(w.c, 2);
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_ADMIT, NULL);
    /* The gang's minResources name the class's resource only. */
    struct cache_gang *g = cache_gang_get(w.c, "ns", "a");
    assert_non_null(g);
    assert_int_equal(g->min_resources.len, 2);
    assert_non_null(resources_get(&g->min_resources, "example.com/gpu"));
    world_finish(&w);
}

/* A template not seen: the gang waits naming it, and is admitted once it comes. */
static void test_missing_template_waits(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    record(w.c, DRASET_TEMPLATE, 1, TEMPLATE);
    add_queue(w.c, "q", "100");
    add_gang(w.c, "a", "q", 2);
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_WAIT, "resourceclaimtemplate one-gpu not found in ns");
    record(w.c, DRASET_TEMPLATE, 0, TEMPLATE);
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_ADMIT, NULL);
    world_finish(&w);
}

/* RayCluster rc (new, gated pods): a head and three cpu-only workers sharing claim shared (4 devices, in the queue once). */
static void add_sharing_gang(struct cache *c, const char *rc)
{
    char buf[2048];
    json_t *obj = raycluster(rc, "q", 3);
    json_t *tmpl =
        json_object_get(json_array_get(json_object_get(json_object_get(obj, "spec"), "workerGroupSpecs"), 0), "template");
    json_object_set_new(json_object_get(tmpl, "spec"), "resourceClaims",
                        json_pack("[{s:s, s:s}]", "name", "gpu", "resourceClaimName", "shared"));
    cachefixture_upsert(c, "rayclusters", obj);
    json_decref(obj);
    for (int i = 0; i <= 3; i++) {
        snprintf(buf, sizeof(buf),
                 "{\"metadata\":{\"name\":\"%s-%d\",\"namespace\":\"ns\",\"uid\":\"u-%s-%d\",\"creationTimestamp\":"
                 "\"2026-11-28T00:00:0%dZ\",\"labels\":{\"ray.io/cluster\":\"%s\",\"volcano.sh/queue-name\":\"q\","
                 "\"ray.io/node-type\":\"%s\",\"ray.io/group\":\"%s\"}},\"spec\":{\"schedulingGates\":[{\"name\":"
                 "\"raygate.io/gang\"}],%s\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
                 "\"status\":{\"phase\":\"Pending\"}}",
                 rc, i, rc, i, i, rc, i == 0 ? "head" : "worker", i == 0 ? "headgroup" : "w",
                 i == 0 ? "" : "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"shared\"}],");
        upsert(c, "pods", buf);
    }
}

#define SHARED_CLAIM(status)                                                                                                       \
    "{\"metadata\":{\"name\":\"shared\",\"namespace\":\"ns\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","               \
    "\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"count\":4}}]}}" status "}"
#define HOLD_ONE                                                                                                                   \
    "{\"metadata\":{\"name\":\"other\",\"namespace\":\"x\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","                 \
    "\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"count\":2}}]}},\"status\":{\"allocation\":{\"devices\":{"              \
    "\"results\":[{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"},"                        \
    "{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"n2\",\"device\":\"gpu-0\"}]}}}}"

/* The fit request of pod ns/name. */
static const struct shape_rl *fit_request(struct cache *c, const char *name)
{
    struct cache_pod *pod = cache_pod_get(c, "ns", name);
    assert_non_null(pod);
    return model_pod_fit_request(pod);
}

/*
 * A shared claim not allocated yet is placed by the fit, once: 4 devices on one node, where each node has 3 free,
 * make the gang wait on the nodes (the queue has room: it counts 4 once). One device freed, it is admitted. Its
 * oldest unbound pod carries it; once allocated, none does (the ledger counts it).
 */
static void test_shared_claim_fit(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    add_queue(w.c, "q", "4");
    record(w.c, DRASET_CLAIM, 0, SHARED_CLAIM(""));
    record(w.c, DRASET_CLAIM, 0, HOLD_ONE);
    add_sharing_gang(w.c, "a");
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_WAIT, "at most 3 free on one node (example.com/gpu");
    assert_int_equal(w.c->shared_gangs, 1);
    assert_int_equal(w.c->carried_gangs, 1);
    assert_ptr_equal(fit_request(w.c, "a-2"), cache_pod_get(w.c, "ns", "a-2")->request);
    assert_ptr_not_equal(fit_request(w.c, "a-1"), cache_pod_get(w.c, "ns", "a-1")->request);
    record(w.c, DRASET_CLAIM, 1, "{\"metadata\":{\"name\":\"other\",\"namespace\":\"x\"}}");
    world_pass(&w);
    expect(&w, "a", ADMIT_ACTION_ADMIT, NULL);
    record(w.c, DRASET_CLAIM, 0,
           SHARED_CLAIM(",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"g\",\"driver\":"
                        "\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"}]}}}"));
    dracache_prepare(w.c);
    assert_ptr_equal(fit_request(w.c, "a-1"), cache_pod_get(w.c, "ns", "a-1")->request);
    assert_int_equal(w.c->carried_gangs, 0);
    /* The gang gone, no gang shares a claim: the walk is skipped. */
    cache_delete_raycluster(w.c, "ns", "a");
    char name[16];
    for (int i = 0; i <= 3; i++) {
        snprintf(name, sizeof(name), "a-%d", i);
        cache_delete_pod(w.c, "ns", name);
    }
    assert_int_equal(w.c->shared_gangs, 0);
    world_finish(&w);
}

/* The ledger: published less held, per node; a newer pool generation replaces an older one. */
static void test_ledger(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    ledger_prepare(w.s);
    int r = draset_resource_index(w.s, "example.com/gpu");
    assert_int_equal(r, 0);
    struct ledger_node n1 = {.name = "n1"}, n3 = {.name = "n3"};
    int64_t total = -1;
    assert_int_equal(ledger_free(w.s, &n1, (size_t)r, &total), 4);
    assert_int_equal(total, 4);
    assert_int_equal(ledger_free(w.s, &n3, (size_t)r, &total), 0);
    assert_int_equal(total, 0);
    record(w.c, DRASET_CLAIM, 0,
           "{\"metadata\":{\"name\":\"c\",\"namespace\":\"x\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":{"
           "\"deviceClassName\":\"gpu.example.com\"}}]}},\"status\":{"
           "\"allocation\":{\"devices\":{\"results\":[{\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"gpu-3\"}]}}}}");
    ledger_prepare(w.s);
    assert_int_equal(ledger_free(w.s, &n1, (size_t)r, NULL), 3);
    assert_int_equal(draset_claim_allocated(w.s, "x", "c"), 1);
    /* A claim made from a pod's template moves the ledger only, also when its deletion carries no annotations. */
    uint64_t gen = draset_demand_generation(w.s);
    assert_int_equal(record(w.c, DRASET_CLAIM, 0,
                            "{\"metadata\":{\"name\":\"p-gpu\",\"namespace\":\"x\",\"annotations\":{"
                            "\"resource.kubernetes.io/pod-claim-name\":\"gpu\"}},\"spec\":{\"devices\":{\"requests\":[{"
                            "\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\"}}]}},\"status\":{"
                            "\"allocation\":{\"devices\":{\"results\":[{\"driver\":\"gpu.example.com\",\"pool\":\"n1\","
                            "\"device\":\"gpu-0\"}]}}}}"),
                     DRASET_CHANGED_NODES);
    ledger_prepare(w.s);
    assert_int_equal(ledger_free(w.s, &n1, (size_t)r, NULL), 2);
    assert_int_equal(record(w.c, DRASET_CLAIM, 1, "{\"metadata\":{\"name\":\"p-gpu\",\"namespace\":\"x\"}}"), DRASET_CHANGED_NODES);
    assert_int_equal(draset_demand_generation(w.s), gen);
    ledger_prepare(w.s);
    assert_int_equal(ledger_free(w.s, &n1, (size_t)r, NULL), 3);
    world_finish(&w);
}

/* The dispatcher's simulation on a worker's view counts the devices too: 4 GPUs do not fit a queue of 3, fit one of 6. */
static void test_dispatch_sim(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    add_queue(w.c, "small", "3");
    add_queue(w.c, "big", "6");
    dracache_prepare(w.c);
    struct dispatch_verdict v;
    struct error err;
    dispatch_sim_verdict_init(&v);
    json_t *obj = raycluster("sent", "small", 4);
    assert_int_equal(dispatch_sim(w.c, w.a, obj, NULL, 0, &v, &err), 0);
    assert_false(v.fits);
    assert_non_null(strstr(v.message, "example.com/gpu needs 4, 3 of 3 free"));
    json_decref(obj);
    obj = raycluster("sent", "big", 4);
    assert_int_equal(dispatch_sim(w.c, w.a, obj, NULL, 0, &v, &err), 0);
    assert_true(v.fits);
    json_decref(obj);
    dispatch_sim_verdict_finish(&v);
    world_finish(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_counts_devices),   cmocka_unit_test(test_nodes_count_devices),
        cmocka_unit_test(test_missing_template_waits), cmocka_unit_test(test_ledger),
        cmocka_unit_test(test_dispatch_sim),           cmocka_unit_test(test_request_selectors),
        cmocka_unit_test(test_shared_claim_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
