#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/x509v3.h>

#include "certgen.h"

#define DAY 86400L

static const char *const dns[] = {"raygate-webhook.raygate-system.svc", "raygate-webhook"};
static const char *const ips[] = {"127.0.0.1", "::1"};

struct fixture {
    struct certgen_pair ca, serving;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct error err = {{0}};
    struct certgen_request req = {dns, 2, ips, 2, 30};
    if (certgen_ca_create("raygate-ca", 3650, &f->ca, &err) != 0 || certgen_serving_create(&f->ca, &req, &f->serving, &err) != 0) {
        print_error("certgen: %s\n", err.message);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    certgen_pair_finish(&f->ca);
    certgen_pair_finish(&f->serving);
    free(f);
    return 0;
}

/* Verified with OpenSSL directly, not through certgen_check. */
static void test_chain_verifies_for_tls_server(void **state)
{
    struct fixture *f = *state;
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    assert_int_equal(X509_STORE_add_cert(store, f->ca.cert), 1);
    assert_int_equal(X509_STORE_CTX_init(ctx, store, f->serving.cert, NULL), 1);
    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
    int ok = X509_verify_cert(ctx);
    if (ok != 1)
        fail_msg("verify: %s", X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);

    assert_true(X509_check_ca(f->ca.cert) >= 1);
    assert_int_equal(X509_check_ca(f->serving.cert), 0);
    assert_true(X509_get_extended_key_usage(f->serving.cert) & XKU_SSL_SERVER);
    assert_int_equal(X509_check_issued(f->ca.cert, f->serving.cert), X509_V_OK);
}

static void test_sans_present(void **state)
{
    struct fixture *f = *state;
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(X509_check_host(f->serving.cert, dns[i], 0, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, NULL), 1);
        assert_int_equal(X509_check_ip_asc(f->serving.cert, ips[i], 0), 1);
    }
    assert_int_equal(X509_check_host(f->serving.cert, "evil.example.com", 0, 0, NULL), 0);
    assert_int_equal(X509_check_ip_asc(f->serving.cert, "10.0.0.1", 0), 0);
}

static void test_keys_match(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(X509_check_private_key(f->serving.cert, f->serving.key), 1);
    assert_int_equal(X509_check_private_key(f->ca.cert, f->ca.key), 1);
    assert_int_equal(X509_check_private_key(f->serving.cert, f->ca.key), 0);
}

static void test_validity(void **state)
{
    struct fixture *f = *state;
    time_t now = time(NULL);
    time_t soon = now + 29 * DAY, late = now + 31 * DAY;
    assert_true(X509_cmp_time(X509_get0_notBefore(f->serving.cert), &now) < 0);
    assert_true(X509_cmp_time(X509_get0_notAfter(f->serving.cert), &soon) > 0);
    assert_true(X509_cmp_time(X509_get0_notAfter(f->serving.cert), &late) < 0);
    assert_true(X509_cmp_time(X509_get0_notAfter(f->ca.cert), &late) > 0);
}

static void test_check(void **state)
{
    struct fixture *f = *state;
    struct error err = {{0}};
    struct certgen_request req = {dns, 2, ips, 2, 30};
    time_t now = time(NULL);
    assert_int_equal(certgen_check(f->serving.cert, f->serving.key, f->ca.cert, &req, now, 29 * DAY, &err), 0);

    assert_int_equal(certgen_check(f->serving.cert, f->serving.key, f->ca.cert, &req, now, 31 * DAY, &err), -1);
    assert_non_null(strstr(err.message, "expires"));
    assert_int_equal(certgen_check(f->serving.cert, f->serving.key, f->ca.cert, &req, now + 40 * DAY, 0, &err), -1);
    assert_non_null(strstr(err.message, "does not verify"));
    assert_int_equal(certgen_check(f->serving.cert, f->ca.key, f->ca.cert, &req, now, 0, &err), -1);
    assert_non_null(strstr(err.message, "key"));

    const char *more[] = {"raygate-webhook.raygate-system.svc", "other.svc"};
    struct certgen_request wider = {more, 2, NULL, 0, 30};
    assert_int_equal(certgen_check(f->serving.cert, NULL, f->ca.cert, &wider, now, 0, &err), -1);
    assert_non_null(strstr(err.message, "other.svc"));

    struct certgen_pair other = {0};
    assert_int_equal(certgen_ca_create("other-ca", 10, &other, &err), 0);
    assert_int_equal(certgen_check(f->serving.cert, NULL, other.cert, NULL, now, 0, &err), -1);
    certgen_pair_finish(&other);
}

static void test_pem_round_trip(void **state)
{
    struct fixture *f = *state;
    size_t len = 0;
    char *pem = certgen_cert_pem(f->serving.cert, &len);
    assert_non_null(pem);
    assert_int_equal(strlen(pem), len);
    assert_non_null(strstr(pem, "-----BEGIN CERTIFICATE-----"));
    X509 *x = certgen_cert_from_pem(pem, len);
    assert_non_null(x);
    assert_int_equal(X509_cmp(x, f->serving.cert), 0);
    free(pem);

    pem = certgen_key_pem(f->serving.key, &len);
    assert_non_null(pem);
    assert_non_null(strstr(pem, "-----BEGIN PRIVATE KEY-----"));
    EVP_PKEY *key = certgen_key_from_pem(pem, len);
    assert_non_null(key);
    assert_int_equal(X509_check_private_key(x, key), 1);
    free(pem);
    EVP_PKEY_free(key);
    X509_free(x);

    assert_null(certgen_cert_from_pem("not a pem", 9));
    assert_null(certgen_key_from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", 58));
}

static void test_invalid_requests(void **state)
{
    struct fixture *f = *state;
    struct error err = {{0}};
    struct certgen_pair out = {0};
    const char *bad_dns[][1] = {{"bad name"}, {"a..b"}, {"-a.b"}, {"a-.b"}, {"a.b."}, {""}, {"a,DNS:evil.com"}};
    for (size_t i = 0; i < sizeof(bad_dns) / sizeof(bad_dns[0]); i++) {
        struct certgen_request req = {bad_dns[i], 1, NULL, 0, 30};
        err.message[0] = '\0';
        assert_int_equal(certgen_serving_create(&f->ca, &req, &out, &err), -1);
        assert_non_null(strstr(err.message, "invalid DNS name"));
        assert_null(out.cert);
    }
    const char *bad_ip[] = {"300.1.1.1"};
    struct certgen_request req = {NULL, 0, bad_ip, 1, 30};
    assert_int_equal(certgen_serving_create(&f->ca, &req, &out, &err), -1);
    assert_non_null(strstr(err.message, "invalid IP"));
    struct certgen_request none = {NULL, 0, NULL, 0, 30};
    assert_int_equal(certgen_serving_create(&f->ca, &none, &out, &err), -1);
    const char *wild[] = {"*.raygate-system.svc"};
    struct certgen_request wildcard = {wild, 1, NULL, 0, 30};
    assert_int_equal(certgen_serving_create(&f->ca, &wildcard, &out, &err), 0);
    assert_int_equal(X509_check_host(out.cert, "x.raygate-system.svc", 0, 0, NULL), 1);
    certgen_pair_finish(&out);
    assert_int_equal(certgen_ca_create("", 10, &out, &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_verifies_for_tls_server),
        cmocka_unit_test(test_sans_present),
        cmocka_unit_test(test_keys_match),
        cmocka_unit_test(test_validity),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_pem_round_trip),
        cmocka_unit_test(test_invalid_requests),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
