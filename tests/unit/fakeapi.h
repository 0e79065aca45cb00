/*
 * fakeapi: a small fake Kubernetes API server for unit tests, an HTTP/1.1
 * server on 127.0.0.1 (one thread per connection, keep-alive, chunked watch
 * streams) whose answers each test scripts with a handler, and a kube client
 * pointed at it. Used by test_kubeclient, test_kube and test_kubewatch
 * (the client) and test_ungate (the gate controller's gate removal). Include
 * it after <cmocka.h>: failed setup asserts.
 */
#ifndef RAYGATE_TEST_FAKEAPI_H
#define RAYGATE_TEST_FAKEAPI_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "kube.h"

/* --- the fake API server ---------------------------------------------------------- */

struct fake_req {
    char method[16];
    char target[2048]; /* path and query */
    char auth[512];
    char content_type[128];
    char user_agent[128];
    char *body;
    size_t body_len;
    int fd;
};

struct fake;
/* Answers req (write to req->fd with the helpers). Return 0 to keep the connection, -1 to close it. */
typedef int (*fake_handler)(struct fake *f, const struct fake_req *req);

struct fake {
    int listen_fd;
    int port;
    pthread_t accept_thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stopping;
    int conns;
    fake_handler handler;
    void *arg;
    json_t *log; /* [{method, target, auth, content_type}] */
    int inflight, max_inflight, received;
    int expiries; /* fake_expire's count: held watches end with 410 Gone when it moves */
    int held;     /* watches held by stream_hold_expiring now */
};

static inline int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static inline const char *reason_of(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    }
    return "Status";
}

/* A complete response; headers: extra header lines, each ending in \r\n (or NULL). */
static inline void respond(const struct fake_req *req, int status, const char *headers, const char *body)
{
    char head[512];
    size_t n = strlen(body);
    snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n", status,
             reason_of(status), n, headers != NULL ? headers : "");
    write_all(req->fd, head, strlen(head));
    write_all(req->fd, body, n);
}

static inline void respond_json(const struct fake_req *req, int status, const char *headers, json_t *body)
{
    char *s = json_dumps(body, JSON_COMPACT);
    respond(req, status, headers, s);
    free(s);
    json_decref(body);
}

static inline void respond_status(const struct fake_req *req, int code, const char *reason, const char *message,
                                  const char *headers)
{
    respond_json(req, code, headers,
                 json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1", "status", "Failure", "message",
                           message, "reason", reason, "code", code));
}

static inline void stream_begin(const struct fake_req *req)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    write_all(req->fd, head, sizeof(head) - 1);
}

static inline void stream_chunk(const struct fake_req *req, const char *data, size_t n)
{
    char size[32];
    snprintf(size, sizeof(size), "%zx\r\n", n);
    write_all(req->fd, size, strlen(size));
    write_all(req->fd, data, n);
    write_all(req->fd, "\r\n", 2);
}

static inline void stream_end(const struct fake_req *req)
{
    write_all(req->fd, "0\r\n\r\n", 5);
}

/* Keeps a watch open until the client hangs up or the server stops. */
static inline void stream_hold(struct fake *f, const struct fake_req *req)
{
    for (;;) {
        pthread_mutex_lock(&f->lock);
        int stop = f->stopping;
        pthread_mutex_unlock(&f->lock);
        if (stop)
            return;
        struct pollfd p = {.fd = req->fd, .events = POLLIN};
        if (poll(&p, 1, 50) > 0) {
            char b[256];
            if (recv(req->fd, b, sizeof(b), 0) <= 0)
                return;
        }
    }
}

/*
 * Waits (up to 10 s) for n watches held by stream_hold_expiring, then ends
 * them with an ERROR 410 (their clients list again). A watch started after
 * the call is held as usual. Any thread.
 */
static inline void fake_expire(struct fake *f, int n)
{
    for (int waited = 0; waited < 10000; waited += 5) {
        pthread_mutex_lock(&f->lock);
        int held = f->held;
        pthread_mutex_unlock(&f->lock);
        if (held >= n)
            break;
        usleep(5 * 1000);
    }
    pthread_mutex_lock(&f->lock);
    f->expiries++;
    pthread_mutex_unlock(&f->lock);
}

/*
 * Keeps a watch open (counted in f->held) until the client hangs up or the
 * server stops (returns -1: close), or until fake_expire is called (an ERROR event 410 "too old
 * resource version" and the stream's end; returns 0: the connection goes on).
 */
static inline int stream_hold_expiring(struct fake *f, const struct fake_req *req)
{
    pthread_mutex_lock(&f->lock);
    int at = f->expiries;
    f->held++;
    pthread_mutex_unlock(&f->lock);
    for (;;) {
        pthread_mutex_lock(&f->lock);
        int stop = f->stopping, moved = f->expiries != at;
        f->held -= stop || moved;
        pthread_mutex_unlock(&f->lock);
        if (stop)
            return -1;
        if (moved) {
            static const char gone[] = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
                                       "\"message\":\"too old resource version\",\"reason\":\"Expired\",\"code\":410}}\n";
            stream_chunk(req, gone, sizeof(gone) - 1);
            stream_end(req);
            return 0;
        }
        struct pollfd p = {.fd = req->fd, .events = POLLIN};
        if (poll(&p, 1, 20) > 0) {
            char b[256];
            if (recv(req->fd, b, sizeof(b), 0) <= 0) {
                pthread_mutex_lock(&f->lock);
                f->held--;
                pthread_mutex_unlock(&f->lock);
                return -1;
            }
        }
    }
}

/* Reads one request; returns 0, or -1 on EOF, error or server stop. buf/len hold bytes read ahead. */
static inline int read_request(struct fake *f, int fd, char *buf, size_t cap, size_t *len, struct fake_req *req)
{
    char *end;
    for (;;) {
        buf[*len] = '\0';
        if ((end = strstr(buf, "\r\n\r\n")) != NULL)
            break;
        if (*len + 1 >= cap)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 50);
        pthread_mutex_lock(&f->lock);
        int stop = f->stopping;
        pthread_mutex_unlock(&f->lock);
        if (stop)
            return -1;
        if (r <= 0)
            continue;
        ssize_t n = recv(fd, buf + *len, cap - 1 - *len, 0);
        if (n <= 0)
            return -1;
        *len += (size_t)n;
    }
    memset(req, 0, sizeof(*req));
    req->fd = fd;
    size_t head_len = (size_t)(end - buf) + 4;
    if (sscanf(buf, "%15s %2047s", req->method, req->target) != 2)
        return -1;
    size_t content_length = 0;
    for (char *line = strstr(buf, "\r\n") + 2; line < end; line = strstr(line, "\r\n") + 2) {
        if (strncasecmp(line, "Content-Length:", 15) == 0)
            content_length = strtoul(line + 15, NULL, 10);
        else if (strncasecmp(line, "Authorization:", 14) == 0)
            sscanf(line + 14, " %511[^\r]", req->auth);
        else if (strncasecmp(line, "Content-Type:", 13) == 0)
            sscanf(line + 13, " %127[^\r]", req->content_type);
        else if (strncasecmp(line, "User-Agent:", 11) == 0)
            sscanf(line + 11, " %127[^\r]", req->user_agent);
    }
    while (*len < head_len + content_length) {
        if (*len + 1 >= cap)
            return -1;
        ssize_t n = recv(fd, buf + *len, cap - 1 - *len, 0);
        if (n <= 0)
            return -1;
        *len += (size_t)n;
    }
    req->body = malloc(content_length + 1);
    memcpy(req->body, buf + head_len, content_length);
    req->body[content_length] = '\0';
    req->body_len = content_length;
    memmove(buf, buf + head_len + content_length, *len - head_len - content_length);
    *len -= head_len + content_length;
    return 0;
}

struct conn_arg {
    struct fake *f;
    int fd;
};

static inline void *conn_main(void *p)
{
    struct conn_arg *ca = p;
    struct fake *f = ca->f;
    int fd = ca->fd;
    free(ca);
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    struct fake_req req;
    while (read_request(f, fd, buf, cap, &len, &req) == 0) {
        pthread_mutex_lock(&f->lock);
        json_array_append_new(f->log, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s%}", "method", req.method, "target", req.target, "auth",
                                                req.auth, "content_type", req.content_type, "user_agent", req.user_agent, "body",
                                                req.body, req.body_len));
        f->received++;
        if (++f->inflight > f->max_inflight)
            f->max_inflight = f->inflight;
        pthread_cond_broadcast(&f->cond);
        pthread_mutex_unlock(&f->lock);
        int keep = f->handler(f, &req);
        pthread_mutex_lock(&f->lock);
        f->inflight--;
        pthread_mutex_unlock(&f->lock);
        free(req.body);
        if (keep != 0)
            break;
    }
    free(buf);
    close(fd);
    pthread_mutex_lock(&f->lock);
    f->conns--;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

static inline void *accept_main(void *p)
{
    struct fake *f = p;
    for (;;) {
        pthread_mutex_lock(&f->lock);
        int stop = f->stopping;
        pthread_mutex_unlock(&f->lock);
        if (stop)
            break;
        struct pollfd pf = {.fd = f->listen_fd, .events = POLLIN};
        if (poll(&pf, 1, 50) <= 0)
            continue;
        int fd = accept(f->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        struct conn_arg *ca = malloc(sizeof(*ca));
        ca->f = f;
        ca->fd = fd;
        pthread_mutex_lock(&f->lock);
        f->conns++;
        pthread_mutex_unlock(&f->lock);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        if (pthread_create(&t, &attr, conn_main, ca) != 0)
            abort();
        pthread_attr_destroy(&attr);
    }
    return NULL;
}

static inline struct fake *fake_start(fake_handler handler, void *arg)
{
    struct fake *f = calloc(1, sizeof(*f));
    f->handler = handler;
    f->arg = arg;
    f->log = json_array();
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    f->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(f->listen_fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(f->listen_fd, 256), 0);
    socklen_t al = sizeof(a);
    getsockname(f->listen_fd, (struct sockaddr *)&a, &al);
    f->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&f->accept_thread, NULL, accept_main, f), 0);
    return f;
}

static inline void fake_stop(struct fake *f)
{
    pthread_mutex_lock(&f->lock);
    f->stopping = 1;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    pthread_join(f->accept_thread, NULL);
    pthread_mutex_lock(&f->lock);
    while (f->conns > 0)
        pthread_cond_wait(&f->cond, &f->lock);
    pthread_mutex_unlock(&f->lock);
    close(f->listen_fd);
    json_decref(f->log);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* A copy of the request log (new reference). */
static inline json_t *fake_log(struct fake *f)
{
    pthread_mutex_lock(&f->lock);
    json_t *copy = json_deep_copy(f->log);
    pthread_mutex_unlock(&f->lock);
    return copy;
}

static inline const char *log_field(json_t *log, size_t i, const char *field)
{
    return json_string_value(json_object_get(json_array_get(log, i), field));
}

/* The value of query parameter name in target, copied into out ("" if absent). */
static inline const char *query_param(const char *target, const char *name, char *out, size_t size)
{
    out[0] = '\0';
    const char *q = strchr(target, '?');
    size_t n = strlen(name);
    while (q != NULL) {
        q++;
        if (strncmp(q, name, n) == 0 && q[n] == '=') {
            size_t v = strcspn(q + n + 1, "&");
            snprintf(out, size, "%.*s", (int)v, q + n + 1);
            break;
        }
        q = strchr(q, '&');
    }
    return out;
}

static inline int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static inline struct kube_client *client_for(struct fake *f, const char *token, const char *token_file,
                                             const struct kube_client_options *o)
{
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", f->port);
    struct kubeconfig cfg;
    kubeconfig_init(&cfg);
    cfg.server = strdup(server);
    cfg.token = token != NULL ? strdup(token) : NULL;
    cfg.token_file = token_file != NULL ? strdup(token_file) : NULL;
    struct error err;
    struct kube_client *c = kube_client_create(&cfg, o, &err);
    if (c == NULL)
        fail_msg("kube_client_create: %s", err.message);
    kubeconfig_finish(&cfg);
    return c;
}

static inline json_t *pod(const char *name, const char *rv)
{
    char uid[64];
    snprintf(uid, sizeof(uid), "uid-%s", name);
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s}}", "kind", "Pod", "apiVersion", "v1", "metadata", "name", name, "namespace",
                     "ray", "uid", uid, "resourceVersion", rv);
}

static inline json_t *pod_list(const char *rv, const char *cont, json_t *items)
{
    json_t *l = json_pack("{s:s,s:s,s:{s:s},s:o}", "kind", "PodList", "apiVersion", "v1", "metadata", "resourceVersion", rv,
                          "items", items);
    if (cont != NULL)
        json_object_set_new(json_object_get(l, "metadata"), "continue", json_string(cont));
    return l;
}

/* --- for tests of modules that make their own client (gate/lead/leader.c) ---------------- */

/* A kubeconfig (caller finishes it) pointing at f, without credentials. */
static inline void fake_kubeconfig_init(struct fake *f, struct kubeconfig *cfg)
{
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", f->port);
    kubeconfig_init(cfg);
    cfg->server = strdup(server);
}

/* Polls cond(arg) every 10 ms for up to timeout_ms. Returns whether it became true. */
static inline int fake_wait(int (*cond)(void *arg), void *arg, long timeout_ms)
{
    struct timespec start, now, tick = {.tv_nsec = 10 * 1000000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (cond(arg))
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 > timeout_ms)
            return cond(arg);
        nanosleep(&tick, NULL);
    }
}

/* --- a fake cluster: lists, held watches, discovery and scripted writes ------------ */

/*
 * fake_cluster_handler answers from a state (f->arg, a JSON object, read under f->lock):
 *   "lists":  collection path -> [objects]: a GET without ?watch answers them as a List
 *             (resourceVersion "1"); a watch (?watch=1) is held open without events
 *             until fake_expire (then the client lists again);
 *   "get":    path -> object answered to a GET (discovery, a RayCluster); absent: 404;
 *   "script": path -> [status codes]: the answers to the next writes of that path (a 403
 *             carries a NamespaceTerminating cause); spent or absent: a write is answered
 *             200 (201 for a POST) with its own body, metadata.name filled in from the path.
 * Every request is in f->log (fake_log). A new state lists no PriorityClass (every
 * apiserver serves them: the gate's watch of them lists at once).
 */
static inline json_t *fake_cluster_state_new(void)
{
    return json_pack("{s:{s:[]},s:{},s:{}}", "lists", "/apis/scheduling.k8s.io/v1/priorityclasses", "get", "script");
}

/* Adds obj (borrowed) to the list of path in state. */
static inline void fake_cluster_add(json_t *state, const char *path, const json_t *obj)
{
    json_t *lists = json_object_get(state, "lists");
    if (json_object_get(lists, path) == NULL)
        json_object_set_new(lists, path, json_array());
    json_array_append_new(json_object_get(lists, path), json_deep_copy(obj));
}

/*
 * Serves a cache fixture's objects (fx borrowed: arrays "pods", "nodes", "rayclusters", "queues",
 * as tests/unit/cachefixture.h reads them) as the lists of their collections.
 */
static inline void fake_cluster_serve(json_t *state, const json_t *fx)
{
    static const struct {
        const char *kind, *path;
    } lists[] = {
        {"pods", "/api/v1/pods"},
        {"nodes", "/api/v1/nodes"},
        {"rayclusters", "/apis/ray.io/v1/rayclusters"},
        {"queues", "/apis/scheduling.volcano.sh/v1beta1/queues"},
    };
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        size_t k;
        json_t *obj;
        json_object_set_new(json_object_get(state, "lists"), lists[i].path, json_array());
        json_array_foreach(json_object_get(fx, lists[i].kind), k, obj)
        {
            fake_cluster_add(state, lists[i].path, obj);
        }
    }
}

/* The next scripted answer to a write of path (0: none); caller holds f->lock. */
static inline int fake_cluster_next_code(json_t *state, const char *path)
{
    json_t *script = json_object_get(json_object_get(state, "script"), path);
    if (json_array_size(script) == 0)
        return 0;
    int code = (int)json_integer_value(json_array_get(script, 0));
    json_array_remove(script, 0);
    return code;
}

static inline void fake_cluster_write(struct fake *f, const struct fake_req *req, const char *path)
{
    pthread_mutex_lock(&f->lock);
    int code = fake_cluster_next_code(f->arg, path);
    pthread_mutex_unlock(&f->lock);
    if (code == 403) {
        respond_json(req, 403, NULL,
                     json_pack("{s:s,s:s,s:s,s:s,s:{s:[{s:s}]},s:i}", "kind", "Status", "status", "Failure", "message",
                               "namespace is being terminated", "reason", "Forbidden", "details", "causes", "reason",
                               "NamespaceTerminating", "code", 403));
        return;
    }
    if (code != 0 && code != 200 && code != 201) {
        respond_status(req, code, "Scripted", "scripted failure", NULL);
        return;
    }
    json_t *body = json_loadb(req->body, req->body_len, 0, NULL);
    if (!json_is_object(body)) {
        json_decref(body);
        body = json_object();
    }
    if (json_object_get(body, "metadata") == NULL)
        json_object_set_new(body, "metadata", json_object());
    /* The name: the path's last segment, or the one before a subresource's /status. */
    char name[256] = "";
    size_t len = strlen(path);
    if (len > 7 && strcmp(path + len - 7, "/status") == 0)
        len -= 7;
    const char *end = path + len, *start = end;
    while (start > path && start[-1] != '/')
        start--;
    snprintf(name, sizeof(name), "%.*s", (int)(end - start), start);
    json_t *meta = json_object_get(body, "metadata");
    if (json_object_get(meta, "name") == NULL && strcmp(req->method, "POST") != 0)
        json_object_set_new(meta, "name", json_string(name));
    respond_json(req, strcmp(req->method, "POST") == 0 ? 201 : 200, NULL, body);
}

static inline int fake_cluster_handler(struct fake *f, const struct fake_req *req)
{
    char path[2048], watch[8];
    snprintf(path, sizeof(path), "%.*s", (int)strcspn(req->target, "?"), req->target);
    query_param(req->target, "watch", watch, sizeof(watch));
    if (strcmp(req->method, "GET") != 0) {
        fake_cluster_write(f, req, path);
        return 0;
    }
    if (watch[0] != '\0') {
        stream_begin(req);
        return stream_hold_expiring(f, req);
    }
    pthread_mutex_lock(&f->lock);
    json_t *state = f->arg;
    json_t *items = json_deep_copy(json_object_get(json_object_get(state, "lists"), path));
    json_t *obj = json_deep_copy(json_object_get(json_object_get(state, "get"), path));
    pthread_mutex_unlock(&f->lock);
    if (items != NULL) {
        respond_json(req, 200, NULL,
                     json_pack("{s:s,s:s,s:{s:s},s:o}", "kind", "List", "apiVersion", "v1", "metadata", "resourceVersion", "1",
                               "items", items));
        json_decref(obj);
    } else if (obj != NULL) {
        respond_json(req, 200, NULL, obj);
    } else {
        respond_status(req, 404, "NotFound", "not found", NULL);
    }
    return 0;
}

/* Starts a fake API server answering from state (borrowed: fake_cluster_handler) and sets *k to a client for it (o may be NULL). */
static inline struct fake *fake_cluster_start(json_t *state, struct kube_client **k, const struct kube_client_options *o)
{
    struct fake *f = fake_start(fake_cluster_handler, state);
    *k = client_for(f, "t", NULL, o);
    return f;
}

/* Stops what fake_cluster_start started, and frees state. */
static inline void fake_cluster_stop(struct fake *f, struct kube_client *k, json_t *state)
{
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(state);
}

/* Waits up to ms for n requests whose method and path prefix match (method NULL: any write); returns how many there are. */
static inline size_t fake_wait_requests(struct fake *f, const char *method, const char *prefix, size_t n, long ms)
{
    size_t found = 0;
    for (long waited = 0;; waited += 10) {
        json_t *log = fake_log(f);
        found = 0;
        for (size_t i = 0; i < json_array_size(log); i++) {
            const char *m = log_field(log, i, "method");
            int method_ok = method != NULL ? strcmp(m, method) == 0 : strcmp(m, "GET") != 0;
            if (method_ok && starts_with(log_field(log, i, "target"), prefix))
                found++;
        }
        json_decref(log);
        if (found >= n || waited >= ms)
            return found;
        usleep(10 * 1000);
    }
}

#endif
