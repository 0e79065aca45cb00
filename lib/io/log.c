#include "log.h"
#include "util.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum log_level max_level = LOG_LEVEL_INFO;

const char *const log_level_names[] = {"error", "warn", "info", "debug", NULL};

void log_set_level(enum log_level level)
{
    max_level = level;
}

int log_level_parse(const char *name, enum log_level *level)
{
    for (size_t i = 0; log_level_names[i] != NULL; i++) {
        if (strcmp(name, log_level_names[i]) == 0) {
            *level = (enum log_level)i;
            return 0;
        }
    }
    return -1;
}

int log_enabled(enum log_level level)
{
    return level <= max_level;
}

struct out {
    char *buf;
    size_t size, len; /* size excludes the reserve kept for the closing text */
    int full;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->full)
        return;
    if (o->len + n > o->size) {
        o->full = 1;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

/* JSON string body; control characters escaped, other bytes copied. */
static void put_escaped(struct out *o, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0' && !o->full; p++) {
        char esc[8];
        switch (*p) {
        case '"':
            put(o, "\\\"", 2);
            break;
        case '\\':
            put(o, "\\\\", 2);
            break;
        case '\n':
            put(o, "\\n", 2);
            break;
        case '\t':
            put(o, "\\t", 2);
            break;
        case '\r':
            put(o, "\\r", 2);
            break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof(esc), "\\u%04x", *p);
                put(o, esc, 6);
            } else {
                put(o, (const char *)p, 1);
            }
        }
    }
}

size_t log_format_line(char *buf, size_t size, long long unix_ms, enum log_level level, const char *src, const char *msg)
{
    static const char closing[] = "\"}\n";
    char ts[32], date[24];
    time_t secs = (time_t)(unix_ms / 1000);
    struct tm tm;

    if (size < sizeof(closing) + 1) {
        if (size > 0)
            buf[0] = '\0';
        return 0;
    }
    gmtime_r(&secs, &tm);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts, sizeof(ts), "%.20s.%03uZ", date, (unsigned)(unix_ms % 1000) % 1000u);

    struct out o = {buf, size - sizeof(closing), 0, 0};
    put(&o, "{\"ts\":\"", 7);
    put(&o, ts, strlen(ts));
    put(&o, "\",\"level\":\"", 11);
    put(&o, log_level_names[level], strlen(log_level_names[level]));
    put(&o, "\",\"src\":\"", 9);
    put_escaped(&o, src);
    put(&o, "\",\"msg\":\"", 9);
    put_escaped(&o, msg);
    /* Never leave half a UTF-8 sequence or half an escape behind a cut. */
    if (o.full) {
        while (o.len > 0 && ((unsigned char)buf[o.len - 1] & 0xC0) == 0x80)
            o.len--;
        if (o.len > 0 && ((unsigned char)buf[o.len - 1] & 0xC0) == 0xC0)
            o.len--;
        size_t bs = 0;
        while (bs < o.len && buf[o.len - 1 - bs] == '\\')
            bs++;
        if (bs % 2 == 1)
            o.len--;
        char *u = o.len >= 6 ? memchr(buf + o.len - 6, '\\', 6) : NULL;
        if (u != NULL && u[1] == 'u')
            o.len = (size_t)(u - buf);
    }
    memcpy(buf + o.len, closing, sizeof(closing));
    return o.len + sizeof(closing) - 1;
}

void log_write(enum log_level level, const char *file, int line, const char *fmt, ...)
{
    if (!log_enabled(level))
        return;
    char msg[2048], src[256], out[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* Messages quote user input: keep every line valid UTF-8 (and one line) whatever it held or where it was cut. */
    util_one_line(msg);
    snprintf(src, sizeof(src), "%s:%d", file, line);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    size_t n = log_format_line(out, sizeof(out), (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, level, src, msg);
    /* One write per line so lines from threads never interleave. */
    ssize_t w = write(STDERR_FILENO, out, n);
    (void)w;
}
