#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "resourceslice.h"

static json_t *load(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (j == NULL)
        fail_msg("fixture does not load: %s (line %d)", jerr.text, jerr.line);
    return j;
}

static const struct devsel_value *attr(const struct devsel_attr *a, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(a[k].name, name) == 0)
            return &a[k].value;
    fail_msg("no attribute %s", name);
    return NULL;
}

static const char *const node_slice = "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"ResourceSlice\","
                                      " \"metadata\": {\"name\": \"node-1-gpu.example.com-x7k\"},"
                                      " \"spec\": {\"driver\": \"gpu.example.com\", \"nodeName\": \"node-1\","
                                      "  \"pool\": {\"name\": \"node-1\", \"generation\": 3, \"resourceSliceCount\": 1},"
                                      "  \"devices\": ["
                                      "   {\"name\": \"gpu-0\","
                                      "    \"attributes\": {\"model\": {\"string\": \"a100\"}, \"index\": {\"int\": 0},"
                                      "     \"healthy\": {\"bool\": true}, \"driverVersion\": {\"version\": \"1.2.3\"},"
                                      "     \"x.io/rack\": {\"string\": \"r1\"}},"
                                      "    \"capacity\": {\"memory\": {\"value\": \"80Gi\"}}},"
                                      "   {\"name\": \"gpu-1\", \"attributes\": {\"index\": {\"int\": 1}}}]}}";

static void test_node_slice(void **state)
{
    (void)state;
    json_t *obj = load(node_slice);
    struct resourceslice s;
    struct error err = {{0}};
    assert_int_equal(resourceslice_parse(obj, &s, &err), 0);
    json_decref(obj); /* the slice keeps nothing borrowed from obj */
    assert_string_equal(s.name, "node-1-gpu.example.com-x7k");
    assert_string_equal(s.driver, "gpu.example.com");
    assert_string_equal(s.pool, "node-1");
    assert_int_equal(s.generation, 3);
    assert_int_equal(s.scope, RESOURCESLICE_NODE);
    assert_string_equal(s.node, "node-1");
    assert_null(s.node_selector);
    assert_int_equal(s.ndevices, 2);
    const struct devsel_device *d = &s.devices[0].device;
    assert_string_equal(s.devices[0].name, "gpu-0");
    assert_ptr_equal(d->driver, s.driver);
    assert_int_equal(d->nattrs, 5);
    assert_int_equal(attr(d->attrs, d->nattrs, "model")->kind, DEVSEL_STRING);
    assert_string_equal(attr(d->attrs, d->nattrs, "model")->s, "a100");
    assert_int_equal(attr(d->attrs, d->nattrs, "index")->kind, DEVSEL_INT);
    assert_int_equal(attr(d->attrs, d->nattrs, "healthy")->kind, DEVSEL_BOOL);
    assert_int_equal(attr(d->attrs, d->nattrs, "healthy")->i, 1);
    assert_int_equal(attr(d->attrs, d->nattrs, "driverVersion")->kind, DEVSEL_VERSION);
    assert_string_equal(attr(d->attrs, d->nattrs, "driverVersion")->s, "1.2.3");
    assert_string_equal(attr(d->attrs, d->nattrs, "x.io/rack")->s, "r1");
    assert_int_equal(d->ncapacity, 1);
    assert_int_equal(attr(d->capacity, d->ncapacity, "memory")->kind, DEVSEL_QUANTITY);
    assert_int_equal(attr(d->capacity, d->ncapacity, "memory")->i, (int64_t)80 << 30);
    assert_int_equal(s.devices[1].device.ncapacity, 0);

    /* what the slice holds is what a selector sees */
    struct devsel *sel = devsel_compile("device.attributes['gpu.example.com'].model == 'a100' && "
                                        "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0 && "
                                        "device.attributes['x.io'].rack == 'r1'");
    assert_true(devsel_exact(sel));
    assert_int_equal(devsel_match(sel, &s.devices[0].device), 1);
    assert_int_equal(devsel_match(sel, &s.devices[1].device), 0);
    devsel_free(sel);
    resourceslice_finish(&s);
    assert_null(s.devices);
    resourceslice_finish(NULL);
}

static void test_scopes(void **state)
{
    (void)state;
    struct resourceslice s;
    struct error err = {{0}};
    json_t *obj = load("{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d.io\", \"pool\": {\"name\": \"p\"},"
                       " \"nodeSelector\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"zone\","
                       " \"operator\": \"In\", \"values\": [\"a\"]}]}]}, \"devices\": [{\"name\": \"x\"}]}}");
    assert_int_equal(resourceslice_parse(obj, &s, &err), 0);
    assert_int_equal(s.scope, RESOURCESLICE_SELECTOR);
    assert_null(s.node);
    assert_ptr_equal(s.node_selector, json_object_get(json_object_get(obj, "spec"), "nodeSelector"));
    assert_int_equal(s.node_selector->refcount, 2); /* obj's and the slice's own */
    assert_int_equal(s.generation, 0);
    resourceslice_finish(&s);
    assert_int_equal(json_object_get(json_object_get(obj, "spec"), "nodeSelector")->refcount, 1);
    json_decref(obj);

    obj = load("{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d.io\", \"pool\": {\"name\": \"p\"},"
               " \"allNodes\": true, \"devices\": [{\"name\": \"x\"}]}}");
    assert_int_equal(resourceslice_parse(obj, &s, &err), 0);
    assert_int_equal(s.scope, RESOURCESLICE_ALL_NODES);
    assert_int_equal(s.ndevices, 1);
    resourceslice_finish(&s);
    json_decref(obj);

    /* shared counters alone: no devices, no node, kept empty */
    obj = load("{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d.io\", \"pool\": {\"name\": \"p\"},"
               " \"sharedCounters\": [{\"name\": \"gpu-0\", \"counters\": {\"memory\": {\"value\": \"80Gi\"}}}]}}");
    assert_int_equal(resourceslice_parse(obj, &s, &err), 0);
    assert_int_equal(s.ndevices, 0);
    assert_null(s.node);
    resourceslice_finish(&s);
    json_decref(obj);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *json, *message;
    } cases[] = {
        {"{\"spec\": {}}", "metadata.name: must be a string"},
        {"{\"metadata\": {\"name\": \"s\"}}", "spec: must be an object"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"pool\": {\"name\": \"p\"}, \"allNodes\": true}}",
         "spec.driver: must be a non-empty string"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"allNodes\": true}}",
         "spec.pool.name: must be a string"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\", \"generation\": \"1\"}}}",
         "spec.pool.generation: must be a non-negative integer"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"nodeName\": \"n\","
         " \"allNodes\": true}}",
         "spec: only one of nodeName, nodeSelector and allNodes may be set"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"devices\": [{\"name\": "
         "\"x\"}]}}",
         "spec: one of nodeName, nodeSelector and allNodes must be set"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"perDeviceNodeSelection\": "
         "true}}",
         "spec.perDeviceNodeSelection: not supported: raygate counts slices whose nodes the slice names"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"nodeName\": 3}}",
         "spec.nodeName: must be a non-empty string"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": {}}}",
         "spec.devices: must be an array"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\", \"attributes\": {\"model\": {}}}]}}",
         "spec.devices[2].attributes.model: no value"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": [{\"name\": \"a\", \"attributes\": {\"model\": {\"int\": 1, \"string\": \"x\"}}}]}}",
         "spec.devices[0].attributes.model: more than one value (int and string)"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": [{\"name\": \"a\", \"attributes\": {\"index\": {\"int\": \"1\"}}}]}}",
         "spec.devices[0].attributes.index.int: must be an integer"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": [{\"name\": \"a\", \"attributes\": {\"ok\": {\"bool\": 1}}}]}}",
         "spec.devices[0].attributes.ok.bool: must be a boolean"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": [{\"name\": \"a\", \"attributes\": {\"o\\nk\": {}}}]}}",
         "spec.devices[0].attributes.o k: no value"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": [{\"name\": \"a\", \"capacity\": {\"memory\": {\"value\": \"80Gx\"}}}]}}",
         "spec.devices[0].capacity.memory.value: invalid quantity \"80Gx\""},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": [{\"name\": \"a\", \"capacity\": {\"memory\": \"80Gi\"}}]}}",
         "spec.devices[0].capacity.memory.value: must be a quantity string"},
        {"{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\", \"pool\": {\"name\": \"p\"}, \"allNodes\": true,"
         " \"devices\": [{\"name\": \"a\"}, {\"attributes\": {}}]}}",
         "spec.devices[1].name: must be a non-empty string"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        json_t *obj = load(cases[k].json);
        struct resourceslice s;
        struct error err = {{0}};
        if (resourceslice_parse(obj, &s, &err) != -1)
            fail_msg("case %zu parsed, expected \"%s\"", k, cases[k].message);
        if (strcmp(err.message, cases[k].message) != 0)
            fail_msg("case %zu: \"%s\", expected \"%s\"", k, err.message, cases[k].message);
        assert_null(s.name);
        assert_null(s.devices);
        assert_int_equal(s.ndevices, 0);
        json_decref(obj);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_slice),
        cmocka_unit_test(test_scopes),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
