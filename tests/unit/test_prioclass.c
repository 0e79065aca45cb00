/* lib/sched/cache/prioclass.c: PriorityClasses by name, the global default, and what a change is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "prioclass.h"

/* Records a class (value; global 1: globalDefault) into s; returns prioclass_set_record's answer. */
static int put(struct prioclasses *s, const char *name, json_int_t value, int global, int deleted)
{
    json_t *o = json_pack("{s:{s:s},s:I,s:b}", "metadata", "name", name, "value", value, "globalDefault", global);
    int changed = prioclass_set_record(s, deleted, o);
    json_decref(o);
    return changed;
}

static void test_values(void **state)
{
    (void)state;
    struct prioclasses *s = prioclass_set_create();
    assert_int_equal(prioclass_set_value(s, "high"), 0);
    assert_int_equal(prioclass_set_value(s, NULL), 0);
    assert_int_equal(put(s, "high", 1000, 0, 0), 1);
    assert_int_equal(put(s, "high", 1000, 0, 0), 0); /* the same again: no change */
    assert_int_equal(put(s, "low", -5, 0, 0), 1);
    assert_int_equal(prioclass_set_value(s, "high"), 1000);
    assert_int_equal(prioclass_set_value(s, "low"), -5);
    assert_int_equal(prioclass_set_value(s, "none"), 0);
    assert_int_equal(prioclass_set_value(s, ""), 0);
    assert_int_equal(put(s, "base", 7, 1, 0), 1); /* the global default: a pod naming no class */
    assert_int_equal(prioclass_set_value(s, NULL), 7);
    assert_int_equal(prioclass_set_value(s, ""), 7);
    assert_int_equal(put(s, "base", 7, 0, 0), 1); /* no longer the default */
    assert_int_equal(prioclass_set_value(s, NULL), 0);
    assert_int_equal(put(s, "high", 2000000000000LL, 0, 0), 1); /* clamped to int32 */
    assert_int_equal(prioclass_set_value(s, "high"), INT32_MAX);
    assert_int_equal(put(s, "low", 0, 0, 1), 1);
    assert_int_equal(put(s, "low", 0, 0, 1), 0); /* gone already */
    assert_int_equal(prioclass_set_value(s, "low"), 0);
    assert_int_equal(prioclass_set_value(s, "base"), 7); /* the one moved into the deleted one's place */
    prioclass_set_destroy(s);
}

/* The cache borrows a set: a change marks its generation; without a set every value is 0. */
static void test_cache(void **state)
{
    (void)state;
    struct cache *c = cache_create();
    json_t *o = json_pack("{s:{s:s},s:i}", "metadata", "name", "high", "value", 1000);
    prioclass_record(c, 0, o); /* no set: ignored */
    assert_int_equal(prioclass_value(c, "high"), 0);
    struct prioclasses *s = prioclass_set_create();
    prioclass_use(c, s);
    uint64_t gen = c->generation;
    prioclass_record(c, 0, o);
    assert_int_equal(prioclass_value(c, "high"), 1000);
    assert_true(c->generation > gen);
    gen = c->generation;
    prioclass_record(c, 0, o);
    assert_int_equal(c->generation, gen);
    json_decref(o);
    cache_destroy(c);
    prioclass_set_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
