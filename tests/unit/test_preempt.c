/*
 * lib/sched/preempt/preempt.c: victim selection, driven by tests/fixtures/preempt/
 * (the format: preemptfixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "preemptfixture.h"

static void test_fixtures(void **state)
{
    (void)state;
    preemptfixture_run_dir("preempt", 3, 20);
}

static void test_policy_parse(void **state)
{
    (void)state;
    enum preempt_policy p;
    struct error err = {{0}};
    assert_int_equal(preempt_policy_parse(NULL, &p, &err), 0);
    assert_int_equal(p, PREEMPT_POLICY_LOWER_PRIORITY);
    assert_int_equal(preempt_policy_parse("LowerOrNewerEqualPriority", &p, &err), 0);
    assert_int_equal(p, PREEMPT_POLICY_LOWER_OR_NEWER_EQUAL_PRIORITY);
    assert_string_equal(preempt_policy_name(p), "LowerOrNewerEqualPriority");
    assert_int_equal(preempt_policy_parse("Never", &p, &err), 0);
    assert_int_equal(p, PREEMPT_POLICY_NEVER);
    assert_int_equal(preempt_policy_parse("lowerpriority", &p, &err), -1);
    assert_int_equal(p, PREEMPT_POLICY_LOWER_PRIORITY);
    assert_string_equal(err.message,
                        "raygate.io/preemption: \"lowerpriority\" is not LowerPriority, LowerOrNewerEqualPriority or Never");
}

static void test_preemptable(void **state)
{
    (void)state;
    assert_true(cache_preemptable(NULL, NULL));
    assert_true(cache_preemptable("true", NULL));
    assert_false(cache_preemptable("false", NULL));
    assert_false(cache_preemptable(NULL, "false"));
    assert_false(cache_preemptable("true", "false"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_policy_parse),
        cmocka_unit_test(test_preemptable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
