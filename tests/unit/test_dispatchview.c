/*
 * dispatch/view.c: a worker's view refreshed from a fake API server that
 * pages its pod list (limit/continue) like kube-apiserver, with 1,000
 * KubeRay worker pods (tests/fixtures/bench/pod-review.json's pod).
 *
 * - The lists are never held whole: the most JSON live at once during a
 *   refresh (jansson's allocations, counted through json_set_alloc_funcs) is
 *   under a third of what the 1,000 pods take parsed. A refresh that listed
 *   every page before putting them into the cache held them all (the
 *   dispatcher grew by about 110 MB per 1,000 pods of a worker).
 * - What stays is the keys of what is cached, not the pods.
 * - The view is right: every pod cached; a pod gone from the list is deleted;
 *   a list that fails part way deletes nothing and keeps the copies.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "fixtures.h"
#include "names.h"
#include "view.h"

#define NPODS 1000
#define PODS "/api/v1/pods"
#define RAYCLUSTERS "/apis/ray.io/v1/rayclusters"

/* --- jansson's live bytes, and their peak ------------------------------------ */

static atomic_size_t live, peak;

/* Sizes by malloc_usable_size: a string jansson made and the code frees with free() (json_dumps) stays safe. */
static void *count_malloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL)
        return NULL;
    size_t now = atomic_fetch_add(&live, malloc_usable_size(p)) + malloc_usable_size(p), was = atomic_load(&peak);
    while (now > was && !atomic_compare_exchange_weak(&peak, &was, now))
        ;
    return p;
}

static void count_free(void *p)
{
    if (p == NULL)
        return;
    atomic_fetch_sub(&live, malloc_usable_size(p));
    free(p);
}

/* --- a paging fake API server ------------------------------------------------ */

/* What the fake serves: the pods, rendered as text once (the server thread makes no JSON while a test counts). */
struct served {
    char *pods[NPODS];     /* each pod's JSON text */
    size_t npods;          /* served: pods[0..npods) */
    int fail_at;           /* a GET of the pods from this index answers 500; -1: never */
    char *raycluster_copy; /* one RayCluster labelled dispatched-from=manager, or NULL */
    int pages;             /* pod pages served */
};

static void serve_list(const struct fake_req *req, const char *items, const char *cont)
{
    char *body = util_strdupf("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\"%s%s%s},"
                              "\"items\":[%s]}",
                              cont != NULL ? ",\"continue\":\"" : "", cont != NULL ? cont : "", cont != NULL ? "\"" : "", items);
    respond(req, 200, NULL, body);
    free(body);
}

static void serve_pods(struct served *s, const struct fake_req *req)
{
    char lim[16] = "", cont[16] = "";
    query_param(req->target, "limit", lim, sizeof(lim));
    query_param(req->target, "continue", cont, sizeof(cont));
    size_t from = (size_t)atol(cont), limit = lim[0] != '\0' ? (size_t)atol(lim) : NPODS;
    if (s->fail_at >= 0 && from >= (size_t)s->fail_at) {
        respond(req, 500, NULL, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"etcd is down\",\"code\":500}");
        return;
    }
    struct util_buf b = {0};
    size_t to = from + limit < s->npods ? from + limit : s->npods;
    for (size_t i = from; i < to; i++)
        util_buf_printf(&b, "%s%s", i > from ? "," : "", s->pods[i]);
    char next[16];
    snprintf(next, sizeof(next), "%zu", to);
    serve_list(req, b.data != NULL ? b.data : "", to < s->npods ? next : NULL);
    util_buf_finish(&b);
    s->pages++;
}

static int handler(struct fake *f, const struct fake_req *req)
{
    struct served *s = f->arg;
    char path[256];
    snprintf(path, sizeof(path), "%.*s", (int)strcspn(req->target, "?"), req->target);
    pthread_mutex_lock(&f->lock);
    if (strcmp(path, PODS) == 0)
        serve_pods(s, req);
    else if (strcmp(path, RAYCLUSTERS) == 0 && s->raycluster_copy != NULL)
        serve_list(req, s->raycluster_copy, NULL);
    else
        serve_list(req, "", NULL);
    pthread_mutex_unlock(&f->lock);
    return 0;
}

/* The fixture's KubeRay worker pod number i, bound, as JSON text (new). */
static char *pod_text(const json_t *tmpl, size_t i)
{
    json_t *p = json_deep_copy(tmpl);
    json_t *meta = json_object_get(p, "metadata");
    char buf[96];
    snprintf(buf, sizeof(buf), "mem-%03zu-worker-worker-%05zu", i / 10, i);
    json_object_set_new(meta, "name", json_string(buf));
    snprintf(buf, sizeof(buf), "%08zx-1f3b-4c5d-9e8f-0123456789ab", i);
    json_object_set_new(meta, "uid", json_string(buf));
    snprintf(buf, sizeof(buf), "mem-%03zu", i / 10);
    json_object_set_new(json_object_get(meta, "labels"), "ray.io/cluster", json_string(buf));
    snprintf(buf, sizeof(buf), "node-%02zu", i / 100);
    json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(buf));
    char *s = json_dumps(p, JSON_COMPACT), *text = util_strdup(s);
    count_free(s); /* jansson's */
    json_decref(p);
    return text;
}

struct world {
    struct served s;
    struct fake *f;
    struct kube_client *k;
    struct dispatchview v;
};

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    json_t *review = fixture_json("bench/pod-review.json");
    const json_t *tmpl = json_object_get(json_object_get(review, "request"), "object");
    for (size_t i = 0; i < NPODS; i++)
        w->s.pods[i] = pod_text(tmpl, i);
    json_decref(review);
    w->s.npods = NPODS;
    w->s.fail_at = -1;
    w->f = fake_start(handler, &w->s);
    w->k = client_for(w->f, "t", NULL, NULL);
    dispatchview_init(&w->v);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    dispatchview_finish(&w->v);
    kube_client_destroy(w->k);
    fake_stop(w->f);
    for (size_t i = 0; i < NPODS; i++)
        free(w->s.pods[i]);
    free(w->s.raycluster_copy);
    free(w);
    return 0;
}

static size_t cached_pods(const struct dispatchview *v)
{
    return json_object_size(json_object_get(v->keys, "Pod"));
}

/* What the pods take parsed, all at once: what a refresh must not hold. */
static size_t parsed_bytes(const struct served *s)
{
    size_t before = atomic_load(&live);
    json_t *all = json_array();
    for (size_t i = 0; i < s->npods; i++)
        json_array_append_new(all, json_loads(s->pods[i], 0, NULL));
    size_t bytes = atomic_load(&live) - before;
    json_decref(all);
    return bytes;
}

static void test_refresh_holds_one_page(void **state)
{
    struct world *w = *state;
    size_t whole = parsed_bytes(&w->s);
    assert_true(whole > (size_t)NPODS * 10000); /* a KubeRay pod parsed: tens of KB */
    struct error err = {{0}};
    atomic_store(&peak, atomic_load(&live));
    size_t base = atomic_load(&live);
    assert_int_equal(dispatchview_refresh(&w->v, w->k, "manager", &err), 0);
    size_t held = atomic_load(&peak) - base;
    print_message("held at once: %zu bytes of JSON; the pods parsed: %zu\n", held, whole);
    if (held > whole / 3)
        fail_msg("a refresh held %zu bytes of JSON at once; the %d pods parsed take %zu", held, NPODS, whole);
    assert_int_equal(cached_pods(&w->v), NPODS);
    assert_non_null(cache_pod_get(w->v.cache, "benchcap", "mem-099-worker-worker-00999"));
    assert_true(w->s.pages >= 2); /* paged */
    /* Kept after it: the keys of what is cached (and the fake's log of requests), not the pods. */
    assert_true(atomic_load(&live) - base < whole / 20);
}

static void test_deletes_only_after_a_whole_list(void **state)
{
    struct world *w = *state;
    struct error err = {{0}};
    w->s.raycluster_copy =
        util_strdup("{\"metadata\":{\"name\":\"rc1\",\"namespace\":\"benchcap\",\"labels\":{\"" NAMES_LABEL_DISPATCHED_FROM
                    "\":\"manager\"}},\"spec\":{}}");
    assert_int_equal(dispatchview_refresh(&w->v, w->k, "manager", &err), 0);
    assert_int_equal(cached_pods(&w->v), NPODS);
    assert_non_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
    /* The list fails part way (at its 201st pod), and the RayCluster is gone: nothing deleted, the copies kept. */
    w->s.npods = NPODS / 2;
    w->s.fail_at = 200;
    free(w->s.raycluster_copy);
    w->s.raycluster_copy = NULL;
    assert_int_equal(dispatchview_refresh(&w->v, w->k, "manager", &err), -1);
    assert_non_null(strstr(err.message, "etcd is down"));
    assert_int_equal(cached_pods(&w->v), NPODS);
    assert_non_null(cache_pod_get(w->v.cache, "benchcap", "mem-099-worker-worker-00999"));
    assert_non_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
    /* A whole list: the pods it lacks are deleted, and the copy. */
    w->s.fail_at = -1;
    assert_int_equal(dispatchview_refresh(&w->v, w->k, "manager", &err), 0);
    assert_int_equal(cached_pods(&w->v), NPODS / 2);
    assert_null(cache_pod_get(w->v.cache, "benchcap", "mem-099-worker-worker-00999"));
    assert_non_null(cache_pod_get(w->v.cache, "benchcap", "mem-049-worker-worker-00499"));
    assert_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
}

int main(void)
{
    /* Before any JSON is made: every jansson allocation is counted. */
    json_set_alloc_funcs(count_malloc, count_free);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refresh_holds_one_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deletes_only_after_a_whole_list, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
