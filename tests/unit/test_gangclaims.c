/*
 * lib/gang/model/gangclaims.c: the device claims of a RayCluster's gang and of a pod,
 * and what they count as: a template once per pod of its group, a shared claim
 * once for the gang, a missing template or class a wait naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "draset.h"
#include "gang.h"
#include "gangclaims.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (j == NULL)
        fail_msg("fixture JSON: %s: %s", e.text, text);
    return j;
}

static void record(struct draset *s, enum draset_kind kind, const char *text)
{
    json_t *obj = parse(text);
    struct error err;
    draset_record(s, kind, 0, obj, &err);
    json_decref(obj);
    if (err.message[0] != '\0')
        fail_msg("record: %s", err.message);
}

static const char *RC =
    "{\"spec\":{\"headGroupSpec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"h\"}]}}},"
    "\"workerGroupSpecs\":["
    "{\"groupName\":\"a\",\"replicas\":3,\"template\":{\"spec\":{\"resourceClaims\":["
    "{\"name\":\"g\",\"resourceClaimTemplateName\":\"two-gpu\"},{\"name\":\"s\",\"resourceClaimName\":\"shared\"}],"
    "\"containers\":[{\"name\":\"w\"}]}}},"
    "{\"groupName\":\"b\",\"replicas\":2,\"numOfHosts\":2,\"template\":{\"spec\":{\"resourceClaims\":["
    "{\"name\":\"s\",\"resourceClaimName\":\"shared\"}],\"containers\":[{\"name\":\"w\"}]}}}]}}";

static struct draset *world(void)
{
    struct draset *s = draset_create();
    record(s, DRASET_CLASS,
           "{\"metadata\":{\"name\":\"gpu\",\"annotations\":{\"raygate.io/quota-resource\":\"example.com/gpu\"}},"
           "\"spec\":{}}");
    record(s, DRASET_TEMPLATE,
           "{\"metadata\":{\"name\":\"two-gpu\",\"namespace\":\"ns\"},\"spec\":{\"spec\":{\"devices\":{"
           "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu\",\"count\":2}}]}}}}");
    record(s, DRASET_CLAIM,
           "{\"metadata\":{\"name\":\"shared\",\"namespace\":\"ns\"},\"spec\":{\"devices\":{"
           "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu\"}}]}}}");
    return s;
}

static int64_t gpus(const struct resources *r)
{
    const struct quantity *q = resources_get(r, "example.com/gpu");
    return q != NULL ? q->value : -1;
}

/* 3 pods x 2 devices, and the shared claim's 1 once although 7 pods name it. */
static void test_gang_counts(void **state)
{
    (void)state;
    struct draset *s = world();
    json_t *rc = parse(RC);
    struct gang_spec spec;
    struct gangclaims gc;
    struct error err;
    gang_spec_init(&spec);
    assert_int_equal(gang_from_raycluster(rc, &spec, &err), 0);
    assert_int_equal(gangclaims_from_raycluster(rc, &spec, &gc, &err), 0);
    assert_int_equal(gc.n, 2);
    struct resources out;
    resources_init(&out);
    assert_int_equal(gangclaims_price(&gc, s, "ns", 1, &out, &err), 0);
    assert_int_equal(gpus(&out), 7);
    resources_finish(&out);
    resources_init(&out);
    assert_int_equal(gangclaims_price(&gc, s, "ns", 0, &out, &err), 0); /* a pod's view: templates only */
    assert_int_equal(gpus(&out), 6);
    resources_finish(&out);
    /* In another namespace neither exists: the first missing one is named. */
    resources_init(&out);
    assert_int_equal(gangclaims_price(&gc, s, "other", 1, &out, &err), 1);
    assert_string_equal(err.message, "resourceclaimtemplate two-gpu not found in other");
    resources_finish(&out);
    gangclaims_finish(&gc);
    gang_spec_finish(&spec);
    json_decref(rc);
    draset_destroy(s);
}

/* A class not seen, and allocationMode All, make the pod wait naming them. */
static void test_waits(void **state)
{
    (void)state;
    struct draset *s = world();
    record(s, DRASET_TEMPLATE,
           "{\"metadata\":{\"name\":\"nvidia\",\"namespace\":\"ns\"},\"spec\":{\"spec\":{\"devices\":{"
           "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}}");
    record(s, DRASET_TEMPLATE,
           "{\"metadata\":{\"name\":\"all\",\"namespace\":\"ns\"},\"spec\":{\"spec\":{\"devices\":{"
           "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu\",\"allocationMode\":\"All\"}}]}}}}");
    struct error err;
    struct resources out;
    resources_init(&out);
    assert_int_equal(draset_template_demand(s, "ns", "nvidia", &out, &err), 1);
    assert_non_null(strstr(err.message, "deviceclass gpu.nvidia.com"));
    assert_non_null(strstr(err.message, "not found"));
    assert_int_equal(draset_template_demand(s, "ns", "all", &out, &err), 1);
    assert_non_null(strstr(err.message, "allocationMode: All cannot be counted"));
    resources_finish(&out);
    draset_destroy(s);
}

/* A pod's claims; an entry naming both or neither is refused, naming it. */
static void test_pod_spec(void **state)
{
    (void)state;
    json_t *spec = parse("{\"resourceClaims\":[{\"name\":\"a\",\"resourceClaimTemplateName\":\"t\"},"
                         "{\"name\":\"b\",\"resourceClaimName\":\"c\"}]}");
    struct gangclaims gc;
    struct error err;
    assert_int_equal(gangclaims_from_pod_spec(spec, &gc, &err), 0);
    assert_int_equal(gc.n, 2);
    assert_int_equal(gc.uses[0].shared, 0);
    assert_int_equal(gc.uses[1].shared, 1);
    gangclaims_finish(&gc);
    json_decref(spec);
    spec = parse("{\"resourceClaims\":[{\"name\":\"a\"}]}");
    assert_int_equal(gangclaims_from_pod_spec(spec, &gc, &err), -1);
    assert_string_equal(err.message,
                        "spec.resourceClaims[0]: must name exactly one of resourceClaimName and resourceClaimTemplateName");
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gang_counts),
        cmocka_unit_test(test_waits),
        cmocka_unit_test(test_pod_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
