/*
 * statuswriter: the gate controller's writes of PodGroups and Queue status,
 * on their own thread so that they never hold up a decision pass or the
 * removal of gates (a slow or failing write only delays other status).
 *
 * Writes are keyed (struct statuswriter_key: a PodGroup, a PodGroup's status
 * subresource, or a Queue's status, by namespace and name): a write submitted
 * while another of the same key is still queued replaces it (only the latest
 * state matters), except that a merge patch of an object whose creation is
 * still queued is merged into the creation; queued writes go out together,
 * concurrently (kube_batch), and a batch starts when the last one is done, so
 * writes of one key never overtake each other.
 * Writes of one key are coalesced over a window (STATUSWRITER_WINDOW_MS): a
 * key written less than a window ago is written again only once the window
 * is over, in one write of all that changed meanwhile (a merge patch queued
 * over another is composed with it). A gang's PodGroup status during a flood
 * of its pods is so written about once a second, not once per pod; a key not
 * written for a window goes out at once.
 * After each write the done callback runs on the writer's thread.
 */
#ifndef RAYGATE_GATE_STATUSWRITER_H
#define RAYGATE_GATE_STATUSWRITER_H

#include <stdint.h>

#include <jansson.h>

#include "kube.h"

struct statuswriter;

/* The default coalescing window of one key's writes. */
#define STATUSWRITER_WINDOW_MS 1000

enum statuswriter_kind {
    STATUSWRITER_PODGROUP,        /* a PodGroup (its creation, or a patch of the object) */
    STATUSWRITER_PODGROUP_STATUS, /* a PodGroup's status subresource */
    STATUSWRITER_QUEUE,           /* a Queue's status */
};

/* What a write is of. Strings borrowed by statuswriter_submit_new (copied), or for the done call. */
struct statuswriter_key {
    enum statuswriter_kind kind;
    const char *namespace_; /* NULL for a Queue (cluster-scoped) */
    const char *name;
};

/* Whether a and b name the same write (kind, namespace and name). */
int statuswriter_key_equal(const struct statuswriter_key *a, const struct statuswriter_key *b);

/* The outcome of one write, for the done callback; everything is borrowed for the call. */
struct statuswriter_result {
    const struct statuswriter_key *key;
    const char *method;
    uint64_t seq;        /* the number statuswriter_submit_new returned */
    int rc;              /* 0: the answer was 2xx */
    long status;         /* HTTP status; 0 without an answer */
    json_t *body;        /* the answer's object, or NULL */
    const char *message; /* the failure, one line */
};

typedef void (*statuswriter_done_fn)(void *arg, const struct statuswriter_result *r);

/* Asked before each batch: 0 (not leading) drops the batch, reported to done as failed writes. */
typedef int (*statuswriter_may_write_fn)(void *arg);

/*
 * Starts the writer thread on client (borrowed; must outlive it); may_write
 * (NULL: always) and done are called on that thread with arg. Returns NULL if
 * the thread cannot start.
 */
struct statuswriter *statuswriter_create(struct kube_client *client, statuswriter_may_write_fn may_write, statuswriter_done_fn done,
                                         void *arg);

/*
 * Queues a write of body (stolen) with method to path (content_type NULL:
 * application/json), replacing a queued write of the same key. Any thread;
 * never blocks on the network. Returns the write's sequence number (> 0).
 */
uint64_t statuswriter_submit_new(struct statuswriter *w, const struct statuswriter_key *key, const char *method, const char *path,
                                 const char *content_type, json_t *body);

/* Sets the coalescing window (0: none, every write at once); any thread. */
void statuswriter_set_window(struct statuswriter *w, long long window_ms);

/* Stops the thread after the batch in flight (queued writes are dropped) and frees it; accepts NULL. */
void statuswriter_destroy(struct statuswriter *w);

#endif
