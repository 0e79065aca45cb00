/*
 * tlsreload: the webhook's server SSL_CTX, rebuilt when its PEM files change.
 *
 * A context is TLS 1.2+ with AEAD/ECDHE ciphers only, serves the whole chain
 * found in the certificate file (leaf first), and selects ALPN "h2" or
 * "http/1.1". Kubernetes Secret volumes replace files by swapping a "..data"
 * symlink, so changes are found by polling the files' contents (a SHA-256 of
 * both): robust against symlink swaps, in-place writes and same-mtime edits.
 *
 * New connections take tlsreload_current(); an SSL object holds its own
 * reference to the SSL_CTX it was made from, so replacing the context never
 * disturbs connections in flight.
 */
#ifndef RAYGATE_TLSRELOAD_H
#define RAYGATE_TLSRELOAD_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "error.h"

struct tlsreload;

/*
 * Builds a server context from PEM texts: cert_pem holds the leaf then any
 * intermediates, key_pem the leaf's unencrypted private key. Fails if the key
 * does not match or the leaf is not valid now. Returns a new SSL_CTX
 * (caller frees: SSL_CTX_free), or NULL with err.
 */
SSL_CTX *tlsreload_ctx_create(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len, struct error *err);

/*
 * Loads cert_path and key_path (copied). Returns a new reloader
 * (tlsreload_destroy), or NULL with err if the pair is unusable.
 */
struct tlsreload *tlsreload_create(const char *cert_path, const char *key_path, struct error *err);

/* Frees the reloader and drops its reference to the current context. Accepts NULL. */
void tlsreload_destroy(struct tlsreload *r);

/*
 * The current context (borrowed: valid until the next tlsreload_poll() that
 * returns 1, or tlsreload_destroy(); take SSL_CTX_up_ref to keep it longer).
 */
SSL_CTX *tlsreload_current(const struct tlsreload *r);

/*
 * Re-reads both files. Returns 1 if their contents changed and the new pair
 * is now current, 0 if nothing changed (or a change is still settling), -1 if
 * changed contents were unusable on two consecutive polls: that is logged once
 * per distinct content and the current context is kept. (Waiting for a second
 * poll hides the moment where one file is new and the other still old.)
 */
int tlsreload_poll(struct tlsreload *r);

#endif
