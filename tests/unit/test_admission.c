#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "admission.h"
#include "draset.h"
#include "fixtures.h"
#include "jsonpatch.h"

static const struct mutate_options native_off = {.native_gang = 0}, native_on = {.native_gang = 1};

/* Returns the patch carried by a response (new reference), checking its encoding. */
static json_t *decode_patch(const char *file, const char *b64)
{
    size_t n = strlen(b64);
    if (strchr(b64, '\n') != NULL || n % 4 != 0)
        fail_msg("%s: patch is not one-line padded base64", file);
    unsigned char *raw = calloc(n / 4 * 3 + 1, 1);
    assert_true(EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n) >= 0);
    json_error_t err;
    json_t *patch = json_loads((const char *)raw, 0, &err);
    if (!json_is_array(patch))
        fail_msg("%s: patch is not a JSON array: %s", file, err.text);
    free(raw);
    return patch;
}

/* A fixture's (borrowed) mutation options: "options": {"nativeGang": true} is the webhook's --native-gang on; else none. */
static const struct mutate_options *fixture_options(const json_t *c)
{
    return json_is_true(json_object_get(json_object_get(c, "options"), "nativeGang")) ? &native_on : NULL;
}

static void run_fixture(const char *file, size_t *ok, size_t *errors)
{
    json_t *c = fixture_json(file);
    const char *raw = json_string_value(json_object_get(c, "body"));
    char *body = raw != NULL ? strdup(raw) : json_dumps(json_object_get(c, "review"), JSON_COMPACT);
    json_t *response = (json_t *)1;
    struct admission_info info = {0};
    struct error err = {{0}};
    const struct mutate_options *opts = fixture_options(c);
    int rc = admission_handle(body, strlen(body), NULL, opts, &response, &info, &err);

    if (json_object_get(c, "http") != NULL) {
        const char *want = json_string_value(json_object_get(c, "error"));
        if (rc != -1)
            fail_msg("%s: answered, expected HTTP %lld", file, (long long)json_integer_value(json_object_get(c, "http")));
        assert_null(response);
        assert_int_equal(ADMISSION_ERROR_STATUS, json_integer_value(json_object_get(c, "http")));
        if (strstr(err.message, want) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\"", file, err.message, want);
        assert_null(strchr(err.message, '\n'));
        assert_string_equal(info.result, "error");
        (*errors)++;
        goto done;
    }
    if (rc != 0)
        fail_msg("%s: HTTP %d %s", file, ADMISSION_ERROR_STATUS, err.message);
    json_t *review = json_object_get(c, "review");
    json_t *request = json_object_get(review, "request");
    json_t *resp = json_object_get(response, "response");
    assert_string_equal(json_string_value(json_object_get(response, "apiVersion")), "admission.k8s.io/v1");
    assert_string_equal(json_string_value(json_object_get(response, "kind")), "AdmissionReview");
    assert_true(json_is_object(resp));
    assert_string_equal(json_string_value(json_object_get(resp, "uid")), json_string_value(json_object_get(request, "uid")));
    fixture_check_json(file, "allowed", json_object_get(resp, "allowed"), json_object_get(c, "allowed"));

    json_t *want_info = json_object_get(c, "info");
    assert_string_equal(info.kind, json_string_value(json_object_get(want_info, "kind")));
    assert_string_equal(info.operation, json_string_value(json_object_get(want_info, "operation")));
    assert_string_equal(info.result, json_string_value(json_object_get(want_info, "result")));

    if (json_object_get(c, "warnings") != NULL)
        fixture_check_json(file, "warnings", json_object_get(resp, "warnings"), json_object_get(c, "warnings"));
    else
        assert_null(json_object_get(resp, "warnings"));
    if (json_object_get(c, "status") != NULL)
        fixture_check_json(file, "status", json_object_get(resp, "status"), json_object_get(c, "status"));
    else
        assert_null(json_object_get(resp, "status"));
    /* A denial's reason is also in info, for the webhook's log. */
    if (strcmp(info.result, "denied") == 0)
        assert_string_equal(info.denial.message, json_string_value(json_object_get(json_object_get(resp, "status"), "message")));

    const char *patch_b64 = json_string_value(json_object_get(resp, "patch"));
    if (json_is_true(json_object_get(c, "noPatch")) || json_object_get(c, "status") != NULL) {
        if (patch_b64 != NULL)
            fail_msg("%s: unexpected patch", file);
        assert_null(json_object_get(resp, "patchType"));
    } else {
        if (patch_b64 == NULL)
            fail_msg("%s: no patch", file);
        assert_string_equal(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
        json_t *patch = decode_patch(file, patch_b64);
        struct error perr;
        json_t *patched = jsonpatch_apply(json_object_get(request, "object"), patch, &perr);
        if (patched == NULL)
            fail_msg("%s: patch does not apply: %s", file, perr.message);
        fixture_check_json(file, "patched object", patched, json_object_get(c, "expectedObject"));
        json_decref(patched);
        json_decref(patch);
    }
    (*ok)++;

done:
    json_decref(response);
    free(body);
    json_decref(c);
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t n, ok = 0, errors = 0;
    char **files = fixture_list("admission", &n);
    assert_true(n >= 20);
    for (size_t i = 0; i < n; i++)
        run_fixture(files[i], &ok, &errors);
    assert_true(ok >= 12);
    assert_true(errors >= 8);
    fixture_list_free(files, n);
}

/* The body is taken as bytes [0, len): trailing bytes beyond len are never read. */
static void test_length_respected(void **state)
{
    (void)state;
    const char *body = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                       "\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Secret\"},"
                       "\"operation\":\"CREATE\",\"object\":{}}}GARBAGE";
    json_t *response = NULL;
    struct admission_info info;
    struct error err;
    assert_int_equal(admission_handle(body, strlen(body) - strlen("GARBAGE"), NULL, NULL, &response, &info, &err), 0);
    assert_true(json_is_true(json_object_get(json_object_get(response, "response"), "allowed")));
    json_decref(response);
    assert_int_equal(admission_handle(body, strlen(body), NULL, NULL, &response, &info, &err), -1);
    assert_int_equal(ADMISSION_ERROR_STATUS, 400);
    assert_null(response);
}

/* How many bodies each fast path answered itself. */
struct fast_counts {
    size_t pod, raycluster;
};

/* When a fast path answers body, the jansson path must accept it; counts the answer. */
static void check_fast(const char *what, const char *body, size_t len, const struct queuecheck_set *queues,
                       const struct mutate_options *opts, int want_rc, const struct error *want_err, struct fast_counts *fast)
{
    char *fast_text = NULL;
    size_t fast_len = 0;
    struct admission_info fast_info = {0};
    int pod = admission_respond_pod_fast(body, len, opts, &fast_text, &fast_len, &fast_info);
    if (pod) {
        assert_string_equal(fast_info.kind, "Pod");
        free(fast_text);
        fast_text = NULL;
    }
    int raycluster = admission_respond_raycluster_fast(body, len, queues, opts, &fast_text, &fast_len, &fast_info);
    if (raycluster) {
        assert_string_equal(fast_info.kind, "RayCluster");
        assert_string_not_equal(fast_info.result, "denied");
        free(fast_text);
    }
    if ((pod || raycluster) && want_rc != 0)
        fail_msg("%s: a fast path answered a body the jansson path refuses (%s)", what, want_err->message);
    assert_false(pod && raycluster);
    fast->pod += (size_t)pod;
    fast->raycluster += (size_t)raycluster;
}

/*
 * body through admission_respond() and through admission_handle() + json_dumps(),
 * with queues and opts (either may be NULL): the same answer, byte for byte, or
 * the same error. Counts the bodies the fast paths answered themselves.
 */
static void check_same_answer_with(const char *what, const char *body, size_t len, const struct queuecheck_set *queues,
                                   const struct mutate_options *opts, struct fast_counts *fast)
{
    char *text = NULL;
    size_t text_len = 0;
    struct admission_info info = {0}, want_info = {0};
    struct error err = {{0}}, want_err = {{0}};
    json_t *response = NULL;
    int want_rc = admission_handle(body, len, queues, opts, &response, &want_info, &want_err);
    int rc = admission_respond(body, len, queues, opts, &text, &text_len, &info, &err);
    check_fast(what, body, len, queues, opts, want_rc, &want_err, fast);
    assert_int_equal(rc, want_rc);
    assert_string_equal(info.kind, want_info.kind);
    assert_string_equal(info.operation, want_info.operation);
    assert_string_equal(info.result, want_info.result);
    assert_int_equal(info.tree_unknown, want_info.tree_unknown);
    if (rc != 0) {
        assert_null(text);
        assert_string_equal(err.message, want_err.message);
        return;
    }
    char *want = json_dumps(response, JSON_COMPACT);
    if (strcmp(text, want) != 0)
        fail_msg("%s: answers differ:\n  fast    %s\n  jansson %s", what, text, want);
    assert_int_equal(text_len, strlen(want));
    free(want);
    free(text);
    json_decref(response);
}

static void check_same_answer(const char *what, const char *body, size_t len, struct fast_counts *fast)
{
    check_same_answer_with(what, body, len, NULL, NULL, fast);
}

/* A Pod CREATE AdmissionReview around object (borrowed), as text (caller frees); indent 0: compact. */
static char *pod_review(const json_t *object, int indent)
{
    json_t *review = json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s},s:s,s:O}}", "apiVersion", "admission.k8s.io/v1", "kind",
                               "AdmissionReview", "request", "uid", "8d1c2b3a-6393-11e8-b7cc-42010a800002", "kind", "group", "",
                               "version", "v1", "kind", "Pod", "operation", "CREATE", "object", object);
    char *text = json_dumps(review, indent ? JSON_INDENT(indent) : JSON_COMPACT);
    json_decref(review);
    return text;
}

/*
 * Every pod of the mutation fixtures folder dir, compact and indented as the
 * apiserver could send it, with opts: the same answers both ways, and the Pod
 * fast path answers all but the denied ones and the legacy operator's. Returns
 * how many bodies were checked.
 */
static size_t pod_fixtures_same_answer(const char *dir, const struct mutate_options *opts, struct fast_counts *fast)
{
    size_t n, bodies = 0, fast_before = fast->pod, declined = 0;
    char **files = fixture_list(dir, &n);
    for (size_t i = 0; i < n; i++) {
        json_t *c = fixture_json(files[i]);
        /* the legacy operator's pods go through jansson, and so do denials (jansson words them) */
        declined += strstr(files[i], "/legacy-") != NULL || json_object_get(c, "deny") != NULL;
        for (int indent = 0; indent <= 2; indent += 2) {
            char *body = pod_review(json_object_get(c, "object"), indent);
            check_same_answer_with(files[i], body, strlen(body), NULL, opts, fast);
            bodies++;
            free(body);
        }
        json_decref(c);
    }
    fixture_list_free(files, n);
    assert_true(declined >= 2);
    if (fast->pod - fast_before != 2 * (n - declined))
        fail_msg("%s (native gang %s): the Pod fast path answered %zu of %zu bodies, expected %zu", dir,
                 opts != NULL && opts->native_gang ? "on" : "off", fast->pod - fast_before, bodies, 2 * (n - declined));
    return bodies;
}

/* admission_respond answers every fixture as admission_handle does, and answers most Pod CREATEs itself. */
static void test_respond_same_answer(void **state)
{
    (void)state;
    size_t n, bodies = 0;
    struct fast_counts fast = {0, 0};
    char **files = fixture_list("admission", &n);
    for (size_t i = 0; i < n; i++) {
        json_t *c = fixture_json(files[i]);
        const char *raw = json_string_value(json_object_get(c, "body"));
        char *body = raw != NULL ? strdup(raw) : json_dumps(json_object_get(c, "review"), JSON_COMPACT);
        check_same_answer_with(files[i], body, strlen(body), NULL, fixture_options(c), &fast);
        bodies++;
        free(body);
        json_decref(c);
    }
    fixture_list_free(files, n);

    /* Every pod of the mutation fixtures, with the native gang step off and on. */
    static const char *const pod_dirs[] = {"mutate/pod", "mutate/pod-native"};
    const struct mutate_options *const pod_opts[] = {NULL, &native_off, &native_on};
    for (size_t d = 0; d < sizeof(pod_dirs) / sizeof(pod_dirs[0]); d++)
        for (size_t o = 0; o < sizeof(pod_opts) / sizeof(pod_opts[0]); o++)
            bodies += pod_fixtures_same_answer(pod_dirs[d], pod_opts[o], &fast);

    size_t len;
    char *body = fixture_read("bench/pod-review.json", &len);
    size_t before = fast.pod;
    check_same_answer("bench/pod-review.json", body, len, &fast);
    assert_int_equal(fast.pod, before + 1);
    free(body);

    /* What the scan declines goes to jansson, which decides: escapes that decode to our names, duplicates, odd numbers. */
    static const char *const tricky[] = {
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c\\u0031\",\"volcano.sh/queue-name\":\"q\"}},\"spec\":{}}",
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"}},"
        "\"spec\":{\"schedulingGates\":[{\"name\":\"raygate.io\\/gang\"}]}}",
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"},"
        "\"annotations\":{\"scheduling.k8s.io\\/group-name\":\"x\"}},\"spec\":{}}",
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"ray.io/cluster\":\"c2\",\"volcano.sh/"
        "queue-name\":\"q\"}},\"spec\":{}}",
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"}},\"spec\":{\"priority\":1e999}}",
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"}},\"spec\":{\"schedulingGates\":{}}}",
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/"
        "queue-name\":\"q\"}},\"spec\":{\"schedulerName\":\"x\\ty\"}}",
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c\u00e9\",\"volcano.sh/queue-name\":\"q\"}},\"spec\":{}}",
    };
    for (size_t i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
        char review[1024];
        snprintf(review, sizeof(review),
                 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
                 "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":%s}}",
                 tricky[i]);
        char *fast_text = NULL;
        size_t fast_len;
        struct admission_info info;
        if (admission_respond_pod_fast(review, strlen(review), NULL, &fast_text, &fast_len, &info))
            fail_msg("tricky body %zu: the fast path should decline it", i);
        check_same_answer(review, review, strlen(review), &fast);
        check_same_answer_with(review, review, strlen(review), NULL, &native_on, &fast);
        bodies++;
    }
    assert_true(bodies >= 200);
}

/*
 * With the native gang step on, the Pod fast path also declines, on a pod
 * marked a gang member, a group-name annotation with escapes (its decoded
 * text would be the name), and a member mark with escapes, which it answers
 * with the step off (it never reads that text then); jansson's answer is
 * the same either way.
 */
static void test_respond_native_declines(void **state)
{
    (void)state;
    static const char *const objects[] = {
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"},"
        "\"annotations\":{\"raygate.io/gang-member\":\"true\",\"scheduling.k8s.io/group-name\":\"ray-a\\/b-pg\"}},"
        "\"spec\":{}}",
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"},"
        "\"annotations\":{\"raygate.io/gang-member\":\"true\",\"scheduling.k8s.io/group-name\":\"ray-job\\n-pg\"}},"
        "\"spec\":{\"schedulingGroup\":null}}",
        /* The member mark with escapes (the scan refuses \u): whether it says "true" is jansson's to decode. */
        "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"},"
        "\"annotations\":{\"raygate.io/gang-member\":\"tr\\/ue\"}},\"spec\":{}}",
    };
    struct fast_counts fast = {0, 0};
    for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
        char review[1024];
        snprintf(review, sizeof(review),
                 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
                 "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":%s}}",
                 objects[i]);
        char *text = NULL;
        size_t len;
        struct admission_info info;
        if (!admission_respond_pod_fast(review, strlen(review), &native_off, &text, &len, &info))
            fail_msg("body %zu: the fast path should answer it with the step off", i);
        free(text);
        text = NULL;
        if (admission_respond_pod_fast(review, strlen(review), &native_on, &text, &len, &info))
            fail_msg("body %zu: the fast path should decline it with the step on", i);
        check_same_answer_with(review, review, strlen(review), NULL, &native_off, &fast);
        check_same_answer_with(review, review, strlen(review), NULL, &native_on, &fast);
    }
    assert_int_equal(fast.pod, 3); /* the three answers with the step off */
}

/* An AdmissionReview of kind group/version/kind and operation for object and old (either may be NULL), as text (caller frees). */
static char *review_text(const char *group, const char *version, const char *kind, const char *op, json_t *object, json_t *old)
{
    json_t *request = json_pack("{s:s, s:{s:s, s:s, s:s}, s:s}", "uid", "u-1", "kind", "group", group, "version", version, "kind",
                                kind, "operation", op);
    json_object_set_new(request, "object", object != NULL ? object : json_null());
    json_object_set_new(request, "oldObject", old != NULL ? old : json_null());
    json_t *review =
        json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request", request);
    char *text = json_dumps(review, JSON_COMPACT);
    json_decref(review);
    return text;
}

/* The answer (new) to text against queues; info filled. */
static json_t *answer_of(char *text, const struct queuecheck_set *queues, struct admission_info *info)
{
    json_t *response = NULL;
    struct error err = {{0}};
    assert_int_equal(admission_handle(text, strlen(text), queues, NULL, &response, info, &err), 0);
    free(text);
    return response;
}

static const char *status_message(const json_t *answer)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(answer, "response"), "status"), "message"));
}

/*
 * The queue tree through the whole admission: a RayCluster, a RayService and
 * a legacy RayCluster naming a parent are denied; Queue admissions are
 * validated, a capability warning reaches response.warnings; without the
 * Queues (NULL) the tree checks are skipped and info says so.
 */
static void test_queue_tree(void **state)
{
    (void)state;
    struct queuecheck_set s;
    queuecheck_set_init(&s);
    json_t *eng = json_pack("{s:{s:s}, s:{s:{s:s}}}", "metadata", "name", "eng", "spec", "capability", "cpu", "16");
    json_t *train = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "train", "spec", "parent", "eng");
    queuecheck_set_put(&s, eng);
    queuecheck_set_put(&s, train);
    json_decref(eng);
    json_decref(train);
    s.synced = 1;
    struct admission_info info;
    static const char *const kinds[][3] = {{"ray.io", "v1", "RayCluster"},
                                           {"ray.io", "v1", "RayService"},
                                           {"cluster.ray.io", "v1", "RayCluster"},
                                           {"ray.io", "v1", "RayJob"}};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        json_t *rc =
            json_pack("{s:{s:s, s:{s:s}}, s:{}}", "metadata", "name", "c", "labels", "volcano.sh/queue-name", "eng", "spec");
        json_incref(rc);
        json_t *a = answer_of(review_text(kinds[k][0], kinds[k][1], kinds[k][2], "CREATE", rc, NULL), &s, &info);
        assert_string_equal(info.result, "denied");
        assert_string_equal(status_message(a),
                            "metadata.labels[volcano.sh/queue-name]: queue eng has children (train): only leaf queues hold gangs");
        json_decref(a);
        a = answer_of(review_text(kinds[k][0], kinds[k][1], kinds[k][2], "CREATE", rc, NULL), NULL, &info);
        assert_true(info.tree_unknown); /* (the mutation may still deny this spec, on other grounds) */
        assert_true(status_message(a) == NULL || strstr(status_message(a), "children") == NULL);
        json_decref(a);
    }
    json_t *q =
        json_pack("{s:{s:s}, s:{s:s, s:{s:s}}}", "metadata", "name", "big", "spec", "parent", "eng", "capability", "cpu", "32");
    json_t *a = answer_of(review_text("scheduling.volcano.sh", "v1beta1", "Queue", "CREATE", q, NULL), &s, &info);
    assert_string_equal(info.kind, "Queue");
    assert_string_equal(info.result, "allowed");
    assert_non_null(strstr(json_string_value(json_array_get(json_object_get(json_object_get(a, "response"), "warnings"), 0)),
                           "spec.capability.cpu: 32 is above 16"));
    json_decref(a);
    json_t *old = json_pack("{s:{s:s}}", "metadata", "name", "eng");
    a = answer_of(review_text("scheduling.volcano.sh", "v1beta1", "Queue", "DELETE", NULL, old), &s, &info);
    assert_string_equal(info.result, "denied");
    assert_string_equal(info.operation, "DELETE");
    assert_non_null(strstr(status_message(a), "queue eng has children (train)"));
    json_decref(a);
    queuecheck_set_finish(&s);
}

/* Queues q and eng, each with a child: a RayCluster in either is denied. */
static void parent_queues(struct queuecheck_set *s)
{
    queuecheck_set_init(s);
    static const char *const pairs[][2] = {{"q", NULL}, {"q-child", "q"}, {"eng", NULL}, {"train", "eng"}};
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        json_t *q = json_pack("{s:{s:s}, s:{}}", "metadata", "name", pairs[i][0], "spec");
        if (pairs[i][1] != NULL)
            json_object_set_new(json_object_get(q, "spec"), "parent", json_string(pairs[i][1]));
        queuecheck_set_put(s, q);
        json_decref(q);
    }
    s->synced = 1;
}

/* review (borrowed) compact and indented, without Queues and against parent_queues(): the same answers either way. */
static void check_review_all_ways(const char *what, const json_t *review, const struct queuecheck_set *parents,
                                  struct fast_counts *fast, struct fast_counts *denied)
{
    for (int indent = 0; indent <= 1; indent++) {
        char *body = json_dumps(review, indent ? JSON_INDENT(1) : JSON_COMPACT);
        check_same_answer(what, body, strlen(body), fast);
        check_same_answer_with(what, body, strlen(body), parents, NULL, denied);
        free(body);
    }
}

/*
 * A RayCluster CREATE or UPDATE is answered from the scan when it is allowed,
 * byte for byte as the jansson path answers: the mutation fixtures, the bench's
 * bodies and the cases of admission-fast/ (each says whether the fast path
 * answers it); a denial (the queue has children, an invalid spec) is left to
 * the jansson path.
 */
static void test_respond_raycluster_fast(void **state)
{
    (void)state;
    struct queuecheck_set parents;
    struct fast_counts fast = {0, 0}, denied = {0, 0};
    size_t n, want_fast = 0;
    parent_queues(&parents);

    char **files = fixture_list("mutate/raycluster", &n);
    for (size_t i = 0; i < n; i++) {
        json_t *c = fixture_json(files[i]);
        json_t *object = json_incref(json_object_get(c, "object"));
        char *text = review_text("ray.io", "v1", "RayCluster", "CREATE", object, NULL);
        json_t *review = json_loads(text, 0, NULL);
        check_review_all_ways(files[i], review, &parents, &fast, &denied);
        want_fast += json_object_get(c, "deny") == NULL;
        json_decref(review);
        free(text);
        json_decref(c);
    }
    fixture_list_free(files, n);
    assert_true(n >= 10);
    assert_int_equal(fast.raycluster, 2 * want_fast); /* compact and indented */

    files = fixture_list("admission-fast", &n);
    for (size_t i = 0; i < n; i++) {
        json_t *c = fixture_json(files[i]);
        size_t before = fast.raycluster, denied_before = denied.raycluster;
        const json_t *request = json_object_get(json_object_get(c, "review"), "request");
        const json_t *object = json_object_get(request, "object");
        int create = strcmp(json_string_value(json_object_get(request, "operation")), "CREATE") == 0;
        const char *queue = json_string_value(
            json_object_get(json_object_get(json_object_get(object, "metadata"), "labels"), "volcano.sh/queue-name"));
        check_review_all_ways(files[i], json_object_get(c, "review"), &parents, &fast, &denied);
        if (create && queue != NULL && strcmp(queue, "q") == 0 && denied.raycluster != denied_before)
            fail_msg("%s: answered by the fast path, but q has a child", files[i]);
        if (fast.raycluster - before != (json_is_true(json_object_get(c, "fast")) ? 2u : 0u))
            fail_msg("%s: the RayCluster fast path answered it %zu times of 2, the fixture says %s", files[i],
                     fast.raycluster - before, json_is_true(json_object_get(c, "fast")) ? "always" : "never");
        json_decref(c);
    }
    fixture_list_free(files, n);
    assert_true(n >= 10);

    static const char *const bench[] = {"bench/raycluster-review.json", "bench/raycluster-large-review.json"};
    for (size_t i = 0; i < sizeof(bench) / sizeof(bench[0]); i++) {
        size_t len, before = fast.raycluster;
        char *body = fixture_read(bench[i], &len);
        check_same_answer(bench[i], body, len, &fast);
        assert_int_equal(fast.raycluster, before + 1);
        free(body);
    }
    queuecheck_set_finish(&parents);
}

/*
 * The RayCluster a review's answer makes (new): request.object with the
 * answer's patch applied, the object itself when allowed without a patch, JSON
 * null when denied or refused. body is a whole AdmissionReview (len bytes).
 */
static json_t *applied_object(const char *file, const char *body, size_t len)
{
    char *text = NULL;
    size_t text_len;
    struct admission_info info;
    struct error err;
    json_t *review = json_loadb(body, len, 0, NULL);
    json_t *out = json_null();
    if (admission_respond(body, len, NULL, NULL, &text, &text_len, &info, &err) == 0) {
        json_t *answer = json_loadb(text, text_len, 0, NULL);
        json_t *resp = json_object_get(answer, "response");
        const char *b64 = json_string_value(json_object_get(resp, "patch"));
        json_t *object = json_object_get(json_object_get(review, "request"), "object");
        if (b64 != NULL) {
            struct error perr;
            json_t *patch = decode_patch(file, b64);
            out = jsonpatch_apply(object, patch, &perr);
            if (out == NULL)
                fail_msg("%s: patch does not apply: %s", file, perr.message);
            json_decref(patch);
        } else if (json_is_true(json_object_get(resp, "allowed"))) {
            out = json_incref(object);
        }
        json_decref(answer);
    }
    free(text);
    json_decref(review);
    return out;
}

/*
 * What an answer did to review's object (new), to record: the canonical patch
 * from the object to applied (jsonpatch_diff: keys sorted, minimal; the same
 * for any two patches that make the same object), or JSON null when denied.
 * A record longer than 16 KB (a hostile body's 100k-character name) is kept as
 * the SHA-256 of its text.
 */
static json_t *applied_record(const json_t *review_object, const json_t *applied)
{
    if (json_is_null(applied))
        return json_null();
    json_t *diff = jsonpatch_diff(review_object, applied);
    char *text = json_dumps(diff, JSON_COMPACT | JSON_SORT_KEYS);
    size_t n = strlen(text);
    if (n > 16384) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int md_len;
        char hex[2 * EVP_MAX_MD_SIZE + 1];
        assert_int_equal(EVP_Digest(text, n, md, &md_len, EVP_sha256(), NULL), 1);
        for (unsigned int i = 0; i < md_len; i++)
            snprintf(hex + 2 * i, 3, "%02x", md[i]);
        json_decref(diff);
        diff = json_string(hex);
    }
    free(text);
    return diff;
}

/* Every RayCluster review of the fixtures, as file -> AdmissionReview text (new object of strings). */
static json_t *raycluster_reviews(void)
{
    static const char *const dirs[] = {"admission", "admission-fast", "bench", "hostile/bodies", "mutate/raycluster"};
    json_t *all = json_object();
    for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
        size_t n;
        char **files = fixture_list(dirs[d], &n);
        for (size_t i = 0; i < n; i++) {
            size_t len;
            char *raw = fixture_read(files[i], &len), *text = NULL;
            json_t *c = json_loadb(raw, len, 0, NULL);
            if (d == 4) {
                text = review_text("ray.io", "v1", "RayCluster", "CREATE", json_incref(json_object_get(c, "object")), NULL);
            } else if (d == 2 || d == 3) {
                text = strndup(raw, len);
            } else if (json_string_value(json_object_get(c, "body")) != NULL) {
                text = strdup(json_string_value(json_object_get(c, "body")));
            } else if (json_object_get(c, "review") != NULL) {
                text = json_dumps(json_object_get(c, "review"), JSON_COMPACT);
            }
            if (text != NULL && strstr(text, "\"RayCluster\"") != NULL)
                json_object_set_new(all, files[i], json_string(text));
            free(text);
            json_decref(c);
            free(raw);
        }
        fixture_list_free(files, n);
    }
    return all;
}

/*
 * Every RayCluster review of the fixtures makes the same object as the
 * answers recorded in applied/raycluster.json (applied_record): however the
 * patch is worded, what it makes must not change. RAYGATE_WRITE_APPLIED=FILE writes the record
 * from this build instead (run it on the commit whose answers are the reference).
 */
static void test_raycluster_applied(void **state)
{
    (void)state;
    json_t *reviews = raycluster_reviews(), *got = json_object(), *want = fixture_json("applied/raycluster.json");
    const char *file, *write = getenv("RAYGATE_WRITE_APPLIED");
    json_t *text;
    size_t patched = 0;
    json_object_foreach(reviews, file, text)
    {
        const char *body = json_string_value(text);
        json_t *applied = applied_object(file, body, strlen(body));
        json_t *review = json_loads(body, 0, NULL);
        json_t *record = applied_record(json_object_get(json_object_get(review, "request"), "object"), applied);
        patched += json_array_size(record) > 0 || json_is_string(record);
        if (write == NULL)
            fixture_check_json(file, "what the answer makes", record, json_object_get(want, file));
        json_object_set_new(got, file, record);
        json_decref(applied);
        json_decref(review);
    }
    if (write != NULL)
        assert_int_equal(json_dump_file(got, write, JSON_INDENT(1) | JSON_SORT_KEYS), 0);
    assert_int_equal(json_object_size(got), json_object_size(want));
    assert_true(patched >= 30);
    json_decref(want);
    json_decref(got);
    json_decref(reviews);
}

/* draset_record() of kind's object text into s, which must parse. */
static void dra_record(struct draset *s, enum draset_kind kind, const char *text)
{
    json_t *obj = json_loads(text, 0, NULL);
    struct error err;
    assert_non_null(obj);
    draset_record(s, kind, 0, obj, &err);
    assert_string_equal(err.message, "");
    json_decref(obj);
}

/*
 * Devices through the whole admission (mutate_options.dra): the RayCluster
 * fast path keeps the templates' resourceClaims, and answers byte for byte as
 * the jansson path, with the workers' devices in raygate.io/min-resources.
 */
static void test_raycluster_devices(void **state)
{
    (void)state;
    struct draset *s = draset_create();
    dra_record(s, DRASET_CLASS, "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"extendedResourceName\":\"example.com/gpu\"}}");
    dra_record(s, DRASET_TEMPLATE,
               "{\"metadata\":{\"name\":\"two-gpu\",\"namespace\":\"ml\"},\"spec\":{\"spec\":{\"devices\":{"
               "\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\",\"count\":2}}]}}}}");
    const struct mutate_options with = {.dra = s};
    json_t *cluster = json_loads("{\"metadata\":{\"name\":\"r\",\"namespace\":\"ml\",\"labels\":{\"volcano.sh/queue-name\":\"q\"}},"
                                 "\"spec\":{\"headGroupSpec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"h\","
                                 "\"image\":\"ray\"}]}}},\"workerGroupSpecs\":[{\"groupName\":\"w\",\"replicas\":2,"
                                 "\"template\":{\"spec\":{\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimTemplateName\":"
                                 "\"two-gpu\"}],\"containers\":[{\"name\":\"w\",\"image\":\"ray\"}]}}}]}}",
                                 0, NULL);
    assert_non_null(cluster);
    char *body = review_text("ray.io", "v1", "RayCluster", "CREATE", cluster, NULL);
    struct fast_counts fast = {0, 0};
    check_same_answer_with("devices", body, strlen(body), NULL, &with, &fast);
    assert_int_equal(fast.raycluster, 1);

    for (int dra = 0; dra <= 1; dra++) {
        char *text = NULL;
        size_t len;
        struct admission_info info = {0};
        struct error err = {{0}};
        assert_int_equal(admission_respond(body, strlen(body), NULL, dra ? &with : NULL, &text, &len, &info, &err), 0);
        json_t *answer = json_loads(text, 0, NULL);
        json_t *patch = decode_patch("devices", json_string_value(json_object_get(json_object_get(answer, "response"), "patch")));
        char *ops = json_dumps(patch, JSON_COMPACT);
        const char *want =
            dra ? "\"raygate.io/min-resources\":\"{\\\"example.com/gpu\\\":\\\"4\\\"}\"" : "\"raygate.io/min-resources\":\"{}\"";
        if (strstr(ops, want) == NULL)
            fail_msg("with%s the set: %s lacks %s", dra ? "" : "out", ops, want);
        free(ops);
        json_decref(patch);
        json_decref(answer);
        free(text);
    }
    free(body);
    draset_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_length_respected),
        cmocka_unit_test(test_respond_same_answer),
        cmocka_unit_test(test_respond_native_declines),
        cmocka_unit_test(test_queue_tree),
        cmocka_unit_test(test_respond_raycluster_fast),
        cmocka_unit_test(test_raycluster_applied),
        cmocka_unit_test(test_raycluster_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
