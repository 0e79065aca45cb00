#include "server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <h2o.h>

#include "admission.h"
#include "log.h"
#include "metrics.h"
#include "tlsreload.h"

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
    volatile sig_atomic_t stop_requested;
    enum phase phase;
    uint64_t next_poll_ms, close_listener_ms, deadline_ms, timers_done_ms;
    int clean_exit; /* no connection and no h2o timer left: the context can be disposed */
    int h2o_ready; /* config and context initialised */

    struct metrics_registry *metrics;
    struct metrics_family *m_requests, *m_http, *m_duration, *m_reloads, *m_conns;
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
    s->m_http = metrics_counter_create(s->metrics, "raygate_webhook_http_requests_total",
                                       "HTTP requests, by path (/mutate, /healthz, /readyz, /metrics or other) and status code.", 2,
                                       http_labels);
    s->m_duration = metrics_histogram_create(s->metrics, "raygate_webhook_request_duration_seconds",
                                             "Time from the start of a POST /mutate request to its answer, by object kind.", 1,
                                             kind_label, duration_buckets, sizeof(duration_buckets) / sizeof(duration_buckets[0]));
    s->m_reloads = metrics_counter_create(s->metrics, "raygate_webhook_cert_reloads_total",
                                          "Certificate reloads from disk, by result (success or failure).", 1, result_label);
    s->m_conns = metrics_gauge_create(s->metrics, "raygate_webhook_open_connections", "Open client connections.", 0, NULL);
    /* Show both reload series from the start, so that an alert on failures has a baseline. */
    const char *success[] = {"success"}, *failure[] = {"failure"};
    metrics_counter_add(s->m_reloads, success, 0);
    metrics_counter_add(s->m_reloads, failure, 0);
    metrics_gauge_set(s->m_conns, NULL, 0);
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

/* The whole webhook: body -> admission_respond -> response. */
static void handle_mutate(struct server *s, h2o_req_t *req)
{
    if (!method_is(req, "POST")) {
        respond_method_not_allowed(s, req, "/mutate", "POST");
        return;
    }
    /* h2o already answers 413 while reading a too-large body; this covers any path that slips by. */
    if (req->entity.len > s->cfg.max_body_bytes) {
        respond_text(s, req, "/mutate", 413, "Payload Too Large", "request body too large\n");
        return;
    }
    if (!is_json(req)) {
        respond_text(s, req, "/mutate", 415, "Unsupported Media Type", "Content-Type must be application/json\n");
        return;
    }

    char *text = NULL;
    size_t text_len = 0;
    struct admission_info info = {"other", "unknown", "error"};
    struct admission_error err = {0, ""};
    const char *body = req->entity.base != NULL ? req->entity.base : "";
    int rc = admission_respond(body, req->entity.len, &text, &text_len, &info, &err);
    const char *labels[] = {info.kind, info.operation, info.result};
    metrics_counter_add(s->m_requests, labels, 1);

    if (rc != 0) {
        int status = err.http_status >= 400 && err.http_status <= 499 ? err.http_status : 400;
        char line[sizeof(err.message) + 1];
        snprintf(line, sizeof(line), "%s\n", err.message[0] != '\0' ? err.message : "not an AdmissionReview v1 request");
        log_warnf("POST /mutate: %d: %s", status, err.message);
        respond_text(s, req, "/mutate", status, "Bad Request", line);
    } else {
        respond(s, req, "/mutate", 200, "OK", "application/json", text, text_len);
        free(text);
    }
    if (!h2o_timeval_is_null(&req->timestamps.request_begin_at)) {
        double d = seconds_since(&req->timestamps.request_begin_at);
        const char *kind[] = {info.kind};
        metrics_histogram_observe(s->m_duration, kind, d);
        log_debugf("POST /mutate kind=%s operation=%s result=%s bytes=%zu %.3fms", info.kind, info.operation, info.result,
                   req->entity.len, d * 1e3);
    }
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    struct server *s = ((struct handler *)self)->server;
    h2o_iovec_t path = req->path_normalized;

    if (h2o_memis(path.base, path.len, H2O_STRLIT("/mutate"))) {
        handle_mutate(s, req);
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
        char *text = metrics_render(s->metrics, &len);
        respond(s, req, label, 200, "OK", METRICS_CONTENT_TYPE, text, len);
        free(text);
    }
    return 0;
}

static void on_connection_close(void *data)
{
    struct server *s = data;
    s->nconns--;
    metrics_gauge_set(s->m_conns, NULL, (double)s->nconns);
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
        s->nconns++;
        metrics_gauge_set(s->m_conns, NULL, (double)s->nconns);
        sock->on_close.cb = on_connection_close;
        sock->on_close.data = s;
        h2o_accept(&s->accept_ctx, sock);
    }
}

/* "host:port", ":port" or "[v6]:port" into host (NULL for all interfaces) and port. */
static int split_addr(const char *addr, char *host, size_t host_size, char *port, size_t port_size)
{
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) >= port_size)
        return -1;
    const char *h = addr;
    size_t hlen = (size_t)(colon - addr);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    } else if (memchr(h, ':', hlen) != NULL) {
        return -1; /* a bare IPv6 address needs brackets */
    }
    if (hlen >= host_size)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    snprintf(port, port_size, "%s", colon + 1);
    return 0;
}

static int open_listener(const char *addr)
{
    char host[256], port[16];
    struct addrinfo hints, *res = NULL;
    int fd = -1, on = 1, off = 0;

    if (split_addr(addr, host, sizeof(host), port, sizeof(port)) != 0) {
        log_errorf("--addr %s: want HOST:PORT, :PORT or [IPv6]:PORT", addr);
        return -1;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host[0] != '\0' ? host : NULL, port, &hints, &res);
    if (gai != 0) {
        log_errorf("--addr %s: %s", addr, gai_strerror(gai));
        return -1;
    }
    /* For all interfaces prefer one dual-stack IPv6 socket, else IPv4. */
    for (int pass = 0; pass < 2 && fd < 0; pass++) {
        for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
            if (host[0] == '\0' && (pass == 0) != (ai->ai_family == AF_INET6))
                continue;
            if (host[0] != '\0' && pass == 1)
                break;
            fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0)
                continue;
            if (ai->ai_family == AF_INET6 && host[0] == '\0')
                setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
            if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
                listen(fd, SOMAXCONN) != 0) {
                log_errorf("--addr %s: %s", addr, strerror(errno));
                close(fd);
                fd = -1;
            }
        }
    }
    freeaddrinfo(res);
    return fd;
}

struct server *server_create(const struct server_config *cfg)
{
    struct server *s = calloc(1, sizeof(*s));
    struct tlsreload_error terr = {{0}};
    int fd = -1;
    if (s == NULL)
        abort();
    s->cfg = *cfg;
    create_metrics(s);

    if ((s->tls = tlsreload_create(cfg->cert_path, cfg->key_path, &terr)) == NULL) {
        log_errorf("TLS: %s", terr.message);
        goto fail;
    }
    if ((fd = open_listener(cfg->addr)) < 0)
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
    s->stop_requested = 1;
}

static void poll_certificate(struct server *s)
{
    int rc = tlsreload_poll(s->tls);
    if (rc == 1) {
        /* Only new connections read accept_ctx.ssl_ctx; live SSL objects keep the old context alive. */
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
        if (s->stop_requested && s->phase == PHASE_SERVING) {
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
