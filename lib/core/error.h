/*
 * error: raygate's one error type, as jansson has json_error_t.
 *
 * A function that can fail takes a `struct error *err` last, returns 0 / -1
 * (or a pointer / NULL), and on failure fills err->message with one readable
 * line: what finally reaches a user in an AdmissionReview's status.message, an
 * Event or a log line. Callers own the storage: `struct error err = {{0}};`.
 */
#ifndef RAYGATE_ERROR_H
#define RAYGATE_ERROR_H

#include <stdarg.h>

struct error {
    char message[320]; /* one line, names what is wrong ("spec.x: must not be negative") */
};

/* Sets err->message like printf (cut at a character boundary if long); err may be NULL. */
void error_setf(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* error_setf with a va_list (for a module's own printf-like wrapper that adds a prefix). */
void error_vsetf(struct error *err, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/*
 * error_setf, then " (<OpenSSL's error>)" when OpenSSL's thread error queue
 * holds one: the earliest, which names the cause. Clears that queue.
 */
void error_set_openssl(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
