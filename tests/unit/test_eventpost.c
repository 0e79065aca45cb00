/*
 * gate/apply/eventpost.c against the fake API server of fakeapi.h: Events posted to
 * their namespaces, a namespace being deleted is no failure, and a list is
 * always emptied by eventpost_send, posted or dropped (not leading): the
 * Preempting Event of a replica that no longer led was leaked (its JSON and
 * namespace), for its caller freed only the list's storage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "eventpost.h"
#include "fakeapi.h"

struct world {
    struct fake *f;
    json_t *state;
    struct kube_client *k;
};

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    w->state = fake_cluster_state_new();
    struct kube_client_options o = {.backoff_base_ms = 1, .backoff_max_ms = 1};
    w->f = fake_cluster_start(w->state, &w->k, &o);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    fake_cluster_stop(w->f, w->k, w->state);
    free(w);
    return 0;
}

static int never(void *arg)
{
    (*(int *)arg)++;
    return 0;
}

static void add_two(struct eventpost_list *l)
{
    struct events_object rc = {"ray.io/v1", "RayCluster", "ray", "x", "uid-x"};
    struct events_object po = {"v1", "Pod", "other", "x-head", "uid-h"};
    eventpost_add(l, &rc, "Normal", "Preempting", "preempting 1 gang", "2026-11-25T10:00:00Z", "test");
    eventpost_add(l, &po, "Warning", "GangWaiting", "waits", "2026-11-25T10:00:00Z", "test");
}

/*
 * Not leading: nothing is posted, and the list is emptied, its Events freed
 * by eventpost_send. The caller then frees only the storage, as
 * tell_preempting did: without the fix, the len check fails, and the ASan
 * build's LeakSanitizer reports the two Events and their namespaces.
 */
static void test_not_leading_drops_and_frees(void **state)
{
    struct world *w = *state;
    struct eventpost_list l;
    eventpost_list_init(&l);
    add_two(&l);
    assert_int_equal(l.len, 2);
    int asked = 0;
    assert_int_equal(eventpost_send(w->k, &l, never, &asked, "events"), 0);
    assert_int_equal(asked, 1);
    assert_int_equal(l.len, 0);
    free(l.items); /* all a caller frees: the Events were the poster's */
    json_t *log = fake_log(w->f);
    assert_int_equal(json_array_size(log), 0);
    json_decref(log);
}

/* Leading: each Event goes to its own namespace, with its body. */
static void test_posts_to_namespaces(void **state)
{
    struct world *w = *state;
    struct eventpost_list l;
    eventpost_list_init(&l);
    add_two(&l);
    assert_int_equal(eventpost_send(w->k, &l, NULL, NULL, "events"), 0);
    assert_int_equal(l.len, 0);
    eventpost_list_finish(&l);
    json_t *log = fake_log(w->f);
    assert_int_equal(json_array_size(log), 2);
    int ray = 0, other = 0;
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(log_field(log, i, "method"), "POST");
        const char *t = log_field(log, i, "target");
        json_t *ev = json_loads(log_field(log, i, "body"), 0, NULL);
        const char *reason = json_string_value(json_object_get(ev, "reason"));
        if (strcmp(t, "/api/v1/namespaces/ray/events") == 0) {
            ray++;
            assert_string_equal(reason, "Preempting");
        } else if (strcmp(t, "/api/v1/namespaces/other/events") == 0) {
            other++;
            assert_string_equal(reason, "GangWaiting");
        }
        json_decref(ev);
    }
    assert_int_equal(ray, 1);
    assert_int_equal(other, 1);
    json_decref(log);
}

/* A namespace being deleted (403 NamespaceTerminating) is not a failure; a 500 is. */
static void test_failures_counted(void **state)
{
    struct world *w = *state;
    json_object_set_new(json_object_get(w->state, "script"), "/api/v1/namespaces/ray/events", json_pack("[i]", 403));
    json_object_set_new(json_object_get(w->state, "script"), "/api/v1/namespaces/other/events",
                        json_pack("[i,i,i,i,i,i,i,i]", 500, 500, 500, 500, 500, 500, 500, 500));
    struct eventpost_list l;
    eventpost_list_init(&l);
    add_two(&l);
    assert_int_equal(eventpost_send(w->k, &l, NULL, NULL, "events"), 1);
    assert_int_equal(l.len, 0);
    eventpost_list_finish(&l);
}

/*
 * Aggregated Events: a first one (count 1) is created by its name, a repeat
 * counted up by a PATCH of it; one found gone (404) is created again, one
 * found existing (409, after a restart) is counted up instead. None of those
 * is a failure.
 */
static void test_counted(void **state)
{
    struct world *w = *state;
    json_t *script = json_object_get(w->state, "script");
    json_object_set_new(script, "/api/v1/namespaces/ray/events/gone.gangwaiting-queue-capacity", json_pack("[i]", 404));
    json_object_set_new(script, "/api/v1/namespaces/other/events", json_pack("[i]", 409));
    struct eventpost_list l;
    eventpost_list_init(&l);
    struct events_object rc = {"ray.io/v1", "RayCluster", "ray", "gone", NULL};
    struct events_object po = {"v1", "Pod", "other", "h", NULL};
    eventpost_add_counted(&l, &rc, "gone.gangwaiting-queue-capacity", "Warning", "GangWaiting", "full", "2026-11-25T10:00:00Z",
                          "test", 3);
    eventpost_add_counted(&l, &po, "h.gangwaiting-pods", "Warning", "GangWaiting", "pods", "2026-11-25T10:00:00Z", "test", 1);
    assert_int_equal(eventpost_send(w->k, &l, NULL, NULL, "events"), 0);
    eventpost_list_finish(&l);
    json_t *log = fake_log(w->f);
    assert_int_equal(json_array_size(log), 4);
    /* Round one: the repeat's PATCH (404) and the first's POST (409); round two: the other way. */
    int patch404 = 0, post404 = 0, post409 = 0, patch409 = 0;
    for (size_t i = 0; i < 4; i++) {
        const char *m = log_field(log, i, "method"), *t = log_field(log, i, "target");
        json_t *body = json_loads(log_field(log, i, "body"), 0, NULL);
        long long count = json_integer_value(json_object_get(body, "count"));
        if (strcmp(m, "PATCH") == 0 && strcmp(t, "/api/v1/namespaces/ray/events/gone.gangwaiting-queue-capacity") == 0) {
            patch404 += i < 2 && count == 3;
        } else if (strcmp(m, "POST") == 0 && strcmp(t, "/api/v1/namespaces/ray/events") == 0) {
            post404 += i >= 2 && count == 3 &&
                       strcmp(json_string_value(json_object_get(json_object_get(body, "metadata"), "name")),
                              "gone.gangwaiting-queue-capacity") == 0;
        } else if (strcmp(m, "POST") == 0 && strcmp(t, "/api/v1/namespaces/other/events") == 0) {
            post409 += i < 2 && count == 1;
        } else if (strcmp(m, "PATCH") == 0 && strcmp(t, "/api/v1/namespaces/other/events/h.gangwaiting-pods") == 0) {
            patch409 += i >= 2 && strcmp(json_string_value(json_object_get(body, "lastTimestamp")), "2026-11-25T10:00:00Z") == 0;
        }
        json_decref(body);
    }
    assert_int_equal(patch404 + post404 + post409 + patch409, 4);
    json_decref(log);
}

/* An Event added with eventpost_add_new is stolen; finish frees what was never sent. */
static void test_add_new_and_finish(void **state)
{
    (void)state;
    struct eventpost_list l;
    eventpost_list_init(&l);
    json_t *ev = json_pack("{s:s}", "reason", "X");
    eventpost_add_new(&l, "ns", ev);
    assert_ptr_equal(l.items[0].event, ev);
    assert_string_equal(l.items[0].ns, "ns");
    eventpost_list_finish(&l);
    assert_null(l.items);
    assert_int_equal(l.len, 0);
}

static void test_namespace_terminating(void **state)
{
    (void)state;
    json_t *yes = json_pack("{s:{s:[{s:s},{s:s}]}}", "details", "causes", "reason", "Other", "reason", "NamespaceTerminating");
    json_t *no = json_pack("{s:{s:[{s:s}]}}", "details", "causes", "reason", "FieldValueInvalid");
    assert_true(eventpost_namespace_terminating(yes));
    assert_false(eventpost_namespace_terminating(no));
    assert_false(eventpost_namespace_terminating(NULL));
    json_decref(yes);
    json_decref(no);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_not_leading_drops_and_frees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_posts_to_namespaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counted, setup, teardown),
        cmocka_unit_test(test_add_new_and_finish),
        cmocka_unit_test(test_namespace_terminating),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
