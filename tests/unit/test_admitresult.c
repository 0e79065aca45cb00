#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admitresult.h"
#include "schedfixture.h"

/* A decision copies its gang's names; its pods keep the gates other than ours; the queues are listed. */
static void test_add(void **state)
{
    (void)state;
    struct cache *c = cache_create();
    schedfixture_cluster(c, 1);
    struct cache_pod *pod = schedfixture_pod(c, "head", 1, "head", 1, "1");
    struct admit_result r;
    admit_result_init(&r);
    struct admit_decision *d =
        admit_result_add(&r, ADMIT_ACTION_WAIT, ADMIT_REASON_PODS, cache_gang_get(c, "ns", "c"), strdup("waiting"));
    admit_result_add_pod(&r, d, pod);
    admit_result_add_queue(&r, "q");
    cache_destroy(c); /* the result owns copies */
    assert_int_equal(r.len, 1);
    assert_string_equal(d->namespace_, "ns");
    assert_string_equal(d->cluster, "c");
    assert_string_equal(d->cluster_uid, "u-c");
    assert_string_equal(d->gang, "ray-c-pg");
    assert_string_equal(d->queue, "q");
    assert_string_equal(d->message, "waiting");
    assert_int_equal(d->npods, 1);
    assert_string_equal(d->pods[0].name, "head");
    assert_string_equal(d->pods[0].resource_version, "7");
    json_t *patch = admit_result_ungate_patch(&d->pods[0]);
    char *text = json_dumps(patch, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(text, "{\"metadata\":{\"resourceVersion\":\"7\"},\"spec\":{\"schedulingGates\":[{\"name\":\"other\"}]}}");
    free(text);
    json_decref(patch);
    assert_int_equal(r.queues_evaluated, 1);
    assert_string_equal(r.queues[0], "q");
    admit_result_finish(&r);
    assert_int_equal(r.len, 0);
    assert_null(r.items);
    admit_result_finish(NULL);
}

/* Many names: chunks never move what they hold. */
static void test_alloc(void **state)
{
    (void)state;
    struct admit_result r;
    admit_result_init(&r);
    char *first = admit_result_alloc(&r, 6);
    memcpy(first, "first", 6);
    for (int i = 0; i < 1000; i++)
        memset(admit_result_alloc(&r, 1000), 'x', 1000);
    assert_string_equal(first, "first");
    admit_result_finish(&r);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(admit_result_action_name(ADMIT_ACTION_TAIL_WAIT), "tail-wait");
    assert_string_equal(admit_result_reason_name(ADMIT_REASON_QUEUE_CAPACITY), "queue-capacity");
    assert_string_equal(admit_result_reason_name(ADMIT_REASON_NONE), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_alloc),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
