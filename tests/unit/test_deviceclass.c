#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "deviceclass.h"

static json_t *load(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (j == NULL)
        fail_msg("fixture does not load: %s (line %d)", jerr.text, jerr.line);
    return j;
}

static const struct devsel_attr gpu_attrs[] = {{"type", {.kind = DEVSEL_STRING, .s = "gpu"}}};
static const struct devsel_device gpu = {"gpu.nvidia.com", gpu_attrs, 1, NULL, 0};
static const struct devsel_attr mig_attrs[] = {{"type", {.kind = DEVSEL_STRING, .s = "mig"}}};
static const struct devsel_device mig = {"gpu.nvidia.com", mig_attrs, 1, NULL, 0};
static const struct devsel_device other = {"gpu.example.com", NULL, 0, NULL, 0};

/* NVIDIA's k8s-dra-driver-gpu class for full GPUs, as its chart installs it. */
static const char *const nvidia_gpu =
    "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"DeviceClass\","
    " \"metadata\": {\"name\": \"gpu.nvidia.com\"},"
    " \"spec\": {\"selectors\": [{\"cel\": {\"expression\":"
    " \"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'\"}}]}}";

static void test_nvidia_gpu(void **state)
{
    (void)state;
    json_t *obj = load(nvidia_gpu);
    struct deviceclass dc;
    struct error err = {{0}};
    assert_int_equal(deviceclass_parse(obj, &dc, &err), 0);
    json_decref(obj);
    assert_string_equal(dc.name, "gpu.nvidia.com");
    assert_string_equal(dc.resource, "deviceclass.resource.kubernetes.io/gpu.nvidia.com");
    assert_int_equal(dc.nsel, 1);
    assert_true(deviceclass_exact(&dc));
    assert_null(deviceclass_unevaluated(&dc));
    assert_int_equal(deviceclass_match(&dc, &gpu), 1);
    assert_int_equal(deviceclass_match(&dc, &mig), 0);
    assert_int_equal(deviceclass_match(&dc, &other), 0);
    deviceclass_finish(&dc);
    assert_null(dc.sel);
    deviceclass_finish(NULL);
}

static void test_resource(void **state)
{
    (void)state;
    static const struct {
        const char *json, *resource;
    } cases[] = {
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"nvidia.com/gpu\"}},"
         " \"spec\": {\"extendedResourceName\": \"example.com/gpu\"}}",
         "example.com/gpu"},
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"nvidia.com/gpu\"}}, \"spec\": {}}",
         "nvidia.com/gpu"},
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"gpu\"}}}", "gpu"},
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"a-b.example/x.y_z\"}}}",
         "a-b.example/x.y_z"},
        {"{\"metadata\": {\"name\": \"mig-1g.10gb\"}, \"spec\": {\"extendedResourceName\": null}}",
         "deviceclass.resource.kubernetes.io/mig-1g.10gb"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        json_t *obj = load(cases[k].json);
        struct deviceclass dc;
        struct error err = {{0}};
        if (deviceclass_parse(obj, &dc, &err) != 0)
            fail_msg("case %zu: %s", k, err.message);
        assert_string_equal(dc.resource, cases[k].resource);
        /* no selectors: every device, exactly */
        assert_int_equal(dc.nsel, 0);
        assert_true(deviceclass_exact(&dc));
        assert_int_equal(deviceclass_match(&dc, &other), 1);
        deviceclass_finish(&dc);
        json_decref(obj);
    }
}

static void test_selectors(void **state)
{
    (void)state;
    json_t *obj = load("{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"selectors\": ["
                       "{\"cel\": {\"expression\": \"device.driver == 'gpu.nvidia.com'\"}},"
                       "{\"cel\": {\"expression\": \"device.attributes['gpu.nvidia.com'].type == 'mig'\"}}]}}");
    struct deviceclass dc;
    struct error err = {{0}};
    assert_int_equal(deviceclass_parse(obj, &dc, &err), 0);
    assert_int_equal(deviceclass_match(&dc, &mig), 1);
    assert_int_equal(deviceclass_match(&dc, &gpu), 0); /* every selector, not any */
    deviceclass_finish(&dc);
    json_decref(obj);

    /* the first inexact selector is named; the class then matches its driver's devices */
    obj = load("{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"selectors\": ["
               "{\"cel\": {\"expression\": \"device.driver == 'gpu.nvidia.com'\"}},"
               "{\"cel\": {\"expression\": \"device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('a100')\"}},"
               "{\"cel\": {\"expression\": \"device.allowMultipleAllocations\"}}]}}");
    assert_int_equal(deviceclass_parse(obj, &dc, &err), 0);
    assert_false(deviceclass_exact(&dc));
    assert_non_null(deviceclass_unevaluated(&dc));
    assert_non_null(strstr(deviceclass_unevaluated(&dc), ".matches('a100'): a method call not evaluated"));
    assert_int_equal(deviceclass_match(&dc, &gpu), 1);
    assert_int_equal(deviceclass_match(&dc, &other), 0);
    deviceclass_finish(&dc);
    json_decref(obj);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *json, *message;
    } cases[] = {
        {"{\"spec\": {}}", "metadata.name: must be a non-empty string"},
        {"{\"metadata\": {\"name\": \"c\"}, \"spec\": []}", "spec: must be an object"},
        {"{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"selectors\": [{\"cel\": {\"expression\": \"true\"}}, {\"cel\": {}}]}}",
         "spec.selectors[1].cel.expression: must be a string"},
        {"{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"selectors\": {}}}", "spec.selectors: must be an array"},
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"x y\"}}}",
         "metadata.annotations.raygate.io/quota-resource: \"x y\" is not a resource name"},
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"a/b/c\"}}}",
         "metadata.annotations.raygate.io/quota-resource: \"a/b/c\" is not a resource name"},
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"Example.com/gpu\"}}}",
         "metadata.annotations.raygate.io/quota-resource: \"Example.com/gpu\" is not a resource name"},
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"example.com/\"}}}",
         "metadata.annotations.raygate.io/quota-resource: \"example.com/\" is not a resource name"},
        {"{\"metadata\": {\"name\": \"c\", \"annotations\": {\"raygate.io/quota-resource\": \"-gpu\"}}}",
         "metadata.annotations.raygate.io/quota-resource: \"-gpu\" is not a resource name"},
        {"{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"extendedResourceName\": 7}}",
         "spec.extendedResourceName: must be a string"},
        {"{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"extendedResourceName\": \"example.com/gpu\\n\"}}",
         "spec.extendedResourceName: \"example.com/gpu \" is not a resource name"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        json_t *obj = load(cases[k].json);
        struct deviceclass dc;
        struct error err = {{0}};
        if (deviceclass_parse(obj, &dc, &err) != -1)
            fail_msg("case %zu parsed, expected \"%s\"", k, cases[k].message);
        if (strcmp(err.message, cases[k].message) != 0)
            fail_msg("case %zu: \"%s\", expected \"%s\"", k, err.message, cases[k].message);
        assert_null(dc.name);
        assert_null(dc.resource);
        assert_int_equal(dc.nsel, 0);
        json_decref(obj);
    }
    /* a name part of 63 characters is one, of 64 is not */
    char name[80], json[200];
    for (int len = 63; len <= 64; len++) {
        memset(name, 'a', (size_t)len);
        name[len] = '\0';
        snprintf(json, sizeof(json), "{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"extendedResourceName\": \"x.io/%s\"}}", name);
        json_t *obj = load(json);
        struct deviceclass dc;
        struct error err = {{0}};
        assert_int_equal(deviceclass_parse(obj, &dc, &err), len == 63 ? 0 : -1);
        deviceclass_finish(&dc);
        json_decref(obj);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvidia_gpu),
        cmocka_unit_test(test_resource),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
