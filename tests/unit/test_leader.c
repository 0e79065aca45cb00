/*
 * gate/lead/leader.c: leader election against the fake API server of fakeapi.h,
 * whose Lease keeps a resourceVersion like the real one (a PUT with a stale
 * one gets 409, a POST of an existing Lease 409). Short durations (a lease of
 * 1 s, a renew deadline of 500 ms, a retry every 50 ms); every wait is a
 * bounded poll on a condition, never a sleep followed by a judgement.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "leader.h"

#define NS "raygate-system"
#define NAME "raygate-gate"
#define COLLECTION "/apis/coordination.k8s.io/v1/namespaces/" NS "/leases"
#define LEASE COLLECTION "/" NAME
#define WAIT_MS 10000

/* The fake's Lease (f->arg). */
struct store {
    pthread_mutex_t mu;
    json_t *lease; /* NULL: none */
    long rv;
    int fail;      /* answer every request 500 */
    int fail_puts; /* answer that many PUTs 500 */
    int race_post; /* at the next POST, another replica creates the Lease first */
    int hang;      /* hold every request without an answer until cleared */
    int held;      /* requests being held */
    int conflicts; /* 409s answered */
    int gets, posts, puts;
};

/* Under s->mu: stores lease (steals it) with the next resourceVersion. */
static void store_set_new(struct store *s, json_t *lease)
{
    char rv[32];
    snprintf(rv, sizeof(rv), "%ld", ++s->rv);
    json_object_set_new(json_object_get(lease, "metadata"), "resourceVersion", json_string(rv));
    json_decref(s->lease);
    s->lease = lease;
}

/* Another replica's Lease (new). */
static json_t *other_lease(const char *holder, long duration_s, long transitions)
{
    return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:i,s:s,s:s,s:i}}", "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
                     "metadata", "name", NAME, "namespace", NS, "spec", "holderIdentity", holder, "leaseDurationSeconds",
                     (int)duration_s, "acquireTime", "2026-01-01T00:00:00.000000Z", "renewTime", "2026-01-01T00:00:00.000000Z",
                     "leaseTransitions", (int)transitions);
}

static int answer_write(struct store *s, const struct fake_req *req)
{
    json_t *body = json_loads(req->body, 0, NULL);
    const char *rv = json_string_value(json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
    const char *have =
        s->lease != NULL ? json_string_value(json_object_get(json_object_get(s->lease, "metadata"), "resourceVersion")) : NULL;
    if (strcmp(req->method, "POST") == 0 && s->race_post) {
        s->race_post = 0;
        store_set_new(s, other_lease("other", 30, 0));
    }
    if (strcmp(req->method, "POST") == 0 && s->lease != NULL) {
        s->conflicts++;
        json_decref(body);
        respond_status(req, 409, "AlreadyExists", "leases \"" NAME "\" already exists", NULL);
    } else if (strcmp(req->method, "PUT") == 0 && s->lease == NULL) {
        json_decref(body);
        respond_status(req, 404, "NotFound", "leases \"" NAME "\" not found", NULL);
    } else if (strcmp(req->method, "PUT") == 0 && (rv == NULL || strcmp(rv, have) != 0)) {
        s->conflicts++;
        json_decref(body);
        respond_status(req, 409, "Conflict", "the object has been modified", NULL);
    } else {
        store_set_new(s, body);
        respond_json(req, strcmp(req->method, "POST") == 0 ? 201 : 200, NULL, json_deep_copy(s->lease));
    }
    return 0;
}

static int handler(struct fake *f, const struct fake_req *req)
{
    struct store *s = f->arg;
    pthread_mutex_lock(&s->mu);
    if (s->hang) {
        s->held++;
        while (s->hang) {
            pthread_mutex_unlock(&s->mu);
            nanosleep(&(struct timespec){.tv_nsec = 5 * 1000000}, NULL);
            pthread_mutex_lock(&s->mu);
        }
        s->held--;
    }
    int is_get = strcmp(req->method, "GET") == 0, is_put = strcmp(req->method, "PUT") == 0;
    s->gets += is_get && strcmp(req->target, LEASE) == 0;
    s->puts += is_put && strcmp(req->target, LEASE) == 0;
    s->posts += strcmp(req->method, "POST") == 0 && strcmp(req->target, COLLECTION) == 0;
    if (s->fail || (is_put && s->fail_puts > 0)) {
        s->fail_puts -= is_put && s->fail_puts > 0;
        respond_status(req, 500, "InternalError", "etcd is sad", NULL);
    } else if (is_get && strcmp(req->target, LEASE) == 0) {
        if (s->lease != NULL)
            respond_json(req, 200, NULL, json_deep_copy(s->lease));
        else
            respond_status(req, 404, "NotFound", "leases \"" NAME "\" not found", NULL);
    } else if ((is_put && strcmp(req->target, LEASE) == 0) ||
               (strcmp(req->method, "POST") == 0 && strcmp(req->target, COLLECTION) == 0)) {
        answer_write(s, req);
    } else {
        respond_status(req, 404, "NotFound", "no such path", NULL);
    }
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* Another replica's record, written as a PUT of its own would. */
static void store_put_holder(struct store *s, const char *holder, long duration_s, long transitions)
{
    pthread_mutex_lock(&s->mu);
    store_set_new(s, other_lease(holder, duration_s, transitions));
    pthread_mutex_unlock(&s->mu);
}

/* The stored Lease's spec field (a copy, "" / -1 when absent). */
static char *stored_holder(struct store *s)
{
    pthread_mutex_lock(&s->mu);
    const char *h = json_string_value(json_object_get(json_object_get(s->lease, "spec"), "holderIdentity"));
    char *copy = strdup(h != NULL ? h : "");
    pthread_mutex_unlock(&s->mu);
    return copy;
}

static long stored_int(struct store *s, const char *field)
{
    pthread_mutex_lock(&s->mu);
    json_t *v = json_object_get(json_object_get(s->lease, "spec"), field);
    long n = json_is_integer(v) ? (long)json_integer_value(v) : -1;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void store_set(struct store *s, int *field, int value)
{
    pthread_mutex_lock(&s->mu);
    *field = value;
    pthread_mutex_unlock(&s->mu);
}

static int counter(struct store *s, const int *field)
{
    pthread_mutex_lock(&s->mu);
    int n = *field;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What the notify callback saw. */
struct seen {
    struct leader *l;
    pthread_mutex_t mu;
    int calls, gained, lost;
};

static void on_change(void *arg)
{
    struct seen *sn = arg;
    int leading = leader_is_leading(sn->l);
    pthread_mutex_lock(&sn->mu);
    sn->calls++;
    if (leading)
        sn->gained++;
    else
        sn->lost++;
    pthread_mutex_unlock(&sn->mu);
}

struct fixture {
    struct store store;
    struct fake *fake;
    struct seen seen;
    struct leader *l;
};

static void fixture_start(struct fixture *fx, long duration_ms, long renew_deadline_ms, long retry_period_ms)
{
    struct kubeconfig cfg;
    fake_kubeconfig_init(fx->fake, &cfg);
    struct leader_options o = {.namespace_ = NS,
                               .name = NAME,
                               .identity = "me",
                               .duration_ms = duration_ms,
                               .renew_deadline_ms = renew_deadline_ms,
                               .retry_period_ms = retry_period_ms};
    struct error err;
    fx->l = leader_create(&cfg, &o, &err);
    kubeconfig_finish(&cfg);
    if (fx->l == NULL)
        fail_msg("leader_create: %s", err.message);
    assert_string_equal(leader_identity(fx->l), "me");
    fx->seen.l = fx->l;
    leader_set_notify(fx->l, on_change, &fx->seen);
    assert_int_equal(leader_start(fx->l), 0);
}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    pthread_mutex_init(&fx->store.mu, NULL);
    pthread_mutex_init(&fx->seen.mu, NULL);
    fx->fake = fake_start(handler, &fx->store);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    pthread_mutex_lock(&fx->store.mu);
    fx->store.hang = 0; /* a failed test may leave requests held */
    pthread_mutex_unlock(&fx->store.mu);
    leader_destroy(fx->l);
    fake_stop(fx->fake);
    json_decref(fx->store.lease);
    pthread_mutex_destroy(&fx->store.mu);
    pthread_mutex_destroy(&fx->seen.mu);
    free(fx);
    return 0;
}

static int seen_count(struct fixture *fx, const int *field)
{
    pthread_mutex_lock(&fx->seen.mu);
    int n = *field;
    pthread_mutex_unlock(&fx->seen.mu);
    return n;
}

/* Conditions for fake_wait. */
static int is_leading(void *arg)
{
    return leader_is_leading(((struct fixture *)arg)->l);
}

static int gained_once(void *arg)
{
    struct fixture *fx = arg;
    return seen_count(fx, &fx->seen.gained) >= 1;
}

static int gained_twice(void *arg)
{
    struct fixture *fx = arg;
    return seen_count(fx, &fx->seen.gained) >= 2;
}

static int lost_once(void *arg)
{
    struct fixture *fx = arg;
    return seen_count(fx, &fx->seen.lost) >= 1;
}

static int wanted;
static int puts_reached(void *arg)
{
    struct fixture *fx = arg;
    return counter(&fx->store, &fx->store.puts) >= wanted;
}

static int gets_reached(void *arg)
{
    struct fixture *fx = arg;
    return counter(&fx->store, &fx->store.gets) >= wanted;
}

/* No Lease: a GET (404), a POST that names us; then optimistic PUTs with the resourceVersion; released on stop. */
static void test_acquire_renew_release(void **state)
{
    struct fixture *fx = *state;
    fixture_start(fx, 1000, 500, 50);
    assert_true(fake_wait(gained_once, fx, WAIT_MS));
    assert_true(leader_is_leading(fx->l));
    char *h = stored_holder(&fx->store);
    assert_string_equal(h, "me");
    free(h);
    assert_int_equal(stored_int(&fx->store, "leaseDurationSeconds"), 1);
    assert_int_equal(counter(&fx->store, &fx->store.posts), 1);

    wanted = 3;
    assert_true(fake_wait(puts_reached, fx, WAIT_MS));
    assert_true(leader_is_leading(fx->l));
    json_t *log = fake_log(fx->fake);
    assert_string_equal(log_field(log, 0, "method"), "GET");
    assert_string_equal(log_field(log, 1, "method"), "POST");
    assert_string_equal(log_field(log, 1, "target"), COLLECTION);
    /* Renewals are PUTs of the Lease last written, without a read first, each with the version the last reply gave. */
    for (size_t i = 2; i < 5; i++) {
        assert_string_equal(log_field(log, i, "method"), "PUT");
        assert_string_equal(log_field(log, i, "target"), LEASE);
        json_t *body = json_loads(log_field(log, i, "body"), 0, NULL);
        char want[32];
        snprintf(want, sizeof(want), "%zu", i - 1);
        assert_string_equal(json_string_value(json_object_get(json_object_get(body, "metadata"), "resourceVersion")), want);
        assert_string_equal(json_string_value(json_object_get(json_object_get(body, "spec"), "holderIdentity")), "me");
        json_decref(body);
    }
    json_decref(log);
    assert_int_equal(counter(&fx->store, &fx->store.conflicts), 0);
    assert_int_equal(seen_count(fx, &fx->seen.calls), 1);

    int puts = counter(&fx->store, &fx->store.puts);
    leader_stop(fx->l);
    assert_false(leader_is_leading(fx->l));
    h = stored_holder(&fx->store);
    assert_string_equal(h, "");
    free(h);
    assert_true(counter(&fx->store, &fx->store.puts) > puts);
    /* Idempotent: a second stop writes nothing. */
    puts = counter(&fx->store, &fx->store.puts);
    leader_stop(fx->l);
    assert_int_equal(counter(&fx->store, &fx->store.puts), puts);
}

/* Renewals failing until the renew deadline end leadership (notified); it comes back once they succeed. */
static void test_renew_failure_past_deadline(void **state)
{
    struct fixture *fx = *state;
    fixture_start(fx, 1000, 500, 50);
    assert_true(fake_wait(gained_once, fx, WAIT_MS));
    store_set(&fx->store, &fx->store.fail, 1);
    assert_true(fake_wait(lost_once, fx, WAIT_MS));
    assert_false(leader_is_leading(fx->l));
    assert_int_equal(seen_count(fx, &fx->seen.gained), 1);

    store_set(&fx->store, &fx->store.fail, 0);
    assert_true(fake_wait(gained_twice, fx, WAIT_MS));
    assert_true(fake_wait(is_leading, fx, WAIT_MS));
    assert_int_equal(seen_count(fx, &fx->seen.lost), 1);
}

static int not_leading(void *arg)
{
    return !leader_is_leading(((struct fixture *)arg)->l);
}

/*
 * A leader stops leading at its renew deadline even while its renewal is stuck
 * in a request: with a renew deadline of 200 ms, the request's timeout is 1 s
 * (leader.h), so leadership ends while the election thread still waits for the
 * answer, before it can notify; the notification follows once the request
 * times out.
 */
static void test_deadline_while_blocked(void **state)
{
    struct fixture *fx = *state;
    fixture_start(fx, 1000, 200, 50);
    assert_true(fake_wait(gained_once, fx, WAIT_MS));
    store_set(&fx->store, &fx->store.hang, 1);
    assert_true(fake_wait(not_leading, fx, WAIT_MS));
    pthread_mutex_lock(&fx->store.mu);
    int held = fx->store.held;
    pthread_mutex_unlock(&fx->store.mu);
    assert_int_equal(seen_count(fx, &fx->seen.lost), 0);
    assert_int_equal(held, 1);
    assert_true(fake_wait(lost_once, fx, WAIT_MS));
    assert_false(leader_is_leading(fx->l));
    store_set(&fx->store, &fx->store.hang, 0);
    assert_true(fake_wait(gained_twice, fx, WAIT_MS));
}

/*
 * One failed renewal is followed at once by a read and a PUT of what was read:
 * leadership is kept (a renew deadline of 2 s leaves the three requests time).
 */
static void test_one_failed_renewal(void **state)
{
    struct fixture *fx = *state;
    fixture_start(fx, 3000, 2000, 50);
    assert_true(fake_wait(gained_once, fx, WAIT_MS));
    wanted = 2;
    assert_true(fake_wait(puts_reached, fx, WAIT_MS));
    pthread_mutex_lock(&fx->store.mu);
    fx->store.fail_puts = 1;
    int gets = fx->store.gets, puts = fx->store.puts;
    pthread_mutex_unlock(&fx->store.mu);
    wanted = puts + 3;
    assert_true(fake_wait(puts_reached, fx, WAIT_MS));
    assert_true(leader_is_leading(fx->l));
    assert_int_equal(seen_count(fx, &fx->seen.lost), 0);
    assert_int_equal(seen_count(fx, &fx->seen.calls), 1);
    /* The failed PUT was followed by exactly one GET; the renewals after it are PUTs again. */
    assert_int_equal(counter(&fx->store, &fx->store.gets), gets + 1);
}

/* Another holder's record ends leadership at once (notified); we neither write over it nor release it. */
static void test_taken_over(void **state)
{
    struct fixture *fx = *state;
    fixture_start(fx, 1000, 500, 50);
    assert_true(fake_wait(gained_once, fx, WAIT_MS));
    store_put_holder(&fx->store, "other", 30, 5);
    assert_true(fake_wait(lost_once, fx, WAIT_MS));
    assert_false(leader_is_leading(fx->l));
    int puts = counter(&fx->store, &fx->store.puts), posts = counter(&fx->store, &fx->store.posts);
    /* Several more tries: it only reads while the other's lease is valid. */
    wanted = counter(&fx->store, &fx->store.gets) + 4;
    assert_true(fake_wait(gets_reached, fx, WAIT_MS));
    assert_int_equal(counter(&fx->store, &fx->store.puts), puts);
    assert_int_equal(counter(&fx->store, &fx->store.posts), posts);
    assert_false(leader_is_leading(fx->l));
    leader_stop(fx->l);
    char *h = stored_holder(&fx->store);
    assert_string_equal(h, "other");
    free(h);
    assert_int_equal(counter(&fx->store, &fx->store.puts), puts);
    assert_int_equal(seen_count(fx, &fx->seen.gained), 1);
    assert_int_equal(seen_count(fx, &fx->seen.lost), 1);
}

/* A valid lease of another holder is waited for; once released, taken at the next try, transitions counted. */
static void test_takes_released(void **state)
{
    struct fixture *fx = *state;
    store_put_holder(&fx->store, "other", 30, 3);
    fixture_start(fx, 1000, 500, 50);
    wanted = 3;
    assert_true(fake_wait(gets_reached, fx, WAIT_MS));
    assert_false(leader_is_leading(fx->l));
    assert_int_equal(counter(&fx->store, &fx->store.puts), 0);
    assert_int_equal(seen_count(fx, &fx->seen.calls), 0);

    store_put_holder(&fx->store, "", 1, 3);
    assert_true(fake_wait(gained_once, fx, WAIT_MS));
    char *h = stored_holder(&fx->store);
    assert_string_equal(h, "me");
    free(h);
    assert_int_equal(stored_int(&fx->store, "leaseTransitions"), 4);
    assert_int_equal(counter(&fx->store, &fx->store.posts), 0);
}

/* A holder that stops renewing loses its lease a lease duration after we first saw its record. */
static void test_takes_expired(void **state)
{
    struct fixture *fx = *state;
    store_put_holder(&fx->store, "gone", 1, 0);
    long long start = mono_ms();
    fixture_start(fx, 1000, 500, 50);
    assert_true(fake_wait(gained_once, fx, WAIT_MS));
    /* Not before its 1 s had passed on our clock (whatever its renewTime says). */
    assert_true(mono_ms() - start >= 1000);
    char *h = stored_holder(&fx->store);
    assert_string_equal(h, "me");
    free(h);
    assert_int_equal(stored_int(&fx->store, "leaseTransitions"), 1);
    /* It read the record unchanged for a lease duration, several tries, before its first write. */
    json_t *log = fake_log(fx->fake);
    size_t i = 0;
    while (i < json_array_size(log) && strcmp(log_field(log, i, "method"), "GET") == 0)
        i++;
    assert_true(i >= 2);
    assert_string_equal(log_field(log, i, "method"), "PUT");
    json_decref(log);
}

/* A Lease created by another between our read (404) and our POST: 409, no leadership, and the next reads see the holder. */
static void test_create_race(void **state)
{
    struct fixture *fx = *state;
    fx->store.race_post = 1;
    fixture_start(fx, 1000, 500, 50);
    wanted = 3;
    assert_true(fake_wait(gets_reached, fx, WAIT_MS));
    assert_int_equal(counter(&fx->store, &fx->store.posts), 1);
    assert_int_equal(counter(&fx->store, &fx->store.conflicts), 1);
    assert_int_equal(counter(&fx->store, &fx->store.puts), 0);
    assert_false(leader_is_leading(fx->l));
    assert_int_equal(seen_count(fx, &fx->seen.calls), 0);
    char *h = stored_holder(&fx->store);
    assert_string_equal(h, "other");
    free(h);
}

static void test_invalid_options(void **state)
{
    struct fixture *fx = *state;
    struct kubeconfig cfg;
    fake_kubeconfig_init(fx->fake, &cfg);
    struct leader_options bad[] = {
        {.namespace_ = NS, .name = NAME, .duration_ms = 1000, .renew_deadline_ms = 1000, .retry_period_ms = 50},
        {.namespace_ = NS, .name = NAME, .duration_ms = 1500, .renew_deadline_ms = 500, .retry_period_ms = 50},
        {.namespace_ = NS, .name = NAME, .duration_ms = 1000, .renew_deadline_ms = 500, .retry_period_ms = 500},
        {.namespace_ = NS, .name = NULL, .duration_ms = 1000, .renew_deadline_ms = 500, .retry_period_ms = 50},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct error err = {.message = ""};
        if (leader_create(&cfg, &bad[i], &err) != NULL)
            fail_msg("options %zu accepted", i);
        assert_non_null(strstr(err.message, "leader election:"));
    }
    /* Defaults and a generated identity "<host>_<8 hex digits>". */
    struct leader_options dflt = {.namespace_ = NS, .name = NAME};
    struct error err;
    struct leader *l = leader_create(&cfg, &dflt, &err);
    assert_non_null(l);
    const char *id = leader_identity(l);
    const char *us = strrchr(id, '_');
    assert_non_null(us);
    assert_int_equal(strlen(us + 1), 8);
    assert_int_equal(strspn(us + 1, "0123456789abcdef"), 8);
    leader_destroy(l);
    leader_destroy(NULL);
    kubeconfig_finish(&cfg);
    assert_int_equal(counter(&fx->store, &fx->store.gets), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_acquire_renew_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_renew_failure_past_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_while_blocked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_failed_renewal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_taken_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_takes_released, setup, teardown),
        cmocka_unit_test_setup_teardown(test_takes_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
