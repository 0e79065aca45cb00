/*
 * certgen: the webhook's certificates, built in memory with OpenSSL.
 *
 * Pure (no file or network I/O): a self-signed CA, a serving certificate for
 * DNS names and IP addresses signed by it, PEM encoding, base64, and the check
 * that decides whether an existing pair can still be used. Keys are EC P-256.
 */
#ifndef RAYGATE_CERTGEN_H
#define RAYGATE_CERTGEN_H

#include <stddef.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "error.h"

/* A certificate and its private key; both owned by the struct (certgen_pair_finish). */
struct certgen_pair {
    X509 *cert;
    EVP_PKEY *key;
};

/* What the serving certificate is for. Strings are borrowed. */
struct certgen_request {
    const char *const *dns; /* DNS names, e.g. "raygate-webhook.raygate-system.svc"; "*." wildcards allowed */
    size_t ndns;
    const char *const *ips; /* IPv4 or IPv6 literals */
    size_t nips;
    int days; /* validity of the serving certificate, > 0 */
};

/* Frees what pair holds and zeroes it. Accepts an empty pair. */
void certgen_pair_finish(struct certgen_pair *pair);

/*
 * Creates a self-signed CA (basicConstraints CA:TRUE, keyCertSign) named cn,
 * valid from now - 1 hour for days days. Returns 0 and fills *ca, or -1 with err.
 */
int certgen_ca_create(const char *cn, int days, struct certgen_pair *ca, struct error *err);

/*
 * Creates a serving certificate (CA:FALSE, digitalSignature, serverAuth EKU,
 * subjectAltName from req, CN = the first name) signed by ca and valid from
 * now - 1 hour for req->days days (cut to the CA's notAfter).
 * At least one name is required; DNS names must be plain hostnames (letters,
 * digits, '-', '.', optional leading "*."). Returns 0 and fills *out, or -1 with err.
 */
int certgen_serving_create(const struct certgen_pair *ca, const struct certgen_request *req, struct certgen_pair *out,
                           struct error *err);

/*
 * Checks that cert verifies against ca_cert for TLS server use at time now,
 * stays valid for at least min_remaining seconds after now, matches key (if
 * not NULL), and covers every name of req (req may be NULL).
 * Returns 0 if usable, -1 with err saying why not.
 */
int certgen_check(X509 *cert, EVP_PKEY *key, X509 *ca_cert, const struct certgen_request *req, time_t now, long min_remaining,
                  struct error *err);

/*
 * PEM encodings. Return a new NUL-terminated string (caller frees) and set
 * *len if len is not NULL, or NULL on failure. Keys are PKCS#8, unencrypted.
 */
char *certgen_cert_pem(X509 *cert, size_t *len);
char *certgen_key_pem(EVP_PKEY *key, size_t *len);

/*
 * Parses the first certificate or private key of a PEM text of len bytes.
 * Returns a new object (caller frees: X509_free / EVP_PKEY_free), or NULL.
 */
X509 *certgen_cert_from_pem(const char *pem, size_t len);
EVP_PKEY *certgen_key_from_pem(const char *pem, size_t len);

#endif
