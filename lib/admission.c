#include "admission.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "log.h"
#include "mutate.h"
#include "util.h"

__attribute__((format(printf, 2, 3))) static int fail(struct admission_error *err, const char *format, ...)
{
    va_list ap;
    err->http_status = 400;
    va_start(ap, format);
    vsnprintf(err->message, sizeof(err->message), format, ap);
    va_end(ap);
    /* One line of valid UTF-8, whatever the parser quoted from the body. */
    util_one_line(err->message);
    return -1;
}

/* The operation as one of our static strings (they outlive the request). */
static const char *operation_name(const char *op)
{
    static const char *const known[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
    for (size_t i = 0; op != NULL && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(op, known[i]) == 0)
            return known[i];
    return "unknown";
}

static int string_is(const json_t *obj, const char *key, const char *want)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL && strcmp(s, want) == 0;
}

/* Returns a new JSON string holding base64(patch as compact JSON), no newlines. */
static json_t *encode_patch(const json_t *patch)
{
    char *text = json_dumps(patch, JSON_COMPACT);
    if (text == NULL)
        abort();
    char *b64 = util_base64_encode(text, strlen(text));
    json_t *s = json_string(b64);
    free(b64);
    free(text);
    return s;
}

/*
 * An upper bound of the number of JSON values in body[0..len), without
 * parsing: every value but a container's first follows a ',', and each
 * container adds one. Stops counting past limit.
 */
static size_t count_values(const char *body, size_t len, size_t limit)
{
    size_t n = 1;
    int in_string = 0;
    for (size_t i = 0; i < len && n <= limit; i++) {
        char c = body[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == ',' || c == '{' || c == '[') {
            n++;
        }
    }
    return n;
}

int admission_handle(const char *body, size_t len, json_t **response, struct admission_info *info,
                     struct admission_error *err)
{
    json_error_t jerr;
    json_t *review, *request, *object, *answer;
    struct mutate_result result;
    struct mutate_error merr;
    int denied = 0, rc = -1;

    *response = NULL;
    info->kind = "other";
    info->operation = "unknown";
    info->result = "error";
    mutate_result_init(&result);

    if (count_values(body, len, ADMISSION_MAX_JSON_VALUES) > ADMISSION_MAX_JSON_VALUES)
        return fail(err, "body holds more than %d JSON values", ADMISSION_MAX_JSON_VALUES);
    /* Duplicate keys are refused: we must not read a different object than the apiserver wrote. */
    review = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (review == NULL)
        return fail(err, "body is not JSON: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
    if (!json_is_object(review)) {
        fail(err, "body is not a JSON object");
        goto out;
    }
    if (!string_is(review, "apiVersion", "admission.k8s.io/v1")) {
        fail(err, "apiVersion must be admission.k8s.io/v1");
        goto out;
    }
    if (!string_is(review, "kind", "AdmissionReview")) {
        fail(err, "kind must be AdmissionReview");
        goto out;
    }
    request = json_object_get(review, "request");
    if (!json_is_object(request)) {
        fail(err, "request must be an object");
        goto out;
    }
    const char *uid = json_string_value(json_object_get(request, "uid"));
    if (uid == NULL) {
        fail(err, "request.uid must be a string");
        goto out;
    }

    const json_t *kind = json_object_get(request, "kind");
    const char *op = json_string_value(json_object_get(request, "operation"));
    const char *sub = json_string_value(json_object_get(request, "subResource"));
    int whole = sub == NULL || sub[0] == '\0'; /* status and other subresources are not ours */
    int create = op != NULL && strcmp(op, "CREATE") == 0;
    int update = op != NULL && strcmp(op, "UPDATE") == 0;
    int is_raycluster = string_is(kind, "group", "ray.io") && string_is(kind, "kind", "RayCluster") &&
                        (string_is(kind, "version", "v1") || string_is(kind, "version", "v1alpha1"));
    int is_pod = string_is(kind, "group", "") && string_is(kind, "version", "v1") && string_is(kind, "kind", "Pod");
    info->operation = operation_name(op);
    info->kind = is_raycluster ? "RayCluster" : is_pod ? "Pod" : "other";

    if (whole && ((is_raycluster && (create || update)) || (is_pod && create))) {
        object = json_object_get(request, "object");
        if (!json_is_object(object)) {
            fail(err, "request.object must be an object");
            goto out;
        }
        int decided = is_raycluster ? mutate_raycluster(object, &result, &merr) : mutate_pod(object, &result, &merr);
        denied = decided != 0;
    }

    json_t *resp = json_pack("{s:s, s:b}", "uid", uid, "allowed", !denied);
    if (denied) {
        json_object_set_new(resp, "status", json_pack("{s:i, s:s}", "code", 400, "message", merr.message));
        info->result = "denied";
        log_debugf("admission %s %s uid %s denied: %s", info->kind, info->operation, uid, merr.message);
    } else if (result.patch != NULL) {
        json_object_set_new(resp, "patchType", json_string("JSONPatch"));
        json_object_set_new(resp, "patch", encode_patch(result.patch));
        info->result = "patched";
    } else {
        info->result = "allowed";
    }
    if (result.warnings != NULL)
        json_object_set(resp, "warnings", result.warnings);
    answer = json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "response", resp);
    if (answer == NULL)
        abort();
    *response = answer;
    rc = 0;

out:
    mutate_result_finish(&result);
    json_decref(review);
    return rc;
}
