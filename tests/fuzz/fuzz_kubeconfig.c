/*
 * libFuzzer harness: lib/io/kubeconfig's parser on a YAML document. A parsed
 * configuration names a context and a cluster and an http(s) server without a
 * trailing '/'; its -data lengths match; a copy equals it; an error is one
 * line and leaves the output empty.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                                                \
    do {                                                                                                                           \
        if (!(cond)) {                                                                                                             \
            fprintf(stderr, "%s:%d: %s fails\n", __FILE__, __LINE__, #cond);                                                       \
            abort();                                                                                                               \
        }                                                                                                                          \
    } while (0)

static int same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void check_parsed(const struct kubeconfig *c)
{
    CHECK(c->server != NULL);
    CHECK(strncmp(c->server, "https://", 8) == 0 || strncmp(c->server, "http://", 7) == 0);
    CHECK(c->server[strlen(c->server) - 1] != '/');
    CHECK(c->context != NULL && c->cluster != NULL); /* user may be absent: anonymous */
    CHECK(c->ca_data == NULL || c->ca_data[c->ca_data_len] == '\0');
    CHECK(c->client_cert_data == NULL || c->client_cert_data[c->client_cert_data_len] == '\0');
    CHECK(c->client_key_data == NULL || c->client_key_data[c->client_key_data_len] == '\0');
    CHECK(c->ca_file == NULL || strncmp(c->ca_file, "/base/", 6) == 0 || c->ca_file[0] == '/');

    struct kubeconfig copy;
    kubeconfig_init(&copy);
    kubeconfig_copy(&copy, c);
    CHECK(same(copy.server, c->server) && same(copy.token, c->token) && same(copy.namespace, c->namespace));
    CHECK(copy.client_key_data_len == c->client_key_data_len &&
          (c->client_key_data == NULL || memcmp(copy.client_key_data, c->client_key_data, c->client_key_data_len) == 0));
    kubeconfig_finish(&copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kubeconfig cfg;
    struct error err;
    static const char *const contexts[] = {NULL, "admin@local"};
    for (size_t i = 0; i < 2; i++) {
        kubeconfig_init(&cfg);
        memset(&err, 0, sizeof(err));
        if (kubeconfig_parse((const char *)data, size, "/base", contexts[i], &cfg, &err) == 0) {
            check_parsed(&cfg);
            CHECK(contexts[i] == NULL || strcmp(cfg.context, contexts[i]) == 0);
        } else {
            CHECK(err.message[0] != '\0' && strchr(err.message, '\n') == NULL);
            CHECK(cfg.server == NULL && cfg.token == NULL && cfg.client_key_data == NULL);
        }
        kubeconfig_finish(&cfg);
    }
    return 0;
}
