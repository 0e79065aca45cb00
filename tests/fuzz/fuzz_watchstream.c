/*
 * libFuzzer harness: lib/wire/watchstream. The input is a watch stream; it is fed
 * once whole and once cut into pieces at fuzzer-chosen places. Both feedings
 * must see the same events (type, resourceVersion, code, message) and the
 * same outcome: how the transport splits the bytes never matters.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "watchstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                                                \
    do {                                                                                                                           \
        if (!(cond)) {                                                                                                             \
            fprintf(stderr, "%s:%d: %s fails\n", __FILE__, __LINE__, #cond);                                                       \
            abort();                                                                                                               \
        }                                                                                                                          \
    } while (0)

#define MAX_EVENT 4096 /* small, so that the fuzzer reaches the limit */

struct seen {
    char trace[8192];
    size_t len;
    unsigned long count;
    unsigned long stop_after; /* 0: never ask to stop */
};

static int on_event(void *arg, const struct watchstream_event *ev)
{
    struct seen *s = arg;
    CHECK(ev->object != NULL && json_is_object(ev->object));
    CHECK(ev->message != NULL || (ev->type != WATCHSTREAM_ERROR && ev->type != WATCHSTREAM_EXPIRED));
    int n = snprintf(s->trace + s->len, sizeof(s->trace) - s->len, "%s|%s|%ld|%s\n", watchstream_type_name(ev->type),
                     ev->resource_version != NULL ? ev->resource_version : "-", ev->code, ev->message != NULL ? ev->message : "-");
    if (n > 0)
        s->len = s->len + (size_t)n < sizeof(s->trace) ? s->len + (size_t)n : sizeof(s->trace) - 1;
    s->count++;
    return s->stop_after != 0 && s->count >= s->stop_after;
}

/* Feeds data in pieces whose lengths come from cuts (NULL: one piece); returns the final outcome. */
static int feed(const uint8_t *data, size_t size, const uint8_t *cuts, size_t ncuts, struct seen *s)
{
    struct watchstream ws;
    struct error err;
    int rc = 0;
    watchstream_init(&ws, MAX_EVENT, on_event, s);
    size_t off = 0;
    for (size_t i = 0; off < size && rc == 0; i++) {
        size_t piece = cuts == NULL ? size : (size_t)cuts[i % ncuts] + 1;
        if (piece > size - off)
            piece = size - off;
        rc = watchstream_feed(&ws, (const char *)data + off, piece, &err);
        if (rc == -1)
            CHECK(err.message[0] != '\0');
        off += piece;
    }
    if (rc == 0)
        rc = watchstream_end(&ws, &err) == 0 ? 0 : -2;
    /* A failed stream stays failed until reset. */
    if (rc != 0)
        CHECK(watchstream_feed(&ws, "\n", 1, &err) == -1);
    watchstream_reset(&ws);
    watchstream_finish(&ws);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    /* The first bytes choose the cuts and when the callback stops the stream. */
    size_t ncuts = (size_t)(data[0] % 8) + 1;
    unsigned long stop_after = data[1] % 4;
    if (size < 2 + ncuts)
        return 0;
    const uint8_t *cuts = data + 2, *stream = data + 2 + ncuts;
    size_t len = size - 2 - ncuts;

    static struct seen whole, pieces;
    memset(&whole, 0, sizeof(whole));
    memset(&pieces, 0, sizeof(pieces));
    whole.stop_after = pieces.stop_after = stop_after;
    int a = feed(stream, len, NULL, 0, &whole);
    int b = feed(stream, len, cuts, ncuts, &pieces);
    CHECK(a == b);
    CHECK(whole.count == pieces.count);
    CHECK(whole.len == pieces.len && memcmp(whole.trace, pieces.trace, whole.len) == 0);
    return 0;
}
