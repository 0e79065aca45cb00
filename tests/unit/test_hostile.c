/*
 * The hostile-input catalogue (tests/fixtures/hostile/cases.json) through the
 * webhook's policy, admission_handle(): every case gets exactly its expected
 * answer, and every answer keeps the contract of tests/support/reviewcheck.h
 * (a patch applies to the object and gives an object admitted again without
 * patch). The same catalogue is sent to the real binary over TLS by
 * tests/local/hostile.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "fixtures.h"
#include "jsonpatch.h"
#include "log.h"
#include "reviewcheck.h"

/* The body of a case: a file under fixtures/hostile, or one the build generated. */
static char *case_body(const json_t *c, size_t *len)
{
    const char *file = json_string_value(json_object_get(c, "body"));
    if (file != NULL) {
        char rel[256];
        snprintf(rel, sizeof(rel), "hostile/%s", file);
        return fixture_read(rel, len);
    }
    const char *gen = json_string_value(json_object_get(c, "generate"));
    const char *dir = getenv("RAYGATE_HOSTILE_GENERATED");
    if (gen == NULL || dir == NULL)
        fail_msg("%s: no body, or RAYGATE_HOSTILE_GENERATED unset", json_string_value(json_object_get(c, "name")));
    char *path = util_strdupf("%s/%s.json", dir, gen);
    char *buf = util_read_file(path, (size_t)64 << 20, len);
    if (buf == NULL)
        fail_msg("cannot read %s", path);
    free(path);
    return buf;
}

/*
 * Returns 0 when the case was checked, 1 when skipped (a body over 4 MiB under
 * valgrind: minutes, not seconds). With opts (the native gang step on), the
 * case's "patched" and "checks" (written for the webhook's default) give way
 * to its "native" ones, if any: the contract (reviewcheck.h) says the rest.
 */
static int check_case(const json_t *c, const struct mutate_options *opts)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    size_t len;
    char *body = case_body(c, &len);
    const char *vg = getenv("RAYGATE_UNDER_VALGRIND");
    if (vg != NULL && strcmp(vg, "1") == 0 && len > (4u << 20)) {
        free(body);
        return 1;
    }
    json_t *response = NULL, *patched = NULL;
    struct admission_info info;
    struct error err;
    struct error why;
    int rc;

    if (reviewcheck_run(body, len, opts, &rc, &response, &info, &err, &patched, &why) != 0)
        fail_msg("%s%s: %s", name, opts != NULL ? " (native gang on)" : "", why.message);

    const json_t *http = json_object_get(c, "http");
    if (http != NULL) {
        const char *want = json_string_value(json_object_get(c, "error"));
        if (rc != -1)
            fail_msg("%s: answered, expected HTTP %lld", name, (long long)json_integer_value(http));
        if (ADMISSION_ERROR_STATUS != json_integer_value(http) || strstr(err.message, want) == NULL)
            fail_msg("%s: HTTP %d \"%s\", expected %lld with \"%s\"", name, ADMISSION_ERROR_STATUS, err.message,
                     (long long)json_integer_value(http), want);
        goto done;
    }
    if (rc != 0)
        fail_msg("%s: HTTP %d %s, expected an answer", name, ADMISSION_ERROR_STATUS, err.message);
    const json_t *resp = json_object_get(response, "response");
    fixture_check_json(name, "allowed", json_object_get(resp, "allowed"), json_object_get(c, "allowed"));

    const char *message = json_string_value(json_object_get(c, "message"));
    if (message != NULL) {
        const char *got = json_string_value(json_object_get(json_object_get(resp, "status"), "message"));
        if (got == NULL || strstr(got, message) == NULL)
            fail_msg("%s: status.message \"%s\" lacks \"%s\"", name, got != NULL ? got : "(none)", message);
    }
    const json_t *expect = opts != NULL ? json_object_get(c, "native") : c;
    const json_t *want_patch = json_object_get(expect, "patched");
    if (json_is_true(want_patch) && patched == NULL)
        fail_msg("%s: no patch", name);
    if (json_is_false(want_patch) && patched != NULL)
        fail_msg("%s: unexpected patch", name);
    size_t i;
    const json_t *check;
    json_array_foreach(json_object_get(expect, "checks"), i, check)
    {
        const char *pointer = json_string_value(json_object_get(check, "pointer"));
        char what[300];
        snprintf(what, sizeof(what), "patched object at %.200s", pointer);
        fixture_check_json(name, what, jsonpatch_get(patched, pointer), json_object_get(check, "value"));
    }
    if (json_object_get(c, "warnings") != NULL)
        fixture_check_json(name, "warnings", json_object_get(resp, "warnings"), json_object_get(c, "warnings"));
    else if (json_object_get(resp, "warnings") != NULL)
        fail_msg("%s: unexpected warnings", name);

done:
    json_decref(patched);
    json_decref(response);
    free(body);
    return 0;
}

static void test_catalogue(void **state)
{
    (void)state;
    json_t *all = fixture_json("hostile/cases.json");
    const json_t *cases = json_object_get(all, "cases");
    size_t i, errors = 0, denials = 0, patches = 0, skipped = 0;
    const json_t *c;
    assert_true(json_array_size(cases) >= 40);
    static const struct mutate_options native_on = {.native_gang = 1};
    size_t native = 0;
    json_array_foreach(cases, i, c)
    {
        if (check_case(c, NULL)) {
            skipped++;
            continue;
        }
        check_case(c, &native_on);
        errors += json_object_get(c, "http") != NULL;
        denials += json_is_false(json_object_get(c, "allowed"));
        patches += json_is_true(json_object_get(c, "patched"));
        native += json_object_get(c, "native") != NULL;
    }
    /* Every kind of answer is exercised. */
    assert_true(errors >= 10);
    assert_true(denials >= 10);
    assert_true(patches >= 10);
    assert_true(native >= 4);
    assert_true(skipped <= 3);
    if (skipped > 0)
        print_message("hostile: %zu cases over 4 MiB skipped under valgrind (RAYGATE_UNDER_VALGRIND=1)\n", skipped);
    json_decref(all);
}

/* The checker itself: a patch that does not apply, or a denial without a message, is caught. */
static void test_checker_catches(void **state)
{
    (void)state;
    const char *body = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
                       "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":{}}}";
    struct admission_info info = {.kind = "Pod", .operation = "CREATE", .result = "patched"};
    struct error err = {{0}};
    struct error why;
    /* "remove" of a path the object lacks: the apiserver would fail the pod's creation. */
    json_t *bad_patch = json_pack("{s:s,s:s,s:{s:s,s:b,s:s,s:s}}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
                                  "response", "uid", "u", "allowed", 1, "patchType", "JSONPatch", "patch",
                                  "W3sib3AiOiJyZW1vdmUiLCJwYXRoIjoiL3NwZWMvbm9kZU5hbWUifV0=");
    assert_int_equal(reviewcheck_answer(body, strlen(body), NULL, 0, bad_patch, &info, &err, NULL, &why), -1);
    assert_non_null(strstr(why.message, "does not apply"));
    json_t *bare_denial = json_pack("{s:s,s:s,s:{s:s,s:b}}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
                                    "response", "uid", "u", "allowed", 0);
    info.result = "denied";
    assert_int_equal(reviewcheck_answer(body, strlen(body), NULL, 0, bare_denial, &info, &err, NULL, &why), -1);
    assert_non_null(strstr(why.message, "denial without status"));
    json_t *other_uid = json_pack("{s:s,s:s,s:{s:s,s:b}}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
                                  "response", "uid", "v", "allowed", 1);
    info.result = "allowed";
    assert_int_equal(reviewcheck_answer(body, strlen(body), NULL, 0, other_uid, &info, &err, NULL, &why), -1);
    json_decref(other_uid);
    json_decref(bare_denial);
    json_decref(bad_patch);
}

/* The answer to a Pod CREATE that carries patch (compact JSON text), as a checker sees it (new). */
static json_t *answer_with_patch(const char *patch)
{
    char *b64 = util_base64_encode(patch, strlen(patch));
    json_t *answer = json_pack("{s:s,s:s,s:{s:s,s:b,s:s,s:s}}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
                               "response", "uid", "u", "allowed", 1, "patchType", "JSONPatch", "patch", b64);
    free(b64);
    return answer;
}

/* The checker on the native gang step: a schedulingGroup naming another group, or added with the step off, is caught. */
static void test_checker_catches_scheduling_group(void **state)
{
    (void)state;
    static const struct mutate_options native_on = {.native_gang = 1};
    const char *body = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
                       "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":"
                       "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"},"
                       "\"annotations\":{\"raygate.io/gang-member\":\"true\"}},\"spec\":{}}}}";
    const char *ops = "[{\"op\":\"add\",\"path\":\"/spec/schedulingGates\",\"value\":[{\"name\":\"raygate.io/gang\"}]},"
                      "{\"op\":\"add\",\"path\":\"/metadata/annotations/scheduling.k8s.io~1group-name\",\"value\":\"ray-c1-pg\"}";
    struct admission_info info = {.kind = "Pod", .operation = "CREATE", .result = "patched"};
    struct error err = {{0}}, why;
    char patch[1024];

    snprintf(patch, sizeof(patch),
             "%s,{\"op\":\"add\",\"path\":\"/spec/schedulingGroup\",\"value\":{\"podGroupName\":\"ray-c1-pg\"}}]", ops);
    json_t *right = answer_with_patch(patch);
    assert_int_equal(reviewcheck_answer(body, strlen(body), &native_on, 0, right, &info, &err, NULL, &why), 0);
    assert_int_equal(reviewcheck_answer(body, strlen(body), NULL, 0, right, &info, &err, NULL, &why), -1);
    assert_non_null(strstr(why.message, "changed with the native gang step off"));

    snprintf(patch, sizeof(patch), "%s,{\"op\":\"add\",\"path\":\"/spec/schedulingGroup\",\"value\":{\"podGroupName\":\"other\"}}]",
             ops);
    json_t *other = answer_with_patch(patch);
    assert_int_equal(reviewcheck_answer(body, strlen(body), &native_on, 0, other, &info, &err, NULL, &why), -1);
    assert_non_null(strstr(why.message, "does not name its group"));

    snprintf(patch, sizeof(patch), "%s]", ops);
    json_t *none = answer_with_patch(patch);
    assert_int_equal(reviewcheck_answer(body, strlen(body), NULL, 0, none, &info, &err, NULL, &why), 0);
    assert_int_equal(reviewcheck_answer(body, strlen(body), &native_on, 0, none, &info, &err, NULL, &why), -1);

    /* A pod not marked a gang member (an autoscaled group's: maybe the tail) must name no group. */
    const char *unmarked = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
                           "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":"
                           "{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"c1\",\"volcano.sh/queue-name\":\"q\"},"
                           "\"annotations\":{\"raygate.io/gang-member\":\"false\"}},\"spec\":{}}}}";
    assert_int_equal(reviewcheck_answer(unmarked, strlen(unmarked), &native_on, 0, right, &info, &err, NULL, &why), -1);
    assert_non_null(strstr(why.message, "not marked a gang member"));
    assert_int_equal(reviewcheck_answer(unmarked, strlen(unmarked), &native_on, 0, none, &info, &err, NULL, &why), 0);
    json_decref(none);
    json_decref(other);
    json_decref(right);
}

int main(void)
{
    log_set_level(LOG_LEVEL_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue),
        cmocka_unit_test(test_checker_catches),
        cmocka_unit_test(test_checker_catches_scheduling_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
