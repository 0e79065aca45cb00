/*
 * certfiles: the PEM files of a certificate directory, as the webhook and
 * Kubernetes TLS Secrets name them: ca.crt, ca.key, tls.crt, tls.key.
 */
#ifndef RAYGATE_CERTFILES_H
#define RAYGATE_CERTFILES_H

#include <stddef.h>

#include "certgen.h"

/* The four files' PEM texts. Each string is owned (certfiles_set_finish). */
struct certfiles_set {
    char *ca_crt, *ca_key, *tls_crt, *tls_key;
};

/* Frees the texts and zeroes set. */
void certfiles_set_finish(struct certfiles_set *set);

/* PEM-encodes ca and serving into *set. Returns 0, or -1 with err. */
int certfiles_set_from_pairs(const struct certgen_pair *ca, const struct certgen_pair *serving, struct certfiles_set *set,
                             struct error *err);

/*
 * Writes the set into dir (created 0755 if missing). Each file is written to a
 * temporary name and renamed, keys with mode 0600, certificates 0644, the
 * serving key before its certificate. A NULL member is not written.
 * Returns 0, or -1 with err.
 */
int certfiles_write(const char *dir, const struct certfiles_set *set, struct error *err);

/*
 * Reads dir/name into a new NUL-terminated string (caller frees), at most
 * 1 MiB. Returns NULL if it does not exist or cannot be read; *len if not NULL.
 */
char *certfiles_read(const char *dir, const char *name, size_t *len);

/*
 * Loads the CA pair from dir/ca.crt and dir/ca.key. Returns 0 and fills *ca
 * (certgen_pair_finish), or -1 with err if missing, unreadable or mismatched.
 */
int certfiles_load_ca(const char *dir, struct certgen_pair *ca, struct error *err);

#endif
