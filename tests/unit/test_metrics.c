#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

/* Returns the fixture's text in a static buffer. */
static const char *read_fixture(const char *name)
{
    static char data[65536];
    const char *dir = getenv("RAYGATE_FIXTURES");
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir != NULL ? dir : "tests/fixtures", name);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open fixture %s", path);
    size_t n = fread(data, 1, sizeof(data) - 1, f);
    fclose(f);
    data[n] = '\0';
    return data;
}

/* Returns the value of the one sample line that starts with prefix followed by a space, or -1. */
static long long sample_value(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *line = text; line != NULL && *line != '\0';) {
        if (strncmp(line, prefix, n) == 0 && line[n] == ' ')
            return atoll(line + n + 1);
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    return -1;
}

/* The full exposition text of a small registry, compared byte for byte with a fixture. */
static void test_render_matches_fixture(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_create();
    const char *req_labels[] = {"kind", "result"};
    const char *dur_labels[] = {"kind"};
    const double bounds[] = {0.0001, 0.01, 5};
    struct metrics_family *req =
        metrics_counter_create(reg, "raygate_test_requests_total", "Requests handled, by kind and result.", 2, req_labels);
    struct metrics_family *inflight =
        metrics_gauge_create(reg, "raygate_test_inflight", "Requests in flight.\nSecond help line with a \\ backslash.", 0, NULL);
    struct metrics_family *dur =
        metrics_histogram_create(reg, "raygate_test_duration_seconds", "Latency.", 1, dur_labels, bounds, 3);
    struct metrics_family *unused = metrics_counter_create(reg, "raygate_test_unused_total", "Never incremented.", 0, NULL);
    assert_non_null(req);
    assert_non_null(inflight);
    assert_non_null(dur);
    assert_non_null(unused);

    const char *pod[] = {"Pod", "patched"};
    const char *odd[] = {"Ray\"Cluster\\\n", "allowed"};
    assert_int_equal(metrics_counter_add(req, pod, 1), 0);
    assert_int_equal(metrics_counter_add(req, odd, 1), 0);
    assert_int_equal(metrics_counter_add(req, pod, 2), 0);
    assert_int_equal(metrics_gauge_set(inflight, NULL, 4), 0);
    assert_int_equal(metrics_gauge_add(inflight, NULL, -2.5), 0);
    const char *kind[] = {"Pod"};
    /* Binary-exact values, so that the sum prints exactly. */
    assert_int_equal(metrics_histogram_observe(dur, kind, 0.00006103515625), 0);
    assert_int_equal(metrics_histogram_observe(dur, kind, 0.0078125), 0);
    assert_int_equal(metrics_histogram_observe(dur, kind, 2.5), 0);
    assert_int_equal(metrics_histogram_observe(dur, kind, 6.0), 0);

    size_t len = 0;
    char *text = metrics_render(reg, &len);
    assert_int_equal(len, strlen(text));
    assert_string_equal(text, read_fixture("metrics/render.prom"));
    free(text);
    metrics_registry_destroy(reg);
}

/* Upper bounds are inclusive ("le"); above the last bound only +Inf counts it. */
static void test_histogram_bounds_inclusive(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_create();
    const double bounds[] = {0.001, 0.01};
    struct metrics_family *h = metrics_histogram_create(reg, "h_seconds", "h", 0, NULL, bounds, 2);
    assert_non_null(h);
    assert_int_equal(metrics_histogram_observe(h, NULL, 0.001), 0);
    assert_int_equal(metrics_histogram_observe(h, NULL, 0.0010001), 0);
    assert_int_equal(metrics_histogram_observe(h, NULL, 0.01), 0);
    assert_int_equal(metrics_histogram_observe(h, NULL, 0.02), 0);
    char *text = metrics_render(reg, NULL);
    assert_int_equal(sample_value(text, "h_seconds_bucket{le=\"0.001\"}"), 1);
    assert_int_equal(sample_value(text, "h_seconds_bucket{le=\"0.01\"}"), 3);
    assert_int_equal(sample_value(text, "h_seconds_bucket{le=\"+Inf\"}"), 4);
    assert_int_equal(sample_value(text, "h_seconds_count"), 4);
    free(text);
    metrics_registry_destroy(reg);
}

static void test_invalid_definitions_rejected(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_create();
    const char *bad_label[] = {"0kind"};
    const char *reserved[] = {"__name"};
    const char *le[] = {"le"};
    const char *dup[] = {"a", "a"};
    const double unsorted[] = {1, 0.5};
    const double ok_bounds[] = {1};
    assert_null(metrics_counter_create(reg, "1bad", "", 0, NULL));
    assert_null(metrics_counter_create(reg, "bad-name", "", 0, NULL));
    assert_null(metrics_counter_create(reg, "x_total", "", 1, bad_label));
    assert_null(metrics_counter_create(reg, "x_total", "", 1, reserved));
    assert_null(metrics_counter_create(reg, "x_total", "", 2, dup));
    assert_null(metrics_histogram_create(reg, "x_seconds", "", 1, le, ok_bounds, 1));
    assert_null(metrics_histogram_create(reg, "x_seconds", "", 0, NULL, unsorted, 2));
    /* "le" is fine on a counter; a name is used once per registry. */
    assert_non_null(metrics_counter_create(reg, "x_total", "", 1, le));
    assert_null(metrics_gauge_create(reg, "x_total", "", 0, NULL));
    assert_non_null(metrics_gauge_create(reg, "ns:x", "", 0, NULL));
    metrics_registry_destroy(reg);
    metrics_registry_destroy(NULL);
}

static void test_wrong_updates_rejected(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_create();
    const char *names[] = {"kind"};
    struct metrics_family *c = metrics_counter_create(reg, "c_total", "c", 1, names);
    struct metrics_family *g = metrics_gauge_create(reg, "g", "g", 0, NULL);
    const char *null_value[] = {NULL};
    assert_int_equal(metrics_counter_add(c, NULL, 1), -1);
    assert_int_equal(metrics_counter_add(c, null_value, 1), -1);
    assert_int_equal(metrics_gauge_set(c, names, 1), -1);
    assert_int_equal(metrics_histogram_observe(g, NULL, 1), -1);
    assert_int_equal(metrics_counter_add(NULL, NULL, 1), -1);
    char *text = metrics_render(reg, NULL);
    /* Nothing was recorded: only HELP/TYPE lines. */
    assert_null(strstr(text, "c_total{"));
    assert_int_equal(sample_value(text, "g"), -1);
    free(text);
    metrics_registry_destroy(reg);
}

/* Removing series: exact label values, wildcards, and new series still append after a removal at the tail. */
static void test_remove_series(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_create();
    const char *names[] = {"queue", "resource"};
    struct metrics_family *g = metrics_gauge_create(reg, "q_alloc", "q", 2, names);
    const char *a_cpu[] = {"a", "cpu"}, *a_mem[] = {"a", "memory"}, *b_cpu[] = {"b", "cpu"}, *c_cpu[] = {"c", "cpu"};
    assert_int_equal(metrics_gauge_set(g, a_cpu, 1), 0);
    assert_int_equal(metrics_gauge_set(g, b_cpu, 2), 0);
    assert_int_equal(metrics_gauge_set(g, a_mem, 3), 0);
    const char *any_a[] = {"a", NULL};
    assert_int_equal(metrics_remove(g, any_a), 2);
    assert_int_equal(metrics_remove(g, any_a), 0);
    char *text = metrics_render(reg, NULL);
    assert_int_equal(sample_value(text, "q_alloc{queue=\"a\",resource=\"cpu\"}"), -1);
    assert_int_equal(sample_value(text, "q_alloc{queue=\"a\",resource=\"memory\"}"), -1);
    assert_int_equal(sample_value(text, "q_alloc{queue=\"b\",resource=\"cpu\"}"), 2);
    free(text);
    /* b was the tail: removing it and adding c must keep the list whole. */
    assert_int_equal(metrics_remove(g, b_cpu), 1);
    assert_int_equal(metrics_gauge_set(g, c_cpu, 4), 0);
    assert_int_equal(metrics_gauge_set(g, a_cpu, 5), 0);
    text = metrics_render(reg, NULL);
    assert_int_equal(sample_value(text, "q_alloc{queue=\"b\",resource=\"cpu\"}"), -1);
    assert_int_equal(sample_value(text, "q_alloc{queue=\"c\",resource=\"cpu\"}"), 4);
    assert_int_equal(sample_value(text, "q_alloc{queue=\"a\",resource=\"cpu\"}"), 5);
    assert_true(strstr(text, "queue=\"c\"") < strstr(text, "queue=\"a\""));
    free(text);
    /* Whole numbers print as integers (not "1e+01"), fractions at their shortest. */
    assert_int_equal(metrics_gauge_set(g, c_cpu, 10), 0);
    assert_int_equal(metrics_gauge_set(g, a_cpu, 0.25), 0);
    text = metrics_render(reg, NULL);
    assert_non_null(strstr(text, "q_alloc{queue=\"c\",resource=\"cpu\"} 10\n"));
    assert_non_null(strstr(text, "q_alloc{queue=\"a\",resource=\"cpu\"} 0.25\n"));
    free(text);
    assert_int_equal(metrics_remove(g, NULL), 2);
    assert_int_equal(metrics_remove(NULL, NULL), -1);
    metrics_registry_destroy(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_matches_fixture),
        cmocka_unit_test(test_histogram_bounds_inclusive),
        cmocka_unit_test(test_invalid_definitions_rejected),
        cmocka_unit_test(test_wrong_updates_rejected),
        cmocka_unit_test(test_remove_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
