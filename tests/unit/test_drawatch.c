/*
 * webhook/drawatch.c against the fake API server of fakeapi.h: where
 * resource.k8s.io/v1 is served, its DeviceClasses, ResourceClaimTemplates and
 * ResourceClaims (not those made from a pod's template) reach the set, which
 * the request path gets only once the three lists answered; where it is not
 * served (404), nothing is listed and the set is never given out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "drawatch.h"
#include "fakeapi.h"

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
    snprintf(path, sizeof(path), "%s/%s", DRAWATCH_API, collection);
    fake_cluster_add(st, path, obj);
    json_decref(obj);
}

static const char *const DISCOVERY =
    "{\"kind\":\"APIResourceList\",\"groupVersion\":\"resource.k8s.io/v1\",\"resources\":[{\"name\":\"deviceclasses\"},"
    "{\"name\":\"resourceclaims\"},{\"name\":\"resourceclaims/status\"},{\"name\":\"resourceclaimtemplates\"},"
    "{\"name\":\"resourceslices\"}]}";

static void test_served(void **state)
{
    (void)state;
    json_t *d = parse(DISCOVERY);
    assert_true(drawatch_served(d));
    json_array_remove(json_object_get(d, "resources"), 3); /* no resourceclaimtemplates */
    assert_false(drawatch_served(d));
    json_decref(d);
    assert_false(drawatch_served(NULL));
}

/* Waits up to 5 s for the set to be given out; returns whether it was. */
static int wait_synced(struct drawatch *w)
{
    for (int i = 0; i < 500; i++) {
        int ok = drawatch_lock(w) != NULL;
        drawatch_unlock(w);
        if (ok)
            return 1;
        usleep(10 * 1000);
    }
    return 0;
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

static void test_list(void **state)
{
    (void)state;
    json_t *st = fake_cluster_state_new();
    json_object_set_new(json_object_get(st, "get"), DRAWATCH_API, parse(DISCOVERY));
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
    struct drawatch *w = drawatch_create(k, &err);
    assert_non_null(w);
    assert_true(wait_synced(w));
    assert_true(drawatch_synced(w));
    const struct draset *s = drawatch_lock(w);
    assert_int_equal(demand(s, 0, "two-gpu"), 2);
    assert_int_equal(demand(s, 1, "shared"), 1);
    assert_int_equal(demand(s, 1, "w-0-gpu-x"), -1); /* a pod's own claim: not recorded */
    drawatch_unlock(w);
    drawatch_destroy(w);
    fake_cluster_stop(f, k, st);
}

static void test_not_served(void **state)
{
    (void)state;
    json_t *st = fake_cluster_state_new(); /* discovery: 404 */
    struct kube_client *k;
    struct fake *f = fake_cluster_start(st, &k, NULL);
    struct error err = {{0}};
    struct drawatch *w = drawatch_create(k, &err);
    assert_non_null(w);
    usleep(100 * 1000);
    assert_int_equal(fake_wait_requests(f, "GET", DRAWATCH_API "/", 1, 100), 0); /* nothing listed */
    assert_null(drawatch_lock(w));
    drawatch_unlock(w);
    assert_false(drawatch_synced(w));
    assert_false(drawatch_synced(NULL));
    drawatch_destroy(w);
    fake_cluster_stop(f, k, st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_served),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_not_served),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
