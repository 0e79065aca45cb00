/* lib/dra/dravariant.c: a request's own selectors on its class as a device resource of their own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "claimspec.h"
#include "dravariant.h"

/* A claim spec of one request of class cls with the selectors exprs (n of them), parsed into cs. */
static void spec(struct claimspec *cs, const char *cls, const char *const *exprs, size_t n)
{
    json_t *sels = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(sels, json_pack("{s:{s:s}}", "cel", "expression", exprs[i]));
    json_t *obj = json_pack("{s:{s:[{s:s, s:{s:s, s:o}}]}}", "devices", "requests", "name", "gpu", "exactly", "deviceClassName",
                            cls, "selectors", sels);
    struct error err = {{0}};
    assert_int_equal(claimspec_parse(obj, "spec", cs, &err), 0);
    json_decref(obj);
}

static void test_find_add(void **state)
{
    (void)state;
    static const char *const a100[] = {"device.attributes[\"gpu.example.com\"].model == \"a100\""};
    static const char *const two[] = {"device.attributes[\"gpu.example.com\"].model == \"a100\"",
                                      "device.driver == \"gpu.example.com\""};
    struct claimspec x, y, z, none;
    spec(&x, "gpu.example.com", a100, 1);
    spec(&y, "other.example.com", a100, 1);
    spec(&z, "gpu.example.com", two, 2);
    spec(&none, "gpu.example.com", NULL, 0);
    struct dravariants vs = {0};
    assert_int_equal(dravariant_find(&vs, &x.requests[0]), -1);
    dravariant_add(&vs, &x.requests[0], 7);
    assert_int_equal(dravariant_find(&vs, &x.requests[0]), 7);
    assert_int_equal(dravariant_find(&vs, &y.requests[0]), -1); /* another class */
    assert_int_equal(dravariant_find(&vs, &z.requests[0]), -1); /* other selectors */
    assert_int_equal(dravariant_find(&vs, &none.requests[0]), -1);
    char *name = dravariant_name(&z.requests[0]);
    assert_string_equal(name, "gpu.example.com devices where (device.attributes[\"gpu.example.com\"].model == \"a100\") && "
                              "(device.driver == \"gpu.example.com\")");
    free(name);
    name = dravariant_name(&x.requests[0]);
    assert_string_equal(name, "gpu.example.com devices where device.attributes[\"gpu.example.com\"].model == \"a100\"");
    free(name);
    struct devsel_attr attrs[] = {{"model", {DEVSEL_STRING, 0, "a100"}}};
    struct devsel_device d = {"gpu.example.com", attrs, 1, NULL, 0};
    assert_true(dravariant_match(&vs.v[0], &d));
    attrs[0].value.s = "t4";
    assert_false(dravariant_match(&vs.v[0], &d));
    dravariant_clear(&vs);
    assert_int_equal(vs.n, 0);
    claimspec_finish(&x);
    claimspec_finish(&y);
    claimspec_finish(&z);
    claimspec_finish(&none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_add),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
