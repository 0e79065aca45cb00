#include "watchstream.h"

#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void watchstream_init(struct watchstream *ws, size_t max_event, watchstream_fn fn, void *arg)
{
    memset(ws, 0, sizeof(*ws));
    ws->max_event = max_event != 0 ? max_event : WATCHSTREAM_DEFAULT_MAX_EVENT;
    ws->fn = fn;
    ws->arg = arg;
}

void watchstream_set_shape(struct watchstream *ws, int shape, jsonscan_shape_fn fn)
{
    ws->shape = shape;
    ws->shape_fn = fn;
    ws->scan.escaped_keys = 1; /* a managedFields key holds quotes ("k:{\"uid\":...}"); the shape matches none of them */
}

void watchstream_finish(struct watchstream *ws)
{
    if (ws == NULL)
        return;
    jsonscan_finish(&ws->scan);
    jsonscan_init(&ws->scan);
    ws->scan.escaped_keys = 1;
    free(ws->buf);
    ws->buf = NULL;
    ws->len = ws->cap = 0;
}

void watchstream_reset(struct watchstream *ws)
{
    ws->len = 0;
    ws->failed = 0;
    ws->events = 0;
    /* A huge event's buffer is not kept for the next stream. */
    if (ws->cap > (1u << 20)) {
        free(ws->buf);
        ws->buf = NULL;
        ws->cap = 0;
    }
}

const char *watchstream_type_name(enum watchstream_type type)
{
    switch (type) {
    case WATCHSTREAM_ADDED:
        return "ADDED";
    case WATCHSTREAM_MODIFIED:
        return "MODIFIED";
    case WATCHSTREAM_DELETED:
        return "DELETED";
    case WATCHSTREAM_BOOKMARK:
        return "BOOKMARK";
    case WATCHSTREAM_ERROR:
    case WATCHSTREAM_EXPIRED:
        return "ERROR";
    }
    return "?";
}

static int is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return 0;
    return 1;
}

/* Parses one complete line and calls back. Returns 0, 1 (stop) or -1. */
static int dispatch(struct watchstream *ws, const char *line, size_t len, struct error *err)
{
    if (is_blank(line, len))
        return 0;
    unsigned long n = ++ws->events;
    json_error_t jerr;
    json_t *ev = NULL;
    if (ws->shape_fn != NULL && jsonscan_parse(&ws->scan, line, len) == 0)
        ev = jsonscan_value(&ws->scan, 0, ws->shape, ws->shape_fn);
    if (ev == NULL)
        ev = json_loadb(line, len, 0, &jerr);
    if (ev == NULL) {
        error_setf(err, "event %lu: invalid JSON at column %d: %s", n, jerr.column, jerr.text);
        return -1;
    }
    int rc = -1;
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *obj = json_object_get(ev, "object");
    if (!json_is_object(ev) || type == NULL) {
        error_setf(err, "event %lu: not an object with a string \"type\"", n);
        goto out;
    }
    if (!json_is_object(obj)) {
        error_setf(err, "event %lu (%.32s): \"object\" is missing or not an object", n, type);
        goto out;
    }
    struct watchstream_event e = {.object = obj, .message = ""};
    if (strcmp(type, "ADDED") == 0) {
        e.type = WATCHSTREAM_ADDED;
    } else if (strcmp(type, "MODIFIED") == 0) {
        e.type = WATCHSTREAM_MODIFIED;
    } else if (strcmp(type, "DELETED") == 0) {
        e.type = WATCHSTREAM_DELETED;
    } else if (strcmp(type, "BOOKMARK") == 0) {
        e.type = WATCHSTREAM_BOOKMARK;
    } else if (strcmp(type, "ERROR") == 0) {
        json_t *code = json_object_get(obj, "code");
        const char *reason = json_string_value(json_object_get(obj, "reason"));
        const char *message = json_string_value(json_object_get(obj, "message"));
        e.code = json_is_integer(code) ? (long)json_integer_value(code) : 0;
        e.message = message != NULL ? message : "";
        int gone = e.code == 410 || (reason != NULL && (strcmp(reason, "Expired") == 0 || strcmp(reason, "Gone") == 0));
        e.type = gone ? WATCHSTREAM_EXPIRED : WATCHSTREAM_ERROR;
    } else {
        error_setf(err, "event %lu: unknown type \"%.32s\"", n, type);
        goto out;
    }
    e.resource_version = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    rc = ws->fn(ws->arg, &e) != 0 ? 1 : 0;
out:
    json_decref(ev);
    return rc;
}

/* Appends to the partial-line buffer, growing it; -1 when the event exceeds the maximum. */
static int append(struct watchstream *ws, const char *data, size_t len, struct error *err)
{
    if (len > ws->max_event - ws->len) {
        error_setf(err, "event %lu: longer than the maximum of %zu bytes", ws->events + 1, ws->max_event);
        return -1;
    }
    if (ws->len + len > ws->cap) {
        size_t cap = ws->cap != 0 ? ws->cap : 4096;
        while (cap < ws->len + len)
            cap = cap > ws->max_event / 2 ? ws->max_event : cap * 2;
        ws->buf = util_realloc(ws->buf, cap);
        ws->cap = cap;
    }
    memcpy(ws->buf + ws->len, data, len);
    ws->len += len;
    return 0;
}

int watchstream_feed(struct watchstream *ws, const char *data, size_t len, struct error *err)
{
    if (ws->failed) {
        error_setf(err, "stream already failed or stopped");
        return -1;
    }
    int rc = 0;
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        if (nl == NULL) {
            rc = append(ws, data, len, err);
            break;
        }
        size_t part = (size_t)(nl - data);
        if (ws->len == 0) {
            /* The common case: a whole line inside this chunk is parsed in place. */
            if (part > ws->max_event) {
                error_setf(err, "event %lu: longer than the maximum of %zu bytes", ws->events + 1, ws->max_event);
                rc = -1;
                break;
            }
            rc = dispatch(ws, data, part, err);
        } else {
            if ((rc = append(ws, data, part, err)) != 0)
                break;
            rc = dispatch(ws, ws->buf, ws->len, err);
            ws->len = 0;
        }
        if (rc != 0)
            break;
        data = nl + 1;
        len -= part + 1;
    }
    if (rc != 0)
        ws->failed = 1;
    return rc;
}

int watchstream_end(struct watchstream *ws, struct error *err)
{
    if (ws->failed) {
        error_setf(err, "stream already failed or stopped");
        return -1;
    }
    int rc = 0;
    if (ws->len > 0)
        rc = dispatch(ws, ws->buf, ws->len, err) < 0 ? -1 : 0;
    ws->len = 0;
    if (rc != 0) {
        char msg[sizeof(err->message)];
        snprintf(msg, sizeof(msg), "%s", err != NULL ? err->message : "");
        error_setf(err, "stream ended inside an event: %s", msg);
        ws->failed = 1;
    }
    return rc;
}
