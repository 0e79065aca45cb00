/*
 * reviewcheck: what every answer of admission_handle() must satisfy, whatever
 * the body was. Shared by the hostile-input unit test and the AdmissionReview
 * fuzzer, so both hold the webhook to the same contract:
 *
 * - an HTTP error (rc -1): no response, status 400, a one-line non-empty
 *   message, result "error";
 * - an answer (rc 0): an admission.k8s.io/v1 AdmissionReview whose
 *   response.uid is the request's, allowed a boolean; a denial carries
 *   status {code 400, non-empty message} and no patch; warnings are non-empty
 *   strings; a patch is one-line base64 of a JSON Patch of add/remove/replace
 *   operations that applies (RFC 6902, as the apiserver does) to
 *   request.object and yields an object that, admitted again, is allowed with
 *   no further patch (the mutation is complete and idempotent). A patched Pod
 *   carries raygate's scheduling gate (added only when absent) and the
 *   group-name annotation; with the native gang step on (mutate_options), the
 *   spec.schedulingGroup it came with, or else one naming that annotation's
 *   group when it is a DNS subdomain, or none.
 *
 * opts: the webhook's mutate_options the body is admitted with (borrowed; NULL:
 * none), the same for every admission a check makes.
 */
#ifndef RAYGATE_TEST_REVIEWCHECK_H
#define RAYGATE_TEST_REVIEWCHECK_H

#include <stddef.h>

#include <jansson.h>

#include "admission.h"
#include "error.h"

/*
 * Checks the outcome of admission_handle(body, len, ...) = rc with response
 * (borrowed), info and err. On success returns 0 and, when patched is not
 * NULL, sets *patched to the patched object (new reference, or NULL when there
 * was no patch). Returns -1 with why otherwise.
 */
int reviewcheck_answer(const char *body, size_t len, const struct mutate_options *opts, int rc, const json_t *response,
                       const struct admission_info *info, const struct error *err, json_t **patched, struct error *why);

/*
 * Runs admission_handle() on body and checks its outcome with
 * reviewcheck_answer(), and that admission_respond() (the fast paths) answers
 * the same text, or the same error. *response (new reference or NULL) and *rc are the
 * handler's, for further checks by the caller.
 */
int reviewcheck_run(const char *body, size_t len, const struct mutate_options *opts, int *rc, json_t **response,
                    struct admission_info *info, struct error *err, json_t **patched, struct error *why);

#endif
