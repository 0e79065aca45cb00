/*
 * gate/status/queuemetrics.c, driven by tests/fixtures/queuemetrics/steps.json: the
 * queue gauges set from a cache (an admit fixture after one admission pass,
 * plus a queue of no gang) and a queue status given per step, then swept.
 * After each step the rendered registry must hold the lines the step lists
 * and no line may start with one of its absent prefixes: a field the status
 * does not carry leaves its series alone; a resource, a share or a derived
 * label gone removes its series; a sweep removes the series of the queues
 * the cache no longer holds, and only theirs.
 * (test_podgroup checks the gauges of statuses computed from fixtures.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "admit.h"
#include "cachefixture.h"
#include "fixtures.h"
#include "metrics.h"
#include "podgroup.h"
#include "queuemetrics.h"
#include "resources.h"

/* The fixture's state after one pass (its reasons and admissions kept as the controller keeps them), and its extra queues. */
static struct cache *load_state(const json_t *fx)
{
    json_t *state = fixture_json(json_string_value(json_object_get(fx, "state")));
    struct cache *c = cachefixture_load(state, 0);
    json_decref(state);
    struct admit *a = admit_create(c);
    struct admit_result r;
    admit_result_init(&r);
    admit_pass(a, ADMIT_PASS_FULL, &r);
    for (size_t i = 0; i < r.len; i++) {
        const struct admit_decision *d = &r.items[i];
        admit_reason_changed(c, d);
        if (d->action == ADMIT_ACTION_ADMIT) /* as apply records it once the API accepted it */
            cache_gang_mark_admitted(c, cache_gang_get(c, d->namespace_, d->cluster), "2024-05-01T11:00:00Z");
    }
    admit_result_finish(&r);
    admit_destroy(a);
    size_t i;
    json_t *q;
    json_array_foreach(json_object_get(fx, "queues"), i, q) cachefixture_upsert(c, "queues", q);
    return c;
}

static unsigned fields_named(const char *where, const json_t *names)
{
    unsigned fields = PODGROUP_QUEUE_COUNTS;
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n)
    {
        const char *s = json_string_value(n);
        if (s != NULL && strcmp(s, "allocated") == 0)
            fields |= PODGROUP_QUEUE_ALLOCATED;
        else if (s != NULL && strcmp(s, "tree") == 0)
            fields |= PODGROUP_QUEUE_TREE;
        else
            fail_msg("%s: unknown field %s", where, s != NULL ? s : "(not a string)");
    }
    return fields;
}

/* Step st's status of its queue into the gauges. */
static void set_queue(const char *where, struct queuemetrics *m, const struct cache *c, const json_t *step)
{
    const char *name = json_string_value(json_object_get(step, "queue"));
    const struct cache_queue *q = cache_queue_get(c, name);
    if (q == NULL)
        fail_msg("%s: queue %s not cached", where, name);
    const json_t *s = json_object_get(step, "status");
    struct podgroup_queue_status st;
    podgroup_queue_status_init(&st);
    st.fields = fields_named(where, json_object_get(s, "fields"));
    struct error err;
    if (resources_parse(&st.allocated, json_object_get(s, "allocated"), "allocated", 0, &err) != 0 ||
        resources_parse(&st.deserved, json_object_get(s, "deserved"), "deserved", 0, &err) != 0)
        fail_msg("%s: %s", where, err.message);
    st.deserved_derived = json_is_true(json_object_get(s, "derived"));
    st.share = json_number_value(json_object_get(s, "share"));
    queuemetrics_queue(m, c, q, &st);
    podgroup_queue_status_finish(&st);
}

/* Whether text has a line that is line (exact: true) or starts with it. */
static int has_line(const char *text, const char *line, int exact)
{
    size_t n = strlen(line);
    for (const char *p = text; *p != '\0';) {
        const char *end = strchr(p, '\n');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len >= n && strncmp(p, line, n) == 0 && (!exact || len == n))
            return 1;
        p += len + (end != NULL);
    }
    return 0;
}

static void check_render(const char *where, struct metrics_registry *reg, const json_t *step)
{
    char *text = metrics_render(reg, NULL);
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(step, "metrics"), i, l)
    {
        if (!has_line(text, json_string_value(l), 1)) {
            fprintf(stderr, "%s\n", text); /* cmocka cuts long failure messages */
            fail_msg("%s: no line \"%s\"", where, json_string_value(l));
        }
    }
    json_array_foreach(json_object_get(step, "absent"), i, l)
    {
        if (has_line(text, json_string_value(l), 0)) {
            fprintf(stderr, "%s\n", text);
            fail_msg("%s: a line starts \"%s\"", where, json_string_value(l));
        }
    }
    free(text);
}

static void test_steps(void **state)
{
    (void)state;
    json_t *fx = fixture_json("queuemetrics/steps.json");
    struct cache *c = load_state(fx);
    struct metrics_registry *reg = metrics_registry_create();
    struct queuemetrics *m = queuemetrics_create(reg);
    const json_t *steps = json_object_get(fx, "steps");
    assert_true(json_array_size(steps) >= 6);
    size_t i;
    json_t *step;
    json_array_foreach(steps, i, step)
    {
        char where[512];
        snprintf(where, sizeof(where), "step %zu (%s)", i, json_string_value(json_object_get(step, "comment")));
        const json_t *sweep = json_object_get(step, "sweep");
        if (sweep != NULL) {
            size_t k;
            json_t *name;
            json_array_foreach(sweep, k, name)
            {
                cache_delete_queue(c, json_string_value(name));
                assert_null(cache_queue_get(c, json_string_value(name)));
            }
            queuemetrics_sweep(m, c);
        } else {
            set_queue(where, m, c, step);
        }
        check_render(where, reg, step);
    }
    queuemetrics_destroy(m);
    queuemetrics_destroy(NULL);
    metrics_registry_destroy(reg);
    cache_destroy(c);
    json_decref(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
