#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "poolfixture.h"
#include "shape.h"

static const struct shape_rl *rl_of(struct shape_pool *p, const char *text, int keep_zero, const char *skip)
{
    struct resources r;
    struct error err;
    resources_init(&r);
    json_t *obj = json_loads(text, 0, NULL);
    assert_int_equal(resources_parse(&r, obj, "x", 0, &err), 0);
    const struct shape_rl *rl = shape_rl_intern(p, &r, keep_zero, skip);
    resources_finish(&r);
    json_decref(obj);
    return rl;
}

/* Equal lists are one; zeros dropped unless kept; skip leaves one out; ids are dense and stable. */
static void test_rl(void **state)
{
    struct shape_pool *p = *state;
    const struct shape_rl *a = rl_of(p, "{\"cpu\": \"2\", \"memory\": \"1Gi\"}", 0, NULL);
    const struct shape_rl *b = rl_of(p, "{\"memory\": \"1Gi\", \"cpu\": \"2000m\", \"gpu\": \"0\"}", 0, NULL);
    assert_non_null(a);
    assert_int_equal(a->len, 2);
    assert_ptr_equal(a, b);
    assert_int_equal(a->refs, 2);
    uint32_t cpu = shape_resource_id(p, "cpu");
    assert_int_equal(a->items[0].id, cpu);
    assert_int_equal(a->items[0].value, 2000);
    assert_string_equal(p->resource_names[cpu], "cpu");
    const struct shape_rl *z = rl_of(p, "{\"cpu\": \"0\"}", 1, NULL);
    assert_non_null(z);
    assert_int_equal(z->items[0].value, 0);
    assert_null(rl_of(p, "{\"cpu\": \"0\"}", 0, NULL));
    const struct shape_rl *s = rl_of(p, "{\"cpu\": \"2\", \"pods\": \"110\"}", 0, "pods");
    assert_int_equal(s->len, 1);
    assert_ptr_not_equal(s, a);
    assert_ptr_equal(shape_rl_ref(s), s);
    assert_int_equal(s->refs, 2);
    shape_rl_release(p, s);
    shape_rl_release(p, s);
    shape_rl_release(p, z);
    shape_rl_release(p, a);
    assert_int_equal(p->rls.len, 1);
    shape_rl_release(p, b);
    shape_rl_release(p, NULL);
}

/* Constraints: one class per content whatever its key order; what is kept of each part. */
static void test_sched(void **state)
{
    struct shape_pool *p = *state;
    json_t *s1 = json_loads("{\"nodeSelector\": {\"b\": \"2\", \"a\": \"1\"}, \"tolerations\": ["
                            "{\"key\": \"gpu\", \"operator\": \"Exists\", \"effect\": \"NoSchedule\"},"
                            "{\"key\": \"x\", \"value\": \"y\", \"effect\": \"PreferNoSchedule\"}],"
                            "\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": {"
                            "\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"zone\", \"operator\": \"NotIn\","
                            "\"values\": [\"z1\", \"z2\"]}], \"matchFields\": [{\"key\": \"metadata.name\", \"operator\": \"In\","
                            "\"values\": [\"n1\"]}]}]}}}}",
                            0, NULL);
    json_t *s2 = json_deep_copy(s1);
    json_t *sel = json_object_get(s2, "nodeSelector");
    json_object_del(sel, "a");
    json_object_set_new(sel, "a", json_string("1"));
    const struct shape_sched *a = shape_sched_intern(p, s1);
    const struct shape_sched *b = shape_sched_intern(p, s2);
    assert_non_null(a);
    assert_ptr_equal(a, b);
    assert_int_equal(a->nselector, 2);
    assert_int_equal(a->nterms, 1);
    assert_int_equal(a->terms[0].len, 2);
    assert_int_equal(a->terms[0].exprs[0].op, SHAPE_OP_NOT_IN);
    assert_int_equal(a->terms[0].exprs[0].nvalues, 2);
    assert_false(a->terms[0].exprs[0].field_name);
    assert_true(a->terms[0].exprs[1].field_name);
    assert_int_equal(a->ntolerations, 2);
    assert_true(a->tolerations[0].exists);
    assert_int_equal(a->tolerations[0].effect, SHAPE_EFFECT_NO_SCHEDULE);
    assert_int_equal(a->tolerations[1].effect, 255); /* PreferNoSchedule: tolerates no taint kept */
    assert_string_equal(a->tolerations[1].value, "y");
    json_t *none = json_loads("{\"nodeSelector\": {}, \"tolerations\": []}", 0, NULL);
    assert_null(shape_sched_intern(p, none));
    shape_sched_release(p, a);
    assert_int_equal(p->scheds.len, 1);
    shape_sched_release(p, b);
    shape_sched_release(p, NULL);
    json_decref(none);
    json_decref(s2);
    json_decref(s1);
}

static void test_strings(void **state)
{
    struct shape_pool *p = *state;
    json_t *obj = json_pack("{s:s, s:s, s:i}", "a", "x", "e", "", "n", 1);
    const char *x = shape_member(p, obj, "a");
    assert_ptr_equal(x, shape_intern(p, "x"));
    assert_null(shape_member(p, obj, "e"));
    assert_null(shape_member(p, obj, "n"));
    assert_null(shape_member(p, obj, "missing"));
    shape_release(p, x);
    shape_release(p, x);
    assert_int_equal(shape_effect("NoExecute"), SHAPE_EFFECT_NO_EXECUTE);
    assert_int_equal(shape_effect("PreferNoSchedule"), SHAPE_EFFECT_ANY);
    assert_int_equal(shape_effect(NULL), SHAPE_EFFECT_ANY);
    json_decref(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rl, poolfixture_setup, poolfixture_teardown),
        cmocka_unit_test_setup_teardown(test_sched, poolfixture_setup, poolfixture_teardown),
        cmocka_unit_test_setup_teardown(test_strings, poolfixture_setup, poolfixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
