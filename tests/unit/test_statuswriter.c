/*
 * gate/status/statuswriter.c against the fake API server of fakeapi.h: writes are
 * keyed by a struct (kind, namespace, name); a write replaces a queued one of
 * the same key only, a patch of an object whose creation is queued is merged
 * into the creation, and done sees each write's key, seq and answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "statuswriter.h"
#include "jsonpatch.h"

struct done_log {
    pthread_mutex_t mu;
    json_t *seen; /* [{"kind", "ns", "name", "seq", "rc", "status"}] */
};

static void on_done(void *arg, const struct statuswriter_result *r)
{
    struct done_log *d = arg;
    pthread_mutex_lock(&d->mu);
    json_array_append_new(d->seen,
                          json_pack("{s:i,s:s?,s:s,s:I,s:i,s:I}", "kind", (int)r->key->kind, "ns", r->key->namespace_, "name",
                                    r->key->name, "seq", (json_int_t)r->seq, "rc", r->rc, "status", (json_int_t)r->status));
    pthread_mutex_unlock(&d->mu);
}

static size_t seen_count(struct done_log *d)
{
    pthread_mutex_lock(&d->mu);
    size_t n = json_array_size(d->seen);
    pthread_mutex_unlock(&d->mu);
    return n;
}

static void wait_seen(struct done_log *d, size_t n)
{
    for (int i = 0; i < 500 && seen_count(d) < n; i++)
        usleep(10 * 1000);
    assert_int_equal(seen_count(d), n);
}

struct world {
    json_t *state;
    struct fake *f;
    struct kube_client *k;
    struct done_log d;
};

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    w->state = fake_cluster_state_new();
    w->f = fake_cluster_start(w->state, &w->k, NULL);
    w->d.seen = json_array();
    pthread_mutex_init(&w->d.mu, NULL);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    json_decref(w->d.seen);
    pthread_mutex_destroy(&w->d.mu);
    fake_cluster_stop(w->f, w->k, w->state);
    free(w);
    return 0;
}

static int gate_open = 1;
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;

/* may_write that holds the writer's first batch until the test opens it: the next writes queue up meanwhile. */
static int held(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&gate_mu);
        int open = gate_open;
        pthread_mutex_unlock(&gate_mu);
        if (open)
            return 1;
        usleep(1000);
    }
}

static void set_gate(int open)
{
    pthread_mutex_lock(&gate_mu);
    gate_open = open;
    pthread_mutex_unlock(&gate_mu);
}

static void test_key_equal(void **state)
{
    (void)state;
    struct statuswriter_key pg = {STATUSWRITER_PODGROUP, "ray", "ray-x-pg"};
    struct statuswriter_key pg2 = {STATUSWRITER_PODGROUP, "ray", "ray-x-pg"};
    struct statuswriter_key st = {STATUSWRITER_PODGROUP_STATUS, "ray", "ray-x-pg"};
    struct statuswriter_key other = {STATUSWRITER_PODGROUP, "default", "ray-x-pg"};
    struct statuswriter_key q = {STATUSWRITER_QUEUE, NULL, "ray-x-pg"};
    struct statuswriter_key q2 = {STATUSWRITER_QUEUE, NULL, "ray-x-pg"};
    assert_true(statuswriter_key_equal(&pg, &pg2));
    assert_false(statuswriter_key_equal(&pg, &st));
    assert_false(statuswriter_key_equal(&pg, &other));
    assert_false(statuswriter_key_equal(&pg, &q));
    assert_true(statuswriter_key_equal(&q, &q2));
}

/*
 * While a batch is in flight: two patches of one key (the second replaces the
 * first), a patch of the same name's status (another key: both go), and a
 * creation then a patch of a third (merged into the creation).
 */
static void test_replace_and_merge(void **state)
{
    struct world *x = *state;
    struct fake *f = x->f;
    struct done_log *d = &x->d;
    struct statuswriter *w = statuswriter_create(x->k, held, on_done, d);
    assert_non_null(w);

    set_gate(0);
    struct statuswriter_key first = {STATUSWRITER_QUEUE, NULL, "q0"};
    statuswriter_submit_new(w, &first, "PATCH", "/apis/x/queues/q0", NULL, json_pack("{s:i}", "n", 0));
    usleep(50 * 1000); /* the writer took q0 and waits in held() */
    struct statuswriter_key pg = {STATUSWRITER_PODGROUP, "ray", "a"}, pgs = {STATUSWRITER_PODGROUP_STATUS, "ray", "a"};
    struct statuswriter_key b = {STATUSWRITER_PODGROUP, "ray", "b"};
    uint64_t s1 = statuswriter_submit_new(w, &pg, "PATCH", "/apis/x/ns/ray/a", NULL, json_pack("{s:i}", "n", 1));
    uint64_t s2 = statuswriter_submit_new(w, &pg, "PATCH", "/apis/x/ns/ray/a", NULL, json_pack("{s:i}", "n", 2));
    uint64_t s3 = statuswriter_submit_new(w, &pgs, "PATCH", "/apis/x/ns/ray/a/status", NULL, json_pack("{s:i}", "n", 3));
    statuswriter_submit_new(w, &b, "POST", "/apis/x/ns/ray", NULL, json_pack("{s:i,s:i}", "n", 4, "m", 0));
    uint64_t s5 = statuswriter_submit_new(w, &b, "PATCH", "/apis/x/ns/ray/b", NULL, json_pack("{s:i}", "m", 5));
    assert_true(s1 < s2 && s2 < s3 && s3 < s5);
    set_gate(1);
    wait_seen(d, 4); /* q0, then a (n 2), a's status, b's creation */
    statuswriter_destroy(w);

    json_t *log = fake_log(f);
    assert_int_equal(json_array_size(log), 4);
    int a = 0, astatus = 0, bpost = 0;
    for (size_t i = 1; i < 4; i++) {
        const char *t = log_field(log, i, "target");
        json_t *body = json_loads(log_field(log, i, "body"), 0, NULL);
        if (strcmp(t, "/apis/x/ns/ray/a") == 0) {
            a++;
            assert_int_equal(json_integer_value(json_object_get(body, "n")), 2);
        } else if (strcmp(t, "/apis/x/ns/ray/a/status") == 0) {
            astatus++;
        } else if (strcmp(t, "/apis/x/ns/ray") == 0) {
            bpost++;
            assert_string_equal(log_field(log, i, "method"), "POST");
            assert_int_equal(json_integer_value(json_object_get(body, "m")), 5);
        }
        json_decref(body);
    }
    assert_int_equal(a + astatus + bpost, 3);
    /* done saw the keys as submitted, with the latest seq of each. */
    size_t i;
    json_t *e;
    int saw_s2 = 0, saw_s5 = 0;
    json_array_foreach(d->seen, i, e)
    {
        uint64_t seq = (uint64_t)json_integer_value(json_object_get(e, "seq"));
        const char *name = json_string_value(json_object_get(e, "name"));
        if (seq == s2) {
            saw_s2 = 1;
            assert_int_equal(json_integer_value(json_object_get(e, "kind")), STATUSWRITER_PODGROUP);
            assert_string_equal(name, "a");
            assert_string_equal(json_string_value(json_object_get(e, "ns")), "ray");
        }
        saw_s5 |= seq == s5 && strcmp(name, "b") == 0;
        assert_true(seq != s1);
    }
    assert_true(saw_s2);
    assert_true(saw_s5);
    json_decref(log);
}

/*
 * The window: a key's first write goes at once; the writes of it within the
 * window after go together once it is over, as one patch that does what they
 * did one after the other; another key is not held.
 */
static void test_window_coalesces(void **state)
{
    struct world *x = *state;
    struct statuswriter *w = statuswriter_create(x->k, NULL, on_done, &x->d);
    statuswriter_set_window(w, 400);
    struct statuswriter_key k = {STATUSWRITER_PODGROUP_STATUS, "ray", "a"}, other = {STATUSWRITER_PODGROUP_STATUS, "ray", "b"};
    statuswriter_submit_new(w, &k, "PATCH", "/a", NULL, json_pack("{s:{s:i,s:i}}", "status", "running", 0, "pending", 3));
    wait_seen(&x->d, 1);
    statuswriter_submit_new(w, &k, "PATCH", "/a", NULL, json_pack("{s:{s:i,s:i}}", "status", "running", 1, "pending", 2));
    statuswriter_submit_new(w, &k, "PATCH", "/a", NULL, json_pack("{s:{s:i,s:s}}", "status", "pending", 1, "phase", "Running"));
    statuswriter_submit_new(w, &other, "PATCH", "/b", NULL, json_pack("{s:i}", "n", 1));
    wait_seen(&x->d, 2); /* b: at once */
    usleep(100 * 1000);
    assert_int_equal(fake_wait_requests(x->f, "PATCH", "/a", 0, 0), 1); /* a: held for the window */
    wait_seen(&x->d, 3);
    statuswriter_destroy(w);
    json_t *log = fake_log(x->f);
    assert_int_equal(json_array_size(log), 3);
    assert_string_equal(log_field(log, 2, "target"), "/a");
    json_t *body = json_loads(log_field(log, 2, "body"), 0, NULL);
    json_t *want = json_pack("{s:{s:i,s:i,s:s}}", "status", "running", 1, "pending", 1, "phase", "Running");
    assert_true(json_equal(body, want));
    json_decref(want);
    json_decref(body);
    json_decref(log);
}

/* Composing merge patches: the second's members win, objects member by member, a null (delete) kept. */
static void test_merge_compose(void **state)
{
    (void)state;
    json_t *a = json_pack("{s:{s:i,s:i},s:i,s:s}", "status", "x", 1, "y", 2, "n", 1, "gone", "v");
    json_t *b = json_pack("{s:{s:i,s:n},s:{s:i},s:n}", "status", "y", 3, "x", "new", "k", 1, "gone");
    json_t *c = jsonpatch_merge_compose(a, b);
    json_t *want = json_pack("{s:{s:n,s:i},s:i,s:n,s:{s:i}}", "status", "x", "y", 3, "n", 1, "gone", "new", "k", 1);
    assert_true(json_equal(c, want));
    json_t *d = jsonpatch_merge_compose(a, json_null());
    assert_true(json_is_null(d));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
    json_decref(want);
}

static int no(void *arg)
{
    (void)arg;
    return 0;
}

/* Not leading: the batch is dropped, reported to done as failed, and nothing reaches the API. */
static void test_not_leading(void **state)
{
    struct world *x = *state;
    struct statuswriter *w = statuswriter_create(x->k, no, on_done, &x->d);
    struct statuswriter_key q = {STATUSWRITER_QUEUE, NULL, "q"};
    statuswriter_submit_new(w, &q, "PATCH", "/apis/x/queues/q", NULL, json_object());
    wait_seen(&x->d, 1);
    statuswriter_destroy(w);
    assert_int_not_equal(json_integer_value(json_object_get(json_array_get(x->d.seen, 0), "rc")), 0);
    assert_int_equal(fake_wait_requests(x->f, NULL, "/", 0, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_equal),
        cmocka_unit_test_setup_teardown(test_replace_and_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_coalesces, setup, teardown),
        cmocka_unit_test(test_merge_compose),
        cmocka_unit_test_setup_teardown(test_not_leading, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
