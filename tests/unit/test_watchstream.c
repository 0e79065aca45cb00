#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "watchstream.h"

struct recorder {
    json_t *events;    /* what the callback saw, in the fixtures' expectation format */
    size_t stop_after; /* ask to stop after this many events; 0: never */
};

static const char *type_label(enum watchstream_type t)
{
    return t == WATCHSTREAM_EXPIRED ? "EXPIRED" : watchstream_type_name(t);
}

static int record(void *arg, const struct watchstream_event *ev)
{
    struct recorder *r = arg;
    json_t *e = json_pack("{s:s}", "type", type_label(ev->type));
    const char *name = json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"));
    if (ev->type == WATCHSTREAM_ERROR || ev->type == WATCHSTREAM_EXPIRED) {
        json_object_set_new(e, "code", json_integer(ev->code));
        json_object_set_new(e, "message", json_string(ev->message));
    } else {
        if (name != NULL)
            json_object_set_new(e, "name", json_string(name));
        if (ev->resource_version != NULL)
            json_object_set_new(e, "rv", json_string(ev->resource_version));
    }
    json_array_append_new(r->events, e);
    return r->stop_after != 0 && json_array_size(r->events) >= r->stop_after;
}

/*
 * Feeds data in chunks of chunk bytes (0: pseudo-random sizes 1..300 from
 * seed) and ends the stream. Returns the events seen; *error gets the
 * failure message or "".
 */
static json_t *run_stream(const char *data, size_t len, size_t chunk, unsigned seed, char *error, size_t error_size)
{
    struct recorder r = {.events = json_array()};
    struct watchstream ws;
    struct error err = {{0}};
    watchstream_init(&ws, 0, record, &r);
    error[0] = '\0';
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0;) {
        size_t n = chunk;
        if (n == 0) {
            seed = seed * 1103515245u + 12345u;
            n = 1 + (seed >> 16) % 300;
        }
        if (n > len - off)
            n = len - off;
        /* A private copy of each chunk: the parser must not read past it. */
        char *piece = malloc(n);
        memcpy(piece, data + off, n);
        rc = watchstream_feed(&ws, piece, n, &err);
        free(piece);
        off += n;
    }
    if (rc == 0)
        rc = watchstream_end(&ws, &err);
    if (rc != 0)
        snprintf(error, error_size, "%s", err.message);
    watchstream_finish(&ws);
    return r.events;
}

/* Every watchstream/<name>.jsonl with <name>.json ({"events": [...], "error": substring}), under many chunkings. */
static void test_fixtures(void **state)
{
    (void)state;
    static const size_t chunks[] = {SIZE_MAX, 1, 2, 3, 7, 64, 4096, 0, 0, 0};
    size_t n;
    char **files = fixture_list("watchstream", &n);
    assert_true(n >= 12);
    for (size_t i = 0; i < n; i++) {
        json_t *want = fixture_json(files[i]);
        char rel[512];
        snprintf(rel, sizeof(rel), "%sl", files[i]);
        size_t len;
        char *data = fixture_read(rel, &len);
        const char *want_error = json_string_value(json_object_get(want, "error"));
        for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
            char error[sizeof(((struct error *)0)->message)];
            json_t *got = run_stream(data, len, chunks[k], (unsigned)k, error, sizeof(error));
            if (!json_equal(got, json_object_get(want, "events"))) {
                char *g = fixture_dump(got), *w = fixture_dump(json_object_get(want, "events"));
                fail_msg("%s (chunk %zu): events %s, expected %s", rel, chunks[k], g, w);
            }
            if (want_error == NULL && error[0] != '\0')
                fail_msg("%s (chunk %zu): failed: %s", rel, chunks[k], error);
            if (want_error != NULL && strstr(error, want_error) == NULL)
                fail_msg("%s (chunk %zu): error \"%s\", expected \"%s\"", rel, chunks[k], error, want_error);
            json_decref(got);
        }
        free(data);
        json_decref(want);
    }
    fixture_list_free(files, n);
}

/* One line of len bytes: an ADDED pod whose annotation pads it out. New string. */
static char *big_event(size_t len)
{
    static const char head[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"big\",\"resourceVersion\":\"7\","
                               "\"annotations\":{\"pad\":\"";
    static const char tail[] = "\"}}}}\n";
    assert_true(len > sizeof(head) + sizeof(tail));
    char *s = malloc(len + 1);
    memcpy(s, head, sizeof(head) - 1);
    size_t pad = len - (sizeof(head) - 1) - (sizeof(tail) - 1);
    memset(s + sizeof(head) - 1, 'x', pad);
    memcpy(s + sizeof(head) - 1 + pad, tail, sizeof(tail));
    return s;
}

static void test_huge_event(void **state)
{
    (void)state;
    size_t len = (5u << 20) + 123;
    char *ev = big_event(len);
    struct recorder r = {.events = json_array()};
    struct watchstream ws;
    struct error err;

    /* Split in 64 KiB reads, then a second event in the same read as the tail. */
    watchstream_init(&ws, 8u << 20, record, &r);
    for (size_t off = 0; off < len; off += 65536)
        assert_int_equal(watchstream_feed(&ws, ev + off, len - off < 65536 ? len - off : 65536, &err), 0);
    assert_int_equal(json_array_size(r.events), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(r.events, 0), "name")), "big");
    assert_true(ws.cap <= (8u << 20));
    watchstream_finish(&ws);

    /* Over the maximum, split or whole: an error naming the limit, no event. */
    json_array_clear(r.events);
    watchstream_init(&ws, 1u << 20, record, &r);
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0; off += 65536)
        rc = watchstream_feed(&ws, ev + off, len - off < 65536 ? len - off : 65536, &err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err.message, "longer than the maximum of 1048576 bytes"));
    assert_true(ws.cap <= (1u << 20));
    assert_int_equal(watchstream_feed(&ws, "\n", 1, &err), -1); /* failed streams stay failed */

    watchstream_reset(&ws);
    assert_int_equal(watchstream_feed(&ws, ev, len, &err), -1);
    assert_non_null(strstr(err.message, "longer than the maximum"));
    assert_int_equal(json_array_size(r.events), 0);
    watchstream_finish(&ws);

    free(ev);
    json_decref(r.events);
}

/* A callback that asks to stop: feed returns 1, drops the rest, and the stream needs a reset. */
static void test_stop_and_reset(void **state)
{
    (void)state;
    size_t len;
    char *data = fixture_read("watchstream/basic.jsonl", &len);
    struct recorder r = {.events = json_array(), .stop_after = 2};
    struct watchstream ws;
    struct error err;
    watchstream_init(&ws, 0, record, &r);
    assert_int_equal(watchstream_feed(&ws, data, len, &err), 1);
    assert_int_equal(json_array_size(r.events), 2);
    assert_int_equal(watchstream_feed(&ws, data, len, &err), -1);
    assert_int_equal(watchstream_end(&ws, &err), -1);

    /* After a reset a new stream parses from its start; a partial line is dropped. */
    watchstream_reset(&ws);
    r.stop_after = 0;
    json_array_clear(r.events);
    assert_int_equal(watchstream_feed(&ws, data, 40, &err), 0);
    watchstream_reset(&ws);
    assert_int_equal(watchstream_feed(&ws, data, len, &err), 0);
    assert_int_equal(watchstream_end(&ws, &err), 0);
    assert_int_equal(json_array_size(r.events), 5);
    watchstream_finish(&ws);
    watchstream_finish(NULL);
    json_decref(r.events);
    free(data);
}

static void test_type_names(void **state)
{
    (void)state;
    assert_string_equal(watchstream_type_name(WATCHSTREAM_ADDED), "ADDED");
    assert_string_equal(watchstream_type_name(WATCHSTREAM_MODIFIED), "MODIFIED");
    assert_string_equal(watchstream_type_name(WATCHSTREAM_DELETED), "DELETED");
    assert_string_equal(watchstream_type_name(WATCHSTREAM_BOOKMARK), "BOOKMARK");
    assert_string_equal(watchstream_type_name(WATCHSTREAM_ERROR), "ERROR");
    assert_string_equal(watchstream_type_name(WATCHSTREAM_EXPIRED), "ERROR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_huge_event),
        cmocka_unit_test(test_stop_and_reset),
        cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
