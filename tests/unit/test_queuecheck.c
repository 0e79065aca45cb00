/*
 * Unit tests for lib/gang/queuecheck: the webhook's decisions on the queue
 * tree, driven by tests/fixtures/queuecheck/cases.json (a tree and the
 * admissions checked against it) and volcano.json (Volcano's own admission
 * cases, each naming its source), and the set's own bookkeeping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "fixtures.h"
#include "queuecheck.h"

static const char *verdict_name(enum queuecheck_verdict v)
{
    return v == QUEUECHECK_ALLOWED ? "allowed" : v == QUEUECHECK_DENIED ? "denied" : "unknown";
}

static void load_set(struct queuecheck_set *s, const json_t *queues)
{
    size_t i;
    const json_t *q;
    json_array_foreach(queues, i, q)
    {
        assert_int_equal(queuecheck_set_put(s, q), 0);
    }
}

/* Each listed warning is a substring of the answer's, in order; as many as listed. */
static void check_warnings(const char *name, const json_t *want, const json_t *got)
{
    if (want == NULL)
        return;
    if (json_array_size(want) != json_array_size(got))
        fail_msg("%s: %zu warnings, expected %zu", name, json_array_size(got), json_array_size(want));
    for (size_t i = 0; i < json_array_size(want); i++) {
        const char *w = json_string_value(json_array_get(want, i)), *g = json_string_value(json_array_get(got, i));
        if (g == NULL || strstr(g, w) == NULL)
            fail_msg("%s: warning \"%s\" lacks \"%s\"", name, g != NULL ? g : "(none)", w);
    }
}

static void run_case(struct queuecheck_set *s, const json_t *c)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const char *call = json_string_value(json_object_get(c, "call"));
    const json_t *object = json_object_get(c, "object"), *old = json_object_get(c, "old");
    const json_t *synced = json_object_get(c, "synced");
    struct error err = {{0}};
    json_t *warnings = NULL;
    enum queuecheck_verdict v;
    s->synced = synced == NULL || json_is_true(synced);
    if (strcmp(call, "gang") == 0)
        v = queuecheck_gang(s, object, old, &err);
    else
        v = queuecheck_queue(s, json_string_value(json_object_get(c, "operation")),
                             json_string_value(json_object_get(c, "request_name")), object, old, &warnings, &err);
    const char *want = json_string_value(json_object_get(c, "verdict"));
    if (strcmp(verdict_name(v), want) != 0)
        fail_msg("%s: %s (%s), expected %s", name, verdict_name(v), err.message, want);
    const char *message = json_string_value(json_object_get(c, "message"));
    if (message != NULL && strstr(err.message, message) == NULL)
        fail_msg("%s: message \"%s\" lacks \"%s\"", name, err.message, message);
    check_warnings(name, json_object_get(c, "warnings"), warnings);
    json_decref(warnings);
}

/* The cases of one fixture, at least min of them. */
static void run_fixture(const char *path, size_t min)
{
    json_t *fx = fixture_json(path);
    struct queuecheck_set s;
    queuecheck_set_init(&s);
    load_set(&s, json_object_get(fx, "queues"));
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(fx, "cases"), i, c)
    {
        run_case(&s, c);
    }
    assert_true(json_array_size(json_object_get(fx, "cases")) >= min);
    queuecheck_set_finish(&s);
    json_decref(fx);
}

static void test_cases(void **state)
{
    (void)state;
    run_fixture("queuecheck/cases.json", 30);
}

/* Volcano's own cases (volcano.json): each names its source case. */
static void test_volcano(void **state)
{
    (void)state;
    run_fixture("queuecheck/volcano.json", 23);
}

/* The set stays sorted and replaces by name; removal and clearing; a nameless Queue is refused. */
static void test_set(void **state)
{
    (void)state;
    struct queuecheck_set s;
    queuecheck_set_init(&s);
    const char *names[] = {"m", "c", "x", "a", "q"};
    for (size_t i = 0; i < 5; i++) {
        json_t *q =
            json_pack("{s:{s:s}, s:{s:s, s:{s:s}}}", "metadata", "name", names[i], "spec", "parent", "p", "capability", "cpu", "2");
        assert_int_equal(queuecheck_set_put(&s, q), 0);
        json_decref(q);
    }
    for (int k = 0; k < 40; k++) { /* grow past the first allocation */
        char n[16];
        snprintf(n, sizeof(n), "z%02d", k);
        json_t *q = json_pack("{s:{s:s}}", "metadata", "name", n);
        assert_int_equal(queuecheck_set_put(&s, q), 0);
        json_decref(q);
    }
    assert_int_equal(s.len, 45);
    for (size_t i = 1; i < s.len; i++)
        assert_true(strcmp(s.items[i - 1].name, s.items[i].name) < 0);
    json_t *again = json_pack("{s:{s:s}, s:{}}", "metadata", "name", "c", "spec");
    assert_int_equal(queuecheck_set_put(&s, again), 0);
    json_decref(again);
    assert_int_equal(s.len, 45);
    const struct queuecheck_queue *c = queuecheck_set_get(&s, "c");
    assert_non_null(c);
    assert_null(c->parent);
    assert_int_equal(c->capability.len, 0);
    assert_string_equal(queuecheck_set_get(&s, "m")->parent, "p");
    assert_int_equal(resources_get(&queuecheck_set_get(&s, "m")->capability, "cpu")->value, 2000);
    json_t *nameless = json_pack("{s:{}}", "metadata");
    assert_int_equal(queuecheck_set_put(&s, nameless), -1);
    json_decref(nameless);
    assert_int_equal(queuecheck_set_remove(&s, "m"), 1);
    assert_int_equal(queuecheck_set_remove(&s, "m"), 0);
    assert_null(queuecheck_set_get(&s, "m"));
    assert_int_equal(s.len, 44);
    s.synced = 1;
    queuecheck_set_clear(&s);
    assert_int_equal(s.len, 0);
    assert_true(s.synced);
    queuecheck_set_finish(&s);
    assert_false(s.synced);
}

/* Many children: the message names the first ones and counts the rest, within one error message. */
static void test_many_children(void **state)
{
    (void)state;
    struct queuecheck_set s;
    queuecheck_set_init(&s);
    s.synced = 1;
    json_t *p = json_pack("{s:{s:s}}", "metadata", "name", "parent");
    queuecheck_set_put(&s, p);
    json_decref(p);
    for (int k = 0; k < 100; k++) {
        char n[32];
        snprintf(n, sizeof(n), "child-with-a-long-name-%03d", k);
        json_t *q = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", n, "spec", "parent", "parent");
        queuecheck_set_put(&s, q);
        json_decref(q);
    }
    json_t *rc = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "volcano.sh/queue-name", "parent");
    struct error err = {{0}};
    assert_int_equal(queuecheck_gang(&s, rc, NULL, &err), QUEUECHECK_DENIED);
    assert_non_null(strstr(err.message, "(child-with-a-long-name-000, child-with-a-long-name-001"));
    assert_non_null(strstr(err.message, "more): only leaf queues hold gangs"));
    json_decref(rc);
    queuecheck_set_finish(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_volcano),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_many_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
