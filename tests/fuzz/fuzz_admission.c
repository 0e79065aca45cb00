/*
 * libFuzzer harness: the webhook's whole policy, AdmissionReview body in,
 * AdmissionReview out (lib/gang/admission), both kinds (RayCluster and Pod). Every
 * answer must satisfy tests/support/reviewcheck.h: an HTTP 400 with a one-line
 * message, or a well-formed review whose patch applies to request.object and
 * yields an object that is admitted again without a further patch.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "reviewcheck.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    log_set_level(LOG_LEVEL_ERROR); /* the denials' debug lines would drown the fuzzer's output */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *response = NULL, *patched = NULL;
    struct admission_info info;
    struct error err;
    struct error why;
    int rc;
    if (reviewcheck_run((const char *)data, size, &rc, &response, &info, &err, &patched, &why) != 0) {
        fprintf(stderr, "admission contract broken: %s\n", why.message);
        abort();
    }
    json_decref(patched);
    json_decref(response);
    return 0;
}
