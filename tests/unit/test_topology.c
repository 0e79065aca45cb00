/* Unit tests for lib/gang/topology: what a RayCluster, RayJob or RayService asks (fixtures in tests/fixtures/topology). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "topology.h"

/* A constraint as the fixtures write it (new): null, or {mode, by, key | maxTier}. */
static json_t *constraint_json(const struct topo_constraint *c)
{
    if (c->mode == TOPO_MODE_NONE) {
        assert_int_equal(c->by, 0);
        assert_null(c->key);
        assert_int_equal(c->max_tier, 0);
        return json_null();
    }
    if (c->by == TOPO_BY_LABEL) {
        assert_int_equal(c->max_tier, 0);
        return json_pack("{s:s, s:s, s:s}", "mode", topology_mode_name(c->mode), "by", "label", "key", c->key);
    }
    assert_int_equal(c->by, TOPO_BY_HYPERNODE);
    assert_null(c->key);
    return json_pack("{s:s, s:s, s:i}", "mode", topology_mode_name(c->mode), "by", "hypernode", "maxTier", (int)c->max_tier);
}

/* The whole request as the fixtures write it (new). */
static json_t *request_json(const struct topo_request *r)
{
    json_t *groups = json_array();
    for (size_t i = 0; i < r->ngroups; i++)
        json_array_append_new(groups, json_pack("{s:s?, s:I, s:o}", "name", r->groups[i].name, "hosts",
                                                (json_int_t)r->groups[i].hosts, "c", constraint_json(&r->groups[i].c)));
    return json_pack("{s:o, s:b, s:o}", "gang", constraint_json(&r->gang), "includeHead", r->include_head, "groups", groups);
}

static void assert_empty(const struct topo_request *r)
{
    assert_int_equal(r->gang.mode, TOPO_MODE_NONE);
    assert_null(r->gang.key);
    assert_int_equal(r->include_head, 0);
    assert_null(r->groups);
    assert_int_equal(r->ngroups, 0);
}

/* Each "for" entry: the text of the constraint on that group's pods ("(head)": the head's). */
static void check_for(const char *file, const struct topo_request *r, const json_t *want)
{
    const char *group;
    json_t *text;
    json_object_foreach((json_t *)want, group, text)
    {
        char buf[128];
        topology_constraint_text(topology_request_for(r, strcmp(group, "(head)") == 0 ? NULL : group), buf, sizeof(buf));
        if (strcmp(buf, json_string_value(text)) != 0)
            fail_msg("%s: for %s: got \"%s\", expected \"%s\"", file, group, buf, json_string_value(text));
    }
}

/*
 * One fixture: {object, error} or {object, request, any, for?}. out holds
 * the previous fixture's request: parse overwrites it, and empties it on error.
 */
static void run_fixture(const char *file, struct topo_request *out, size_t *ok, size_t *errors)
{
    json_t *c = fixture_json(file);
    struct error err = {{0}};
    const char *want_error = json_string_value(json_object_get(c, "error"));
    int rc = topology_request_parse(json_object_get(c, "object"), out, &err);
    if (want_error != NULL) {
        if (rc != -1)
            fail_msg("%s: parsed, expected the error %s", file, want_error);
        if (strcmp(err.message, want_error) != 0)
            fail_msg("%s: error \"%s\", expected \"%s\"", file, err.message, want_error);
        assert_empty(out);
        (*errors)++;
    } else {
        if (rc != 0)
            fail_msg("%s: %s", file, err.message);
        json_t *got = request_json(out);
        fixture_check_json(file, "request", got, json_object_get(c, "request"));
        json_decref(got);
        assert_int_equal(topology_request_any(out), json_is_true(json_object_get(c, "any")));
        check_for(file, out, json_object_get(c, "for"));
        (*ok)++;
    }
    json_decref(c);
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t n, ok = 0, errors = 0;
    char **files = fixture_list("topology", &n);
    struct topo_request r;
    topology_request_init(&r);
    for (size_t i = 0; i < n; i++)
        run_fixture(files[i], &r, &ok, &errors);
    topology_request_finish(&r);
    assert_empty(&r);
    assert_true(ok >= 20);
    assert_true(errors >= 25);
    fixture_list_free(files, n);
}

/* An error after a request with groups leaves out empty; a parse after that fills it again. */
static void test_error_empties(void **state)
{
    (void)state;
    json_t *good = fixture_json("topology/slices-under-gang.json"), *bad = fixture_json("topology/group-key-empty.json");
    struct topo_request r;
    struct error err;
    topology_request_init(&r);
    assert_int_equal(topology_request_parse(json_object_get(good, "object"), &r, &err), 0);
    assert_int_equal(r.ngroups, 1);
    assert_int_equal(topology_request_parse(json_object_get(bad, "object"), &r, &err), -1);
    assert_empty(&r);
    assert_int_equal(topology_request_parse(json_object_get(good, "object"), &r, &err), 0);
    assert_string_equal(r.gang.key, "rack");
    assert_string_equal(r.groups[0].name, "tpu");
    topology_request_finish(&r);
    topology_request_finish(NULL);
    json_decref(good);
    json_decref(bad);
}

/* Not an object, no metadata, no spec: nothing asked, no error. */
static void test_degenerate_objects(void **state)
{
    (void)state;
    const char *objects[] = {"{}", "[]", "{\"metadata\": 3, \"spec\": []}", "{\"spec\": {\"workerGroupSpecs\": {}}}",
                             "{\"spec\": {\"workerGroupSpecs\": [3, {\"template\": 4, \"numOfHosts\": 9}]}}"};
    for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
        json_t *o = json_loads(objects[i], 0, NULL);
        struct topo_request r;
        struct error err;
        topology_request_init(&r);
        assert_int_equal(topology_request_parse(o, &r, &err), 0);
        assert_empty(&r);
        assert_false(topology_request_any(&r));
        json_decref(o);
    }
}

/* A key or value holding a newline is quoted on one line (the message reaches an AdmissionReview). */
static void test_error_one_line(void **state)
{
    (void)state;
    json_t *o = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", TOPOLOGY_REQUIRED, "rack\nzone");
    struct topo_request r;
    struct error err;
    topology_request_init(&r);
    assert_int_equal(topology_request_parse(o, &r, &err), -1);
    assert_null(strchr(err.message, '\n'));
    assert_non_null(strstr(err.message, "invalid label key \"rack zone\""));
    json_decref(o);
}

static void test_names_and_text(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(topology_mode_name(TOPO_MODE_HARD), "hard");
    assert_string_equal(topology_mode_name(TOPO_MODE_SOFT), "soft");
    assert_string_equal(topology_mode_name(TOPO_MODE_NONE), "none");
    assert_string_equal(topology_mode_name((enum topo_mode)9), "none");
    struct topo_constraint c = {TOPO_MODE_HARD, TOPO_BY_HYPERNODE, NULL, 2};
    topology_constraint_text(&c, buf, sizeof(buf));
    assert_string_equal(buf, "one HyperNode of tier <= 2");
    c.max_tier = 0;
    topology_constraint_text(&c, buf, sizeof(buf));
    assert_string_equal(buf, "one HyperNode");
    c = (struct topo_constraint){TOPO_MODE_SOFT, TOPO_BY_LABEL, (char *)"nvidia.com/gpu.clique", 0};
    topology_constraint_text(&c, buf, sizeof(buf));
    assert_string_equal(buf, "one nvidia.com/gpu.clique domain");
    topology_constraint_text(&c, buf, 9); /* cut, terminated */
    assert_string_equal(buf, "one nvid");
    topology_constraint_text(NULL, buf, sizeof(buf));
    assert_string_equal(buf, "no topology constraint");
}

/* topology_constrained(): every form of the request, on each object that carries one, and the objects that ask nothing. */
static void test_constrained_forms(void **state)
{
    (void)state;
    static const char *const head = "\"headGroupSpec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"h\"}]}}}";
    struct {
        const char *meta, *spec; /* spec: the cluster spec's members after the head */
        const char *where;       /* "": a RayCluster; else the RayJob's or RayService's member holding the cluster spec */
        int want;
    } cases[] = {
        {"", "", "", 0},
        {"", "", "rayClusterSpec", 0},
        {"", "", "rayClusterConfig", 0},
        {"\"annotations\":{\"raygate.io/topology-required\":\"rack\"}", "", "", 1},
        {"\"annotations\":{\"raygate.io/topology-preferred\":\"rack\"}", "", "", 1},
        {"\"labels\":{\"volcano.sh/network-topology-mode\":\"hard\",\"volcano.sh/network-topology-highest-tier-allowed\":\"1\"}",
         "", "", 1},
        {"\"annotations\":{\"volcano.sh/network-topology-mode\":\"soft\"}", "", "", 1},
        /* a tier without a mode asks nothing (as KubeRay reads it) */
        {"\"labels\":{\"volcano.sh/network-topology-highest-tier-allowed\":\"1\"}", "", "", 0},
        {"",
         ",\"workerGroupSpecs\":[{\"groupName\":\"g\",\"template\":{\"metadata\":{\"annotations\":{\"raygate.io/"
         "topology-required\":\"rack\"}},\"spec\":{\"containers\":[{\"name\":\"w\"}]}}}]",
         "", 1},
        {"\"labels\":{\"volcano.sh/network-topology-mode\":\"hard\"}", "", "rayClusterSpec", 1},
        {"\"annotations\":{\"raygate.io/topology-required\":\"rack\"}", "", "rayClusterConfig", 1},
        {"",
         ",\"workerGroupSpecs\":[{\"groupName\":\"g\",\"template\":{\"metadata\":{\"annotations\":{\"raygate.io/"
         "topology-preferred\":\"rack\"}},\"spec\":{\"containers\":[{\"name\":\"w\"}]}}}]",
         "rayClusterSpec", 1},
        /* malformed: not taken for no request */
        {"\"labels\":{\"volcano.sh/network-topology-mode\":\"strict\"}", "", "", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[1024];
        if (cases[i].where[0] == '\0')
            snprintf(text, sizeof(text), "{\"metadata\":{%s},\"spec\":{%s%s}}", cases[i].meta, head, cases[i].spec);
        else
            snprintf(text, sizeof(text), "{\"metadata\":{%s},\"spec\":{\"%s\":{%s%s}}}", cases[i].meta, cases[i].where, head,
                     cases[i].spec);
        json_error_t e;
        json_t *o = json_loads(text, 0, &e);
        if (o == NULL)
            fail_msg("case %zu: %s", i, e.text);
        if (topology_constrained(o) != cases[i].want)
            fail_msg("case %zu: constrained %d, want %d", i, topology_constrained(o), cases[i].want);
        json_decref(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),       cmocka_unit_test(test_error_empties),  cmocka_unit_test(test_degenerate_objects),
        cmocka_unit_test(test_error_one_line), cmocka_unit_test(test_names_and_text), cmocka_unit_test(test_constrained_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
