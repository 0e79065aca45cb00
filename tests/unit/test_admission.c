#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "admission.h"
#include "fixtures.h"
#include "jsonpatch.h"

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

static void run_fixture(const char *file, size_t *ok, size_t *errors)
{
    json_t *c = fixture_json(file);
    const char *raw = json_string_value(json_object_get(c, "body"));
    char *body = raw != NULL ? strdup(raw) : json_dumps(json_object_get(c, "review"), JSON_COMPACT);
    json_t *response = (json_t *)1;
    struct admission_info info = {0};
    struct admission_error err = {0, {0}};
    int rc = admission_handle(body, strlen(body), &response, &info, &err);

    if (json_object_get(c, "http") != NULL) {
        const char *want = json_string_value(json_object_get(c, "error"));
        if (rc != -1)
            fail_msg("%s: answered, expected HTTP %lld", file, (long long)json_integer_value(json_object_get(c, "http")));
        assert_null(response);
        assert_int_equal(err.http_status, json_integer_value(json_object_get(c, "http")));
        if (strstr(err.message, want) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\"", file, err.message, want);
        assert_null(strchr(err.message, '\n'));
        assert_string_equal(info.result, "error");
        (*errors)++;
        goto done;
    }
    if (rc != 0)
        fail_msg("%s: HTTP %d %s", file, err.http_status, err.message);
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
        struct jsonpatch_error perr;
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
    struct admission_error err;
    assert_int_equal(admission_handle(body, strlen(body) - strlen("GARBAGE"), &response, &info, &err), 0);
    assert_true(json_is_true(json_object_get(json_object_get(response, "response"), "allowed")));
    json_decref(response);
    assert_int_equal(admission_handle(body, strlen(body), &response, &info, &err), -1);
    assert_int_equal(err.http_status, 400);
    assert_null(response);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_length_respected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
