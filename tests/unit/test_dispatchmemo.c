/*
 * lib/dispatch/dispatchmemo: the memo key of an object, and the memos pruned
 * to the objects the manager lists (tests/fixtures/dispatch/memo.json).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "dispatchmemo.h"
#include "fixtures.h"

static void test_memo_key(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/memo.json");
    char key[DISPATCH_MEMO_KEY_MAX];
    assert_string_equal(dispatch_memo_key(json_array_get(json_object_get(fx, "objects"), 0), key, sizeof(key)),
                        "RayCluster ray/train");
    assert_string_equal(dispatch_memo_key(json_array_get(json_object_get(fx, "objects"), 1), key, sizeof(key)),
                        "RayJob ray/job-broken");
    json_decref(fx);
}

/* An object deleted without the finalizer: its entries go; those of listed objects stay, as they were. */
static void test_memo_prune(void **state)
{
    (void)state;
    json_t *fx = fixture_json("dispatch/memo.json");
    json_t *told = json_deep_copy(json_object_get(fx, "told")), *warned = json_deep_copy(json_object_get(fx, "warned"));
    dispatch_memo_prune(told, warned, json_object_get(fx, "objects"));
    if (!json_equal(told, json_object_get(fx, "told_after")) || !json_equal(warned, json_object_get(fx, "warned_after"))) {
        char *t = json_dumps(told, JSON_SORT_KEYS), *w = json_dumps(warned, JSON_SORT_KEYS);
        fail_msg("told %s warned %s", t, w);
    }
    /* Nothing listed: everything goes; NULL memos are allowed. */
    json_t *none = json_array();
    dispatch_memo_prune(told, NULL, none);
    dispatch_memo_prune(NULL, warned, none);
    assert_int_equal(json_object_size(told), 0);
    assert_int_equal(json_object_size(warned), 0);
    json_decref(none);
    json_decref(told);
    json_decref(warned);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memo_key),
        cmocka_unit_test(test_memo_prune),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
