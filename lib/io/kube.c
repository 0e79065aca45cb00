#include "kube.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "clock.h"
#include "log.h"
#include "watchstream.h"
#include "util.h"
#include "version.h"

#define MAX_TOKEN_BYTES 16384
#define POOL_MAX_IDLE 8
#define DEFAULT_CONCURRENCY 64

/* --- small helpers ------------------------------------------------------------ */

/* splitmix64: jitter only, not security. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t rng_seed(const void *salt)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)salt;
    rng_next(&s);
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

static void buf_param(struct util_buf *b, const char *name, const char *value)
{
    if (value == NULL)
        return;
    util_buf_puts(b, strchr(b->data, '?') != NULL ? "&" : "?");
    util_buf_puts(b, name);
    util_buf_puts(b, "=");
    buf_put_escaped(b, value);
}

/* --- pure helpers ------------------------------------------------------------- */

long kube_backoff_ms(unsigned attempt, long base_ms, long max_ms, uint64_t rnd)
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

long kube_retry_after_ms(const char *value)
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

const char *kube_patch_content_type(enum kube_patch_type type)
{
    switch (type) {
    case KUBE_PATCH_MERGE:
        return "application/merge-patch+json";
    case KUBE_PATCH_JSON:
        return "application/json-patch+json";
    case KUBE_PATCH_STRATEGIC:
        return "application/strategic-merge-patch+json";
    }
    return "application/merge-patch+json";
}

int kube_metrics_register(struct metrics_registry *reg, struct kube_metrics *out)
{
    static const char *const request_labels[] = {"verb", "code"};
    static const char *const restart_labels[] = {"watch", "reason"};
    if (reg == NULL)
        return -1;
    struct kube_metrics m;
    m.requests = metrics_counter_create(reg, "raygate_kube_requests_total",
                                        "Kubernetes API requests by verb and HTTP status (0: no answer).", 2, request_labels);
    m.watch_restarts = metrics_counter_create(reg, "raygate_kube_watch_restarts_total",
                                              "Kubernetes watch restarts by watch and reason (timeout, expired, error).", 2,
                                              restart_labels);
    if (m.requests == NULL || m.watch_restarts == NULL)
        return -1;
    *out = m;
    return 0;
}

/* --- the client ------------------------------------------------------------- */

struct kube_client {
    struct kubeconfig cfg;
    struct kube_client_options opt; /* defaults resolved; user_agent owned */
    struct kube_metrics metrics;

    pthread_mutex_t lock; /* token, pool */
    char *token;          /* current bearer token, or NULL */
    int64_t token_read_at;
    CURLM *pool[POOL_MAX_IDLE];
    size_t pool_len;
};

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
        util_format(err->message, sizeof(err->message), "cannot read token file %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t size = n;
    while (n > 0 && (b[n - 1] == '\n' || b[n - 1] == '\r' || b[n - 1] == ' ' || b[n - 1] == '\t'))
        b[--n] = '\0';
    if (n == 0 || n > MAX_TOKEN_BYTES || memchr(b, '\0', n) != NULL || strpbrk(b, "\r\n") != NULL) {
        util_format(err->message, sizeof(err->message), "token file %s is empty, too large or not one line", path);
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
static int token_refresh_after_401(struct kube_client *c, const char *used)
{
    if (c->cfg.token_file == NULL)
        return 0;
    pthread_mutex_lock(&c->lock);
    token_reload_locked(c);
    int changed = c->token != NULL && (used == NULL || strcmp(c->token, used) != 0);
    pthread_mutex_unlock(&c->lock);
    return changed;
}

struct kube_client *kube_client_create(const struct kubeconfig *cfg, const struct kube_client_options *opts,
                                       struct error *err)
{
    pthread_once(&curl_once, curl_init_once);
    if (cfg->server == NULL) {
        util_format(err->message, sizeof(err->message), "kube client: no server configured");
        return NULL;
    }
#if LIBCURL_VERSION_NUM < 0x074d00
    if (cfg->ca_data != NULL || cfg->client_cert_data != NULL || cfg->client_key_data != NULL) {
        util_format(err->message, sizeof(err->message), "kube client: -data certificates need libcurl >= 7.77");
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
    kubeconfig_finish(&c->cfg);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static CURLM *multi_new(void)
{
    CURLM *m = curl_multi_init();
    if (m == NULL)
        abort();
    curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    return m;
}

static CURLM *pool_get(struct kube_client *c)
{
    CURLM *m = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->pool_len > 0)
        m = c->pool[--c->pool_len];
    pthread_mutex_unlock(&c->lock);
    return m != NULL ? m : multi_new();
}

static void pool_put(struct kube_client *c, CURLM *m)
{
    pthread_mutex_lock(&c->lock);
    if (c->pool_len < POOL_MAX_IDLE) {
        c->pool[c->pool_len++] = m;
        m = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (m != NULL)
        curl_multi_cleanup(m);
}

static void count_request(struct kube_client *c, const char *verb, long status)
{
    if (c->metrics.requests == NULL)
        return;
    char code[24];
    util_format(code, sizeof(code), "%ld", status);
    const char *labels[] = {verb, code};
    metrics_counter_add(c->metrics.requests, labels, 1);
}

/* --- one HTTP exchange ------------------------------------------------------ */

struct xfer {
    struct kube_client *c;
    CURL *easy;
    struct curl_slist *headers;
    char *url;
    char *payload;
    char *token; /* the token sent */
    const char *method;
    const char *verb;
    char errbuf[CURL_ERROR_SIZE];

    long status;
    long retry_after_ms;
    struct util_buf body;
    int too_large;

    /* Watch streams: a 200 body goes to ws instead of body. */
    struct watchstream *ws;
    int ws_rc;
    struct error ws_err;
};

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    struct xfer *x = ud;
    size_t n = size * nmemb;
    if (n > 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new response (after 100 Continue or a retry) */
        x->retry_after_ms = -1;
    } else if (n > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
        char v[32];
        size_t m = n - 12 < sizeof(v) - 1 ? n - 12 : sizeof(v) - 1;
        memcpy(v, p + 12, m);
        v[m] = '\0';
        x->retry_after_ms = kube_retry_after_ms(v);
    }
    return n;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
    struct xfer *x = ud;
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

static void xfer_reset(struct xfer *x)
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

/*
 * Prepares x (reset) for method url_path (relative to the server) with body
 * text payload (stolen, may be NULL). timeout_ms bounds the whole transfer.
 */
static void xfer_prepare(struct xfer *x, const char *method, const char *verb, const char *url_path, const char *content_type,
                         char *payload, long timeout_ms)
{
    struct kube_client *c = x->c;
    xfer_reset(x);
    x->method = method;
    x->verb = verb;
    x->retry_after_ms = -1;
    x->payload = payload;
    size_t n = strlen(c->cfg.server) + strlen(url_path) + 1;
    x->url = malloc(n);
    if (x->url == NULL)
        abort();
    util_format(x->url, n, "%s%s", c->cfg.server, url_path);

    CURL *e = x->easy = curl_easy_init();
    if (e == NULL)
        abort();
    x->headers = curl_slist_append(x->headers, "Accept: application/json");
    x->headers = curl_slist_append(x->headers, "Expect:");
    if (payload != NULL) {
        char ct[128];
        util_format(ct, sizeof(ct), "Content-Type: %s", content_type != NULL ? content_type : "application/json");
        x->headers = curl_slist_append(x->headers, ct);
    }
    if ((x->token = token_get(c)) != NULL) {
        size_t an = strlen(x->token) + sizeof("Authorization: Bearer ");
        char *auth = malloc(an);
        if (auth == NULL)
            abort();
        util_format(auth, an, "Authorization: Bearer %s", x->token);
        x->headers = curl_slist_append(x->headers, auth);
        util_wipe_free(auth, (size_t)-1);
    }
    if (x->headers == NULL)
        abort();

    int https = strncmp(c->cfg.server, "https://", 8) == 0;
    curl_easy_setopt(e, CURLOPT_URL, x->url);
    if (strcmp(method, "GET") == 0)
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    else
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    if (payload != NULL) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, payload);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
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
    if (https) {
        /* HTTP/2 over TLS; wait for a connection that can multiplex rather than open many. */
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
        const struct kubeconfig *k = &c->cfg;
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
}

/*
 * Records the outcome of a finished request (not a watch stream) into resp
 * (status, body, message) and counts it. path is for the message.
 */
static void xfer_result(struct xfer *x, CURLcode cc, const char *path, struct kube_response *resp)
{
    long status = 0;
    if (cc == CURLE_OK)
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    x->status = status;
    count_request(x->c, x->verb, status);
    kube_response_finish(resp);
    resp->status = status;
    if (cc != CURLE_OK) {
        const char *why = x->too_large ? "response too large" : x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(cc);
        util_format(resp->message, sizeof(resp->message), "%s %.160s: %s", x->method, path, why);
        return;
    }
    if (x->body.len > 0)
        resp->body = json_loadb(x->body.data, x->body.len, 0, NULL);
    if (status < 200 || status > 299) {
        const char *msg = json_string_value(json_object_get(resp->body, "message"));
        const char *reason = json_string_value(json_object_get(resp->body, "reason"));
        util_format(resp->message, sizeof(resp->message), "%s %.160s: %ld%s%s: %s", x->method, path, status, reason != NULL ? " " : "",
            reason != NULL ? reason : "", msg != NULL ? msg : "no Status message");
    }
}

/* How long to wait before retrying a finished request; -1: do not retry. */
static long retry_delay(struct xfer *x, unsigned *attempts, int *auth_retried, uint64_t *rng)
{
    struct kube_client *c = x->c;
    if (x->status == 401 && !*auth_retried) {
        *auth_retried = 1;
        return token_refresh_after_401(c, x->token) ? 0 : -1;
    }
    if ((x->status == 429 || (x->status >= 500 && x->retry_after_ms >= 0)) && *attempts < c->opt.max_retries) {
        long d = x->retry_after_ms >= 0
                     ? x->retry_after_ms
                     : kube_backoff_ms(*attempts, c->opt.backoff_base_ms, c->opt.backoff_max_ms, rng_next(rng));
        if (d > c->opt.retry_after_max_ms)
            d = c->opt.retry_after_max_ms;
        (*attempts)++;
        return d;
    }
    return -1;
}

/* --- requests and batches -------------------------------------------------- */

void kube_response_init(struct kube_response *r)
{
    memset(r, 0, sizeof(*r));
}

void kube_response_finish(struct kube_response *r)
{
    if (r == NULL)
        return;
    json_decref(r->body);
    kube_response_init(r);
}

static const char *verb_of(const char *method)
{
    if (strcmp(method, "GET") == 0)
        return "get";
    if (strcmp(method, "POST") == 0)
        return "create";
    if (strcmp(method, "PUT") == 0)
        return "update";
    if (strcmp(method, "PATCH") == 0)
        return "patch";
    if (strcmp(method, "DELETE") == 0)
        return "delete";
    return "other";
}

enum slot_state { SLOT_FRESH, SLOT_RUNNING, SLOT_WAITING, SLOT_DONE };

struct slot {
    struct xfer x;
    enum slot_state state;
    unsigned attempts;
    int auth_retried;
    int64_t not_before;
};

static void slot_start(struct kube_client *c, CURLM *m, struct slot *s, struct kube_batch_item *it, const char *verb)
{
    char *payload = NULL;
    if (it->body != NULL && (payload = json_dumps(it->body, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
        abort();
    xfer_prepare(&s->x, it->method, verb != NULL ? verb : verb_of(it->method), it->path, it->content_type, payload,
                 c->opt.request_timeout_ms);
    if (curl_multi_add_handle(m, s->x.easy) != CURLM_OK)
        abort();
    s->state = SLOT_RUNNING;
}

static size_t run_batch(struct kube_client *c, struct kube_batch_item *items, const char *const *verbs, size_t n,
                        size_t concurrency)
{
    if (n == 0)
        return 0;
    if (concurrency == 0)
        concurrency = DEFAULT_CONCURRENCY;
    CURLM *m = pool_get(c);
    struct slot *slots = util_calloc(n, sizeof(*slots));
    uint64_t rng = rng_seed(slots);
    size_t next_fresh = 0, running = 0, waiting = 0, done = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        slots[i].x.c = c;
        kube_response_init(&items[i].resp);
        items[i].rc = -1;
    }
    while (done < n) {
        int64_t now = clock_mono_ms();
        /* Retries whose time has come go first, then fresh items. */
        for (size_t i = 0; waiting > 0 && running < concurrency && i < next_fresh; i++) {
            if (slots[i].state == SLOT_WAITING && slots[i].not_before <= now) {
                slot_start(c, m, &slots[i], &items[i], verbs != NULL ? verbs[i] : NULL);
                waiting--;
                running++;
            }
        }
        while (running < concurrency && next_fresh < n) {
            slot_start(c, m, &slots[next_fresh], &items[next_fresh], verbs != NULL ? verbs[next_fresh] : NULL);
            next_fresh++;
            running++;
        }
        int still;
        curl_multi_perform(m, &still);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct xfer *x;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            struct slot *s = (struct slot *)x; /* x is the slot's first member */
            size_t i = (size_t)(s - slots);
            CURLcode cc = msg->data.result;
            curl_multi_remove_handle(m, x->easy);
            running--;
            xfer_result(x, cc, items[i].path, &items[i].resp);
            long delay = cc == CURLE_OK ? retry_delay(x, &s->attempts, &s->auth_retried, &rng) : -1;
            if (delay >= 0) {
                log_debugf("%s %s: %ld, retrying in %ld ms", x->method, items[i].path, x->status, delay);
                s->state = SLOT_WAITING;
                s->not_before = clock_mono_ms() + delay;
                waiting++;
            } else {
                s->state = SLOT_DONE;
                items[i].rc = items[i].resp.status >= 200 && items[i].resp.status <= 299 ? 0 : -1;
                failed += items[i].rc != 0;
                done++;
            }
            xfer_reset(x);
        }
        if (done == n)
            break;
        /* A slot freed up and fresh items wait: start them now, not after the next poll wakes. */
        if (running < concurrency && next_fresh < n)
            continue;
        long timeout = 1000;
        if (waiting > 0) {
            now = clock_mono_ms();
            for (size_t i = 0; i < next_fresh; i++)
                if (slots[i].state == SLOT_WAITING && slots[i].not_before - now < timeout)
                    timeout = slots[i].not_before - now > 0 ? (long)(slots[i].not_before - now) : 0;
        }
        if (running > 0 || timeout > 0)
            curl_multi_poll(m, NULL, 0, (int)timeout, NULL);
    }
    free(slots);
    pool_put(c, m);
    return failed;
}

size_t kube_batch(struct kube_client *c, struct kube_batch_item *items, size_t n, size_t concurrency)
{
    return run_batch(c, items, NULL, n, concurrency);
}

static int request_verb(struct kube_client *c, const char *verb, const char *method, const char *path, const char *content_type,
                        json_t *body, struct kube_response *resp)
{
    struct kube_batch_item it = {.method = method, .path = path, .content_type = content_type, .body = body};
    const char *verbs[] = {verb};
    run_batch(c, &it, verb != NULL ? verbs : NULL, 1, 1);
    kube_response_finish(resp);
    *resp = it.resp;
    return it.rc;
}

int kube_request(struct kube_client *c, const char *method, const char *path, const char *content_type, json_t *body,
                 struct kube_response *resp)
{
    return request_verb(c, NULL, method, path, content_type, body, resp);
}

int kube_get(struct kube_client *c, const char *path, struct kube_response *resp)
{
    return kube_request(c, "GET", path, NULL, NULL, resp);
}

int kube_create(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp)
{
    return kube_request(c, "POST", path, NULL, body, resp);
}

int kube_update(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp)
{
    return kube_request(c, "PUT", path, NULL, body, resp);
}

int kube_patch(struct kube_client *c, const char *path, enum kube_patch_type type, json_t *patch, struct kube_response *resp)
{
    return kube_request(c, "PATCH", path, kube_patch_content_type(type), patch, resp);
}

int kube_delete(struct kube_client *c, const char *path, json_t *body, struct kube_response *resp)
{
    return kube_request(c, "DELETE", path, NULL, body, resp);
}

void kube_list_result_init(struct kube_list_result *r)
{
    memset(r, 0, sizeof(*r));
}

void kube_list_result_finish(struct kube_list_result *r)
{
    if (r == NULL)
        return;
    json_decref(r->items);
    free(r->resource_version);
    kube_list_result_init(r);
}

/* Builds path?limit=..&continue=..&labelSelector=..&fieldSelector=.. into a new string. */
static char *list_url(const char *path, unsigned limit, const char *cont, const char *label_selector, const char *field_selector)
{
    struct util_buf b = {0};
    char lim[24];
    util_format(lim, sizeof(lim), "%u", limit);
    util_buf_puts(&b, path);
    buf_param(&b, "limit", lim);
    buf_param(&b, "continue", cont);
    buf_param(&b, "labelSelector", label_selector);
    buf_param(&b, "fieldSelector", field_selector);
    return b.data;
}

int kube_list(struct kube_client *c, const char *path, const struct kube_list_options *opts, struct kube_list_result *out,
              struct kube_response *resp)
{
    static const struct kube_list_options none = {0};
    if (opts == NULL)
        opts = &none;
    kube_list_result_finish(out);
    json_t *items = json_array();
    char *cont = NULL;
    int rc = -1;
    for (;;) {
        char *url = list_url(path, opts->limit != 0 ? opts->limit : c->opt.list_page_size, cont, opts->label_selector,
                             opts->field_selector);
        int r = request_verb(c, "list", "GET", url, NULL, NULL, resp);
        free(url);
        if (r != 0)
            break;
        json_t *page = json_object_get(resp->body, "items");
        json_t *meta = json_object_get(resp->body, "metadata");
        if (!json_is_array(page) && !json_is_null(page) && page != NULL) {
            util_format(resp->message, sizeof(resp->message), "GET %.160s: the answer is not a list", path);
            break;
        }
        if (json_is_array(page))
            json_array_extend(items, page);
        const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
        const char *next = json_string_value(json_object_get(meta, "continue"));
        free(out->resource_version);
        out->resource_version = rv != NULL ? util_strdup(rv) : NULL;
        free(cont);
        cont = next != NULL && next[0] != '\0' ? util_strdup(next) : NULL;
        if (cont == NULL) {
            rc = 0;
            break;
        }
    }
    free(cont);
    if (rc == 0) {
        out->items = items;
    } else {
        json_decref(items);
        free(out->resource_version);
        out->resource_version = NULL;
    }
    return rc;
}

/* --- the watcher ------------------------------------------------------------ */

enum watch_phase { PHASE_LIST, PHASE_WATCH };

struct watch {
    struct kube_watcher *w;
    struct watch *next;
    char *name, *path, *label_selector, *field_selector;
    kube_watch_fn fn;
    void *arg;

    enum watch_phase phase;
    int running;
    int64_t not_before;
    unsigned attempts; /* consecutive failures, for the backoff */
    char *rv;          /* the last resourceVersion seen: where a watch resumes */
    char *cont;        /* the list's continue token between pages */
    /*
     * What the caller has been told exists: "namespace/name" -> [rv, uid, gen].
     * A relist compares against it to deliver only changes, and deletions of
     * objects missed while the watch was down (gen: the list that saw it).
     */
    json_t *known;
    json_int_t gen;
    struct xfer x;
    struct watchstream ws;
    int stream_expired, stream_error;
    unsigned long stream_events;
    char stream_message[200];
};

struct kube_watcher {
    struct kube_client *c;
    CURLM *multi;
    pthread_t thread;
    pthread_mutex_t lock; /* pending, stopping */
    struct watch *pending;
    int stopping;
    struct watch *watches; /* the thread's */
    uint64_t rng;
};

static void set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = src != NULL ? util_strdup(src) : NULL;
}

static void count_restart(struct watch *wt, const char *reason)
{
    struct kube_metrics *m = &wt->w->c->metrics;
    if (m->watch_restarts == NULL)
        return;
    const char *labels[] = {wt->name, reason};
    metrics_counter_add(m->watch_restarts, labels, 1);
}

/* "namespace/name" of an object (namespace "" when cluster-scoped); NULL without a name. */
static char *object_key(json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (name == NULL)
        return NULL;
    if (ns == NULL)
        ns = "";
    size_t n = strlen(ns) + strlen(name) + 2;
    char *k = malloc(n);
    if (k == NULL)
        abort();
    util_format(k, n, "%s/%s", ns, name);
    return k;
}

static const char *meta_string(json_t *obj, const char *field)
{
    const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
    return s != NULL ? s : "";
}

static void remember(struct watch *wt, const char *key, json_t *obj)
{
    json_object_set_new(wt->known, key,
                        json_pack("[s,s,I]", meta_string(obj, "resourceVersion"), meta_string(obj, "uid"), wt->gen));
}

/* A minimal object for a deletion a relist discovered: metadata only. New reference. */
static json_t *stub_object(const char *key, json_t *known)
{
    const char *slash = strchr(key, '/');
    json_t *meta = json_pack("{s:s, s:s, s:s}", "name", slash + 1, "uid", json_string_value(json_array_get(known, 1)),
                             "resourceVersion", json_string_value(json_array_get(known, 0)));
    if (slash != key)
        json_object_set_new(meta, "namespace", json_stringn(key, (size_t)(slash - key)));
    return json_pack("{s:o}", "metadata", meta);
}

/* An item of a (re)list: tells the caller what changed since it last heard. */
static void list_item(struct watch *wt, json_t *obj)
{
    char *key = object_key(obj);
    if (key == NULL)
        return;
    json_t *old = json_object_get(wt->known, key);
    if (old == NULL) {
        wt->fn(wt->arg, KUBE_WATCH_ADDED, obj);
    } else if (strcmp(json_string_value(json_array_get(old, 1)), meta_string(obj, "uid")) != 0) {
        /* Deleted and recreated under the same name while we were not watching. */
        json_t *stub = stub_object(key, old);
        wt->fn(wt->arg, KUBE_WATCH_DELETED, stub);
        json_decref(stub);
        wt->fn(wt->arg, KUBE_WATCH_ADDED, obj);
    } else if (strcmp(json_string_value(json_array_get(old, 0)), meta_string(obj, "resourceVersion")) != 0) {
        wt->fn(wt->arg, KUBE_WATCH_MODIFIED, obj);
    }
    remember(wt, key, obj);
    free(key);
}

/* The list is complete: objects not seen in it are gone. */
static void list_complete(struct watch *wt)
{
    const char *key;
    json_t *val;
    void *tmp;
    json_object_foreach_safe(wt->known, tmp, key, val)
    {
        if (json_integer_value(json_array_get(val, 2)) == wt->gen)
            continue;
        json_t *stub = stub_object(key, val);
        wt->fn(wt->arg, KUBE_WATCH_DELETED, stub);
        json_decref(stub);
        json_object_del(wt->known, key);
    }
    wt->fn(wt->arg, KUBE_WATCH_SYNCED, NULL);
}

static int on_stream_event(void *arg, const struct watchstream_event *ev)
{
    struct watch *wt = arg;
    char *key;
    switch (ev->type) {
    case WATCHSTREAM_ADDED:
    case WATCHSTREAM_MODIFIED:
    case WATCHSTREAM_DELETED:
        if ((key = object_key(ev->object)) != NULL) {
            if (ev->type == WATCHSTREAM_DELETED)
                json_object_del(wt->known, key);
            else
                remember(wt, key, ev->object);
            free(key);
        }
        wt->fn(wt->arg,
               ev->type == WATCHSTREAM_ADDED      ? KUBE_WATCH_ADDED
               : ev->type == WATCHSTREAM_MODIFIED ? KUBE_WATCH_MODIFIED
                                                  : KUBE_WATCH_DELETED,
               ev->object);
        break;
    case WATCHSTREAM_BOOKMARK:
        break;
    case WATCHSTREAM_ERROR:
    case WATCHSTREAM_EXPIRED:
        *(ev->type == WATCHSTREAM_EXPIRED ? &wt->stream_expired : &wt->stream_error) = 1;
        util_format(wt->stream_message, sizeof(wt->stream_message), "ERROR event %ld: %.150s", ev->code, ev->message);
        return 1;
    }
    if (ev->resource_version != NULL && ev->resource_version[0] != '\0')
        set_str(&wt->rv, ev->resource_version);
    wt->stream_events++;
    return 0;
}

/* Schedules the next attempt after a failure; retry_after_ms -1 means none given. */
static void backoff(struct watch *wt, long retry_after_ms)
{
    const struct kube_client_options *o = &wt->w->c->opt;
    long d = retry_after_ms >= 0 ? retry_after_ms
                                 : kube_backoff_ms(wt->attempts, o->backoff_base_ms, o->backoff_max_ms, rng_next(&wt->w->rng));
    if (d > o->retry_after_max_ms)
        d = o->retry_after_max_ms;
    wt->attempts++;
    wt->not_before = clock_mono_ms() + d;
}

static void start_request(struct watch *wt)
{
    struct kube_client *c = wt->w->c;
    if (wt->phase == PHASE_LIST) {
        if (wt->cont == NULL)
            wt->gen++;
        char *url = list_url(wt->path, c->opt.list_page_size, wt->cont, wt->label_selector, wt->field_selector);
        wt->x.ws = NULL;
        xfer_prepare(&wt->x, "GET", "list", url, NULL, NULL, c->opt.request_timeout_ms);
        free(url);
    } else {
        long span = c->opt.watch_timeout_max_s - c->opt.watch_timeout_min_s + 1;
        long timeout_s = c->opt.watch_timeout_min_s + (long)(rng_next(&wt->w->rng) % (uint64_t)span);
        char ts[24];
        util_format(ts, sizeof(ts), "%ld", timeout_s);
        struct util_buf b = {0};
        util_buf_puts(&b, wt->path);
        buf_param(&b, "watch", "1");
        buf_param(&b, "allowWatchBookmarks", "true");
        buf_param(&b, "resourceVersion", wt->rv);
        buf_param(&b, "timeoutSeconds", ts);
        buf_param(&b, "labelSelector", wt->label_selector);
        buf_param(&b, "fieldSelector", wt->field_selector);
        watchstream_reset(&wt->ws);
        wt->stream_expired = wt->stream_error = 0;
        wt->stream_events = 0;
        wt->stream_message[0] = '\0';
        wt->x.ws = &wt->ws;
        /* The server ends the stream after timeoutSeconds; the margin catches a dead connection. */
        xfer_prepare(&wt->x, "GET", "watch", b.data, NULL, NULL, (timeout_s + 30) * 1000);
        free(b.data);
    }
    if (curl_multi_add_handle(wt->w->multi, wt->x.easy) != CURLM_OK)
        abort();
    wt->running = 1;
}

static void relist(struct watch *wt, const char *why)
{
    log_infof("watch %s: %s; relisting", wt->name, why);
    count_restart(wt, "expired");
    wt->phase = PHASE_LIST;
    set_str(&wt->cont, NULL);
    wt->not_before = clock_mono_ms();
}

static void list_done(struct watch *wt, CURLcode cc)
{
    struct kube_response resp;
    kube_response_init(&resp);
    xfer_result(&wt->x, cc, wt->path, &resp);
    json_t *items = json_object_get(resp.body, "items");
    if (resp.status == 200 && (items == NULL || json_is_array(items))) {
        size_t i;
        json_t *item;
        json_array_foreach(items, i, item)
            list_item(wt, item);
        json_t *meta = json_object_get(resp.body, "metadata");
        const char *next = json_string_value(json_object_get(meta, "continue"));
        set_str(&wt->rv, json_string_value(json_object_get(meta, "resourceVersion")));
        set_str(&wt->cont, next != NULL && next[0] != '\0' ? next : NULL);
        if (wt->cont == NULL) {
            list_complete(wt);
            wt->phase = PHASE_WATCH;
            wt->attempts = 0;
        }
        wt->not_before = clock_mono_ms();
    } else if (resp.status == 410) { /* the continue token expired: start over */
        relist(wt, resp.message);
    } else if (resp.status == 401 && token_refresh_after_401(wt->w->c, wt->x.token)) {
        wt->not_before = clock_mono_ms();
    } else {
        log_warnf("watch %s: list failed: %s", wt->name, resp.status == 200 ? "the answer is not a list" : resp.message);
        backoff(wt, resp.status == 429 || resp.status >= 500 ? wt->x.retry_after_ms : -1);
    }
    kube_response_finish(&resp);
}

static void stream_done(struct watch *wt, CURLcode cc)
{
    struct xfer *x = &wt->x;
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        struct kube_response resp;
        kube_response_init(&resp);
        xfer_result(x, cc, wt->path, &resp);
        if (resp.status == 410) {
            relist(wt, resp.message);
        } else if (resp.status == 401 && token_refresh_after_401(wt->w->c, x->token)) {
            count_restart(wt, "error");
            wt->not_before = clock_mono_ms();
        } else {
            log_warnf("watch %s: %s", wt->name, resp.message);
            count_restart(wt, "error");
            backoff(wt, resp.status == 429 || resp.status >= 500 ? x->retry_after_ms : -1);
        }
        kube_response_finish(&resp);
        return;
    }
    count_request(wt->w->c, "watch", 200);
    struct error werr = {{0}};
    int parse_failed = x->ws_rc < 0;
    if (!parse_failed && x->ws_rc == 0 && cc == CURLE_OK && watchstream_end(&wt->ws, &werr) != 0)
        parse_failed = 1;
    if (wt->stream_expired) {
        relist(wt, wt->stream_message);
    } else if (wt->stream_error || parse_failed || cc != CURLE_OK) {
        const char *why = wt->stream_error ? wt->stream_message
                          : parse_failed   ? (x->ws_rc < 0 ? x->ws_err.message : werr.message)
                          : x->errbuf[0] != '\0' ? x->errbuf
                                                 : curl_easy_strerror(cc);
        log_warnf("watch %s: stream failed: %s", wt->name, why);
        count_restart(wt, "error");
        backoff(wt, -1);
    } else if (wt->stream_events == 0) {
        /* Ended without a single event or bookmark: do not spin on a server that hangs up at once. */
        count_restart(wt, "timeout");
        backoff(wt, -1);
    } else {
        log_debugf("watch %s: stream ended after %lu events; resuming at %s", wt->name, wt->stream_events, wt->rv);
        count_restart(wt, "timeout");
        wt->attempts = 0;
        wt->not_before = clock_mono_ms();
    }
}

static void watch_free(struct watch *wt)
{
    if (wt == NULL)
        return;
    if (wt->running)
        curl_multi_remove_handle(wt->w->multi, wt->x.easy);
    xfer_reset(&wt->x);
    watchstream_finish(&wt->ws);
    json_decref(wt->known);
    free(wt->name);
    free(wt->path);
    free(wt->label_selector);
    free(wt->field_selector);
    free(wt->rv);
    free(wt->cont);
    free(wt);
}

static void *watcher_main(void *arg)
{
    struct kube_watcher *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        int stopping = w->stopping;
        while (w->pending != NULL) {
            struct watch *wt = w->pending;
            w->pending = wt->next;
            wt->next = w->watches;
            w->watches = wt;
        }
        pthread_mutex_unlock(&w->lock);
        if (stopping)
            break;

        int64_t now = clock_mono_ms();
        for (struct watch *wt = w->watches; wt != NULL; wt = wt->next)
            if (!wt->running && wt->not_before <= now)
                start_request(wt);
        int still;
        curl_multi_perform(w->multi, &still);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(w->multi, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct xfer *x;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            struct watch *wt = (struct watch *)(void *)((char *)x - offsetof(struct watch, x));
            CURLcode cc = msg->data.result;
            curl_multi_remove_handle(w->multi, x->easy);
            wt->running = 0;
            if (wt->phase == PHASE_LIST)
                list_done(wt, cc);
            else
                stream_done(wt, cc);
            xfer_reset(x);
        }
        long timeout = 1000;
        now = clock_mono_ms();
        for (struct watch *wt = w->watches; wt != NULL; wt = wt->next)
            if (!wt->running && wt->not_before - now < timeout)
                timeout = wt->not_before - now > 0 ? (long)(wt->not_before - now) : 0;
        curl_multi_poll(w->multi, NULL, 0, (int)timeout, NULL);
    }
    while (w->watches != NULL) {
        struct watch *wt = w->watches;
        w->watches = wt->next;
        watch_free(wt);
    }
    return NULL;
}

struct kube_watcher *kube_watcher_create(struct kube_client *c, struct error *err)
{
    struct kube_watcher *w = util_calloc(1, sizeof(*w));
    w->c = c;
    w->multi = multi_new();
    w->rng = rng_seed(w);
    pthread_mutex_init(&w->lock, NULL);
    int rc = pthread_create(&w->thread, NULL, watcher_main, w);
    if (rc != 0) {
        util_format(err->message, sizeof(err->message), "cannot start the watcher thread: %s", strerror(rc));
        curl_multi_cleanup(w->multi);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

int kube_watch_start(struct kube_watcher *w, const struct kube_watch_spec *spec, struct error *err)
{
    if (spec->name == NULL || spec->path == NULL || spec->path[0] != '/' || strchr(spec->path, '?') != NULL || spec->fn == NULL) {
        util_format(err->message, sizeof(err->message), "watch: name, fn and a path starting with '/' without a query are required");
        return -1;
    }
    struct watch *wt = util_calloc(1, sizeof(*wt));
    wt->w = w;
    wt->name = util_strdup(spec->name);
    wt->path = util_strdup(spec->path);
    set_str(&wt->label_selector, spec->label_selector);
    set_str(&wt->field_selector, spec->field_selector);
    wt->fn = spec->fn;
    wt->arg = spec->arg;
    wt->phase = PHASE_LIST;
    wt->known = json_object();
    wt->x.c = w->c;
    watchstream_init(&wt->ws, w->c->opt.max_event_bytes, on_stream_event, wt);

    pthread_mutex_lock(&w->lock);
    struct watch **tail = &w->pending;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = wt;
    pthread_mutex_unlock(&w->lock);
    curl_multi_wakeup(w->multi);
    return 0;
}

void kube_watcher_destroy(struct kube_watcher *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_mutex_unlock(&w->lock);
    curl_multi_wakeup(w->multi);
    pthread_join(w->thread, NULL);
    while (w->pending != NULL) { /* started after the thread's last look */
        struct watch *wt = w->pending;
        w->pending = wt->next;
        watch_free(wt);
    }
    curl_multi_cleanup(w->multi);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
