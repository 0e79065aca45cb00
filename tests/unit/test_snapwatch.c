/*
 * webhook/snapwatch.c against the fake API server of fakeapi.h.
 *
 * The Queues: listed, then changed by watch events, they reach the snapshot,
 * which is given out only once the list answered; without the Queue CRD (404)
 * it never is, so that the admission skips the tree checks.
 *
 * The DRA objects: where resource.k8s.io/v1 is served, its DeviceClasses,
 * ResourceClaimTemplates and ResourceClaims (not those made from a pod's
 * template) reach the set, which the request path gets only once the three
 * lists answered; where it is not served (404), nothing is listed and the set
 * is never given out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "draset.h"
#include "fakeapi.h"
#include "queuecheck.h"
#include "snapwatch.h"

/* Waits up to 5 s for the snapshot to be given out and satisfy want (NULL: given out); returns whether it did. */
static int wait_for(struct snapwatch *w, int (*want)(const void *snap))
{
    for (int i = 0; i < 500; i++) {
        const void *snap = snapwatch_lock(w);
        int ok = snap != NULL && (want == NULL || want(snap));
        snapwatch_unlock(w);
        if (ok)
            return 1;
        usleep(10 * 1000);
    }
    return 0;
}

/* ---- the Queues ---- */

static json_t *queue(const char *name, const char *parent, const char *rv)
{
    json_t *q = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{}}", "apiVersion", "scheduling.volcano.sh/v1beta1", "kind", "Queue",
                          "metadata", "name", name, "resourceVersion", rv, "spec");
    if (parent != NULL)
        json_object_set_new(json_object_get(q, "spec"), "parent", json_string(parent));
    return q;
}

/* The list from the state; the first watch gets: train deleted, infer added under eng; later watches are held. */
static int handler(struct fake *f, const struct fake_req *req)
{
    static int watched;
    if (strstr(req->target, "watch=") == NULL || __atomic_fetch_add(&watched, 1, __ATOMIC_SEQ_CST) > 0)
        return fake_cluster_handler(f, req);
    stream_begin(req);
    json_t *del = json_pack("{s:s, s:o}", "type", "DELETED", "object", queue("train", "eng", "3"));
    json_t *add = json_pack("{s:s, s:o}", "type", "ADDED", "object", queue("infer", "eng", "4"));
    char *a = json_dumps(del, JSON_COMPACT), *b = json_dumps(add, JSON_COMPACT);
    char line[1024];
    snprintf(line, sizeof(line), "%s\n%s\n", a, b);
    stream_chunk(req, line, strlen(line));
    free(a);
    free(b);
    json_decref(del);
    json_decref(add);
    stream_hold(f, req);
    return -1;
}

static int listed_then_changed(const void *snap)
{
    const struct queuecheck_set *s = snap;
    return s->synced && queuecheck_set_get(s, "infer") != NULL && queuecheck_set_get(s, "train") == NULL;
}

static void test_list_and_watch(void **state)
{
    (void)state;
    json_t *st = fake_cluster_state_new();
    json_t *eng = queue("eng", NULL, "1"), *train = queue("train", "eng", "2");
    fake_cluster_add(st, SNAPWATCH_QUEUES_PATH, eng);
    fake_cluster_add(st, SNAPWATCH_QUEUES_PATH, train);
    json_decref(eng);
    json_decref(train);
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client_for(f, "t", NULL, NULL);
    struct error err = {{0}};
    struct snapwatch *w = snapwatch_queues(k, &err);
    assert_non_null(w);
    assert_true(wait_for(w, listed_then_changed));
    const struct queuecheck_set *s = snapwatch_lock(w);
    assert_int_equal(s->len, 2);
    assert_string_equal(queuecheck_set_get(s, "infer")->parent, "eng");
    assert_null(queuecheck_set_get(s, "eng")->parent);
    snapwatch_unlock(w);
    snapwatch_destroy(w);
    fake_cluster_stop(f, k, st);
}

static void test_no_crd_stays_unsynced(void **state)
{
    (void)state;
    json_t *st = fake_cluster_state_new(); /* no list: 404 */
    struct kube_client_options o = {.backoff_base_ms = 5, .backoff_max_ms = 10};
    struct kube_client *k;
    struct fake *f = fake_cluster_start(st, &k, &o);
    struct error err = {{0}};
    struct snapwatch *w = snapwatch_queues(k, &err);
    assert_non_null(w);
    assert_true(fake_wait_requests(f, "GET", SNAPWATCH_QUEUES_PATH, 3, 5000) >= 3); /* it keeps trying */
    assert_null(snapwatch_lock(w));
    snapwatch_unlock(w);
    assert_false(snapwatch_synced(w));
    snapwatch_destroy(w);
    fake_cluster_stop(f, k, st);
}

/* ---- the DRA objects ---- */

static json_t *parse(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    return j;
}

static void add(json_t *st, const char *collection, const char *text)
{
    json_t *obj = parse(text);
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", SNAPWATCH_DRA_API, collection);
    fake_cluster_add(st, path, obj);
    json_decref(obj);
}

static const char *const DISCOVERY =
    "{\"kind\":\"APIResourceList\",\"groupVersion\":\"resource.k8s.io/v1\",\"resources\":[{\"name\":\"deviceclasses\"},"
    "{\"name\":\"resourceclaims\"},{\"name\":\"resourceclaims/status\"},{\"name\":\"resourceclaimtemplates\"},"
    "{\"name\":\"resourceslices\"}]}";

static void test_dra_served(void **state)
{
    (void)state;
    json_t *d = parse(DISCOVERY);
    assert_true(snapwatch_dra_served(d));
    json_array_remove(json_object_get(d, "resources"), 3); /* no resourceclaimtemplates */
    assert_false(snapwatch_dra_served(d));
    json_decref(d);
    assert_false(snapwatch_dra_served(NULL));
}

static int64_t demand(const struct draset *s, int shared, const char *name)
{
    struct resources out;
    struct error why = {{0}};
    resources_init(&out);
    int rc = shared ? draset_claim_demand(s, "ml", name, &out, &why) : draset_template_demand(s, "ml", name, &out, &why);
    const struct quantity *q = resources_get(&out, "example.com/gpu");
    int64_t n = rc == 0 && q != NULL ? q->value : -1;
    resources_finish(&out);
    return n;
}

static void test_dra_list(void **state)
{
    (void)state;
    json_t *st = fake_cluster_state_new();
    json_object_set_new(json_object_get(st, "get"), SNAPWATCH_DRA_API, parse(DISCOVERY));
    add(st, "deviceclasses", "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"extendedResourceName\":\"example.com/gpu\"}}");
    add(st, "resourceclaimtemplates",
        "{\"metadata\":{\"name\":\"two-gpu\",\"namespace\":\"ml\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","
        "\"exactly\":{\"deviceClassName\":\"gpu\",\"count\":2}}]}}}}");
    add(st, "resourceclaims",
        "{\"metadata\":{\"name\":\"shared\",\"namespace\":\"ml\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","
        "\"exactly\":{\"deviceClassName\":\"gpu\"}}]}}}");
    add(st, "resourceclaims",
        "{\"metadata\":{\"name\":\"w-0-gpu-x\",\"namespace\":\"ml\",\"annotations\":{\"resource.kubernetes.io/pod-claim-name\":"
        "\"gpu\"}},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"gpu\"}}]}}}");
    struct kube_client *k;
    struct fake *f = fake_cluster_start(st, &k, NULL);
    struct error err = {{0}};
    struct snapwatch *w = snapwatch_dra(k, &err);
    assert_non_null(w);
    assert_true(wait_for(w, NULL));
    assert_true(snapwatch_synced(w));
    const struct draset *s = snapwatch_lock(w);
    assert_int_equal(demand(s, 0, "two-gpu"), 2);
    assert_int_equal(demand(s, 1, "shared"), 1);
    assert_int_equal(demand(s, 1, "w-0-gpu-x"), -1); /* a pod's own claim: not recorded */
    snapwatch_unlock(w);
    snapwatch_destroy(w);
    fake_cluster_stop(f, k, st);
}

static void test_dra_not_served(void **state)
{
    (void)state;
    json_t *st = fake_cluster_state_new(); /* discovery: 404 */
    struct kube_client *k;
    struct fake *f = fake_cluster_start(st, &k, NULL);
    struct error err = {{0}};
    struct snapwatch *w = snapwatch_dra(k, &err);
    assert_non_null(w);
    usleep(100 * 1000);
    assert_int_equal(fake_wait_requests(f, "GET", SNAPWATCH_DRA_API "/", 1, 100), 0); /* nothing listed */
    assert_null(snapwatch_lock(w));
    snapwatch_unlock(w);
    assert_false(snapwatch_synced(w));
    assert_false(snapwatch_synced(NULL));
    snapwatch_destroy(w);
    fake_cluster_stop(f, k, st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_and_watch), cmocka_unit_test(test_no_crd_stays_unsynced), cmocka_unit_test(test_dra_served),
        cmocka_unit_test(test_dra_list),       cmocka_unit_test(test_dra_not_served),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
