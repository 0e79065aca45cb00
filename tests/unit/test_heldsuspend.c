/*
 * lib/gang/hold/heldsuspend.c and heldset.c: which RayClusters the webhook holds
 * suspended until admitted, what it writes on them, the set of admitted held
 * RayClusters its watch keeps, and the pods of those born without the gate
 * (both answer paths of admission.h, byte for byte).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "heldset.h"
#include "heldsuspend.h"
#include "jsonpatch.h"
#include "names.h"
#include "util.h"
#include "watchfixture.h"

static json_t *cluster(const char *extra_meta, const char *extra_spec)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"rc\",\"namespace\":\"ns\",\"generation\":3,\"labels\":{\"volcano.sh/queue-name\":\"q\"}%s},"
             "\"spec\":{\"headGroupSpec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"h\"}]}}}%s}}",
             extra_meta, extra_spec);
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    assert_non_null(v);
    return v;
}

static int ops(const json_t *c, int update)
{
    json_t *patch = json_array();
    int n = heldsuspend_ops(c, update, HELDSUSPEND_WAIT, patch);
    assert_int_equal((size_t)n, json_array_size(patch));
    json_decref(patch);
    return n;
}

static void test_which(void **state)
{
    (void)state;
    struct {
        const char *meta, *spec;
        int create, update;
    } cases[] = {
        {"", "", 2, 0},
        {",\"ownerReferences\":[{\"kind\":\"RayJob\",\"name\":\"j\"}]", "", 0, 0},
        {",\"annotations\":{\"raygate.io/topology-required\":\"rack\"}", "", 0, 0},
        /* every form of a topology request is gated, not held: Volcano's labels and annotations, a group's own */
        {",\"labels\":{\"volcano.sh/queue-name\":\"q\",\"volcano.sh/network-topology-mode\":\"hard\","
         "\"volcano.sh/network-topology-highest-tier-allowed\":\"1\"}",
         "", 0, 0},
        {",\"annotations\":{\"volcano.sh/network-topology-mode\":\"soft\"}", "", 0, 0},
        {"",
         ",\"workerGroupSpecs\":[{\"groupName\":\"g\",\"template\":{\"metadata\":{\"annotations\":{\"raygate.io/"
         "topology-required\":\"rack\"}},\"spec\":{\"containers\":[{\"name\":\"w\"}]}}}]",
         0, 0},
        {"", ",\"suspend\":true", 0, 0},
        {",\"annotations\":{\"raygate.io/dispatch-suspended\":\"true\"}", "", 0, 0},
        {",\"annotations\":{\"raygate.io/held-suspended\":\"true\"}", ",\"suspend\":false", 2, 1},
        {",\"annotations\":{\"raygate.io/held-suspended\":\"true\"}", ",\"suspend\":true", 0, 0},
        {",\"annotations\":{\"raygate.io/held-suspended\":\"true\",\"raygate.io/admitted-at\":\"t\"}", ",\"suspend\":false", 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *c = cluster(cases[i].meta, cases[i].spec);
        if (ops(c, 0) != cases[i].create || ops(c, 1) != cases[i].update)
            fail_msg("case %zu: create %d update %d", i, ops(c, 0), ops(c, 1));
        json_decref(c);
    }
    json_t *unqueued = cluster("", "");
    json_object_del(json_object_get(json_object_get(unqueued, "metadata"), "labels"), NAMES_LABEL_QUEUE);
    assert_int_equal(ops(unqueued, 0), 0);
    json_decref(unqueued);
}

static void test_set(void **state)
{
    (void)state;
    struct heldset *s = heldset_create();
    json_t *held = cluster(",\"annotations\":{\"raygate.io/held-suspended\":\"true\"}", "");
    json_t *annotations = json_object_get(json_object_get(held, "metadata"), "annotations");
    heldset_record(s, held, 0);
    assert_int_equal(heldset_len(s), 0); /* not admitted */
    json_object_set_new(annotations, NAMES_ANNOTATION_ADMITTED, json_string("t"));
    heldset_record(s, held, 0);
    assert_int_equal(heldset_len(s), 0); /* no generation of its admission's */
    const char *generations[] = {"2", "4", "3x", "", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(generations) / sizeof(generations[0]); i++) {
        json_object_set_new(annotations, NAMES_ANNOTATION_HELD_GENERATION, json_string(generations[i]));
        heldset_record(s, held, 0);
        if (heldset_len(s) != 0)
            fail_msg("admitted at generation %s, seen at 3: in the set", generations[i]);
    }
    json_object_set_new(annotations, NAMES_ANNOTATION_HELD_GENERATION, json_string("3"));
    heldset_record(s, held, 0);
    heldset_record(s, held, 0);
    assert_int_equal(heldset_len(s), 1);
    json_object_set_new(json_object_get(held, "metadata"), "generation", json_integer(4));
    heldset_record(s, held, 0); /* its spec changed since (a group scaled up): out */
    assert_int_equal(heldset_len(s), 0);
    json_object_set_new(json_object_get(held, "metadata"), "generation", json_integer(3));
    heldset_record(s, held, 0);
    assert_int_equal(heldset_len(s), 1);
    assert_true(heldset_admitted(s, "ns", 2, "rc", 2));
    assert_false(heldset_admitted(s, "ns", 2, "r", 1));
    assert_false(heldset_admitted(s, "n", 1, "rc", 2));
    json_object_del(json_object_get(json_object_get(held, "metadata"), "annotations"), NAMES_ANNOTATION_ADMITTED);
    heldset_record(s, held, 0); /* evicted: its record removed admitted-at */
    assert_false(heldset_admitted(s, "ns", 2, "rc", 2));
    json_object_set_new(json_object_get(json_object_get(held, "metadata"), "annotations"), NAMES_ANNOTATION_ADMITTED,
                        json_string("t"));
    heldset_record(s, held, 0);
    heldset_record(s, held, 1); /* deleted */
    assert_int_equal(heldset_len(s), 0);
    heldset_record(s, held, 0);
    json_decref(held);
    heldset_destroy(s); /* frees what it holds */
}

/* The answer to a Pod CREATE in namespace ns of cluster rc, both ways; returns the fast path's text (caller frees). */
static char *pod_answer(const struct mutate_options *opts, const char *ns, const char *member)
{
    char body[1024], mark[128] = "";
    if (member != NULL)
        snprintf(mark, sizeof(mark), ",\"annotations\":{\"raygate.io/gang-member\":\"%s\"}", member);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":"
             "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"namespace\":\"%s\",\"operation\":\"CREATE\",\"object\":"
             "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"rc\",\"volcano.sh/queue-name\":\"q\"}%s},\"spec\":{\"containers\":"
             "[{\"name\":\"c\"}]}}}}",
             ns, mark);
    char *text = NULL;
    size_t len = 0;
    struct admission_info info = {0};
    struct error err = {{0}};
    json_t *response = NULL;
    assert_int_equal(admission_respond(body, strlen(body), NULL, opts, &text, &len, &info, &err), 0);
    assert_int_equal(admission_handle(body, strlen(body), NULL, opts, &response, &info, &err), 0);
    char *want = json_dumps(response, JSON_COMPACT);
    assert_string_equal(text, want);
    free(want);
    json_decref(response);
    return text;
}

/* The base64 patch of an answer, decoded, contains needle. */
static int patch_has(const char *answer, const char *needle)
{
    json_error_t e;
    json_t *a = json_loads(answer, 0, &e);
    const char *b64 = json_string_value(json_object_get(json_object_get(a, "response"), "patch"));
    size_t n = 0;
    char *patch = b64 != NULL ? util_base64_decode(b64, strlen(b64), &n) : NULL;
    int has = patch != NULL && strstr(patch, needle) != NULL;
    free(patch);
    json_decref(a);
    return has;
}

static void test_pods_born_ungated(void **state)
{
    (void)state;
    struct heldset *s = heldset_create();
    json_t *held = cluster(",\"annotations\":{\"raygate.io/held-suspended\":\"true\",\"raygate.io/admitted-at\":\"t\","
                           "\"raygate.io/held-generation\":\"3\"}",
                           "");
    heldset_record(s, held, 0);
    struct mutate_options opts = {.held = s};
    char *a = pod_answer(&opts, "ns", "true");
    assert_false(patch_has(a, NAMES_GATE));
    assert_true(patch_has(a, "group-name"));
    free(a);
    struct {
        const char *mark;
        int gated;
    } marks[] = {{"false", 1}, {NULL, 1}, {"\\u0074rue", 0}}; /* a tail's, none, "true" escaped (jansson's to read) */
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        a = pod_answer(&opts, "ns", marks[i].mark);
        if (patch_has(a, NAMES_GATE) != marks[i].gated)
            fail_msg("a pod marked %s of an admitted held RayCluster: gated %d", marks[i].mark ? marks[i].mark : "(none)",
                     !marks[i].gated);
        free(a);
    }
    a = pod_answer(&opts, "other", "true"); /* another namespace's rc: gated */
    assert_true(patch_has(a, NAMES_GATE));
    free(a);
    opts.held = NULL; /* the watch not synced: gated */
    a = pod_answer(&opts, "ns", "true");
    assert_true(patch_has(a, NAMES_GATE));
    free(a);
    json_decref(held);
    heldset_destroy(s);
}

/* A RayCluster CREATE, with --hold-gangs: held (spec.suspend, the mark), the same bytes both ways; without: neither. */
static void test_raycluster_held(void **state)
{
    (void)state;
    const char *body =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":"
        "{\"group\":\"ray.io\",\"version\":\"v1\",\"kind\":\"RayCluster\"},\"namespace\":\"ns\",\"operation\":\"CREATE\","
        "\"object\":{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"metadata\":{\"name\":\"rc\",\"namespace\":"
        "\"ns\",\"labels\":{\"volcano.sh/queue-name\":\"q\"}},\"spec\":{\"headGroupSpec\":{\"template\":{\"spec\":"
        "{\"containers\":[{\"name\":\"h\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}}}}";
    for (int hold = 0; hold <= 1; hold++) {
        struct mutate_options opts = {.hold_gangs = hold ? HELDSUSPEND_WAIT : HELDSUSPEND_OFF};
        char *text = NULL;
        size_t len = 0;
        struct admission_info info = {0};
        struct error err = {{0}};
        json_t *response = NULL;
        assert_int_equal(admission_respond(body, strlen(body), NULL, &opts, &text, &len, &info, &err), 0);
        assert_int_equal(admission_handle(body, strlen(body), NULL, &opts, &response, &info, &err), 0);
        char *want = json_dumps(response, JSON_COMPACT);
        assert_string_equal(text, want);
        assert_int_equal(patch_has(text, "/spec/suspend"), hold);
        assert_int_equal(patch_has(text, "raygate.io~1held-suspended"), hold);
        free(want);
        free(text);
        json_decref(response);
    }
}

/* The webhook's RayCluster watch builds only metadata (heldset_shape_fn), and the set answers from it as from the whole. */
static void test_watch_shape(void **state)
{
    (void)state;
    const char *event =
        "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"metadata\":{\"name\":"
        "\"rc\",\"namespace\":\"ns\",\"generation\":3,\"annotations\":{\"raygate.io/held-suspended\":\"true\","
        "\"raygate.io/admitted-at\":\"t\",\"raygate.io/held-generation\":\"3\"},\"managedFields\":[{\"manager\":\"k\"}]},"
        "\"spec\":{\"headGroupSpec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"h\"}]}}}},\"status\":"
        "{\"state\":\"ready\"}}}\n";
    json_t *rc = watchfixture_one(event, HELDSET_SHAPE_EVENT, heldset_shape_fn);
    assert_null(json_object_get(rc, "spec"));
    assert_null(json_object_get(rc, "status"));
    assert_null(json_object_get(json_object_get(rc, "metadata"), "managedFields"));
    struct heldset *s = heldset_create();
    heldset_record(s, rc, 0);
    assert_true(heldset_admitted(s, "ns", 2, "rc", 2));
    heldset_destroy(s);
    json_decref(rc);
}

/* --hold-gangs decide: the CREATE also marked on-wait; the gate's release patch; a released RayCluster never suspended again. */
static void test_decide(void **state)
{
    (void)state;
    json_t *c = cluster("", "");
    json_t *patch = json_array();
    assert_int_equal(heldsuspend_ops(c, 0, HELDSUSPEND_DECIDE, patch), 3);
    char *text = json_dumps(patch, JSON_COMPACT);
    assert_non_null(
        strstr(text, "{\"op\":\"add\",\"path\":\"/metadata/annotations/raygate.io~1held-release\",\"value\":\"on-wait\"}"));
    free(text);
    assert_int_equal(heldsuspend_ops(c, 0, HELDSUSPEND_OFF, patch), 0);
    json_decref(patch);
    json_decref(c);

    c = cluster(",\"annotations\":{\"raygate.io/held-suspended\":\"true\",\"raygate.io/held-release\":\"on-wait\"}",
                ",\"suspend\":true");
    assert_true(heldsuspend_release_on_wait(c));
    assert_false(heldsuspend_released(c));
    json_t *release = heldsuspend_release_patch();
    text = json_dumps(release, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(text,
                        "{\"metadata\":{\"annotations\":{\"raygate.io/held-release\":\"released\"}},\"spec\":{\"suspend\":false}}");
    free(text);
    json_t *released = jsonpatch_merge_apply(c, release);
    assert_true(heldsuspend_released(released));
    assert_false(heldsuspend_release_on_wait(released));
    assert_false(heldsuspend_suspended(released));
    /* a user's apply of a released RayCluster: not suspended again, in any mode (a held one not released is) */
    for (int mode = HELDSUSPEND_OFF; mode <= HELDSUSPEND_DECIDE; mode++) {
        patch = json_array();
        assert_int_equal(heldsuspend_ops(released, 1, (enum heldsuspend_mode)mode, patch), 0);
        json_decref(patch);
    }
    json_object_set_new(json_object_get(released, "metadata"), "generation", json_integer(4));
    json_object_set_new(json_object_get(json_object_get(released, "metadata"), "annotations"), "raygate.io/admitted-at",
                        json_string("t"));
    json_object_set_new(json_object_get(json_object_get(released, "metadata"), "annotations"), "raygate.io/held-generation",
                        json_string("4"));
    assert_false(heldsuspend_born_ungated(released)); /* admitted after its release: its pods are gated, as any gated gang's */
    json_decref(released);
    json_decref(release);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_which),           cmocka_unit_test(test_set),         cmocka_unit_test(test_pods_born_ungated),
        cmocka_unit_test(test_raycluster_held), cmocka_unit_test(test_watch_shape), cmocka_unit_test(test_decide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
