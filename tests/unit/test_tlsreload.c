#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "certgen.h"
#include "log.h"
#include "tlsreload.h"

struct fixture {
    struct certgen_pair ca, a, b; /* a and b: two serving pairs from the same CA */
    char *ca_pem, *a_crt, *a_key, *b_crt, *b_key;
    char dir[64], crt_path[128], key_path[128];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct error err = {{0}};
    const char *dns[] = {"localhost"};
    struct certgen_request req = {dns, 1, NULL, 0, 30};
    if (certgen_ca_create("test-ca", 30, &f->ca, &err) != 0 || certgen_serving_create(&f->ca, &req, &f->a, &err) != 0 ||
        certgen_serving_create(&f->ca, &req, &f->b, &err) != 0) {
        print_error("certgen: %s\n", err.message);
        return -1;
    }
    f->ca_pem = certgen_cert_pem(f->ca.cert, NULL);
    f->a_crt = certgen_cert_pem(f->a.cert, NULL);
    f->a_key = certgen_key_pem(f->a.key, NULL);
    f->b_crt = certgen_cert_pem(f->b.cert, NULL);
    f->b_key = certgen_key_pem(f->b.key, NULL);
    snprintf(f->dir, sizeof(f->dir), "/tmp/raygate-test-tlsreload-XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(f->crt_path, sizeof(f->crt_path), "%s/tls.crt", f->dir);
    snprintf(f->key_path, sizeof(f->key_path), "%s/tls.key", f->dir);
    log_set_level(LOG_LEVEL_ERROR);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    unlink(f->crt_path);
    unlink(f->key_path);
    rmdir(f->dir);
    free(f->ca_pem);
    free(f->a_crt);
    free(f->a_key);
    free(f->b_crt);
    free(f->b_key);
    certgen_pair_finish(&f->ca);
    certgen_pair_finish(&f->a);
    certgen_pair_finish(&f->b);
    free(f);
    return 0;
}

static void write_file(const char *path, const char *first, const char *second)
{
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *fp = fopen(tmp, "wb");
    assert_non_null(fp);
    fputs(first, fp);
    if (second != NULL)
        fputs(second, fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(rename(tmp, path), 0);
}

/* Handshakes a client (CA-verifying, hostname localhost) with server over a BIO pair. Returns 1 on success. */
static int handshake(SSL_CTX *server, X509 *ca, int client_max_version, const unsigned char *alpn, size_t alpn_len, char *selected,
                     size_t selected_size, int *chain_len)
{
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), ca);
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
    if (client_max_version != 0) {
        SSL_CTX_set_min_proto_version(cctx, 0);
        SSL_CTX_set_max_proto_version(cctx, client_max_version);
        SSL_CTX_set_security_level(cctx, 0);
    }
    if (alpn != NULL)
        SSL_CTX_set_alpn_protos(cctx, alpn, (unsigned)alpn_len);
    SSL *s = SSL_new(server), *c = SSL_new(cctx);
    BIO *sbio, *cbio;
    BIO_new_bio_pair(&sbio, 0, &cbio, 0);
    SSL_set_bio(s, sbio, sbio);
    SSL_set_bio(c, cbio, cbio);
    SSL_set_accept_state(s);
    SSL_set_connect_state(c);
    SSL_set1_host(c, "localhost");
    int sdone = 0, cdone = 0, failed = 0;
    for (int i = 0; i < 100 && !(sdone && cdone) && !failed; i++) {
        SSL *both[] = {c, s};
        int *done[] = {&cdone, &sdone};
        for (int k = 0; k < 2; k++) {
            if (*done[k])
                continue;
            int r = SSL_do_handshake(both[k]);
            int e = SSL_get_error(both[k], r);
            if (r == 1)
                *done[k] = 1;
            else if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                failed = 1;
        }
    }
    int ok = sdone && cdone && !failed && SSL_get_verify_result(c) == X509_V_OK;
    if (ok && selected != NULL) {
        const unsigned char *p = NULL;
        unsigned int n = 0;
        SSL_get0_alpn_selected(c, &p, &n);
        snprintf(selected, selected_size, "%.*s", (int)n, p != NULL ? (const char *)p : "");
    }
    if (ok && chain_len != NULL) {
        STACK_OF(X509) *chain = SSL_get_peer_cert_chain(c);
        *chain_len = chain != NULL ? sk_X509_num(chain) : 0;
    }
    SSL_free(c);
    SSL_free(s);
    SSL_CTX_free(cctx);
    ERR_clear_error();
    return ok;
}

static void test_ctx_serves_tls12_plus_with_alpn(void **state)
{
    struct fixture *f = *state;
    struct error err = {{0}};
    /* The chain: leaf then the CA, all served. */
    size_t chain_len = strlen(f->a_crt) + strlen(f->ca_pem);
    char *chain = malloc(chain_len + 1);
    snprintf(chain, chain_len + 1, "%s%s", f->a_crt, f->ca_pem);
    SSL_CTX *ctx = tlsreload_ctx_create(chain, chain_len, f->a_key, strlen(f->a_key), &err);
    free(chain);
    assert_non_null(ctx);
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_2_VERSION);

    char proto[32];
    int n = 0;
    const unsigned char both[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1', 2, 'h', '2'};
    const unsigned char h1[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    const unsigned char other[] = {3, 'f', 'o', 'o'};
    assert_true(handshake(ctx, f->ca.cert, 0, both, sizeof(both), proto, sizeof(proto), &n));
    assert_string_equal(proto, "h2"); /* the server's preference wins */
    assert_int_equal(n, 2);
    assert_true(handshake(ctx, f->ca.cert, 0, h1, sizeof(h1), proto, sizeof(proto), NULL));
    assert_string_equal(proto, "http/1.1");
    assert_true(handshake(ctx, f->ca.cert, 0, other, sizeof(other), proto, sizeof(proto), NULL));
    assert_string_equal(proto, "");
    assert_true(handshake(ctx, f->ca.cert, TLS1_2_VERSION, NULL, 0, NULL, 0, NULL));
    assert_false(handshake(ctx, f->ca.cert, TLS1_1_VERSION, NULL, 0, NULL, 0, NULL));
    SSL_CTX_free(ctx);
}

static void test_ctx_rejects_bad_pairs(void **state)
{
    struct fixture *f = *state;
    struct error err = {{0}};
    assert_null(tlsreload_ctx_create(f->a_crt, strlen(f->a_crt), f->b_key, strlen(f->b_key), &err));
    assert_non_null(strstr(err.message, "does not match"));
    assert_null(tlsreload_ctx_create("junk", 4, f->a_key, strlen(f->a_key), &err));
    assert_non_null(strstr(err.message, "no PEM certificate"));
    assert_null(tlsreload_ctx_create(f->a_crt, strlen(f->a_crt), "junk", 4, &err));
    assert_non_null(strstr(err.message, "private key"));
}

static void test_reload_on_change_keeps_old_on_bad_pair(void **state)
{
    struct fixture *f = *state;
    struct error err = {{0}};
    write_file(f->crt_path, f->a_crt, NULL);
    write_file(f->key_path, f->a_key, NULL);
    struct tlsreload *r = tlsreload_create(f->crt_path, f->key_path, &err);
    assert_non_null(r);
    assert_int_equal(X509_cmp(SSL_CTX_get0_certificate(tlsreload_current(r)), f->a.cert), 0);
    assert_int_equal(tlsreload_poll(r), 0);

    /* A live connection's SSL keeps the old context: take a reference as an SSL would. */
    SSL *live = SSL_new(tlsreload_current(r));
    write_file(f->key_path, f->b_key, NULL);
    write_file(f->crt_path, f->b_crt, NULL);
    assert_int_equal(tlsreload_poll(r), 1);
    assert_int_equal(X509_cmp(SSL_CTX_get0_certificate(tlsreload_current(r)), f->b.cert), 0);
    assert_int_equal(X509_cmp(SSL_get_certificate(live), f->a.cert), 0);
    SSL_free(live);
    assert_int_equal(tlsreload_poll(r), 0);

    /* Mismatched: not reported on first sight (it may be half-written), then once. */
    write_file(f->crt_path, f->a_crt, NULL);
    assert_int_equal(tlsreload_poll(r), 0);
    assert_int_equal(tlsreload_poll(r), -1);
    assert_int_equal(tlsreload_poll(r), 0);
    assert_int_equal(X509_cmp(SSL_CTX_get0_certificate(tlsreload_current(r)), f->b.cert), 0);

    /* Missing files keep the current context too. */
    unlink(f->crt_path);
    assert_int_equal(tlsreload_poll(r), 0);
    assert_int_equal(X509_cmp(SSL_CTX_get0_certificate(tlsreload_current(r)), f->b.cert), 0);

    /* Completing the pair is picked up. */
    write_file(f->crt_path, f->a_crt, NULL);
    write_file(f->key_path, f->a_key, NULL);
    assert_int_equal(tlsreload_poll(r), 1);
    assert_int_equal(X509_cmp(SSL_CTX_get0_certificate(tlsreload_current(r)), f->a.cert), 0);
    tlsreload_destroy(r);
    tlsreload_destroy(NULL);
}

static void test_create_fails_without_usable_files(void **state)
{
    struct fixture *f = *state;
    struct error err = {{0}};
    assert_null(tlsreload_create("/nonexistent/tls.crt", "/nonexistent/tls.key", &err));
    assert_non_null(strstr(err.message, "cannot read"));
    write_file(f->crt_path, f->a_crt, NULL);
    write_file(f->key_path, f->b_key, NULL);
    assert_null(tlsreload_create(f->crt_path, f->key_path, &err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctx_serves_tls12_plus_with_alpn),
        cmocka_unit_test(test_ctx_rejects_bad_pairs),
        cmocka_unit_test(test_reload_on_change_keeps_old_on_bad_pair),
        cmocka_unit_test(test_create_fails_without_usable_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
