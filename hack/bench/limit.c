/*
 * bench-limit: the webhook benchmark's physical limit. The same h2o event loop,
 * TLS context (webhook/tlsreload.c) and HTTP settings as raygate-webhook, one
 * thread, but POST /mutate answers a constant AdmissionReview read from a file
 * once, without looking at the request body: what TLS and HTTP alone cost.
 *
 *   bench-limit --addr 127.0.0.1:PORT --cert FILE --key FILE --response FILE
 *
 * Runs until SIGTERM or SIGINT. Not part of raygate; built with -Dbench=true.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <h2o.h>

#include "log.h"
#include "tlsreload.h"
#include "util.h"

static volatile sig_atomic_t stop;
static h2o_iovec_t response;
static h2o_accept_ctx_t accept_ctx;

static void on_signal(int sig)
{
    stop = 1;
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    if (!h2o_memis(req->path_normalized.base, req->path_normalized.len, H2O_STRLIT("/mutate")))
        return -1;
    req->res.status = 200;
    req->res.reason = "OK";
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT("application/json"));
    req->res.content_length = response.len;
    h2o_send_inline(req, response.base, response.len);
    return 0;
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    if (err != NULL)
        return;
    for (int i = 0; i < 16; i++) {
        h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
        if (sock == NULL)
            return;
        h2o_accept(&accept_ctx, sock);
    }
}

/* "HOST:PORT" (IPv4) into a listening socket. */
static int listen_on(const char *addr)
{
    char host[64];
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || (size_t)(colon - addr) >= sizeof(host))
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(fd, SOMAXCONN) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* The h2o server on listening socket fd, TLS from ssl, as webhook/server.c configures it; ctx lives as long as the program. */
static void serve(h2o_context_t *ctx, SSL_CTX *ssl, int fd)
{
    static h2o_globalconf_t config;
    h2o_config_init(&config);
    config.max_request_entity_size = 16u << 20;
    config.http1.upgrade_to_http2 = 0;
    config.server_name = h2o_iovec_init(H2O_STRLIT("bench-limit"));
    h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    h2o_handler_t *handler = h2o_create_handler(path, sizeof(*handler));
    handler->on_req = on_req;
    h2o_context_init(ctx, h2o_evloop_create(), &config);
    accept_ctx.ctx = ctx;
    accept_ctx.hosts = config.hosts;
    accept_ctx.ssl_ctx = ssl;
    h2o_socket_t *listener = h2o_evloop_socket_create(ctx->loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    h2o_socket_read_start(listener, on_accept);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"addr", required_argument, NULL, 'a'},
        {"cert", required_argument, NULL, 'c'},
        {"key", required_argument, NULL, 'k'},
        {"response", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    const char *addr = NULL, *cert = NULL, *key = NULL, *resp = NULL;
    int ch;
    while ((ch = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (ch) {
        case 'a':
            addr = optarg;
            break;
        case 'c':
            cert = optarg;
            break;
        case 'k':
            key = optarg;
            break;
        case 'r':
            resp = optarg;
            break;
        default:
            fputs("usage: bench-limit --addr HOST:PORT --cert FILE --key FILE --response FILE\n", stderr);
            return 2;
        }
    }
    if (addr == NULL || cert == NULL || key == NULL || resp == NULL) {
        fputs("usage: bench-limit --addr HOST:PORT --cert FILE --key FILE --response FILE\n", stderr);
        return 2;
    }

    size_t cert_len, key_len;
    char *cert_pem = util_read_file(cert, 1 << 20, &cert_len);
    char *key_pem = util_read_file(key, 1 << 20, &key_len);
    response.base = util_read_file(resp, 1 << 20, &response.len);
    if (cert_pem == NULL || key_pem == NULL || response.base == NULL) {
        log_errorf("cannot read %s, %s or %s: %s", cert, key, resp, strerror(errno));
        return 1;
    }
    struct error terr;
    SSL_CTX *ssl = tlsreload_ctx_create(cert_pem, cert_len, key_pem, key_len, &terr);
    if (ssl == NULL) {
        log_errorf("TLS: %s", terr.message);
        return 1;
    }
    int fd = listen_on(addr);
    if (fd < 0) {
        log_errorf("--addr %s: cannot listen (want IPv4 HOST:PORT): %s", addr, strerror(errno));
        return 1;
    }

    static h2o_context_t ctx;
    serve(&ctx, ssl, fd);

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    log_infof("listening on %s (TLS), answering %zu bytes", addr, response.len);
    while (!stop)
        h2o_evloop_run(ctx.loop, 1000);
    return 0;
}
