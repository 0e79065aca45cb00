#include "incluster.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "log.h"

/* API answers we read are a Secret or a webhook configuration: small. */
#define MAX_RESPONSE_BYTES (8u << 20)
#define MAX_TOKEN_BYTES 16384
#define REQUEST_TIMEOUT_SECONDS 30L

struct incluster {
    char *server;
    char *token;
    char *ca_file;
};

__attribute__((format(printf, 2, 3))) static void set_err(struct incluster_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (p == NULL)
        abort();
    return p;
}

/* Reads a bearer token; trailing whitespace (a newline from `echo`) is dropped. */
static char *read_token(const char *path, struct incluster_error *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        set_err(err, "cannot open token file %s", path);
        return NULL;
    }
    char *buf = calloc(1, MAX_TOKEN_BYTES + 1);
    if (buf == NULL)
        abort();
    size_t n = fread(buf, 1, MAX_TOKEN_BYTES + 1, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        n--;
    if (n <= MAX_TOKEN_BYTES)
        buf[n] = '\0';
    if (n == 0 || n > MAX_TOKEN_BYTES || memchr(buf, '\0', n) != NULL || strpbrk(buf, "\r\n") != NULL) {
        set_err(err, "token file %s is empty, too large or not one line", path);
        free(buf);
        return NULL;
    }
    return buf;
}

struct incluster *incluster_create(const struct incluster_options *opts, struct incluster_error *err)
{
    struct incluster *c = calloc(1, sizeof(*c));
    if (c == NULL)
        abort();
    char server[512];
    if (opts != NULL && opts->server != NULL) {
        snprintf(server, sizeof(server), "%s", opts->server);
    } else {
        const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
        if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0') {
            set_err(err, "KUBERNETES_SERVICE_HOST/PORT not set: not running in a cluster (use --server)");
            goto fail;
        }
        /* An IPv6 service host needs brackets in a URL. */
        snprintf(server, sizeof(server), strchr(host, ':') != NULL ? "https://[%s]:%s" : "https://%s:%s", host, port);
    }
    size_t n = strlen(server);
    while (n > 0 && server[n - 1] == '/')
        server[--n] = '\0';
    c->server = xstrdup(server);
    c->ca_file = xstrdup(opts != NULL && opts->ca_file != NULL ? opts->ca_file : INCLUSTER_SA_DIR "/ca.crt");
    const char *token_file = opts != NULL && opts->token_file != NULL ? opts->token_file : INCLUSTER_SA_DIR "/token";
    if ((c->token = read_token(token_file, err)) == NULL)
        goto fail;
    return c;

fail:
    incluster_destroy(c);
    return NULL;
}

void incluster_destroy(struct incluster *c)
{
    if (c == NULL)
        return;
    if (c->token != NULL) {
        volatile char *p = c->token;
        while (*p != '\0')
            *p++ = '\0';
    }
    free(c->token);
    free(c->ca_file);
    free(c->server);
    free(c);
}

struct body {
    char *data;
    size_t len;
    int too_large;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct body *b = userdata;
    size_t n = size * nmemb;
    if (b->len + n > MAX_RESPONSE_BYTES) {
        b->too_large = 1;
        return 0;
    }
    char *p = realloc(b->data, b->len + n + 1);
    if (p == NULL)
        abort();
    memcpy(p + b->len, ptr, n);
    b->data = p;
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

int incluster_request(struct incluster *c, const char *method, const char *path, const char *content_type, json_t *body,
                      long *status, json_t **response, struct incluster_error *err)
{
    int rc = -1;
    CURL *curl = NULL;
    struct curl_slist *headers = NULL;
    char *payload = NULL, *auth = NULL, *url = NULL, *ctype = NULL;
    struct body resp = {0};

    *response = NULL;
    *status = 0;
    if ((curl = curl_easy_init()) == NULL) {
        set_err(err, "curl_easy_init failed");
        goto out;
    }
    size_t url_len = strlen(c->server) + strlen(path) + 1;
    url = malloc(url_len);
    size_t auth_len = strlen(c->token) + sizeof("Authorization: Bearer ");
    auth = malloc(auth_len);
    size_t ctype_len = sizeof("Content-Type: ") + strlen(content_type != NULL ? content_type : "application/json");
    ctype = malloc(ctype_len);
    if (url == NULL || auth == NULL || ctype == NULL)
        abort();
    snprintf(url, url_len, "%s%s", c->server, path);
    snprintf(auth, auth_len, "Authorization: Bearer %s", c->token);
    snprintf(ctype, ctype_len, "Content-Type: %s", content_type != NULL ? content_type : "application/json");
    headers = curl_slist_append(headers, auth);
    headers = curl_slist_append(headers, "Accept: application/json");
    if (body != NULL) {
        headers = curl_slist_append(headers, ctype);
        if ((payload = json_dumps(body, JSON_COMPACT)) == NULL) {
            set_err(err, "%s %s: cannot encode the request body", method, path);
            goto out;
        }
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload);
    }
    if (headers == NULL)
        abort();
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_CAINFO, c->ca_file);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, REQUEST_TIMEOUT_SECONDS);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
#else
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTPS);
#endif
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &resp);
    CURLcode cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        set_err(err, "%s %s: %s", method, path, resp.too_large ? "response too large" : curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
    if (resp.len > 0)
        *response = json_loadb(resp.data, resp.len, 0, NULL);
    log_debugf("%s %s: %ld", method, path, *status);
    rc = 0;
out:
    free(resp.data);
    free(payload);
    curl_slist_free_all(headers);
    if (auth != NULL) {
        memset(auth, 0, auth_len);
        free(auth);
    }
    free(ctype);
    free(url);
    curl_easy_cleanup(curl);
    return rc;
}
