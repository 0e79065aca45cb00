/*
 * dispatch/view.c: a worker's view watched on a fake API server that pages
 * its pod list (limit/continue) like kube-apiserver, with 1,000 KubeRay worker
 * pods (tests/fixtures/bench/pod-review.json's pod), holds watches open and
 * ends them with 410 Gone on fake_expire (the view then lists again).
 *
 * - The lists are never held whole: the most JSON live at once during the
 *   first sync (jansson's allocations, counted through json_set_alloc_funcs)
 *   is under a third of what the 1,000 pods take parsed. A refresh that
 *   listed every page before putting them into the cache held them all (the
 *   dispatcher grew by about 110 MB per 1,000 pods of a worker).
 * - What stays is the keys of what is cached, not the pods.
 * - The view is right: every pod cached; a pod gone from a relist is deleted;
 *   a relist that fails part way deletes nothing and makes the view not whole
 *   (the worker down) with the failure, until a list succeeds; a copy gone
 *   from the RayClusters is gone from the copies.
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
    char path[256], watch[8];
    snprintf(path, sizeof(path), "%.*s", (int)strcspn(req->target, "?"), req->target);
    if (query_param(req->target, "watch", watch, sizeof(watch))[0] != '\0') {
        stream_begin(req);
        return stream_hold_expiring(f, req);
    }
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
    /* As the dispatcher's worker clients: the view's pages, short backoffs. */
    struct kube_client_options o = {.list_page_size = DISPATCHVIEW_PAGE, .backoff_base_ms = 50, .backoff_max_ms = 200};
    w->k = client_for(w->f, "t", NULL, &o);
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

static size_t cached_pods(struct dispatchview *v)
{
    pthread_mutex_lock(&v->mu);
    size_t n = json_object_size(json_object_get(v->keys, "Pod"));
    pthread_mutex_unlock(&v->mu);
    return n;
}

static int has_pod(struct dispatchview *v, const char *ns, const char *name)
{
    pthread_mutex_lock(&v->mu);
    int has = cache_pod_get(v->cache, ns, name) != NULL;
    pthread_mutex_unlock(&v->mu);
    return has;
}

/* Syncs until it returns want and cond holds (cond NULL: true), for at most 10 s; returns the last sync's value. */
static int sync_until(struct world *w, int want, int (*cond)(struct world *), struct error *err)
{
    int rc = -2;
    for (int i = 0; i < 500; i++) {
        rc = dispatchview_sync(&w->v, w->k, "a", "manager", err);
        if (rc == want && (cond == NULL || cond(w)))
            return rc;
        usleep(20 * 1000);
    }
    return rc;
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
    assert_int_equal(dispatchview_sync(&w->v, w->k, "a", "manager", &err), 0);
    size_t held = atomic_load(&peak) - base;
    print_message("held at once: %zu bytes of JSON; the pods parsed: %zu\n", held, whole);
    if (held > whole / 3)
        fail_msg("a refresh held %zu bytes of JSON at once; the %d pods parsed take %zu", held, NPODS, whole);
    assert_int_equal(cached_pods(&w->v), NPODS);
    assert_true(has_pod(&w->v, "benchcap", "mem-099-worker-worker-00999"));
    assert_true(w->s.pages >= 2); /* paged */
    /* Kept after it (once the watcher has let go of the last page it delivered): the keys of what is cached, the
       watches' record of what they delivered (kubewatch: resourceVersion and uid) and the fake's log, not the pods. */
    size_t kept = atomic_load(&live) - base;
    for (int i = 0; i < 100 && kept >= whole / 20; i++) {
        usleep(10 * 1000);
        kept = atomic_load(&live) - base;
    }
    if (kept >= whole / 20)
        fail_msg("%zu bytes of JSON kept after the first sync; the pods parsed take %zu", kept, whole);
}

static int half_pods(struct world *w)
{
    return cached_pods(&w->v) == NPODS / 2;
}

static int copy_listed(struct world *w)
{
    const json_t *c = dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1");
    return c != NULL && json_object_get(json_object_get(c, "metadata"), "resourceVersion") != NULL; /* not the created one */
}

static int copy_gone(struct world *w)
{
    return dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1") == NULL;
}

static void test_deletes_only_after_a_whole_list(void **state)
{
    struct world *w = *state;
    struct error err = {{0}};
    w->s.raycluster_copy =
        util_strdup("{\"metadata\":{\"name\":\"rc1\",\"namespace\":\"benchcap\",\"labels\":{\"" NAMES_LABEL_DISPATCHED_FROM
                    "\":\"manager\"}},\"spec\":{}}");
    assert_int_equal(dispatchview_sync(&w->v, w->k, "a", "manager", &err), 0);
    assert_int_equal(cached_pods(&w->v), NPODS);
    assert_non_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
    /* The watches expire and the pods' relist fails part way (at its 201st pod): nothing deleted, the view not whole. */
    pthread_mutex_lock(&w->f->lock);
    w->s.npods = NPODS / 2;
    w->s.fail_at = 200;
    pthread_mutex_unlock(&w->f->lock);
    fake_expire(w->f, DISPATCHVIEW_COLLECTIONS);
    assert_int_equal(sync_until(w, -1, NULL, &err), -1);
    assert_non_null(strstr(err.message, "etcd is down"));
    assert_int_equal(cached_pods(&w->v), NPODS);
    assert_true(has_pod(&w->v, "benchcap", "mem-099-worker-worker-00999"));
    assert_non_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
    /* The list goes through: the pods it lacks are deleted, the view is whole again. */
    pthread_mutex_lock(&w->f->lock);
    w->s.fail_at = -1;
    pthread_mutex_unlock(&w->f->lock);
    assert_int_equal(sync_until(w, 0, half_pods, &err), 0);
    assert_int_equal(cached_pods(&w->v), NPODS / 2);
    assert_false(has_pod(&w->v, "benchcap", "mem-099-worker-worker-00999"));
    assert_true(has_pod(&w->v, "benchcap", "mem-049-worker-worker-00499"));
    /* The copy gone from the RayClusters (seen at the next relist): gone from the copies. */
    pthread_mutex_lock(&w->f->lock);
    free(w->s.raycluster_copy);
    w->s.raycluster_copy = NULL;
    pthread_mutex_unlock(&w->f->lock);
    fake_expire(w->f, DISPATCHVIEW_COLLECTIONS);
    assert_int_equal(sync_until(w, 0, copy_gone, &err), 0);
    assert_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
}

/*
 * A copy the dispatcher has just created is in the copies before any watch
 * event; a watch event then rules; one no event names is forgotten after
 * created_ttl_ms.
 */
static void test_created_copy(void **state)
{
    struct world *w = *state;
    struct error err = {{0}};
    assert_int_equal(dispatchview_sync(&w->v, w->k, "a", "manager", &err), 0);
    json_t *copy = json_pack("{s:s,s:{s:s,s:s,s:{s:s}},s:{}}", "apiVersion", "ray.io/v1", "metadata", "name", "rc1", "namespace",
                             "benchcap", "labels", NAMES_LABEL_DISPATCHED_FROM, "manager", "spec");
    dispatchview_created(&w->v, "RayCluster", copy);
    assert_non_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
    assert_int_equal(dispatchview_sync(&w->v, w->k, "a", "manager", &err), 0);
    const json_t *c = dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1");
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(c, "kind")), "RayCluster");
    /* Listed, then deleted: the watch's word. */
    pthread_mutex_lock(&w->f->lock);
    json_t *listed = json_deep_copy(copy);
    json_object_set_new(json_object_get(listed, "metadata"), "resourceVersion", json_string("5"));
    w->s.raycluster_copy = json_dumps(listed, JSON_COMPACT);
    json_decref(listed);
    pthread_mutex_unlock(&w->f->lock);
    fake_expire(w->f, DISPATCHVIEW_COLLECTIONS);
    assert_int_equal(sync_until(w, 0, copy_listed, &err), 0);
    pthread_mutex_lock(&w->v.mu);
    assert_int_equal(json_object_size(w->v.created), 0);
    pthread_mutex_unlock(&w->v.mu);
    pthread_mutex_lock(&w->f->lock);
    count_free(w->s.raycluster_copy); /* jansson's */
    w->s.raycluster_copy = NULL;
    pthread_mutex_unlock(&w->f->lock);
    fake_expire(w->f, DISPATCHVIEW_COLLECTIONS);
    assert_int_equal(sync_until(w, 0, copy_gone, &err), 0);
    /* Created, never named by an event: kept within created_ttl_ms, forgotten past it (a TTL of 0: past it at once;
       no sleep, so that a slow run, under valgrind, judges the same). */
    dispatchview_created(&w->v, "RayCluster", copy);
    assert_int_equal(dispatchview_sync(&w->v, w->k, "a", "manager", &err), 0);
    assert_non_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
    w->v.created_ttl_ms = 0;
    assert_int_equal(dispatchview_sync(&w->v, w->k, "a", "manager", &err), 0);
    assert_null(dispatchview_copy(&w->v, "RayCluster", "benchcap", "rc1"));
    json_decref(copy);
}

int main(void)
{
    /* Before any JSON is made: every jansson allocation is counted. */
    json_set_alloc_funcs(count_malloc, count_free);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refresh_holds_one_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deletes_only_after_a_whole_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_created_copy, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
