/*
 * watchstream: an incremental parser for the API server's watch stream.
 *
 * A watch response body is a sequence of JSON objects, one per line:
 *   {"type":"ADDED","object":{...}}\n{"type":"BOOKMARK","object":{...}}\n...
 * Feed it whatever the transport delivers (an event split over many reads,
 * several events in one read, an event of many megabytes: the buffer grows up
 * to a maximum) and get one callback per complete event.
 *
 * Pure: no I/O, no allocation beyond its own buffer and jansson's. Fuzzers and
 * tests call it on buffers. Not thread-safe: one stream, one thread.
 */
#ifndef RAYGATE_WATCHSTREAM_H
#define RAYGATE_WATCHSTREAM_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "jsonscan.h"

/* Default maximum size of one event (one line), in bytes. */
#define WATCHSTREAM_DEFAULT_MAX_EVENT (16u << 20)

enum watchstream_type {
    WATCHSTREAM_ADDED,
    WATCHSTREAM_MODIFIED,
    WATCHSTREAM_DELETED,
    WATCHSTREAM_BOOKMARK, /* object carries only metadata.resourceVersion (and annotations) */
    WATCHSTREAM_ERROR,    /* object is a Status; code and message are set */
    /*
     * An ERROR whose Status has code 410 (or reason Expired/Gone): the
     * resourceVersion the watch started from is too old. The caller relists.
     */
    WATCHSTREAM_EXPIRED,
};

struct watchstream_event {
    enum watchstream_type type;
    json_t *object;               /* borrowed: valid during the callback only (json_incref to keep) */
    const char *resource_version; /* borrowed: object's metadata.resourceVersion, or NULL */
    long code;                    /* ERROR/EXPIRED: the Status' code, 0 if absent; else 0 */
    const char *message;          /* ERROR/EXPIRED: the Status' message, or "" */
};

/* Called once per event. Return 0 to go on, non-zero to stop feeding. */
typedef int (*watchstream_fn)(void *arg, const struct watchstream_event *ev);

struct watchstream {
    char *buf; /* the incomplete last line */
    size_t len, cap;
    size_t max_event;
    unsigned long events; /* complete events seen, for messages */
    int failed;
    watchstream_fn fn;
    void *arg;
    /* watchstream_set_shape(): how much of each event is built (NULL fn: all of it, jansson's json_loadb) */
    int shape;
    jsonscan_shape_fn shape_fn;
    struct jsonscan scan; /* reused from event to event */
};

/*
 * Initialises ws in caller-owned storage. max_event bounds one event in bytes
 * (0 means WATCHSTREAM_DEFAULT_MAX_EVENT). fn and arg receive the events.
 */
void watchstream_init(struct watchstream *ws, size_t max_event, watchstream_fn fn, void *arg);

/*
 * Builds only part of each event from now on (jsonscan.h): the event object
 * at shape, its members as fn says (the whole event object, then its
 * "object", as fn's shapes go). A line the scan declines (escapes it cannot
 * decode, more than it reads) is parsed whole by jansson, as without it.
 * Saves the allocation of what a watcher never reads (a pod's
 * managedFields, its containers' env).
 */
void watchstream_set_shape(struct watchstream *ws, int shape, jsonscan_shape_fn fn);

/* Releases ws's buffer; ws may be NULL. */
void watchstream_finish(struct watchstream *ws);

/* Discards a partial event and a failure: ready for a new stream. */
void watchstream_reset(struct watchstream *ws);

/*
 * Feeds len bytes of the stream. Calls fn for every event completed by them,
 * in order. Empty lines are skipped. Returns 0 when all bytes were consumed;
 * 1 when fn asked to stop (the rest of data is dropped); -1 with err when an
 * event is not valid JSON, not an object with a known "type" and an object
 * "object", or longer than the maximum. After -1 or 1 every further feed
 * returns -1 until watchstream_reset().
 */
int watchstream_feed(struct watchstream *ws, const char *data, size_t len, struct error *err);

/*
 * Ends the stream. Returns 0, or -1 with err when it ended inside an event
 * (a last line without its newline is parsed as an event, as the API
 * server always terminates lines; only an incomplete JSON text fails).
 */
int watchstream_end(struct watchstream *ws, struct error *err);

/* The event type's name as on the wire ("ADDED", ...; "ERROR" for EXPIRED). */
const char *watchstream_type_name(enum watchstream_type type);

#endif
