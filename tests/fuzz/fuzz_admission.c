/*
 * libFuzzer harness: the webhook's whole policy, AdmissionReview body in,
 * AdmissionReview out (lib/gang/admission), both kinds (RayCluster and Pod). Every
 * answer must satisfy tests/support/reviewcheck.h: an HTTP 400 with a one-line
 * message, or a well-formed review whose patch applies to request.object and
 * yields an object that is admitted again without a further patch; each input
 * with the webhook's native gang step off and on (mutate.h).
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
    /* The webhook's --native-gang off and on: the contract holds either way, on both paths. */
    static const struct mutate_options native_on = {.native_gang = 1};
    const struct mutate_options *const opts[] = {NULL, &native_on};
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        json_t *response = NULL, *patched = NULL;
        struct admission_info info;
        struct error err;
        struct error why;
        int rc;
        if (reviewcheck_run((const char *)data, size, opts[i], &rc, &response, &info, &err, &patched, &why) != 0) {
            fprintf(stderr, "admission contract broken (native gang %s): %s\n", opts[i] != NULL ? "on" : "off", why.message);
            abort();
        }
        json_decref(patched);
        json_decref(response);
    }
    return 0;
}
