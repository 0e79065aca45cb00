/*
 * util: the small helpers every raygate module uses, written once.
 *
 * Memory: out of memory aborts (docs/style.md), so the allocators never return
 * NULL. Strings: a growable buffer. Files: bounded whole-file reads. Base64:
 * OpenSSL's codec, with the leniency Kubernetes data needs.
 */
#ifndef RAYGATE_UTIL_H
#define RAYGATE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* malloc/calloc/realloc that abort on failure; a size of 0 is fine. */
void *util_malloc(size_t n);
void *util_calloc(size_t n, size_t size);
/* One object of size bytes, zeroed, starting on a 64-byte boundary (a cache line); aborts when out of memory. free() frees it. */
void *util_calloc_lines(size_t size);
void *util_realloc(void *p, size_t n);

/* A new copy of s (caller frees), or NULL if s is NULL. */
char *util_strdup(const char *s);

/* Whether a and b are equal strings; NULL equals only NULL. */
int util_streq(const char *a, const char *b);

/*
 * snprintf into a fixed buffer where cutting is intended (error messages,
 * field paths): the text is truncated, never overflowed, always terminated,
 * and a multi-byte UTF-8 character split by the cut is dropped whole.
 */
void util_format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Makes the NUL-terminated s one printable line of valid UTF-8, in place and
 * keeping its length: control characters become ' ', bytes that are not part
 * of a valid UTF-8 sequence become '?'. For messages built from user input
 * (AdmissionReview status messages, kubeconfig errors).
 */
void util_one_line(char *s);

/* A new string formatted like printf (caller frees). */
/* a + b, saturated at INT64_MAX and INT64_MIN (resource sums that must never wrap). */
static inline int64_t util_sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* one when n is 1, else many (borrowed: one of the two): "1 pod", "3 pods". */
const char *util_plural(int64_t n, const char *one, const char *many);

char *util_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A new NUL-terminated copy of s[0..n) (caller frees). */
char *util_memdup(const char *s, size_t n);

/* Overwrites the first n bytes of p (or up to its NUL if n is (size_t)-1), then frees it. Accepts NULL. For secrets. */
void util_wipe_free(char *p, size_t n);

/*
 * A growable string. Zero-initialise it ({0}); data is NUL-terminated once
 * anything was appended. util_buf_take() hands the string to the caller,
 * util_buf_finish() drops it.
 */
struct util_buf {
    char *data;
    size_t len, cap;
};

void util_buf_append(struct util_buf *b, const void *s, size_t n);
void util_buf_puts(struct util_buf *b, const char *s);
/* v in decimal: util_buf_printf(b, "%" PRIu64, v) without the format's cost (a pass writes one per gang admitted). */
void util_buf_put_uint(struct util_buf *b, uint64_t v);
void util_buf_printf(struct util_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void util_buf_vprintf(struct util_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Returns the string (never NULL: "" when empty; caller frees) and resets b. */
char *util_buf_take(struct util_buf *b);
void util_buf_finish(struct util_buf *b);

/*
 * Reads the whole file at path into a new NUL-terminated buffer (caller
 * frees) and sets *len. Returns NULL with errno set when it cannot be read,
 * or with errno EFBIG when it holds more than max bytes.
 */
char *util_read_file(const char *path, size_t max, size_t *len);

/*
 * Appends " (<OpenSSL's reason>)" for the earliest error queued on this
 * thread, if any, to the NUL-terminated msg of size bytes, and clears the
 * queue. For error messages after a failed OpenSSL call.
 */
void util_append_openssl_error(char *msg, size_t size);

/* Standard base64 of data[0..len), one line, padded (caller frees). */
/*
 * A reusable buffer: makes *buf (capacity *cap bytes, owned by the caller, freed
 * with free()) hold at least n * size bytes, growing by doubling; zeroes those
 * bytes when zero is set. Returns *buf. Overflow of n * size aborts.
 */
void *util_scratch(void **buf, size_t *cap, size_t n, size_t size, int zero);

/*
 * Parses an RFC 3339 UTC time as the apiserver writes it ("2024-05-01T10:00:00Z", optionally with a
 * fraction of a second, which is dropped) into seconds since the epoch. Returns 0, or -1 when s is
 * NULL, malformed, not UTC or before 1970. The one time parser of raygate's programs.
 */
int util_parse_time(const char *s, int64_t *unix_seconds);

/*
 * Parses a decimal integer with an optional sign and nothing around it (no space, no suffix), as
 * Kubernetes' strconv.ParseInt takes one, into *out. Returns 0, or -1 when s is NULL, empty, malformed
 * or out of int64_t's range (*out is then left alone). The one integer parser of annotations and labels.
 */
int util_parse_int64(const char *s, int64_t *out);

char *util_base64_encode(const void *data, size_t len);

/*
 * Decodes standard base64 into a new NUL-terminated buffer (caller frees),
 * setting *out_len. CR and LF are skipped and padding is optional (as in
 * kubeconfig data); anything else outside the alphabet, or a malformed end,
 * gives NULL.
 */
char *util_base64_decode(const char *in, size_t len, size_t *out_len);

#endif
