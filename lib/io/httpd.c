#include "httpd.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <h2o.h>

#include "listen.h"
#include "log.h"
#include "util.h"

struct httpd {
    struct metrics_registry *reg;
    httpd_ready_fn ready;
    void *ready_arg;
    h2o_globalconf_t config;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    h2o_socket_t *listener;
    size_t nconns;
    atomic_int stop;
    pthread_t thread;
};

struct handler {
    h2o_handler_t super;
    struct httpd *h;
};

static void respond(h2o_req_t *req, int status, const char *reason, const char *content_type, const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = reason;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type, strlen(content_type));
    req->res.content_length = len;
    h2o_send_inline(req, body, len);
}

static void respond_text(h2o_req_t *req, int status, const char *reason, const char *text)
{
    respond(req, status, reason, "text/plain; charset=utf-8", text, strlen(text));
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    struct httpd *h = ((struct handler *)self)->h;
    h2o_iovec_t path = req->path_normalized;
    int is_get = h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET")) ||
                 h2o_memis(req->method.base, req->method.len, H2O_STRLIT("HEAD"));

    if (h2o_memis(path.base, path.len, H2O_STRLIT("/metrics")) || h2o_memis(path.base, path.len, H2O_STRLIT("/healthz")) ||
        h2o_memis(path.base, path.len, H2O_STRLIT("/readyz"))) {
        if (!is_get) {
            h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, H2O_STRLIT("GET, HEAD"));
            respond_text(req, 405, "Method Not Allowed", "method not allowed\n");
            return 0;
        }
    } else {
        respond_text(req, 404, "Not Found", "not found\n");
        return 0;
    }
    if (h2o_memis(path.base, path.len, H2O_STRLIT("/metrics"))) {
        size_t len = 0;
        char *text = metrics_render(h->reg, &len);
        respond(req, 200, "OK", METRICS_CONTENT_TYPE, text, len);
        free(text);
    } else if (h2o_memis(path.base, path.len, H2O_STRLIT("/healthz"))) {
        respond_text(req, 200, "OK", "ok\n");
    } else {
        char why[256] = "not ready";
        if (h->ready == NULL || h->ready(h->ready_arg, why, sizeof(why))) {
            respond_text(req, 200, "OK", "ok\n");
        } else {
            char *text = util_strdupf("%s\n", why);
            respond_text(req, 503, "Service Unavailable", text);
            free(text);
        }
    }
    return 0;
}

static void on_connection_close(void *data)
{
    struct httpd *h = data;
    h->nconns--;
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    struct httpd *h = listener->data;
    if (err != NULL) {
        log_errorf("metrics endpoint accept: %s", err);
        return;
    }
    for (int i = 0; i < 16; i++) {
        h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
        if (sock == NULL)
            return;
        h->nconns++;
        sock->on_close.cb = on_connection_close;
        sock->on_close.data = h;
        h2o_accept(&h->accept_ctx, sock);
    }
}

static void *run(void *arg)
{
    struct httpd *h = arg;
    while (!atomic_load(&h->stop)) {
        /* Wake a few times a second to see the stop flag. */
        if (h2o_evloop_run(h->ctx.loop, 200) != 0 && errno != EINTR) {
            log_errorf("metrics endpoint event loop failed: %s", strerror(errno));
            break;
        }
    }
    return NULL;
}

struct httpd *httpd_start(const char *addr, struct metrics_registry *reg, httpd_ready_fn ready, void *ready_arg)
{
    int fd = listen_tcp(addr, "--metrics-addr");
    if (fd < 0)
        return NULL;
    struct httpd *h = util_calloc(1, sizeof(*h));
    h->reg = reg;
    h->ready = ready;
    h->ready_arg = ready_arg;

    h2o_config_init(&h->config);
    h->config.server_name = h2o_iovec_init(H2O_STRLIT("raygate"));
    h2o_hostconf_t *host = h2o_config_register_host(&h->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    struct handler *handler = (struct handler *)h2o_create_handler(path, sizeof(*handler));
    handler->super.on_req = on_req;
    handler->h = h;
    h2o_context_init(&h->ctx, h2o_evloop_create(), &h->config);
    h->accept_ctx.ctx = &h->ctx;
    h->accept_ctx.hosts = h->config.hosts;
    h->listener = h2o_evloop_socket_create(h->ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    h->listener->data = h;
    h2o_socket_read_start(h->listener, on_accept);

    if (pthread_create(&h->thread, NULL, run, h) != 0) {
        log_errorf("metrics endpoint: cannot start its thread");
        h2o_socket_close(h->listener);
        h2o_evloop_t *loop = h->ctx.loop;
        h2o_context_dispose(&h->ctx);
        h2o_evloop_destroy(loop);
        h2o_config_dispose(&h->config);
        free(h);
        return NULL;
    }
    log_infof("metrics and probes on http://%s (/metrics, /healthz, /readyz)", addr);
    return h;
}

int httpd_port(const struct httpd *h)
{
    struct sockaddr_storage ss;
    if (h2o_socket_getsockname(h->listener, (struct sockaddr *)&ss) == 0)
        return -1;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

void httpd_stop(struct httpd *h)
{
    if (h == NULL)
        return;
    atomic_store(&h->stop, 1);
    pthread_join(h->thread, NULL);
    h2o_socket_close(h->listener);
    /* A connection still open references the loop: then leave the rest to process exit. */
    if (h->nconns == 0) {
        h2o_evloop_run(h->ctx.loop, 0); /* lets the listener's close complete */
        h2o_evloop_t *loop = h->ctx.loop;
        h2o_context_dispose(&h->ctx);
        h2o_evloop_destroy(loop);
        h2o_config_dispose(&h->config);
        free(h);
    }
}
