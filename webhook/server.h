/*
 * server: the webhook's HTTPS server on h2o's evloop.
 *
 *   POST /mutate    AdmissionReview in, AdmissionReview out (lib/gang/review/admission.h)
 *   POST /validate  the same (the Queue validating webhook's path)
 *   GET  /healthz   200 while the process runs
 *   GET  /readyz    200 while accepting, 503 once shutdown started
 *   GET  /metrics   Prometheus text (lib/core/metrics.h)
 *
 * One thread, one event loop. TLS only: a plain HTTP request on the port is
 * answered "400 this port speaks TLS" and closed; the certificate is reloaded from disk by
 * tlsreload. server_request_stop() starts a graceful shutdown: /readyz turns
 * 503, after shutdown_delay the listener closes, HTTP/2 connections get
 * GOAWAY, HTTP/1 responses carry "Connection: close", and server_run()
 * returns once every connection has closed or shutdown_timeout has passed.
 */
#ifndef RAYGATE_SERVER_H
#define RAYGATE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "mutate.h"

struct snapwatch;

struct server_config {
    const char *addr;              /* "127.0.0.1:9443", ":9443" (all interfaces), "[::1]:9443" */
    const char *cert_path;         /* PEM: leaf then intermediates */
    const char *key_path;          /* PEM private key */
    size_t max_body_bytes;         /* larger bodies: 413 over HTTP/1.1, stream reset (REFUSED_STREAM) over HTTP/2 (h2o 2.2.5) */
    uint64_t request_timeout_ms;   /* HTTP/1 request (and keep-alive idle) timeout; HTTP/2 idle timeout */
    uint64_t handshake_timeout_ms; /* TLS handshake; also the wait for a new connection's first byte */
    uint64_t reload_interval_ms;   /* how often the certificate files are checked */
    uint64_t shutdown_delay_ms;    /* keep accepting (not ready) this long after a stop request */
    uint64_t shutdown_timeout_ms;  /* then wait at most this long for open connections */
    /* Borrowed snapshots (snapwatch.h); NULL: none. The Queues the admissions check the tree against (fail open). */
    struct snapwatch *queues;
    struct snapwatch *dra;        /* the DRA objects a RayCluster's minResources count (mutate_options.dra) */
    struct snapwatch *held;       /* the admitted held RayClusters (mutate_options.held, --hold-gangs) */
    struct mutate_options mutate; /* what the mutation adds (--native-gang; gauge raygate_webhook_native_gang); its dra unused */
};

struct server;

/*
 * Loads the certificate, binds and listens. Returns a new server
 * (server_destroy), or NULL after logging why.
 */
struct server *server_create(const struct server_config *cfg);

/*
 * Serves until a stop request has been carried out. Returns 0 on a graceful
 * stop (even if the deadline cut connections), -1 on an event loop failure.
 */
int server_run(struct server *s);

/* Asks server_run() to stop gracefully. Async-signal-safe; repeated calls are harmless. */
void server_request_stop(struct server *s);

/* Frees everything. Accepts NULL. */
void server_destroy(struct server *s);

#endif
