#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "claimspec.h"

static json_t *load(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (j == NULL)
        fail_msg("fixture does not load: %s (line %d)", jerr.text, jerr.line);
    return j;
}

/* A ResourceClaimTemplate: two GPUs of 40Gi or more, every NIC, a MIG slice or else a smaller one. */
static const char *const template =
    "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"ResourceClaimTemplate\","
    " \"metadata\": {\"name\": \"ray-worker-gpus\"},"
    " \"spec\": {\"spec\": {\"devices\": {\"requests\": ["
    "  {\"name\": \"gpus\", \"exactly\": {\"deviceClassName\": \"gpu.nvidia.com\", \"count\": 2,"
    "   \"selectors\": [{\"cel\": {\"expression\":"
    "    \"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0\"}}]}},"
    "  {\"name\": \"nics\", \"exactly\": {\"deviceClassName\": \"nic.example.com\", \"allocationMode\": \"All\"}},"
    "  {\"name\": \"mig\", \"firstAvailable\": ["
    "   {\"name\": \"big\", \"deviceClassName\": \"mig.nvidia.com\", \"selectors\": [{\"cel\": {\"expression\":"
    "    \"device.attributes['gpu.nvidia.com'].profile == '3g.40gb'\"}}]},"
    "   {\"name\": \"small\", \"deviceClassName\": \"mig.nvidia.com\", \"count\": 2}]}],"
    "  \"constraints\": [{\"requests\": [\"gpus\"], \"matchAttribute\": \"gpu.nvidia.com/parentUUID\"}]}}}}";

static void test_template(void **state)
{
    (void)state;
    json_t *obj = load(template);
    struct claimspec cs;
    struct error err = {{0}};
    const json_t *spec = json_object_get(json_object_get(obj, "spec"), "spec");
    if (claimspec_parse(spec, "spec.spec", &cs, &err) != 0)
        fail_msg("%s", err.message);
    json_decref(obj);
    assert_int_equal(cs.nrequests, 3);

    const struct claimspec_request *r = &cs.requests[0];
    assert_string_equal(r->name, "gpus");
    assert_string_equal(r->device_class, "gpu.nvidia.com");
    assert_int_equal(r->count, 2);
    assert_int_equal(r->flags, 0);
    assert_string_equal(r->path, "spec.spec.devices.requests[0].exactly");
    assert_int_equal(r->nsel, 1);
    assert_true(devsel_exact(r->sel[0]));
    struct devsel_attr big[] = {{"memory", {.kind = DEVSEL_QUANTITY, .i = (int64_t)80 << 30}}};
    struct devsel_attr small[] = {{"memory", {.kind = DEVSEL_QUANTITY, .i = (int64_t)24 << 30}}};
    struct devsel_device a100 = {"gpu.nvidia.com", NULL, 0, big, 1}, l4 = {"gpu.nvidia.com", NULL, 0, small, 1};
    assert_int_equal(claimspec_request_match(r, &a100), 1);
    assert_int_equal(claimspec_request_match(r, &l4), 0);

    r = &cs.requests[1];
    assert_string_equal(r->name, "nics");
    assert_int_equal(r->count, 0);
    assert_int_equal(r->flags, CLAIMSPEC_ALL);
    assert_int_equal(r->nsel, 0);
    assert_int_equal(claimspec_request_match(r, &l4), 1); /* no selectors of its own */

    r = &cs.requests[2];
    assert_string_equal(r->name, "mig/big");
    assert_string_equal(r->device_class, "mig.nvidia.com");
    assert_int_equal(r->count, 1); /* the default */
    assert_int_equal(r->flags, CLAIMSPEC_FIRST_AVAILABLE);
    assert_string_equal(r->path, "spec.spec.devices.requests[2].firstAvailable[0]");
    assert_int_equal(r->nsel, 1);
    claimspec_finish(&cs);
    assert_int_equal(cs.nrequests, 0);
    claimspec_finish(NULL);
}

static void test_empty(void **state)
{
    (void)state;
    static const char *const specs[] = {"{}", "{\"devices\": {}}", "{\"devices\": {\"requests\": []}}", "{\"devices\": null}"};
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
        json_t *spec = load(specs[k]);
        struct claimspec cs;
        struct error err = {{0}};
        assert_int_equal(claimspec_parse(spec, "spec", &cs, &err), 0);
        assert_int_equal(cs.nrequests, 0);
        claimspec_finish(&cs);
        json_decref(spec);
    }
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *json, *message;
    } cases[] = {
        {"[]", "spec.spec: must be an object"},
        {"{\"devices\": []}", "spec.spec.devices: must be an object"},
        {"{\"devices\": {\"requests\": {}}}", "spec.spec.devices.requests: must be an array"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"exactly\": {\"deviceClassName\": \"c\", \"count\": 0}}]}}",
         "spec.spec.devices.requests[0].exactly.count: must be at least 1"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"exactly\": {\"deviceClassName\": \"c\"}},"
         " {\"name\": \"b\", \"exactly\": {\"deviceClassName\": \"c\", \"count\": \"2\"}}]}}",
         "spec.spec.devices.requests[1].exactly.count: must be an integer"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"exactly\": {\"deviceClassName\": \"c\", \"allocationMode\": "
         "\"Some\"}}]}}",
         "spec.spec.devices.requests[0].exactly.allocationMode: must be ExactCount or All"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"exactly\": {\"count\": 1}}]}}",
         "spec.spec.devices.requests[0].exactly.deviceClassName: must be a non-empty string"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"deviceClassName\": \"c\"}]}}",
         "spec.spec.devices.requests[0]: must have exactly one of exactly and firstAvailable"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"exactly\": {\"deviceClassName\": \"c\"}, \"firstAvailable\": []}]}}",
         "spec.spec.devices.requests[0]: must have exactly one of exactly and firstAvailable"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"firstAvailable\": []}]}}",
         "spec.spec.devices.requests[0].firstAvailable: must be a non-empty array"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"firstAvailable\": [{\"deviceClassName\": \"c\"}]}]}}",
         "spec.spec.devices.requests[0].firstAvailable[0].name: must be a non-empty string"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"firstAvailable\": [{\"name\": \"s\", \"deviceClassName\": \"c\","
         " \"count\": -1}]}]}}",
         "spec.spec.devices.requests[0].firstAvailable[0].count: must be at least 1"},
        {"{\"devices\": {\"requests\": [{\"exactly\": {\"deviceClassName\": \"c\"}}]}}",
         "spec.spec.devices.requests[0].name: must be a non-empty string"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"exactly\": {\"deviceClassName\": \"c\","
         " \"selectors\": [{\"cel\": {\"expression\": \"true\"}}, {\"cel\": {\"expression\": 1}}]}}]}}",
         "spec.spec.devices.requests[0].exactly.selectors[1].cel.expression: must be a string"},
        {"{\"devices\": {\"requests\": [{\"name\": \"a\", \"exactly\": 3}]}}",
         "spec.spec.devices.requests[0].exactly: must be an object"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        json_t *spec = load(cases[k].json);
        struct claimspec cs;
        struct error err = {{0}};
        if (claimspec_parse(spec, "spec.spec", &cs, &err) != -1)
            fail_msg("case %zu parsed, expected \"%s\"", k, cases[k].message);
        if (strcmp(err.message, cases[k].message) != 0)
            fail_msg("case %zu: \"%s\", expected \"%s\"", k, err.message, cases[k].message);
        assert_null(cs.requests);
        assert_int_equal(cs.nrequests, 0);
        json_decref(spec);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
