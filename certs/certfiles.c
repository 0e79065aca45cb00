#include "certfiles.h"
#include "error.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#define MAX_FILE_BYTES (1u << 20)

void certfiles_set_finish(struct certfiles_set *set)
{
    /* The keys are secret: wipe before freeing. */
    if (set->ca_key != NULL)
        memset(set->ca_key, 0, strlen(set->ca_key));
    if (set->tls_key != NULL)
        memset(set->tls_key, 0, strlen(set->tls_key));
    free(set->ca_crt);
    free(set->ca_key);
    free(set->tls_crt);
    free(set->tls_key);
    memset(set, 0, sizeof(*set));
}

int certfiles_set_from_pairs(const struct certgen_pair *ca, const struct certgen_pair *serving, struct certfiles_set *set,
                             struct error *err)
{
    memset(set, 0, sizeof(*set));
    set->ca_crt = certgen_cert_pem(ca->cert, NULL);
    set->ca_key = certgen_key_pem(ca->key, NULL);
    set->tls_crt = certgen_cert_pem(serving->cert, NULL);
    set->tls_key = certgen_key_pem(serving->key, NULL);
    if (set->ca_crt == NULL || set->ca_key == NULL || set->tls_crt == NULL || set->tls_key == NULL) {
        error_set_openssl(err, "PEM encoding failed");
        certfiles_set_finish(set);
        return -1;
    }
    return 0;
}

static int write_one(const char *dir, const char *name, const char *text, mode_t mode, struct error *err)
{
    char path[4096], tmp[4096];
    int fd = -1;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
    unlink(tmp);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)) < 0)
        goto fail;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto fail;
        off += (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0)
        goto fail;
    return 0;

fail:
    error_setf(err, "writing %.180s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}

int certfiles_write(const char *dir, const struct certfiles_set *set, struct error *err)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        error_setf(err, "creating %.180s: %s", dir, strerror(errno));
        return -1;
    }
    /* Keys first: a watcher that sees a new certificate can then find its key. */
    const struct {
        const char *name, *text;
        mode_t mode;
    } files[] = {
        {"ca.key", set->ca_key, 0600},
        {"ca.crt", set->ca_crt, 0644},
        {"tls.key", set->tls_key, 0600},
        {"tls.crt", set->tls_crt, 0644},
    };
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        if (files[i].text != NULL && write_one(dir, files[i].name, files[i].text, files[i].mode, err) != 0)
            return -1;
    }
    return 0;
}

char *certfiles_read(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    size_t n;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    char *buf = util_read_file(path, MAX_FILE_BYTES, &n);
    if (buf != NULL && len != NULL)
        *len = n;
    return buf;
}

int certfiles_load_ca(const char *dir, struct certgen_pair *ca, struct error *err)
{
    size_t crt_len = 0, key_len = 0;
    char *crt = certfiles_read(dir, "ca.crt", &crt_len);
    char *key = certfiles_read(dir, "ca.key", &key_len);
    int rc = -1;

    ca->cert = NULL;
    ca->key = NULL;
    if (crt == NULL || key == NULL) {
        error_setf(err, "%.180s/ca.crt or ca.key missing", dir);
        goto out;
    }
    ca->cert = certgen_cert_from_pem(crt, crt_len);
    ca->key = certgen_key_from_pem(key, key_len);
    if (ca->cert == NULL || ca->key == NULL || X509_check_private_key(ca->cert, ca->key) != 1 || X509_check_ca(ca->cert) < 1) {
        error_setf(err, "%.150s/ca.crt and ca.key are not a CA certificate and its key", dir);
        certgen_pair_finish(ca);
        ERR_clear_error();
        goto out;
    }
    rc = 0;
out:
    if (key != NULL)
        memset(key, 0, key_len);
    free(key);
    free(crt);
    return rc;
}
