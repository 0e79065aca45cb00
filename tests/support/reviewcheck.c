#include "reviewcheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpatch.h"
#include "mutate.h"
#include "names.h"
#include "util.h"

__attribute__((format(printf, 2, 3))) static int fail(struct error *why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why->message, sizeof(why->message), fmt, ap);
    va_end(ap);
    return -1;
}

static int is_string(const json_t *obj, const char *key, const char *want)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL && strcmp(s, want) == 0;
}

static int check_error(int rc, const json_t *response, const struct admission_info *info, const struct error *err,
                       struct error *why)
{
    if (response != NULL)
        return fail(why, "an HTTP error with a response");
    if (err->message[0] == '\0' || strchr(err->message, '\n') != NULL || strchr(err->message, '\r') != NULL)
        return fail(why, "HTTP error message empty or not one line: \"%s\"", err->message);
    if (strcmp(info->result, "error") != 0)
        return fail(why, "HTTP error with result \"%s\"", info->result);
    (void)rc;
    return 0;
}

/* The JSON Patch carried by resp (new reference), checked for form. */
static json_t *decode_patch(const json_t *resp, struct error *why)
{
    const char *b64 = json_string_value(json_object_get(resp, "patch"));
    size_t n, len;
    if (!is_string(resp, "patchType", "JSONPatch")) {
        fail(why, "patch without patchType JSONPatch");
        return NULL;
    }
    if (b64 == NULL || (n = strlen(b64)) == 0 || n % 4 != 0 || strpbrk(b64, "\r\n") != NULL) {
        fail(why, "patch is not one line of padded base64");
        return NULL;
    }
    char *raw = util_base64_decode(b64, n, &len);
    if (raw == NULL) {
        fail(why, "patch is not base64");
        return NULL;
    }
    json_error_t jerr;
    json_t *patch = json_loadb(raw, len, JSON_REJECT_DUPLICATES, &jerr);
    free(raw);
    if (!json_is_array(patch) || json_array_size(patch) == 0) {
        json_decref(patch);
        fail(why, "patch is not a non-empty JSON array (%s)", jerr.text);
        return NULL;
    }
    size_t i;
    json_t *op;
    json_array_foreach(patch, i, op)
    {
        if (!is_string(op, "op", "add") && !is_string(op, "op", "remove") && !is_string(op, "op", "replace")) {
            json_decref(patch);
            fail(why, "patch operation %zu is not add, remove or replace", i);
            return NULL;
        }
    }
    return patch;
}

static size_t count_gates(const json_t *pod)
{
    const json_t *gates = json_object_get(json_object_get(pod, "spec"), "schedulingGates");
    size_t i, n = 0;
    const json_t *g;
    json_array_foreach(gates, i, g) n += is_string(g, "name", NAMES_GATE);
    return n;
}

/* Whether a and b (either may be NULL: absent) are the same value, or both absent. */
static int same_value(const json_t *a, const json_t *b)
{
    return a == NULL || b == NULL ? a == b : json_equal(a, b);
}

/*
 * The native gang step on a patched pod: the spec.schedulingGroup it came
 * with (null is none), else, on a pod marked a gang member
 * (raygate.io/gang-member "true"), one naming its group-name annotation when
 * that is a DNS subdomain, else none.
 */
static int check_scheduling_group(const json_t *before, const json_t *pod, struct error *why)
{
    const json_t *had = json_object_get(json_object_get(before, "spec"), "schedulingGroup");
    const json_t *has = json_object_get(json_object_get(pod, "spec"), "schedulingGroup");
    const json_t *group = json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), NAMES_ANNOTATION_GROUP);
    if (had != NULL && !json_is_null(had))
        return same_value(had, has) ? 0 : fail(why, "patched pod's spec.schedulingGroup is not the one it came with");
    const json_t *mark =
        json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), NAMES_ANNOTATION_GANG_MEMBER);
    int member = json_is_string(mark) && strcmp(json_string_value(mark), "true") == 0 && json_string_length(mark) == 4;
    if (!member && has != NULL && !json_is_null(has))
        return fail(why, "patched pod names a group in spec.schedulingGroup, but it is not marked a gang member");
    if (member && json_is_string(group) && names_dns_subdomain(json_string_value(group), json_string_length(group))) {
        if (json_object_size(has) != 1 || !json_equal(json_object_get(has, "podGroupName"), group))
            return fail(why, "patched pod's spec.schedulingGroup does not name its group \"%s\"", json_string_value(group));
        return 0;
    }
    if (has != NULL && !json_is_null(has))
        return fail(why, "patched pod names a group in spec.schedulingGroup, but its group-name annotation is no DNS subdomain");
    return 0;
}

/*
 * A patched Pod: raygate's gate, never added beside one already there (a pod
 * that came with it twice keeps its two: the apiserver refuses the duplicate),
 * and the group-name annotation; with the native gang step, its
 * spec.schedulingGroup (check_scheduling_group); without, the one it came with.
 */
static int check_pod(const json_t *before, const json_t *pod, const struct mutate_options *opts, struct error *why)
{
    size_t had = count_gates(before), has = count_gates(pod);
    if (!json_is_array(json_object_get(json_object_get(pod, "spec"), "schedulingGates")))
        return fail(why, "patched pod has no spec.schedulingGates list");
    if (has == 0 || (has != 1 && has != had))
        return fail(why, "patched pod has raygate's gate %zu times (it came with %zu)", has, had);
    const json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    if (!json_is_string(json_object_get(ann, NAMES_ANNOTATION_GROUP)))
        return fail(why, "patched pod has no %s annotation", NAMES_ANNOTATION_GROUP);
    if (opts != NULL && opts->native_gang)
        return check_scheduling_group(before, pod, why);
    if (!same_value(json_object_get(json_object_get(before, "spec"), "schedulingGroup"),
                    json_object_get(json_object_get(pod, "spec"), "schedulingGroup")))
        return fail(why, "spec.schedulingGroup changed with the native gang step off");
    return 0;
}

/* Admits review with request.object replaced by object, with opts: it must be allowed with no patch. */
static int check_idempotent(const json_t *review, const json_t *object, const struct mutate_options *opts, struct error *why)
{
    json_t *again = json_deep_copy(review);
    json_object_set(json_object_get(again, "request"), "object", (json_t *)object);
    char *text = json_dumps(again, JSON_COMPACT);
    json_decref(again);
    if (text == NULL)
        return fail(why, "cannot encode the patched review");
    json_t *response = NULL;
    struct admission_info info;
    struct error err;
    int rc = admission_handle(text, strlen(text), NULL, opts, &response, &info, &err);
    free(text);
    int bad = 0;
    if (rc != 0)
        bad = fail(why, "patched object: HTTP %d %s", ADMISSION_ERROR_STATUS, err.message);
    else if (!json_is_true(json_object_get(json_object_get(response, "response"), "allowed")))
        bad = fail(why, "patched object is denied");
    else if (json_object_get(json_object_get(response, "response"), "patch") != NULL)
        bad = fail(why, "patched object is patched again (not idempotent)");
    json_decref(response);
    return bad;
}

int reviewcheck_answer(const char *body, size_t len, const struct mutate_options *opts, int rc, const json_t *response,
                       const struct admission_info *info, const struct error *err, json_t **patched, struct error *why)
{
    json_t *review = NULL, *patch = NULL, *result = NULL;
    int bad = -1;

    if (patched != NULL)
        *patched = NULL;
    if (rc != 0 && rc != -1)
        return fail(why, "admission_handle returned %d", rc);
    if (rc == -1)
        return check_error(rc, response, info, err, why);

    review = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    const json_t *request = json_object_get(review, "request");
    const json_t *resp = json_object_get(response, "response");
    if (request == NULL) {
        fail(why, "answered a body without a request");
        goto out;
    }
    if (!is_string(response, "apiVersion", "admission.k8s.io/v1") || !is_string(response, "kind", "AdmissionReview") ||
        !json_is_object(resp)) {
        fail(why, "answer is not an AdmissionReview v1 response");
        goto out;
    }
    if (!json_equal(json_object_get(resp, "uid"), json_object_get(request, "uid")) ||
        !json_is_string(json_object_get(resp, "uid"))) {
        fail(why, "response.uid is not the request's");
        goto out;
    }
    const json_t *allowed = json_object_get(resp, "allowed");
    if (!json_is_boolean(allowed)) {
        fail(why, "response.allowed is not a boolean");
        goto out;
    }
    const json_t *warnings = json_object_get(resp, "warnings");
    if (warnings != NULL) {
        size_t i;
        const json_t *w;
        if (!json_is_array(warnings) || json_array_size(warnings) == 0) {
            fail(why, "warnings is not a non-empty list");
            goto out;
        }
        json_array_foreach(warnings, i, w) if (json_string_length(w) == 0)
        {
            fail(why, "warning %zu is not a non-empty string", i);
            goto out;
        }
    }
    if (json_is_false(allowed)) {
        const json_t *status = json_object_get(resp, "status");
        if (json_integer_value(json_object_get(status, "code")) != 400 ||
            json_string_length(json_object_get(status, "message")) == 0) {
            fail(why, "a denial without status {code 400, message}");
            goto out;
        }
        if (json_object_get(resp, "patch") != NULL || json_object_get(resp, "patchType") != NULL) {
            fail(why, "a denial with a patch");
            goto out;
        }
        if (strcmp(info->result, "denied") != 0) {
            fail(why, "a denial with result \"%s\"", info->result);
            goto out;
        }
        bad = 0;
        goto out;
    }
    if (json_object_get(resp, "status") != NULL) {
        fail(why, "allowed with a status");
        goto out;
    }
    if (json_object_get(resp, "patch") == NULL && json_object_get(resp, "patchType") == NULL) {
        if (strcmp(info->result, "allowed") != 0) {
            fail(why, "allowed without patch, result \"%s\"", info->result);
            goto out;
        }
        bad = 0;
        goto out;
    }
    if (strcmp(info->result, "patched") != 0) {
        fail(why, "a patch with result \"%s\"", info->result);
        goto out;
    }
    if ((patch = decode_patch(resp, why)) == NULL)
        goto out;
    struct error perr;
    result = jsonpatch_apply(json_object_get(request, "object"), patch, &perr);
    if (result == NULL) {
        fail(why, "patch does not apply: %s", perr.message);
        goto out;
    }
    if (!json_is_object(result)) {
        fail(why, "patched object is not an object");
        goto out;
    }
    if (strcmp(info->kind, "Pod") == 0 && check_pod(json_object_get(request, "object"), result, opts, why) != 0)
        goto out;
    if (check_idempotent(review, result, opts, why) != 0)
        goto out;
    bad = 0;
    if (patched != NULL) {
        *patched = result;
        result = NULL;
    }

out:
    json_decref(result);
    json_decref(patch);
    json_decref(review);
    return bad;
}

/* admission_respond() (the fast paths) answers body as admission_handle() did (rc, response, err): the same text or error. */
static int check_same_text(const char *body, size_t len, const struct mutate_options *opts, int rc, const json_t *response,
                           const struct error *err, struct error *why)
{
    char *text = NULL, *want = NULL;
    size_t text_len = 0;
    struct admission_info info;
    struct error terr = {{0}};
    int bad = 1;
    int trc = admission_respond(body, len, NULL, opts, &text, &text_len, &info, &terr);
    if (trc != rc) {
        fail(why, "admission_respond returned %d, admission_handle %d", trc, rc);
    } else if (rc != 0) {
        bad = strcmp(terr.message, err->message) != 0;
        if (bad)
            fail(why, "admission_respond's error \"%s\" is not admission_handle's \"%s\"", terr.message, err->message);
    } else {
        want = json_dumps(response, JSON_COMPACT);
        bad = want == NULL || text_len != strlen(want) || memcmp(text, want, text_len) != 0;
        if (bad)
            fail(why, "admission_respond answered %.200s, admission_handle %.200s", text, want != NULL ? want : "(null)");
    }
    free(want);
    free(text);
    return bad ? -1 : 0;
}

int reviewcheck_run(const char *body, size_t len, const struct mutate_options *opts, int *rc, json_t **response,
                    struct admission_info *info, struct error *err, json_t **patched, struct error *why)
{
    *rc = admission_handle(body, len, NULL, opts, response, info, err);
    if (check_same_text(body, len, opts, *rc, *response, err, why) != 0)
        return -1;
    return reviewcheck_answer(body, len, opts, *rc, *response, info, err, patched, why);
}
