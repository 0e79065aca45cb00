/*
 * Unit tests for lib/gang/hypercheck: the webhook's verdict on a HyperNode,
 * driven by tests/fixtures/hypercheck/cases.json, held to the gate's parser
 * (hypernode_upsert): the same verdict and message for every case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "fixtures.h"
#include "hypercheck.h"
#include "hypernode.h"

static void test_cases(void **state)
{
    (void)state;
    json_t *fx = fixture_json("hypercheck/cases.json");
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(fx, "cases"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *want = json_string_value(json_object_get(c, "message"));
        json_t *obj = json_pack("{s:{s:s}, s:O}", "metadata", "name", "hn", "spec", json_object_get(c, "spec"));
        struct error err = {{0}}, perr = {{0}};
        int rc = hypercheck_validate(obj, &err);
        if ((rc == 0) != (want == NULL) || (want != NULL && strstr(err.message, want) == NULL))
            fail_msg("%s: \"%s\", expected \"%s\"", name, rc == 0 ? "(valid)" : err.message, want != NULL ? want : "(valid)");
        struct hypernodes *h = hypernode_create();
        int prc = hypernode_upsert(h, obj, &perr);
        if (prc != rc || (rc != 0 && strcmp(err.message, perr.message) != 0))
            fail_msg("%s: the parser says \"%s\", the webhook \"%s\"", name, prc == 0 ? "(valid)" : perr.message,
                     rc == 0 ? "(valid)" : err.message);
        hypernode_destroy(h);
        json_decref(obj);
    }
    assert_true(json_array_size(json_object_get(fx, "cases")) >= 16);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
