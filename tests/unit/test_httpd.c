/*
 * gate/httpd.c: on an ephemeral port of 127.0.0.1, /metrics serves the
 * registry's text, /healthz answers 200, /readyz 200 only while the ready
 * callback says so (503 with its reason otherwise), other paths 404, other
 * methods 405, and a malformed request gets an error without hurting the
 * server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd.h"
#include "metrics.h"

struct readiness {
    atomic_int ready;
    atomic_int calls;
};

static int ready_cb(void *arg, char *why, size_t size)
{
    struct readiness *r = arg;
    atomic_fetch_add(&r->calls, 1);
    if (atomic_load(&r->ready))
        return 1;
    snprintf(why, size, "caches not synced");
    return 0;
}

struct fixture {
    struct metrics_registry *reg;
    struct readiness rd;
    struct httpd *h;
    int port;
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    fx->reg = metrics_registry_create();
    struct metrics_family *c =
        metrics_counter_create(fx->reg, "raygate_test_total", "A counter of the test.", 1, (const char *const[]){"queue"});
    const char *labels[] = {"q1"};
    metrics_counter_add(c, labels, 42);
    fx->h = httpd_start("127.0.0.1:0", fx->reg, ready_cb, &fx->rd);
    assert_non_null(fx->h);
    fx->port = httpd_port(fx->h);
    assert_true(fx->port > 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    httpd_stop(fx->h);
    metrics_registry_destroy(fx->reg);
    free(fx);
    return 0;
}

/*
 * Sends raw on a new connection, shuts our side down if shut_wr, and reads
 * until the server closes it or 5 s pass. Returns the answer (malloc'd).
 */
static char *exchange_shut(int port, const char *raw, int shut_wr)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    size_t n = strlen(raw);
    assert_int_equal(send(fd, raw, n, MSG_NOSIGNAL), (ssize_t)n);
    if (shut_wr)
        shutdown(fd, SHUT_WR);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0) { /* never closed: what no caller expects */
            len = (size_t)snprintf(buf, cap, "(no EOF after %zu bytes)", len);
            break;
        }
        ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
        if (len + 1 >= cap)
            break;
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static char *exchange(int port, const char *raw)
{
    return exchange_shut(port, raw, 0);
}

/* A request that asks the server to close the connection after answering. */
static char *request(int port, const char *method, const char *path)
{
    char raw[512];
    snprintf(raw, sizeof(raw), "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", method, path);
    return exchange(port, raw);
}

static int status_of(const char *answer)
{
    int status = 0;
    if (sscanf(answer, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    return status;
}

/* Whether answer has the header line "name: value" (name in any case). */
static int has_header(const char *answer, const char *name, const char *value)
{
    size_t n = strlen(name);
    const char *end = strstr(answer, "\r\n\r\n");
    for (const char *line = strstr(answer, "\r\n"); line != NULL && line < end; line = strstr(line + 2, "\r\n")) {
        const char *l = line + 2;
        if (strncasecmp(l, name, n) == 0 && l[n] == ':' && strncmp(l + n + 1, " ", 1) == 0 &&
            strncmp(l + n + 2, value, strlen(value)) == 0 && strncmp(l + n + 2 + strlen(value), "\r\n", 2) == 0)
            return 1;
    }
    return 0;
}

static const char *body_of(const char *answer)
{
    const char *b = strstr(answer, "\r\n\r\n");
    return b != NULL ? b + 4 : "";
}

static void test_metrics(void **state)
{
    struct fixture *fx = *state;
    char *a = request(fx->port, "GET", "/metrics");
    assert_int_equal(status_of(a), 200);
    assert_true(has_header(a, "content-type", METRICS_CONTENT_TYPE));
    size_t len = 0;
    char *want = metrics_render(fx->reg, &len);
    assert_string_equal(body_of(a), want);
    assert_non_null(strstr(body_of(a), "raygate_test_total{queue=\"q1\"} 42\n"));
    free(want);
    free(a);

    /* HEAD: the headers only. */
    a = request(fx->port, "HEAD", "/metrics");
    assert_int_equal(status_of(a), 200);
    assert_string_equal(body_of(a), "");
    free(a);
}

/* GETs path, expects status and, unless NULL, body. */
static void expect_get(int port, const char *path, int status, const char *body)
{
    char *a = request(port, "GET", path);
    if (status_of(a) != status || (body != NULL && strcmp(body_of(a), body) != 0))
        fail_msg("GET %s: want %d %s, got %s", path, status, body != NULL ? body : "", a);
    free(a);
}

static void test_healthz(void **state)
{
    struct fixture *fx = *state;
    expect_get(fx->port, "/healthz", 200, "ok\n");
    assert_int_equal(atomic_load(&fx->rd.calls), 0); /* liveness never asks readiness */
}

static void test_readyz(void **state)
{
    struct fixture *fx = *state;
    expect_get(fx->port, "/readyz", 503, "caches not synced\n");
    assert_int_equal(atomic_load(&fx->rd.calls), 1);
    atomic_store(&fx->rd.ready, 1);
    expect_get(fx->port, "/readyz", 200, "ok\n");
    assert_int_equal(atomic_load(&fx->rd.calls), 2);
    atomic_store(&fx->rd.ready, 0);
    expect_get(fx->port, "/readyz", 503, NULL);
}

/* Without a callback, ready as soon as it serves. */
static void test_readyz_without_callback(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_create();
    struct httpd *h = httpd_start("127.0.0.1:0", reg, NULL, NULL);
    assert_non_null(h);
    expect_get(httpd_port(h), "/readyz", 200, "ok\n");
    httpd_stop(h);
    metrics_registry_destroy(reg);
}

static void test_not_found_and_method(void **state)
{
    struct fixture *fx = *state;
    const char *paths[] = {"/", "/metricsx", "/metrics/x", "/ready", "/healthz2"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        expect_get(fx->port, paths[i], 404, "not found\n");
    char *a = request(fx->port, "POST", "/metrics");
    assert_int_equal(status_of(a), 405);
    assert_true(has_header(a, "allow", "GET, HEAD"));
    free(a);
    a = request(fx->port, "DELETE", "/readyz");
    assert_int_equal(status_of(a), 405);
    free(a);
    assert_int_equal(atomic_load(&fx->rd.calls), 0);
}

/*
 * Garbage is refused with a 4xx/5xx and the connection closed; a client that
 * goes away mid-request or after a keep-alive request has its connection
 * closed; the server answers the next request.
 */
static void test_bad_requests(void **state)
{
    struct fixture *fx = *state;
    const char *bad[] = {
        "\x01\x02\x03 garbage\r\n\r\n",
        "GET /metrics HTTP/9.9\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *a = exchange(fx->port, bad[i]);
        if (status_of(a) < 400)
            fail_msg("request %zu answered %s", i, a);
        free(a);
    }
    char *a = exchange_shut(fx->port, "GET /metrics HTTP/1.1\r\nHost", 1);
    assert_string_equal(a, "");
    free(a);
    a = exchange_shut(fx->port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 1);
    assert_int_equal(status_of(a), 200);
    assert_string_equal(body_of(a), "ok\n");
    free(a);
    expect_get(fx->port, "/healthz", 200, "ok\n");
}

/* Two requests on one keep-alive connection get two answers. */
static void test_keep_alive(void **state)
{
    struct fixture *fx = *state;
    char *a = exchange(fx->port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                 "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_int_equal(status_of(a), 200);
    const char *second = strstr(a + 1, "HTTP/1.1 ");
    assert_non_null(second);
    assert_int_equal(status_of(second), 404);
    free(a);
}

static void test_bad_address(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_create();
    assert_null(httpd_start("not an address", reg, NULL, NULL));
    httpd_stop(NULL);
    metrics_registry_destroy(reg);
}

/* An argument runs only the tests whose names match it (cmocka's pattern). */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_healthz, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readyz, setup, teardown),
        cmocka_unit_test(test_readyz_without_callback),
        cmocka_unit_test_setup_teardown(test_not_found_and_method, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_alive, setup, teardown),
        cmocka_unit_test(test_bad_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
