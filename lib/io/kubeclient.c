/*
 * kubeclient: the client (configuration, token, pooled multi handles) and one
 * HTTP exchange, the request/transfer core of kube.h.
 */
#include "kubeclient.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "kubeclient_internal.h"
#include "log.h"
#include "util.h"
#include "version.h"
#include "watchstream.h"

#define MAX_TOKEN_BYTES 16384

/* --- small helpers ------------------------------------------------------------ */

/* splitmix64: jitter only, not security. */
uint64_t kube_client_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint64_t kube_client_rng_seed(const void *salt)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)salt;
    kube_client_rng_next(&s);
    return s;
}

/* Appends s percent-encoded as a query value. */
static void buf_put_escaped(struct util_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
            ch == '_' || ch == '~') {
            util_buf_append(b, (const char *)&ch, 1);
        } else {
            char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
            util_buf_append(b, e, 3);
        }
    }
}

void kube_client_url_param(struct util_buf *b, const char *name, const char *value)
{
    if (value == NULL)
        return;
    util_buf_puts(b, strchr(b->data, '?') != NULL ? "&" : "?");
    util_buf_puts(b, name);
    util_buf_puts(b, "=");
    buf_put_escaped(b, value);
}

char *kube_client_list_url(const char *path, unsigned limit, const char *cont, const char *label_selector,
                           const char *field_selector)
{
    struct util_buf b = {0};
    char lim[24];
    util_format(lim, sizeof(lim), "%u", limit);
    util_buf_puts(&b, path);
    kube_client_url_param(&b, "limit", lim);
    kube_client_url_param(&b, "continue", cont);
    kube_client_url_param(&b, "labelSelector", label_selector);
    kube_client_url_param(&b, "fieldSelector", field_selector);
    return b.data;
}

/* --- pure helpers ------------------------------------------------------------- */

long kube_client_backoff_ms(unsigned attempt, long base_ms, long max_ms, uint64_t rnd)
{
    if (base_ms < 1)
        base_ms = 1;
    if (max_ms < base_ms)
        max_ms = base_ms;
    long d = base_ms;
    for (unsigned i = 0; i < attempt && d < max_ms; i++)
        d = d > max_ms / 2 ? max_ms : d * 2;
    if (d > max_ms)
        d = max_ms;
    long half = d / 2;
    return d - half + (long)(rnd % (uint64_t)(half + 1));
}

long kube_client_retry_after_ms(const char *value)
{
    if (value == NULL)
        return -1;
    while (*value == ' ' || *value == '\t')
        value++;
    size_t digits = strspn(value, "0123456789");
    if (digits == 0 || digits > 9)
        return -1;
    const char *rest = value + digits;
    while (*rest == ' ' || *rest == '\t' || *rest == '\r' || *rest == '\n')
        rest++;
    if (*rest != '\0')
        return -1;
    return strtol(value, NULL, 10) * 1000;
}

int kube_client_metrics_register(struct metrics_registry *reg, struct kube_metrics *out)
{
    static const char *const request_labels[] = {"verb", "code"};
    static const char *const restart_labels[] = {"watch", "reason"};
    if (reg == NULL)
        return -1;
    struct kube_metrics m;
    m.requests = metrics_counter_create(reg, "raygate_kube_requests_total",
                                        "Kubernetes API requests by verb and HTTP status (0: no answer).", 2, request_labels);
    m.watch_restarts =
        metrics_counter_create(reg, "raygate_kube_watch_restarts_total",
                               "Kubernetes watch restarts by watch and reason (timeout, expired, error).", 2, restart_labels);
    if (m.requests == NULL || m.watch_restarts == NULL)
        return -1;
    *out = m;
    return 0;
}

/* --- the client ------------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        abort();
}

/* Reads a bearer token file: one line; trailing whitespace dropped. NULL with err. */
static char *read_token(const char *path, struct error *err)
{
    size_t n;
    char *b = util_read_file(path, MAX_TOKEN_BYTES + 2, &n);
    if (b == NULL) {
        error_setf(err, "cannot read token file %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t size = n;
    while (n > 0 && (b[n - 1] == '\n' || b[n - 1] == '\r' || b[n - 1] == ' ' || b[n - 1] == '\t'))
        b[--n] = '\0';
    if (n == 0 || n > MAX_TOKEN_BYTES || memchr(b, '\0', n) != NULL || strpbrk(b, "\r\n") != NULL) {
        error_setf(err, "token file %s is empty, too large or not one line", path);
        util_wipe_free(b, size);
        return NULL;
    }
    return b;
}

/* Re-reads the token file under c->lock; keeps the old token when the file cannot be read. */
static void token_reload_locked(struct kube_client *c)
{
    struct error err;
    c->token_read_at = clock_mono_ms();
    char *t = read_token(c->cfg.token_file, &err);
    if (t == NULL) {
        log_warnf("keeping the previous token: %s", err.message);
        return;
    }
    util_wipe_free(c->token, (size_t)-1);
    c->token = t;
}

/* Returns a new copy of the token to send (NULL: none), re-reading the file when due. */
static char *token_get(struct kube_client *c)
{
    pthread_mutex_lock(&c->lock);
    if (c->cfg.token_file != NULL && clock_mono_ms() - c->token_read_at >= c->opt.token_reread_ms)
        token_reload_locked(c);
    char *t = c->token != NULL ? util_strdup(c->token) : NULL;
    pthread_mutex_unlock(&c->lock);
    return t;
}

/* After a 401 sent with token used: re-reads the file; returns 1 if the token is now different. */
int kube_client_token_refresh_after_401(struct kube_client *c, const char *used)
{
    if (c->cfg.token_file == NULL)
        return 0;
    pthread_mutex_lock(&c->lock);
    token_reload_locked(c);
    int changed = c->token != NULL && (used == NULL || strcmp(c->token, used) != 0);
    pthread_mutex_unlock(&c->lock);
    return changed;
}

struct kube_client *kube_client_create(const struct kubeconfig *cfg, const struct kube_client_options *opts, struct error *err)
{
    pthread_once(&curl_once, curl_init_once);
    if (cfg->server == NULL) {
        error_setf(err, "kube client: no server configured");
        return NULL;
    }
#if LIBCURL_VERSION_NUM < 0x074d00
    if (cfg->ca_data != NULL || cfg->client_cert_data != NULL || cfg->client_key_data != NULL) {
        error_setf(err, "kube client: -data certificates need libcurl >= 7.77");
        return NULL;
    }
#endif
    struct kube_client *c = util_calloc(1, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    kubeconfig_init(&c->cfg);
    kubeconfig_copy(&c->cfg, cfg);
    if (opts != NULL)
        c->opt = *opts;
    struct kube_client_options *o = &c->opt;
    if (o->request_timeout_ms <= 0)
        o->request_timeout_ms = 30000;
    if (o->connect_timeout_ms <= 0)
        o->connect_timeout_ms = 10000;
    if (o->backoff_base_ms <= 0)
        o->backoff_base_ms = 500;
    if (o->backoff_max_ms <= 0)
        o->backoff_max_ms = 30000;
    if (o->retry_after_max_ms <= 0)
        o->retry_after_max_ms = 60000;
    if (o->max_retries == 0)
        o->max_retries = 5;
    if (o->token_reread_ms <= 0)
        o->token_reread_ms = 60000;
    if (o->max_response_bytes == 0)
        o->max_response_bytes = (size_t)256 << 20;
    if (o->max_event_bytes == 0)
        o->max_event_bytes = WATCHSTREAM_DEFAULT_MAX_EVENT;
    if (o->watch_timeout_min_s <= 0)
        o->watch_timeout_min_s = 300;
    if (o->watch_timeout_max_s < o->watch_timeout_min_s)
        o->watch_timeout_max_s = o->watch_timeout_min_s > 600 ? o->watch_timeout_min_s : 600;
    if (o->list_page_size == 0)
        o->list_page_size = 500;
    o->user_agent = util_strdup(o->user_agent != NULL ? o->user_agent : "raygate/" RAYGATE_VERSION);
    o->client_name = util_strdup(o->client_name != NULL ? o->client_name : "");
    if (o->metrics != NULL)
        c->metrics = *o->metrics;
    o->metrics = NULL;

    if (c->cfg.token_file != NULL) {
        char *t = read_token(c->cfg.token_file, err);
        if (t != NULL) {
            c->token = t;
        } else if (c->cfg.token == NULL) {
            goto fail;
        } else {
            log_warnf("using the kubeconfig's token: %s", err->message);
        }
        c->token_read_at = clock_mono_ms();
    }
    if (c->token == NULL && c->cfg.token != NULL)
        c->token = util_strdup(c->cfg.token);
    return c;
fail:
    kube_client_destroy(c);
    return NULL;
}

void kube_client_destroy(struct kube_client *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->pool_len; i++)
        curl_multi_cleanup(c->pool[i]);
    util_wipe_free(c->token, (size_t)-1);
    free((char *)c->opt.user_agent);
    free((char *)c->opt.client_name);
    kubeconfig_finish(&c->cfg);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

CURLM *kube_client_multi_new(void)
{
    CURLM *m = curl_multi_init();
    if (m == NULL)
        abort();
    curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    return m;
}

CURLM *kube_client_pool_get(struct kube_client *c)
{
    CURLM *m = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->pool_len > 0)
        m = c->pool[--c->pool_len];
    pthread_mutex_unlock(&c->lock);
    return m != NULL ? m : kube_client_multi_new();
}

void kube_client_pool_put(struct kube_client *c, CURLM *m)
{
    pthread_mutex_lock(&c->lock);
    if (c->pool_len < KUBE_POOL_MAX_IDLE) {
        c->pool[c->pool_len++] = m;
        m = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (m != NULL)
        curl_multi_cleanup(m);
}

void kube_client_count_request(struct kube_client *c, const char *verb, long status)
{
    if (c->opt.client_requests != NULL) {
        const char *name[] = {c->opt.client_name};
        metrics_counter_add(c->opt.client_requests, name, 1);
    }
    if (c->metrics.requests == NULL)
        return;
    char code[24];
    util_format(code, sizeof(code), "%ld", status);
    const char *labels[] = {verb, code};
    metrics_counter_add(c->metrics.requests, labels, 1);
}

/* --- one HTTP exchange ------------------------------------------------------ */

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    struct kube_xfer *x = ud;
    size_t n = size * nmemb;
    if (n > 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new response (after 100 Continue or a retry) */
        x->retry_after_ms = -1;
    } else if (n > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
        char v[32];
        size_t m = n - 12 < sizeof(v) - 1 ? n - 12 : sizeof(v) - 1;
        memcpy(v, p + 12, m);
        v[m] = '\0';
        x->retry_after_ms = kube_client_retry_after_ms(v);
    }
    return n;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
    struct kube_xfer *x = ud;
    size_t n = size * nmemb;
    if (x->ws != NULL) {
        if (x->status == 0)
            curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
        if (x->status == 200) {
            x->ws_rc = watchstream_feed(x->ws, p, n, &x->ws_err);
            return x->ws_rc == 0 ? n : 0; /* a short count aborts the transfer */
        }
    }
    if (x->body.len + n > x->c->opt.max_response_bytes) {
        x->too_large = 1;
        return 0;
    }
    util_buf_append(&x->body, p, n);
    return n;
}

void kube_client_xfer_reset(struct kube_xfer *x)
{
    if (x->easy != NULL)
        curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->headers);
    free(x->url);
    free(x->payload);
    util_wipe_free(x->token, (size_t)-1);
    free(x->body.data);
    struct kube_client *c = x->c;
    struct watchstream *ws = x->ws;
    memset(x, 0, sizeof(*x));
    x->c = c;
    x->ws = ws;
}

static void set_blob(CURL *e, CURLoption opt, const char *data, size_t len)
{
#if LIBCURL_VERSION_NUM >= 0x074d00
    struct curl_blob blob = {.data = (void *)data, .len = len, .flags = CURL_BLOB_COPY};
    curl_easy_setopt(e, opt, &blob);
#else
    (void)e, (void)opt, (void)data, (void)len;
#endif
}

/* The request's headers: Accept, Content-Type when there is a body, and the bearer token (kept in x->token). */
static void xfer_headers(struct kube_xfer *x, const char *content_type)
{
    x->headers = curl_slist_append(x->headers, "Accept: application/json");
    x->headers = curl_slist_append(x->headers, "Expect:");
    if (x->payload != NULL) {
        char ct[128];
        util_format(ct, sizeof(ct), "Content-Type: %s", content_type != NULL ? content_type : "application/json");
        x->headers = curl_slist_append(x->headers, ct);
    }
    if ((x->token = token_get(x->c)) != NULL) {
        char *auth = util_strdupf("Authorization: Bearer %s", x->token);
        x->headers = curl_slist_append(x->headers, auth);
        util_wipe_free(auth, (size_t)-1);
    }
    if (x->headers == NULL)
        abort();
}

/* What every exchange sets: URL, method, body, headers, callbacks, timeouts, allowed protocol. */
static void xfer_set_request(struct kube_xfer *x, int https, long timeout_ms)
{
    const struct kube_client *c = x->c;
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_URL, x->url);
    if (strcmp(x->method, "GET") == 0)
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    else
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x->method);
    if (x->payload != NULL) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->payload);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(x->payload));
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    curl_easy_setopt(e, CURLOPT_USERAGENT, c->opt.user_agent);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->opt.connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, https ? "https" : "http");
#else
    curl_easy_setopt(e, CURLOPT_PROTOCOLS, https ? (long)CURLPROTO_HTTPS : (long)CURLPROTO_HTTP);
#endif
}

/*
 * libcurl turns on SSL_MODE_RELEASE_BUFFERS: OpenSSL then frees its read
 * buffer after each record and mallocs it again for the next. On a watch
 * stream that is a large malloc per event, and glibc's malloc consolidates
 * every fastbin the JSON parser's frees left before it, so a busy watch
 * pays a consolidation of the heap per event. The buffers are kept instead,
 * tens of KB per connection.
 */
static CURLcode keep_tls_buffers(CURL *e, void *ssl_ctx, void *arg)
{
    (void)e;
    (void)arg;
    SSL_CTX_clear_mode((SSL_CTX *)ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
    return CURLE_OK;
}

/* HTTPS: HTTP/2, the server's trust and the client certificate, from the kubeconfig. */
static void xfer_set_tls(CURL *e, const struct kubeconfig *k)
{
    curl_easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, keep_tls_buffers); /* CURLE_NOT_BUILT_IN without OpenSSL: ignored */
    /* HTTP/2 over TLS; wait for a connection that can multiplex rather than open many. */
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, k->insecure_skip_tls_verify ? 0L : 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, k->insecure_skip_tls_verify ? 0L : 2L);
    if (k->ca_data != NULL)
        set_blob(e, CURLOPT_CAINFO_BLOB, k->ca_data, k->ca_data_len);
    else if (k->ca_file != NULL)
        curl_easy_setopt(e, CURLOPT_CAINFO, k->ca_file);
    curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    if (k->client_cert_data != NULL)
        set_blob(e, CURLOPT_SSLCERT_BLOB, k->client_cert_data, k->client_cert_data_len);
    else if (k->client_cert_file != NULL)
        curl_easy_setopt(e, CURLOPT_SSLCERT, k->client_cert_file);
    if (k->client_key_data != NULL)
        set_blob(e, CURLOPT_SSLKEY_BLOB, k->client_key_data, k->client_key_data_len);
    else if (k->client_key_file != NULL)
        curl_easy_setopt(e, CURLOPT_SSLKEY, k->client_key_file);
}

void kube_client_xfer_prepare(struct kube_xfer *x, const char *method, const char *verb, const char *url_path,
                              const char *content_type, char *payload, long timeout_ms)
{
    struct kube_client *c = x->c;
    kube_client_xfer_reset(x);
    x->method = method;
    x->verb = verb;
    x->retry_after_ms = -1;
    x->payload = payload;
    x->url = util_strdupf("%s%s", c->cfg.server, url_path);
    if ((x->easy = curl_easy_init()) == NULL)
        abort();
    xfer_headers(x, content_type);
    int https = strncmp(c->cfg.server, "https://", 8) == 0;
    xfer_set_request(x, https, timeout_ms);
    if (https)
        xfer_set_tls(x->easy, &c->cfg);
}

/*
 * Records the outcome of a finished request (not a watch stream) into resp
 * (status, body, message) and counts it. path is for the message.
 */
void kube_client_xfer_result(struct kube_xfer *x, CURLcode cc, const char *path, struct kube_response *resp)
{
    long status = 0;
    if (cc == CURLE_OK)
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    x->status = status;
    kube_client_count_request(x->c, x->verb, status);
    kube_client_response_finish(resp);
    resp->status = status;
    if (cc != CURLE_OK) {
        const char *why = x->too_large ? "response too large" : x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(cc);
        util_format(resp->message, sizeof(resp->message), "%s %.160s: %s", x->method, path, why);
        return;
    }
    int ok = status >= 200 && status <= 299;
    if (x->body.len > 0 && !(ok && x->drop_ok_body))
        resp->body = json_loadb(x->body.data, x->body.len, 0, NULL);
    if (!ok) {
        const char *msg = json_string_value(json_object_get(resp->body, "message"));
        const char *reason = json_string_value(json_object_get(resp->body, "reason"));
        util_format(resp->message, sizeof(resp->message), "%s %.160s: %ld%s%s: %s", x->method, path, status,
                    reason != NULL ? " " : "", reason != NULL ? reason : "", msg != NULL ? msg : "no Status message");
    }
}

/* How long to wait before retrying a finished request; -1: do not retry. */
long kube_client_xfer_retry_delay(struct kube_xfer *x, unsigned *attempts, int *auth_retried, uint64_t *rng)
{
    struct kube_client *c = x->c;
    if (x->status == 401 && !*auth_retried) {
        *auth_retried = 1;
        return kube_client_token_refresh_after_401(c, x->token) ? 0 : -1;
    }
    if ((x->status == 429 || (x->status >= 500 && x->retry_after_ms >= 0)) && *attempts < c->opt.max_retries) {
        long d = x->retry_after_ms >= 0
                     ? x->retry_after_ms
                     : kube_client_backoff_ms(*attempts, c->opt.backoff_base_ms, c->opt.backoff_max_ms, kube_client_rng_next(rng));
        if (d > c->opt.retry_after_max_ms)
            d = c->opt.retry_after_max_ms;
        (*attempts)++;
        return d;
    }
    return -1;
}

/* --- responses ---------------------------------------------------------------- */

void kube_client_response_init(struct kube_response *r)
{
    memset(r, 0, sizeof(*r));
}

void kube_client_response_finish(struct kube_response *r)
{
    if (r == NULL)
        return;
    json_decref(r->body);
    kube_client_response_init(r);
}
