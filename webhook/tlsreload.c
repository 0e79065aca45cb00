#include "tlsreload.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "error.h"
#include "log.h"
#include "util.h"

#define MAX_PEM_BYTES (1u << 20)

/* Mozilla "intermediate" TLS 1.2 suites without DHE; TLS 1.3 suites are all AEAD. */
static const char tls12_ciphers[] = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                                    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                                    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
static const char tls13_suites[] = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

/* Wire-format ALPN list, in server preference order. */
static const unsigned char alpn_protocols[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

struct tlsreload {
    char *cert_path, *key_path;
    SSL_CTX *ctx;
    unsigned char loaded[EVP_MAX_MD_SIZE];  /* hash of the current context's files */
    unsigned char pending[EVP_MAX_MD_SIZE]; /* unusable content seen once */
    unsigned char failed[EVP_MAX_MD_SIZE];  /* unusable content already reported */
    int have_pending, have_failed, read_failed;
};

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    return 0;
}

/* No overlap: no ALPN in the answer, and the connection proceeds as HTTP/1.1. */
static int on_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned int inlen,
                   void *arg)
{
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, alpn_protocols, sizeof(alpn_protocols), in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

/* Leaf then chain from one PEM text into ctx. */
static int use_chain(SSL_CTX *ctx, const char *pem, size_t len, struct error *err)
{
    int rc = -1;
    X509 *leaf = NULL, *x = NULL;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (bio == NULL || (leaf = PEM_read_bio_X509_AUX(bio, NULL, no_passphrase, NULL)) == NULL) {
        error_set_openssl(err, "certificate file holds no PEM certificate");
        goto out;
    }
    if (X509_cmp_current_time(X509_get0_notBefore(leaf)) >= 0 || X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0) {
        error_set_openssl(err, "certificate is not valid now (notBefore/notAfter)");
        goto out;
    }
    if (SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_clear_chain_certs(ctx) != 1) {
        error_set_openssl(err, "cannot use the certificate");
        goto out;
    }
    while ((x = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(ctx, x) != 1) {
            X509_free(x);
            error_set_openssl(err, "cannot add a chain certificate");
            goto out;
        }
    }
    /* The loop ends on "no start line" at the end of the text; anything else is a broken PEM block. */
    unsigned long e = ERR_peek_last_error();
    if (e != 0 && !(ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
        error_set_openssl(err, "certificate file has a broken PEM block after the first");
        goto out;
    }
    ERR_clear_error();
    rc = 0;
out:
    X509_free(leaf);
    BIO_free(bio);
    return rc;
}

static int use_key(SSL_CTX *ctx, const char *pem, size_t len, struct error *err)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    EVP_PKEY *key = bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    int rc = -1;
    if (key == NULL)
        error_set_openssl(err, "key file holds no unencrypted PEM private key");
    else if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1)
        error_set_openssl(err, "private key does not match the certificate");
    else
        rc = 0;
    EVP_PKEY_free(key);
    BIO_free(bio);
    return rc;
}

SSL_CTX *tlsreload_ctx_create(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len, struct error *err)
{
    if (cert_pem == NULL || key_pem == NULL || cert_len > INT_MAX || key_len > INT_MAX) {
        error_set_openssl(err, "no certificate or key");
        return NULL;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        error_set_openssl(err, "SSL_CTX_new failed");
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 || SSL_CTX_set_cipher_list(ctx, tls12_ciphers) != 1 ||
        SSL_CTX_set_ciphersuites(ctx, tls13_suites) != 1) {
        error_set_openssl(err, "cannot restrict protocol versions or ciphers");
        goto fail;
    }
    SSL_CTX_set_alpn_select_cb(ctx, on_alpn, NULL);
    if (use_chain(ctx, cert_pem, cert_len, err) != 0 || use_key(ctx, key_pem, key_len, err) != 0)
        goto fail;
    return ctx;

fail:
    SSL_CTX_free(ctx);
    return NULL;
}

/* Both files and a hash of both (length-prefixed so that moving bytes between them changes it). */
static int read_pair(const struct tlsreload *r, char **cert, size_t *cert_len, char **key, size_t *key_len, unsigned char *hash)
{
    *cert = util_read_file(r->cert_path, MAX_PEM_BYTES, cert_len);
    *key = util_read_file(r->key_path, MAX_PEM_BYTES, key_len);
    if (*cert == NULL || *key == NULL)
        goto fail;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned long long n = *cert_len;
    int ok = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 && EVP_DigestUpdate(md, &n, sizeof(n)) == 1 &&
             EVP_DigestUpdate(md, *cert, *cert_len) == 1 && EVP_DigestUpdate(md, *key, *key_len) == 1 &&
             EVP_DigestFinal_ex(md, hash, NULL) == 1;
    EVP_MD_CTX_free(md);
    if (!ok)
        goto fail;
    return 0;
fail:
    free(*cert);
    if (*key != NULL)
        memset(*key, 0, *key_len);
    free(*key);
    *cert = *key = NULL;
    return -1;
}

static void free_pair(char *cert, char *key, size_t key_len)
{
    free(cert);
    if (key != NULL)
        memset(key, 0, key_len);
    free(key);
}

struct tlsreload *tlsreload_create(const char *cert_path, const char *key_path, struct error *err)
{
    struct tlsreload *r = util_calloc(1, sizeof(*r));
    char *cert = NULL, *key = NULL;
    size_t cert_len = 0, key_len = 0;
    r->cert_path = util_strdup(cert_path);
    r->key_path = util_strdup(key_path);
    if (read_pair(r, &cert, &cert_len, &key, &key_len, r->loaded) != 0) {
        error_set_openssl(err, "cannot read %.100s or %.100s", cert_path, key_path);
        goto fail;
    }
    if ((r->ctx = tlsreload_ctx_create(cert, cert_len, key, key_len, err)) == NULL)
        goto fail;
    free_pair(cert, key, key_len);
    return r;

fail:
    free_pair(cert, key, key_len);
    tlsreload_destroy(r);
    return NULL;
}

void tlsreload_destroy(struct tlsreload *r)
{
    if (r == NULL)
        return;
    SSL_CTX_free(r->ctx);
    free(r->cert_path);
    free(r->key_path);
    free(r);
}

SSL_CTX *tlsreload_current(const struct tlsreload *r)
{
    return r->ctx;
}

int tlsreload_poll(struct tlsreload *r)
{
    unsigned char hash[EVP_MAX_MD_SIZE] = {0};
    char *cert = NULL, *key = NULL;
    size_t cert_len = 0, key_len = 0;
    int rc = 0;

    if (read_pair(r, &cert, &cert_len, &key, &key_len, hash) != 0) {
        /* Mid-swap or deleted: keep serving; say so once. */
        if (!r->read_failed)
            log_warnf("cannot read %s or %s; keeping the current certificate", r->cert_path, r->key_path);
        r->read_failed = 1;
        return 0;
    }
    r->read_failed = 0;
    if (memcmp(hash, r->loaded, sizeof(hash)) == 0 || (r->have_failed && memcmp(hash, r->failed, sizeof(hash)) == 0))
        goto out;

    struct error err = {{0}};
    SSL_CTX *ctx = tlsreload_ctx_create(cert, cert_len, key, key_len, &err);
    if (ctx != NULL) {
        SSL_CTX_free(r->ctx);
        r->ctx = ctx;
        memcpy(r->loaded, hash, sizeof(hash));
        r->have_pending = r->have_failed = 0;
        log_infof("loaded new certificate from %s", r->cert_path);
        rc = 1;
    } else if (r->have_pending && memcmp(hash, r->pending, sizeof(hash)) == 0) {
        memcpy(r->failed, hash, sizeof(hash));
        r->have_failed = 1;
        r->have_pending = 0;
        log_errorf("new certificate/key in %s, %s unusable, keeping the current one: %s", r->cert_path, r->key_path, err.message);
        rc = -1;
    } else {
        memcpy(r->pending, hash, sizeof(hash));
        r->have_pending = 1;
        log_debugf("new certificate/key not usable yet (%s); checking again", err.message);
    }
out:
    free_pair(cert, key, key_len);
    return rc;
}
