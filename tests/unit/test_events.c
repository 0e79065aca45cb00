#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "events.h"

static const struct events_object pod = {"v1", "Pod", "team-a", "test-cluster-1-head-6668q", "9087dd08"};

static void test_build_fields(void **state)
{
    (void)state;
    json_t *ev = events_build(&pod, "Warning", "GangWaiting", "queue q does not exist", "2026-11-21T19:31:15Z", "host-1");
    assert_non_null(ev);
    assert_string_equal(json_string_value(json_object_get(ev, "kind")), "Event");
    json_t *meta = json_object_get(ev, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "generateName")), "test-cluster-1-head-6668q.");
    assert_string_equal(json_string_value(json_object_get(meta, "namespace")), "team-a");
    json_t *inv = json_object_get(ev, "involvedObject");
    assert_string_equal(json_string_value(json_object_get(inv, "kind")), "Pod");
    assert_string_equal(json_string_value(json_object_get(inv, "uid")), "9087dd08");
    assert_string_equal(json_string_value(json_object_get(ev, "type")), "Warning");
    assert_string_equal(json_string_value(json_object_get(ev, "reason")), "GangWaiting");
    assert_string_equal(json_string_value(json_object_get(ev, "message")), "queue q does not exist");
    assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "source"), "component")), "raygate");
    assert_int_equal(json_integer_value(json_object_get(ev, "count")), 1);
    assert_string_equal(json_string_value(json_object_get(ev, "lastTimestamp")), "2026-11-21T19:31:15Z");
    json_decref(ev);
}

static void test_no_uid(void **state)
{
    (void)state;
    struct events_object o = pod;
    o.uid = NULL;
    json_t *ev = events_build(&o, "Normal", "GangAdmitted", "ok", "2026-11-21T19:31:15Z", "h");
    assert_null(json_object_get(json_object_get(ev, "involvedObject"), "uid"));
    json_decref(ev);
}

/* The apiserver refuses messages over 1 KiB: cut at a character boundary. */
static void test_long_message_cut(void **state)
{
    (void)state;
    char msg[3000];
    for (size_t i = 0; i + 2 < sizeof(msg); i += 2) {
        msg[i] = (char)0xC3; /* é, two bytes */
        msg[i + 1] = (char)0xA9;
    }
    msg[sizeof(msg) - 2] = 'x';
    msg[sizeof(msg) - 1] = '\0';
    json_t *ev = events_build(&pod, "Warning", "GangWaiting", msg, "2026-11-21T19:31:15Z", "h");
    json_t *m = json_object_get(ev, "message");
    assert_non_null(m); /* jansson refuses invalid UTF-8: a bad cut gives NULL */
    const char *s = json_string_value(m);
    assert_true(strlen(s) <= 1024);
    assert_true(strlen(s) > 1000);
    assert_string_equal(s + strlen(s) - 3, "...");
    json_decref(ev);
}

/* An aggregated Event: named (not generated), counted; its count patch says count, lastTimestamp and message. */
static void test_named_and_count_patch(void **state)
{
    (void)state;
    struct events_object obj = {"ray.io/v1", "RayCluster", "ns", "rc", "u1"};
    json_t *ev =
        events_build_named(&obj, "rc.gangwaiting-pods-u1", "Warning", "GangWaiting", "why", "2026-11-21T19:31:15Z", "h", 4);
    json_t *meta = json_object_get(ev, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "name")), "rc.gangwaiting-pods-u1");
    assert_null(json_object_get(meta, "generateName"));
    assert_int_equal(json_integer_value(json_object_get(ev, "count")), 4);
    assert_string_equal(json_string_value(json_object_get(ev, "reason")), "GangWaiting");
    json_decref(ev);
    json_t *p = events_count_patch("later", "2026-11-21T19:40:00Z", 5);
    json_t *want = json_pack("{s:i,s:s,s:s}", "count", 5, "lastTimestamp", "2026-11-21T19:40:00Z", "message", "later");
    assert_true(json_equal(p, want));
    json_decref(p);
    json_decref(want);
}

static void test_timestamp(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(events_timestamp(1700000000, buf, sizeof(buf)), "2023-11-14T22:13:20Z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_fields),          cmocka_unit_test(test_no_uid),    cmocka_unit_test(test_long_message_cut),
        cmocka_unit_test(test_named_and_count_patch), cmocka_unit_test(test_timestamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
