#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/evp.h>

void *util_malloc(size_t n)
{
    void *p = malloc(n != 0 ? n : 1);
    if (p == NULL)
        abort();
    return p;
}

void *util_calloc(size_t n, size_t size)
{
    void *p = calloc(n != 0 ? n : 1, size != 0 ? size : 1);
    if (p == NULL)
        abort();
    return p;
}

void *util_calloc_lines(size_t size)
{
    size_t rounded = (size != 0 ? size : 1) + 63;
    if (rounded < size)
        abort();
    rounded -= rounded % 64;
    void *p = aligned_alloc(64, rounded);
    if (p == NULL)
        abort();
    return memset(p, 0, rounded);
}

void *util_realloc(void *p, size_t n)
{
    void *q = realloc(p, n != 0 ? n : 1);
    if (q == NULL)
        abort();
    return q;
}

char *util_strdup(const char *s)
{
    return s != NULL ? util_memdup(s, strlen(s)) : NULL;
}

int util_streq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when none starts there. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range (RFC 3629 table) */
    if (n == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3;
        if (s[0] == 0xE0)
            lo = 0xA0; /* no overlong forms */
        if (s[0] == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4;
        if (s[0] == 0xF0)
            lo = 0x90;
        if (s[0] == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

void util_format(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    if (n < 0 || size == 0 || (size_t)n < size)
        return;
    /* Cut: drop a multi-byte character the cut split, so valid UTF-8 stays valid (jansson refuses the rest). */
    size_t len = size - 1, start = len;
    while (start > 0 && len - start < 3 && ((unsigned char)buf[start - 1] & 0xC0) == 0x80)
        start--;
    if (start > 0 && (unsigned char)buf[start - 1] >= 0xC0)
        start--;
    else
        return;
    if (utf8_sequence((const unsigned char *)buf + start, len - start) == 0)
        buf[start] = '\0';
}

void util_one_line(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t len = utf8_sequence(p + i, n - i);
        if (len == 0) {
            p[i++] = '?';
        } else {
            if (len == 1 && (p[i] < 0x20 || p[i] == 0x7F))
                p[i] = ' ';
            i += len;
        }
    }
}

char *util_strdupf(const char *fmt, ...)
{
    struct util_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    util_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return util_buf_take(&b);
}

char *util_memdup(const char *s, size_t n)
{
    char *p = util_malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void util_wipe_free(char *p, size_t n)
{
    if (p == NULL)
        return;
    if (n == (size_t)-1)
        n = strlen(p);
    volatile char *v = p;
    for (size_t i = 0; i < n; i++)
        v[i] = '\0';
    free(p);
}

static void buf_reserve(struct util_buf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap != 0 ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    b->data = util_realloc(b->data, cap);
    b->cap = cap;
}

void util_buf_append(struct util_buf *b, const void *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void util_buf_puts(struct util_buf *b, const char *s)
{
    util_buf_append(b, s, strlen(s));
}

void util_buf_put_uint(struct util_buf *b, uint64_t v)
{
    char digits[24];
    size_t at = sizeof(digits);
    do {
        digits[--at] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    util_buf_append(b, digits + at, sizeof(digits) - at);
}

void util_buf_vprintf(struct util_buf *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0)
        abort();
    buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    va_end(again);
    b->len += (size_t)n;
}

void util_buf_printf(struct util_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *util_buf_take(struct util_buf *b)
{
    char *s = b->data != NULL ? b->data : util_strdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

void util_buf_finish(struct util_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *util_read_file(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    struct util_buf b = {0};
    /* One allocation when the size is known, so a secret is not left behind in realloc'd copies. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0 && (size_t)st.st_size <= max)
        buf_reserve(&b, (size_t)st.st_size);
    char chunk[16384];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (b.len + n > max) {
            fclose(f);
            util_buf_finish(&b);
            errno = EFBIG;
            return NULL;
        }
        util_buf_append(&b, chunk, n);
    }
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        util_buf_finish(&b);
        errno = EIO;
        return NULL;
    }
    *len = b.len;
    return util_buf_take(&b);
}

void util_append_openssl_error(char *msg, size_t size)
{
    unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0 || size == 0)
        return;
    char ssl[160];
    ERR_error_string_n(e, ssl, sizeof(ssl));
    size_t n = strlen(msg);
    if (n + 1 < size)
        util_format(msg + n, size - n, " (%s)", ssl);
}

char *util_base64_encode(const void *data, size_t len)
{
    /* EVP_EncodeBlock takes an int length: encode in whole 3-byte groups that fit. */
    char *out = util_malloc(4 * ((len + 2) / 3) + 1);
    const unsigned char *in = data;
    size_t done = 0, w = 0;
    out[0] = '\0';
    while (done < len) {
        size_t step = len - done < 3u << 28 ? len - done : 3u << 28;
        w += (size_t)EVP_EncodeBlock((unsigned char *)out + w, in + done, (int)step);
        done += step;
    }
    return out;
}

static int b64_digit(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

char *util_base64_decode(const char *in, size_t len, size_t *out_len)
{
    /* Normalise for OpenSSL: drop CR/LF, check the alphabet, restore padding. */
    char *norm = util_malloc(len + 3);
    size_t n = 0, pad = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '\r' || c == '\n')
            continue;
        if (c == '=') {
            pad++;
        } else if (!b64_digit(c) || pad > 0) { /* a digit after padding is not base64 */
            free(norm);
            return NULL;
        }
        norm[n++] = (char)c;
    }
    size_t digits = n - pad;
    if (digits % 4 == 1 || pad > 2 || (pad > 0 && n % 4 != 0) || n > (size_t)1 << 30) {
        free(norm);
        return NULL;
    }
    while (n % 4 != 0) {
        norm[n++] = '=';
        pad++;
    }
    char *out = util_malloc(n / 4 * 3 + 1);
    int got = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)norm, (int)n);
    free(norm);
    if (got < 0) {
        free(out);
        return NULL;
    }
    /* EVP_DecodeBlock counts padding as zero bytes. */
    size_t m = (size_t)got - pad;
    out[m] = '\0';
    *out_len = m;
    return out;
}

int util_parse_int64(const char *s, int64_t *out)
{
    if (s == NULL || !(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return -1;
    *out = (int64_t)v;
    return 0;
}

int util_parse_time(const char *s, int64_t *unix_seconds)
{
    int y, mo, d, h, mi, sec, n = 0;
    if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
        return -1;
    const char *rest = s + n;
    if (*rest == '.') {
        rest++;
        if (*rest < '0' || *rest > '9')
            return -1;
        while (*rest >= '0' && *rest <= '9')
            rest++;
    }
    if (strcmp(rest, "Z") != 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
        return -1;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *unix_seconds = (int64_t)t;
    return 0;
}

void *util_scratch(void **buf, size_t *cap, size_t n, size_t size, int zero)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes))
        abort();
    if (bytes > *cap) {
        size_t grown = *cap * 2 > bytes ? *cap * 2 : bytes;
        free(*buf);
        *buf = util_malloc(grown);
        *cap = grown;
    }
    if (zero && bytes > 0)
        memset(*buf, 0, bytes);
    return *buf;
}

const char *util_plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}
