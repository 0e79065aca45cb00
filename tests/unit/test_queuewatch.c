/*
 * webhook/queuewatch.c against the fake API server of fakeapi.h: the Queues
 * listed, then changed by watch events, reach the snapshot, which is synced
 * only once the list answered; without the Queue CRD (404) it stays unsynced,
 * so that the admission skips the tree checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "queuewatch.h"

static json_t *queue(const char *name, const char *parent, const char *rv)
{
    json_t *q = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{}}", "apiVersion", "scheduling.volcano.sh/v1beta1", "kind", "Queue",
                          "metadata", "name", name, "resourceVersion", rv, "spec");
    if (parent != NULL)
        json_object_set_new(json_object_get(q, "spec"), "parent", json_string(parent));
    return q;
}

/* The list from the state; the first watch gets: train deleted, infer added under eng; later watches are held. */
static int handler(struct fake *f, const struct fake_req *req)
{
    static int watched;
    if (strstr(req->target, "watch=") == NULL || __atomic_fetch_add(&watched, 1, __ATOMIC_SEQ_CST) > 0)
        return fake_cluster_handler(f, req);
    stream_begin(req);
    json_t *del = json_pack("{s:s, s:o}", "type", "DELETED", "object", queue("train", "eng", "3"));
    json_t *add = json_pack("{s:s, s:o}", "type", "ADDED", "object", queue("infer", "eng", "4"));
    char *a = json_dumps(del, JSON_COMPACT), *b = json_dumps(add, JSON_COMPACT);
    char line[1024];
    snprintf(line, sizeof(line), "%s\n%s\n", a, b);
    stream_chunk(req, line, strlen(line));
    free(a);
    free(b);
    json_decref(del);
    json_decref(add);
    stream_hold(f, req);
    return -1;
}

/* Waits up to 5 s for the snapshot to satisfy want; returns whether it did. */
static int wait_for(struct queuewatch *w, int (*want)(const struct queuecheck_set *))
{
    for (int i = 0; i < 500; i++) {
        int ok = want(queuewatch_lock(w));
        queuewatch_unlock(w);
        if (ok)
            return 1;
        usleep(10 * 1000);
    }
    return 0;
}

static int listed_then_changed(const struct queuecheck_set *s)
{
    return s->synced && queuecheck_set_get(s, "infer") != NULL && queuecheck_set_get(s, "train") == NULL;
}

static void test_list_and_watch(void **state)
{
    (void)state;
    json_t *st = fake_cluster_state_new();
    json_t *eng = queue("eng", NULL, "1"), *train = queue("train", "eng", "2");
    fake_cluster_add(st, QUEUEWATCH_PATH, eng);
    fake_cluster_add(st, QUEUEWATCH_PATH, train);
    json_decref(eng);
    json_decref(train);
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client_for(f, "t", NULL, NULL);
    struct error err = {{0}};
    struct queuewatch *w = queuewatch_create(k, &err);
    assert_non_null(w);
    assert_true(wait_for(w, listed_then_changed));
    const struct queuecheck_set *s = queuewatch_lock(w);
    assert_int_equal(s->len, 2);
    assert_string_equal(queuecheck_set_get(s, "infer")->parent, "eng");
    assert_null(queuecheck_set_get(s, "eng")->parent);
    queuewatch_unlock(w);
    queuewatch_destroy(w);
    fake_cluster_stop(f, k, st);
}

static void test_no_crd_stays_unsynced(void **state)
{
    (void)state;
    json_t *st = fake_cluster_state_new(); /* no list: 404 */
    struct kube_client_options o = {.backoff_base_ms = 5, .backoff_max_ms = 10};
    struct kube_client *k;
    struct fake *f = fake_cluster_start(st, &k, &o);
    struct error err = {{0}};
    struct queuewatch *w = queuewatch_create(k, &err);
    assert_non_null(w);
    assert_true(fake_wait_requests(f, "GET", QUEUEWATCH_PATH, 3, 5000) >= 3); /* it keeps trying */
    const struct queuecheck_set *s = queuewatch_lock(w);
    assert_false(s->synced);
    assert_int_equal(s->len, 0);
    queuewatch_unlock(w);
    queuewatch_destroy(w);
    fake_cluster_stop(f, k, st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_and_watch),
        cmocka_unit_test(test_no_crd_stays_unsynced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
