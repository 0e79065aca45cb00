#include "server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <h2o.h>

#include "admission.h"
#include "jsonarena.h"
#include "listen.h"
#include "log.h"
#include "metrics.h"
#include "snapwatch.h"
#include "tlsreload.h"
#include "util.h"

enum phase {
    PHASE_SERVING,
    PHASE_DELAY,    /* stop requested: not ready, still accepting */
    PHASE_DRAINING, /* listener closed, waiting for connections */
};

struct server {
    struct server_config cfg;
    h2o_globalconf_t config;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    h2o_socket_t *listener;
    struct tlsreload *tls;
    size_t nconns;
    atomic_bool stop_requested; /* set by server_request_stop, from a signal handler on any thread */
    enum phase phase;
    uint64_t next_poll_ms, close_listener_ms, deadline_ms, timers_done_ms;
    int clean_exit;                  /* no connection and no h2o timer left: the context can be disposed */
    int h2o_ready;                   /* config and context initialised */
    uint64_t tree_unknown_logged_ms; /* when a skipped queue tree check was last logged */

    struct metrics_registry *metrics;
    struct metrics_family *m_requests, *m_http, *m_duration, *m_reloads, *m_conns, *m_native_gang, *m_dra_synced;
};

struct handler {
    h2o_handler_t super;
    struct server *server;
};

/* 100us to 5s. */
static const double duration_buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                          0.05,   0.1,     0.25,   0.5,   1,      2.5,   5};

static void create_metrics(struct server *s)
{
    static const char *const requests_labels[] = {"kind", "operation", "result"};
    static const char *const http_labels[] = {"path", "code"};
    static const char *const kind_label[] = {"kind"};
    static const char *const result_label[] = {"result"};

    s->metrics = metrics_registry_create();
    s->m_requests = metrics_counter_create(s->metrics, "raygate_webhook_requests_total",
                                           "AdmissionReviews answered, by object kind, operation and result "
                                           "(patched, allowed, denied, error).",
                                           3, requests_labels);
    s->m_http = metrics_counter_create(
        s->metrics, "raygate_webhook_http_requests_total",
        "HTTP requests, by path (/mutate, /validate, /dispatch-suspend, /healthz, /readyz, /metrics or other) and status code.", 2,
        http_labels);
    s->m_duration = metrics_histogram_create(s->metrics, "raygate_webhook_request_duration_seconds",
                                             "Time from the start of a POST /mutate request to its answer, by object kind.", 1,
                                             kind_label, duration_buckets, sizeof(duration_buckets) / sizeof(duration_buckets[0]));
    s->m_reloads = metrics_counter_create(s->metrics, "raygate_webhook_cert_reloads_total",
                                          "Certificate reloads from disk, by result (success or failure).", 1, result_label);
    s->m_conns = metrics_gauge_create(s->metrics, "raygate_webhook_open_connections", "Open client connections.", 0, NULL);
    s->m_native_gang = metrics_gauge_create(s->metrics, "raygate_webhook_native_gang",
                                            "1 when gated pods get spec.schedulingGroup (Kubernetes' gang scheduling, "
                                            "--native-gang), else 0; decided at start-up.",
                                            0, NULL);
    s->m_dra_synced = metrics_gauge_create(s->metrics, "raygate_webhook_dra_synced",
                                           "1 when raygate.io/min-resources counts device claims: the DeviceClasses, "
                                           "ResourceClaimTemplates and ResourceClaims (resource.k8s.io/v1) are listed, else 0.",
                                           0, NULL);
    /* Show both reload series from the start, so that an alert on failures has a baseline. */
    const char *success[] = {"success"}, *failure[] = {"failure"};
    metrics_counter_add(s->m_reloads, success, 0);
    metrics_counter_add(s->m_reloads, failure, 0);
    metrics_gauge_set(s->m_conns, NULL, 0);
    metrics_gauge_set(s->m_native_gang, NULL, s->cfg.mutate.native_gang ? 1 : 0);
    metrics_gauge_set(s->m_dra_synced, NULL, 0);
}

static int method_is(const h2o_req_t *req, const char *m)
{
    return h2o_memis(req->method.base, req->method.len, m, strlen(m));
}

/* Sends a complete response and counts it. body is copied into the request pool by h2o. */
static void respond(struct server *s, h2o_req_t *req, const char *path_label, int status, const char *reason,
                    const char *content_type, const char *body, size_t len)
{
    char code[8];
    snprintf(code, sizeof(code), "%d", status);
    const char *labels[] = {path_label, code};
    metrics_counter_add(s->m_http, labels, 1);

    req->res.status = status;
    req->res.reason = reason;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type, strlen(content_type));
    req->res.content_length = len;
    h2o_send_inline(req, body, len);
}

static void respond_text(struct server *s, h2o_req_t *req, const char *path_label, int status, const char *reason, const char *text)
{
    respond(s, req, path_label, status, reason, "text/plain; charset=utf-8", text, strlen(text));
}

static void respond_method_not_allowed(struct server *s, h2o_req_t *req, const char *path_label, const char *allow)
{
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, allow, strlen(allow));
    respond_text(s, req, path_label, 405, "Method Not Allowed", "method not allowed\n");
}

/* "application/json", any case, with or without parameters such as "; charset=utf-8". */
static int is_json(const h2o_req_t *req)
{
    ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_CONTENT_TYPE, -1);
    if (i < 0)
        return 0;
    const char *p = req->headers.entries[i].value.base;
    size_t n = req->headers.entries[i].value.len;
    const char *semi = memchr(p, ';', n);
    if (semi != NULL)
        n = (size_t)(semi - p);
    while (n > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    return h2o_lcstris(p, n, H2O_STRLIT("application/json"));
}

static double seconds_since(const struct timeval *start)
{
    struct timeval now;
    gettimeofday(&now, NULL);
    double d = (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_usec - start->tv_usec) / 1e6;
    return d < 0 ? 0 : d;
}

/* Says, at most once a minute, that a queue tree check was skipped (fail open). */
static void note_tree_unknown(struct server *s, const struct admission_info *info)
{
    uint64_t now = h2o_now(s->ctx.loop);
    if (s->tree_unknown_logged_ms != 0 && now < s->tree_unknown_logged_ms + 60000)
        return;
    s->tree_unknown_logged_ms = now;
    log_warnf("%s %s allowed without the queue tree checks: %s", info->kind, info->operation,
              s->cfg.queues == NULL ? "no Kubernetes API configured (--kubeconfig)"
                                    : "the Queues are not listed yet (Queue CRD absent, no RBAC, or the API server unreachable)");
}

/*
 * The decision, against the Queues and the DRA objects the watches know
 * (each locked for the call: the watch threads wait meanwhile).
 */
static int decide(struct server *s, h2o_req_t *req, const char *path, char **text, size_t *text_len, struct admission_info *info,
                  struct error *err)
{
    const char *body = req->entity.base != NULL ? req->entity.base : "";
    const struct queuecheck_set *queues = s->cfg.queues != NULL ? snapwatch_lock(s->cfg.queues) : NULL;
    struct mutate_options opts = s->cfg.mutate;
    opts.dra = s->cfg.dra != NULL ? snapwatch_lock(s->cfg.dra) : NULL;    /* NULL until listed: no device counted */
    opts.held = s->cfg.held != NULL ? snapwatch_lock(s->cfg.held) : NULL; /* NULL until listed: every queued pod gated */
    /* /dispatch-suspend: a manager's webhook, where KubeRay must run no dispatched object (dispatchsuspend.h). */
    jsonarena_begin(); /* the review's jansson values, freed at once below; *text is libc memory (jsonarena.h) */
    int rc = strcmp(path, "/dispatch-suspend") == 0
                 ? admission_respond_dispatch(body, req->entity.len, queues, text, text_len, info, err)
                 : admission_respond(body, req->entity.len, queues, &opts, text, text_len, info, err);
    jsonarena_end();
    if (s->cfg.held != NULL)
        snapwatch_unlock(s->cfg.held);
    if (s->cfg.dra != NULL)
        snapwatch_unlock(s->cfg.dra);
    if (s->cfg.queues != NULL)
        snapwatch_unlock(s->cfg.queues);
    if (rc == 0 && info->tree_unknown)
        note_tree_unknown(s, info);
    return rc;
}

/* The whole webhook (POST /mutate or /validate, path): body -> admission_respond -> response. */
static void handle_review(struct server *s, h2o_req_t *req, const char *path)
{
    if (!method_is(req, "POST")) {
        respond_method_not_allowed(s, req, path, "POST");
        return;
    }
    /* h2o already answers 413 while reading a too-large body; this covers any path that slips by. */
    if (req->entity.len > s->cfg.max_body_bytes) {
        respond_text(s, req, path, 413, "Payload Too Large", "request body too large\n");
        return;
    }
    if (!is_json(req)) {
        respond_text(s, req, path, 415, "Unsupported Media Type", "Content-Type must be application/json\n");
        return;
    }

    char *text = NULL;
    size_t text_len = 0;
    struct admission_info info = {.kind = "other", .operation = "unknown", .result = "error"};
    struct error err = {{0}};
    int rc = decide(s, req, path, &text, &text_len, &info, &err);
    const char *labels[] = {info.kind, info.operation, info.result};
    metrics_counter_add(s->m_requests, labels, 1);

    if (rc != 0) {
        int status = ADMISSION_ERROR_STATUS;
        char line[sizeof(err.message) + 1];
        snprintf(line, sizeof(line), "%s\n", err.message[0] != '\0' ? err.message : "not an AdmissionReview v1 request");
        log_warnf("POST %s: %d: %s", path, status, err.message);
        respond_text(s, req, path, status, "Bad Request", line);
    } else {
        respond(s, req, path, 200, "OK", "application/json", text, text_len);
        free(text);
    }
    if (!h2o_timeval_is_null(&req->timestamps.request_begin_at)) {
        double d = seconds_since(&req->timestamps.request_begin_at);
        const char *kind[] = {info.kind};
        metrics_histogram_observe(s->m_duration, kind, d);
        int denied = strcmp(info.result, "denied") == 0;
        log_debugf("POST %s kind=%s operation=%s result=%s bytes=%zu %.3fms%s%s", path, info.kind, info.operation, info.result,
                   req->entity.len, d * 1e3, denied ? ": " : "", denied ? info.denial.message : "");
    }
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    struct server *s = ((struct handler *)self)->server;
    h2o_iovec_t path = req->path_normalized;

    if (h2o_memis(path.base, path.len, H2O_STRLIT("/mutate"))) {
        handle_review(s, req, "/mutate");
        return 0;
    }
    if (h2o_memis(path.base, path.len, H2O_STRLIT("/dispatch-suspend"))) {
        handle_review(s, req, "/dispatch-suspend");
        return 0;
    }
    if (h2o_memis(path.base, path.len, H2O_STRLIT("/validate"))) {
        handle_review(s, req, "/validate");
        return 0;
    }
    const char *label = h2o_memis(path.base, path.len, H2O_STRLIT("/healthz"))   ? "/healthz"
                        : h2o_memis(path.base, path.len, H2O_STRLIT("/readyz"))  ? "/readyz"
                        : h2o_memis(path.base, path.len, H2O_STRLIT("/metrics")) ? "/metrics"
                                                                                 : NULL;
    if (label == NULL) {
        respond_text(s, req, "other", 404, "Not Found", "not found\n");
        return 0;
    }
    if (!method_is(req, "GET") && !method_is(req, "HEAD")) {
        respond_method_not_allowed(s, req, label, "GET, HEAD");
        return 0;
    }
    if (strcmp(label, "/healthz") == 0) {
        respond_text(s, req, label, 200, "OK", "ok\n");
    } else if (strcmp(label, "/readyz") == 0) {
        if (s->phase == PHASE_SERVING)
            respond_text(s, req, label, 200, "OK", "ok\n");
        else
            respond_text(s, req, label, 503, "Service Unavailable", "shutting down\n");
    } else {
        size_t len = 0;
        metrics_gauge_set(s->m_dra_synced, NULL, snapwatch_synced(s->cfg.dra) ? 1 : 0);
        char *text = metrics_render(s->metrics, &len);
        respond(s, req, label, 200, "OK", METRICS_CONTENT_TYPE, text, len);
        free(text);
    }
    return 0;
}

/*
 * One accepted connection. h2o keeps the SSL_CTX pointer it was handed at
 * accept and calls SSL_new() with it only once the client's first bytes
 * arrive, without a reference of its own: a certificate reload in between
 * would free that context under it (a use-after-free that killed the webhook
 * when a rotation met a connection still waiting for its ClientHello). So each
 * connection holds a reference to the context it was accepted with until h2o
 * closes it.
 */
struct conn {
    struct server *server;
    SSL_CTX *ssl_ctx; /* referenced */
};

static void on_connection_close(void *data)
{
    struct conn *c = data;
    struct server *s = c->server;
    s->nconns--;
    metrics_gauge_set(s->m_conns, NULL, (double)s->nconns);
    SSL_CTX_free(c->ssl_ctx);
    free(c);
}

/*
 * A new connection before TLS: its first byte says whether the client speaks
 * TLS (a handshake record, 0x16) or plain HTTP (a method's capital letter). A
 * plain request gets a plain "400 this port speaks TLS" instead of a dropped
 * connection, so that a misconfigured client (http:// in a webhook's URL, a
 * curl without https) reads why. Until that byte arrives the connection waits
 * at most the handshake timeout.
 */
struct first_bytes {
    struct server *server;
    h2o_socket_t *sock;
    h2o_timeout_entry_t timeout;
    int answered; /* plain HTTP: the 400 is sent, draining until the client closes */
};

#define PLAINTEXT_BODY "this port speaks TLS only: use https:// instead\n"
#define PLAINTEXT_BODY_LEN "48"
_Static_assert(sizeof(PLAINTEXT_BODY) - 1 == 48, "PLAINTEXT_BODY_LEN is the body's length");
static const char plaintext_answer[] = "HTTP/1.1 400 Bad Request\r\n"
                                       "Content-Type: text/plain; charset=utf-8\r\n"
                                       "Content-Length: " PLAINTEXT_BODY_LEN "\r\n"
                                       "Connection: close\r\n"
                                       "\r\n" PLAINTEXT_BODY;

static void first_bytes_close(struct first_bytes *fb)
{
    if (h2o_timeout_is_linked(&fb->timeout))
        h2o_timeout_unlink(&fb->timeout);
    h2o_socket_close(fb->sock);
    free(fb);
}

static void on_first_bytes_timeout(h2o_timeout_entry_t *entry)
{
    struct first_bytes *fb = (struct first_bytes *)((char *)entry - offsetof(struct first_bytes, timeout));
    first_bytes_close(fb);
}

/* Reads and drops what the client sent; returns 1 at end of stream or on an error. */
static int drain(int fd)
{
    char buf[4096];
    for (int i = 0; i < 16; i++) {
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return 1;
        if (n < 0)
            return 0;
    }
    return 0;
}

static void on_first_bytes(h2o_socket_t *sock, const char *err)
{
    struct first_bytes *fb = sock->data;
    struct server *s = fb->server;
    int fd = h2o_socket_get_fd(sock);
    unsigned char first;

    if (err != NULL) {
        first_bytes_close(fb);
        return;
    }
    if (fb->answered) {
        if (drain(fd))
            first_bytes_close(fb);
        return;
    }
    ssize_t n = recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        first_bytes_close(fb);
        return;
    }
    if (first < 'A' || first > 'Z') {
        /* TLS (or garbage, which the handshake refuses): h2o takes over, with its own handshake timeout. */
        h2o_timeout_unlink(&fb->timeout);
        h2o_socket_read_stop(sock);
        h2o_socket_dont_read(sock, 0);
        sock->data = NULL;
        free(fb);
        /* h2o keeps a plain pointer to the SSL_CTX until the handshake starts: the connection holds a reference
           to it, so that a certificate reload meanwhile cannot free it under the connection. */
        struct conn *c = sock->on_close.data;
        c->ssl_ctx = s->accept_ctx.ssl_ctx;
        SSL_CTX_up_ref(c->ssl_ctx);
        h2o_accept(&s->accept_ctx, sock);
        return;
    }
    /* Plain HTTP: read the request (so that closing does not reset it), answer, and wait for the client to close. */
    int eof = drain(fd);
    ssize_t w = send(fd, plaintext_answer, sizeof(plaintext_answer) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    const char *labels[] = {"other", "400"};
    metrics_counter_add(s->m_http, labels, 1);
    log_debugf("plain HTTP on the TLS port: answered 400");
    if (eof || w != (ssize_t)sizeof(plaintext_answer) - 1) {
        first_bytes_close(fb);
        return;
    }
    shutdown(fd, SHUT_WR);
    fb->answered = 1;
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    struct server *s = listener->data;
    if (err != NULL) {
        log_errorf("accept: %s", err);
        return;
    }
    /* A few per wakeup: fair to the connections already open. */
    for (int i = 0; i < 16; i++) {
        h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
        if (sock == NULL)
            return;
        struct conn *c = util_malloc(sizeof(*c));
        c->server = s;
        c->ssl_ctx = NULL; /* referenced when h2o takes over (on_first_bytes) */
        s->nconns++;
        metrics_gauge_set(s->m_conns, NULL, (double)s->nconns);
        sock->on_close.cb = on_connection_close;
        sock->on_close.data = c;
        struct first_bytes *fb = util_calloc(1, sizeof(*fb));
        fb->server = s;
        fb->sock = sock;
        fb->timeout.cb = on_first_bytes_timeout;
        sock->data = fb;
        h2o_timeout_link(s->ctx.loop, &s->ctx.handshake_timeout, &fb->timeout);
        h2o_socket_dont_read(sock, 1);
        h2o_socket_read_start(sock, on_first_bytes);
    }
}

struct server *server_create(const struct server_config *cfg)
{
    struct server *s = calloc(1, sizeof(*s));
    struct error terr = {{0}};
    int fd = -1;
    if (s == NULL)
        abort();
    s->cfg = *cfg;
    create_metrics(s);

    if ((s->tls = tlsreload_create(cfg->cert_path, cfg->key_path, &terr)) == NULL) {
        log_errorf("TLS: %s", terr.message);
        goto fail;
    }
    if ((fd = listen_tcp(cfg->addr, "--addr")) < 0)
        goto fail;

    h2o_config_init(&s->config);
    s->config.max_request_entity_size = cfg->max_body_bytes;
    s->config.handshake_timeout = cfg->handshake_timeout_ms;
    s->config.http1.req_timeout = cfg->request_timeout_ms;
    s->config.http1.upgrade_to_http2 = 0; /* no h2c: TLS only */
    s->config.http2.idle_timeout = cfg->request_timeout_ms;
    /* No h2o timer for this (server_run enforces shutdown_timeout): h2o_context_dispose() asserts that no timer is linked. */
    s->config.http2.graceful_shutdown_timeout = 0;
    s->config.server_name = h2o_iovec_init(H2O_STRLIT("raygate-webhook"));
    h2o_hostconf_t *host = h2o_config_register_host(&s->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    struct handler *handler = (struct handler *)h2o_create_handler(path, sizeof(*handler));
    handler->super.on_req = on_req;
    handler->server = s;

    h2o_context_init(&s->ctx, h2o_evloop_create(), &s->config);
    s->h2o_ready = 1;
    s->accept_ctx.ctx = &s->ctx;
    s->accept_ctx.hosts = s->config.hosts;
    s->accept_ctx.ssl_ctx = tlsreload_current(s->tls);

    s->listener = h2o_evloop_socket_create(s->ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    s->listener->data = s;
    h2o_socket_read_start(s->listener, on_accept);
    log_infof("listening on %s (TLS, h2 and http/1.1)", cfg->addr);
    return s;

fail:
    server_destroy(s);
    return NULL;
}

void server_request_stop(struct server *s)
{
    atomic_store(&s->stop_requested, true);
}

static void poll_certificate(struct server *s)
{
    int rc = tlsreload_poll(s->tls);
    if (rc == 1) {
        /* Only new connections read accept_ctx.ssl_ctx; those accepted before hold the old one (struct conn). */
        s->accept_ctx.ssl_ctx = tlsreload_current(s->tls);
        const char *labels[] = {"success"};
        metrics_counter_add(s->m_reloads, labels, 1);
    } else if (rc < 0) {
        const char *labels[] = {"failure"};
        metrics_counter_add(s->m_reloads, labels, 1);
    }
}

int server_run(struct server *s)
{
    for (;;) {
        /* Wake at least once a second: certificate polling and the stop flag. */
        int32_t max_wait = s->phase == PHASE_SERVING ? 1000 : 50;
        if (h2o_evloop_run(s->ctx.loop, max_wait) != 0 && errno != EINTR) {
            log_errorf("event loop failed: %s", strerror(errno));
            return -1;
        }
        uint64_t now = h2o_now(s->ctx.loop);
        if (now >= s->next_poll_ms) {
            poll_certificate(s);
            s->next_poll_ms = now + s->cfg.reload_interval_ms;
        }
        if (atomic_load(&s->stop_requested) && s->phase == PHASE_SERVING) {
            log_infof("stop requested: not ready; closing the listener in %llu ms", (unsigned long long)s->cfg.shutdown_delay_ms);
            s->phase = PHASE_DELAY;
            s->close_listener_ms = now + s->cfg.shutdown_delay_ms;
        }
        if (s->phase == PHASE_DELAY && now >= s->close_listener_ms) {
            h2o_socket_read_stop(s->listener);
            h2o_socket_close(s->listener);
            s->listener = NULL;
            /* HTTP/2: GOAWAY; HTTP/1: the next responses carry "Connection: close". */
            h2o_context_request_shutdown(&s->ctx);
            s->phase = PHASE_DRAINING;
            s->deadline_ms = now + s->cfg.shutdown_timeout_ms;
            /* h2o's HTTP/2 shutdown re-sends GOAWAY from a one-second timer, even with no connection open;
               h2o_context_dispose() asserts that no timer is pending, so wait that one out. */
            s->timers_done_ms = now + 1100;
            log_infof("listener closed; waiting up to %llu ms for %zu connections", (unsigned long long)s->cfg.shutdown_timeout_ms,
                      s->nconns);
        }
        if (s->phase == PHASE_DRAINING) {
            if (s->nconns == 0 && now >= s->timers_done_ms) {
                log_infof("all connections closed");
                s->clean_exit = 1;
                return 0;
            }
            if (now >= s->deadline_ms && s->nconns > 0) {
                log_warnf("shutdown deadline passed with %zu connections open; exiting", s->nconns);
                return 0;
            }
        }
    }
}

void server_destroy(struct server *s)
{
    if (s == NULL)
        return;
    if (s->h2o_ready) {
        if (s->listener != NULL)
            h2o_socket_close(s->listener);
        /* Connections left open at the deadline still reference the loop: then leave it to process exit. */
        if (s->clean_exit) {
            h2o_evloop_t *loop = s->ctx.loop;
            h2o_context_dispose(&s->ctx);
            h2o_evloop_destroy(loop);
            h2o_config_dispose(&s->config);
        }
    }
    tlsreload_destroy(s->tls);
    metrics_registry_destroy(s->metrics);
    free(s);
}
