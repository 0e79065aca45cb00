/*
 * lib/sched/place/fitsort.c: pods larger first (GPUs, then cpu, then memory;
 * ephemeral storage does not weigh), equals by creation then name, or
 * (stable) in the order given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "fit.h"
#include "fitsort.h"

static void pod(struct cache *c, const char *name, const char *created, const char *requests)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"u-%s\",\"creationTimestamp\":\"%s\"},"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{%s}}}]},\"status\":{\"phase\":\"Pending\"}}",
             name, name, created, requests);
    json_t *obj = json_loads(text, 0, NULL);
    struct error err = {{0}};
    assert_int_equal(cache_upsert_pod(c, obj, &err), 0);
    json_decref(obj);
}

static void order(struct fit *f, struct cache *c, const char *const *in, size_t n, int stable, const char *want)
{
    struct cache_pod *pods[8];
    for (size_t i = 0; i < n; i++)
        pods[i] = cache_pod_get(c, "ns", in[i]);
    if (stable)
        fit_sort_larger_first_stable(f, pods, n);
    else
        fit_sort_larger_first(f, pods, n);
    char got[256] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", pods[i]->name);
    assert_string_equal(got, want);
}

static void test_order(void **state)
{
    (void)state;
    struct cache *c = cache_create();
    pod(c, "small", "2026-11-28T10:00:00Z", "\"cpu\":\"1\"");
    pod(c, "big", "2026-11-28T10:00:05Z", "\"cpu\":\"4\"");
    pod(c, "gpu", "2026-11-28T10:00:09Z", "\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"");
    pod(c, "disk", "2026-11-28T10:00:01Z", "\"cpu\":\"1\",\"ephemeral-storage\":\"100Gi\"");
    pod(c, "b", "2026-11-28T10:00:00Z", "\"cpu\":\"1\"");
    pod(c, "mem", "2026-11-28T10:00:00Z", "\"cpu\":\"1\",\"memory\":\"1Gi\"");
    struct fit *f = fit_create(c);
    fit_begin(f);
    const char *in[] = {"disk", "small", "gpu", "b", "big", "mem"};
    /* GPUs first, then cpu, then memory; equals (b, small, disk: cpu 1, no memory) by creation, then name. */
    order(f, c, in, 6, 0, "gpu big mem b small disk");
    /* Stable: equals in the order given. */
    order(f, c, in, 6, 1, "gpu big mem disk small b");
    fit_end(f);
    fit_destroy(f);
    cache_destroy(c);
}

/* Many pods (qsort, not the insertion sort of a gang's few), one shape: stable keeps them as given. */
static void test_many(void **state)
{
    (void)state;
    struct cache *c = cache_create();
    char name[16];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "p%02d", i);
        pod(c, name, "2026-11-28T10:00:00Z", i == 39 ? "\"cpu\":\"2\"" : "\"cpu\":\"1\"");
    }
    struct fit *f = fit_create(c);
    fit_begin(f);
    struct cache_pod *pods[40];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "p%02d", 39 - i);
        pods[i] = cache_pod_get(c, "ns", name);
    }
    fit_sort_larger_first_stable(f, pods, 40);
    assert_string_equal(pods[0]->name, "p39");
    for (int i = 1; i < 40; i++) {
        snprintf(name, sizeof(name), "p%02d", 39 - i);
        assert_string_equal(pods[i]->name, name);
    }
    fit_sort_larger_first(f, pods, 40);
    assert_string_equal(pods[0]->name, "p39");
    assert_string_equal(pods[1]->name, "p00");
    fit_end(f);
    fit_destroy(f);
    cache_destroy(c);
}

/*
 * Many pods of few shapes, stable: dealt into their weights' buckets, they
 * come out as the stable sort puts them, larger first and equals (two shapes
 * of equal weights among them) in the order given; and with more shapes than
 * the buckets, the same through qsort.
 */
static void check_stable(int shapes)
{
    static const char *const fixed[] = {"\"cpu\":\"1\"",
                                        "\"cpu\":\"1\",\"ephemeral-storage\":\"1Gi\"",
                                        "\"cpu\":\"2\"",
                                        "\"cpu\":\"1\",\"memory\":\"1Gi\"",
                                        "\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"",
                                        "\"cpu\":\"500m\""};
    static const int rank[] = {3, 3, 1, 2, 0, 4}; /* the fixed shapes' places, larger first */
    enum { N = 200 };
    struct cache *c = cache_create();
    char name[16], req[64];
    int of[N];
    srand((unsigned)shapes);
    for (int i = 0; i < N; i++) {
        of[i] = rand() % shapes;
        snprintf(name, sizeof(name), "p%03d", i);
        if (shapes <= 6)
            pod(c, name, "2026-11-28T10:00:00Z", fixed[of[i]]);
        else {
            snprintf(req, sizeof(req), "\"cpu\":\"%dm\"", 100 * (shapes - of[i])); /* shape k: rank k */
            pod(c, name, "2026-11-28T10:00:00Z", req);
        }
    }
    struct fit *f = fit_create(c);
    fit_begin(f);
    struct cache_pod *pods[N];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "p%03d", N - 1 - i); /* given in reverse creation order */
        pods[i] = cache_pod_get(c, "ns", name);
    }
    fit_sort_larger_first_stable(f, pods, N);
    size_t at = 0;
    for (int r = 0; r < shapes; r++) {
        for (int i = N - 1; i >= 0; i--) { /* each rank's pods in the order given */
            if ((shapes <= 6 ? rank[of[i]] : of[i]) != r)
                continue;
            snprintf(name, sizeof(name), "p%03d", i);
            assert_string_equal(pods[at++]->name, name);
        }
    }
    assert_int_equal(at, N);
    fit_end(f);
    fit_destroy(f);
    cache_destroy(c);
}

static void test_dealt_as_sorted(void **state)
{
    (void)state;
    check_stable(6);  /* dealt: 6 shapes, 5 weights */
    check_stable(40); /* more shapes than buckets: qsort */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_many),
        cmocka_unit_test(test_dealt_as_sorted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
