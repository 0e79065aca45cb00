#include "certgen.h"
#include "error.h"
#include "util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

/* Backdating absorbs clock skew between the generating host and the apiserver. */
#define BACKDATE_SECONDS 3600L
/* X.520 ub-common-name. */
#define CN_MAX 64

void certgen_pair_finish(struct certgen_pair *pair)
{
    X509_free(pair->cert);
    EVP_PKEY_free(pair->key);
    pair->cert = NULL;
    pair->key = NULL;
}

static EVP_PKEY *generate_key(void)
{
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    if (pctx == NULL)
        return NULL;
    if (EVP_PKEY_keygen_init(pctx) <= 0 || EVP_PKEY_CTX_set_ec_paramgen_curve_nid(pctx, NID_X9_62_prime256v1) <= 0 ||
        EVP_PKEY_keygen(pctx, &key) <= 0) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    EVP_PKEY_CTX_free(pctx);
    return key;
}

/* 127 random bits: positive, unique enough that a re-generated cert never collides. */
static int set_random_serial(X509 *x)
{
    unsigned char buf[16];
    if (RAND_bytes(buf, sizeof(buf)) != 1)
        return -1;
    buf[0] &= 0x7f;
    buf[0] |= 0x01;
    BIGNUM *bn = BN_bin2bn(buf, sizeof(buf), NULL);
    if (bn == NULL)
        return -1;
    int ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
    BN_free(bn);
    return ok ? 0 : -1;
}

static int set_cn(X509 *x, const char *cn)
{
    X509_NAME *name = X509_get_subject_name(x);
    return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0) == 1 ? 0 : -1;
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (ext == NULL)
        return -1;
    int ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok == 1 ? 0 : -1;
}

/* A fresh v3 certificate with serial, validity and public key set. */
static X509 *new_cert(EVP_PKEY *key, int days)
{
    X509 *x = X509_new();
    if (x == NULL)
        return NULL;
    if (X509_set_version(x, 2) != 1 || set_random_serial(x) != 0 ||
        X509_gmtime_adj(X509_getm_notBefore(x), -BACKDATE_SECONDS) == NULL ||
        X509_time_adj_ex(X509_getm_notAfter(x), days, 0, NULL) == NULL || X509_set_pubkey(x, key) != 1) {
        X509_free(x);
        return NULL;
    }
    return x;
}

int certgen_ca_create(const char *cn, int days, struct certgen_pair *ca, struct error *err)
{
    EVP_PKEY *key = NULL;
    X509 *x = NULL;

    if (cn == NULL || cn[0] == '\0' || strlen(cn) > CN_MAX || days <= 0) {
        error_set_openssl(err, "CA: need a common name of 1-%d characters and days > 0", CN_MAX);
        return -1;
    }
    if ((key = generate_key()) == NULL) {
        error_set_openssl(err, "CA: key generation failed");
        goto fail;
    }
    if ((x = new_cert(key, days)) == NULL || set_cn(x, cn) != 0 || X509_set_issuer_name(x, X509_get_subject_name(x)) != 1) {
        error_set_openssl(err, "CA: building the certificate failed");
        goto fail;
    }
    if (add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") != 0 ||
        add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") != 0 ||
        add_ext(x, x, NID_subject_key_identifier, "hash") != 0 ||
        add_ext(x, x, NID_authority_key_identifier, "keyid:always") != 0) {
        error_set_openssl(err, "CA: adding extensions failed");
        goto fail;
    }
    if (X509_sign(x, key, EVP_sha256()) <= 0) {
        error_set_openssl(err, "CA: signing failed");
        goto fail;
    }
    ca->cert = x;
    ca->key = key;
    return 0;

fail:
    X509_free(x);
    EVP_PKEY_free(key);
    return -1;
}

/* Hostname syntax (RFC 1123 labels), with an optional leading "*." wildcard label. */
static int valid_dns_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return 0;
    if (strncmp(s, "*.", 2) == 0)
        s += 2;
    size_t label = 0;
    for (const char *p = s;; p++) {
        if (*p == '.' || *p == '\0') {
            if (label == 0 || label > 63 || p[-1] == '-')
                return 0;
            if (*p == '\0')
                return 1;
            label = 0;
            continue;
        }
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || (*p == '-' && label > 0);
        if (!ok)
            return 0;
        label++;
    }
}

static int push_name(GENERAL_NAMES *names, int type, ASN1_STRING *value)
{
    GENERAL_NAME *gn = GENERAL_NAME_new();
    if (gn == NULL) {
        ASN1_STRING_free(value);
        return -1;
    }
    GENERAL_NAME_set0_value(gn, type, value);
    if (sk_GENERAL_NAME_push(names, gn) <= 0) {
        GENERAL_NAME_free(gn);
        return -1;
    }
    return 0;
}

/* Builds the subjectAltName list; err names the offending entry. */
static GENERAL_NAMES *build_sans(const struct certgen_request *req, struct error *err)
{
    GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
    if (names == NULL)
        goto oom;
    for (size_t i = 0; i < req->ndns; i++) {
        if (req->dns[i] == NULL || !valid_dns_name(req->dns[i])) {
            error_set_openssl(err, "invalid DNS name \"%.100s\"", req->dns[i] != NULL ? req->dns[i] : "(null)");
            goto fail;
        }
        ASN1_IA5STRING *s = ASN1_IA5STRING_new();
        if (s == NULL || ASN1_STRING_set(s, req->dns[i], -1) != 1) {
            ASN1_IA5STRING_free(s);
            goto oom;
        }
        if (push_name(names, GEN_DNS, s) != 0)
            goto oom;
    }
    for (size_t i = 0; i < req->nips; i++) {
        ASN1_OCTET_STRING *ip = req->ips[i] != NULL ? a2i_IPADDRESS(req->ips[i]) : NULL;
        if (ip == NULL) {
            error_set_openssl(err, "invalid IP address \"%.100s\"", req->ips[i] != NULL ? req->ips[i] : "(null)");
            goto fail;
        }
        if (push_name(names, GEN_IPADD, ip) != 0)
            goto oom;
    }
    return names;

oom:
    error_set_openssl(err, "out of memory building subjectAltName");
fail:
    GENERAL_NAMES_free(names);
    return NULL;
}

int certgen_serving_create(const struct certgen_pair *ca, const struct certgen_request *req, struct certgen_pair *out,
                           struct error *err)
{
    EVP_PKEY *key = NULL;
    X509 *x = NULL;
    GENERAL_NAMES *sans = NULL;

    if (ca == NULL || ca->cert == NULL || ca->key == NULL || req == NULL || req->days <= 0 || req->ndns + req->nips == 0) {
        error_set_openssl(err, "serving certificate: need a CA, at least one DNS name or IP, and days > 0");
        return -1;
    }
    if ((sans = build_sans(req, err)) == NULL)
        return -1;
    if ((key = generate_key()) == NULL) {
        error_set_openssl(err, "serving certificate: key generation failed");
        goto fail;
    }
    const char *first = req->ndns > 0 ? req->dns[0] : req->ips[0];
    if ((x = new_cert(key, req->days)) == NULL || set_cn(x, strlen(first) <= CN_MAX ? first : "raygate-webhook") != 0 ||
        X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1) {
        error_set_openssl(err, "serving certificate: building the certificate failed");
        goto fail;
    }
    /* A serving certificate that outlives its CA would fail verification early anyway. */
    if (ASN1_TIME_compare(X509_get0_notAfter(x), X509_get0_notAfter(ca->cert)) > 0 &&
        X509_set1_notAfter(x, X509_get0_notAfter(ca->cert)) != 1) {
        error_set_openssl(err, "serving certificate: setting notAfter failed");
        goto fail;
    }
    if (add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") != 0 ||
        add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") != 0 ||
        add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") != 0 ||
        add_ext(x, ca->cert, NID_subject_key_identifier, "hash") != 0 ||
        add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") != 0 ||
        X509_add1_ext_i2d(x, NID_subject_alt_name, sans, 0, X509V3_ADD_DEFAULT) != 1) {
        error_set_openssl(err, "serving certificate: adding extensions failed");
        goto fail;
    }
    if (X509_sign(x, ca->key, EVP_sha256()) <= 0) {
        error_set_openssl(err, "serving certificate: signing failed");
        goto fail;
    }
    GENERAL_NAMES_free(sans);
    out->cert = x;
    out->key = key;
    return 0;

fail:
    X509_free(x);
    EVP_PKEY_free(key);
    GENERAL_NAMES_free(sans);
    return -1;
}

int certgen_check(X509 *cert, EVP_PKEY *key, X509 *ca_cert, const struct certgen_request *req, time_t now, long min_remaining,
                  struct error *err)
{
    int rc = -1;
    X509_STORE *store = NULL;
    X509_STORE_CTX *sctx = NULL;

    if (cert == NULL || ca_cert == NULL) {
        error_set_openssl(err, "no certificate or no CA");
        return -1;
    }
    if ((store = X509_STORE_new()) == NULL || X509_STORE_add_cert(store, ca_cert) != 1 || (sctx = X509_STORE_CTX_new()) == NULL ||
        X509_STORE_CTX_init(sctx, store, cert, NULL) != 1) {
        error_set_openssl(err, "setting up verification failed");
        goto out;
    }
    X509_STORE_CTX_set_purpose(sctx, X509_PURPOSE_SSL_SERVER);
    X509_STORE_CTX_set_time(sctx, 0, now);
    if (X509_verify_cert(sctx) != 1) {
        error_set_openssl(err, "certificate does not verify against the CA: %s",
                          X509_verify_cert_error_string(X509_STORE_CTX_get_error(sctx)));
        goto out;
    }
    time_t until = now + min_remaining;
    if (X509_cmp_time(X509_get0_notAfter(cert), &until) <= 0) {
        error_set_openssl(err, "certificate expires within %ld seconds", min_remaining);
        goto out;
    }
    if (X509_cmp_time(X509_get0_notAfter(ca_cert), &until) <= 0) {
        error_set_openssl(err, "CA expires within %ld seconds", min_remaining);
        goto out;
    }
    if (key != NULL && X509_check_private_key(cert, key) != 1) {
        error_set_openssl(err, "private key does not match the certificate");
        goto out;
    }
    for (size_t i = 0; req != NULL && i < req->ndns; i++) {
        if (X509_check_host(cert, req->dns[i], 0, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, NULL) != 1) {
            error_set_openssl(err, "certificate does not cover DNS name %.100s", req->dns[i]);
            goto out;
        }
    }
    for (size_t i = 0; req != NULL && i < req->nips; i++) {
        if (X509_check_ip_asc(cert, req->ips[i], 0) != 1) {
            error_set_openssl(err, "certificate does not cover IP %.100s", req->ips[i]);
            goto out;
        }
    }
    rc = 0;
out:
    X509_STORE_CTX_free(sctx);
    X509_STORE_free(store);
    return rc;
}

static char *bio_to_string(BIO *bio, size_t *len)
{
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    if (n < 0)
        return NULL;
    char *s = util_memdup(data, (size_t)n);
    if (len != NULL)
        *len = (size_t)n;
    return s;
}

char *certgen_cert_pem(X509 *cert, size_t *len)
{
    char *s = NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio != NULL && PEM_write_bio_X509(bio, cert) == 1)
        s = bio_to_string(bio, len);
    BIO_free(bio);
    return s;
}

char *certgen_key_pem(EVP_PKEY *key, size_t *len)
{
    char *s = NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio != NULL && PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) == 1)
        s = bio_to_string(bio, len);
    BIO_free(bio);
    return s;
}

/* Never prompt on a terminal for a passphrase: encrypted keys are refused. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    return 0;
}

X509 *certgen_cert_from_pem(const char *pem, size_t len)
{
    if (pem == NULL || len > INT_MAX)
        return NULL;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509 *x = bio != NULL ? PEM_read_bio_X509(bio, NULL, no_passphrase, NULL) : NULL;
    BIO_free(bio);
    ERR_clear_error();
    return x;
}

EVP_PKEY *certgen_key_from_pem(const char *pem, size_t len)
{
    if (pem == NULL || len > INT_MAX)
        return NULL;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    EVP_PKEY *key = bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    BIO_free(bio);
    ERR_clear_error();
    return key;
}
