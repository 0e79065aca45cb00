#include "kubeconfig.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

/*
 * Messages quote field values, which are user text: each public function makes
 * its message one line before it returns (a folded YAML scalar carries
 * newlines; found by fuzz_kubeconfig).
 */
static void one_line(struct error *err)
{
    if (err != NULL)
        util_one_line(err->message);
}

void kubeconfig_init(struct kubeconfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
}

void kubeconfig_finish(struct kubeconfig *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->context);
    free(cfg->cluster);
    free(cfg->user);
    free(cfg->namespace);
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->ca_data);
    if (cfg->token != NULL)
        util_wipe_free(cfg->token, strlen(cfg->token));
    free(cfg->token_file);
    free(cfg->client_cert_file);
    free(cfg->client_cert_data);
    free(cfg->client_key_file);
    util_wipe_free(cfg->client_key_data, cfg->client_key_data_len);
    kubeconfig_init(cfg);
}

static char *dup_or_null(const char *s)
{
    return s == NULL ? NULL : util_strdup(s);
}

static char *memdup_or_null(const char *s, size_t len)
{
    return s == NULL ? NULL : util_memdup(s, len);
}

void kubeconfig_copy(struct kubeconfig *dst, const struct kubeconfig *src)
{
    kubeconfig_finish(dst);
    dst->context = dup_or_null(src->context);
    dst->cluster = dup_or_null(src->cluster);
    dst->user = dup_or_null(src->user);
    dst->namespace = dup_or_null(src->namespace);
    dst->server = dup_or_null(src->server);
    dst->ca_file = dup_or_null(src->ca_file);
    dst->ca_data = memdup_or_null(src->ca_data, src->ca_data_len);
    dst->ca_data_len = src->ca_data_len;
    dst->insecure_skip_tls_verify = src->insecure_skip_tls_verify;
    dst->token = dup_or_null(src->token);
    dst->token_file = dup_or_null(src->token_file);
    dst->client_cert_file = dup_or_null(src->client_cert_file);
    dst->client_cert_data = memdup_or_null(src->client_cert_data, src->client_cert_data_len);
    dst->client_cert_data_len = src->client_cert_data_len;
    dst->client_key_file = dup_or_null(src->client_key_file);
    dst->client_key_data = memdup_or_null(src->client_key_data, src->client_key_data_len);
    dst->client_key_data_len = src->client_key_data_len;
}

/* --- the YAML tree --------------------------------------------------------- */

struct doc {
    yaml_document_t *y;
    const char *base_dir;
};

static yaml_node_t *node(const struct doc *d, int index)
{
    return yaml_document_get_node(d->y, index);
}

/* A scalar's text, or NULL when n is not a scalar or is a YAML null / empty (both mean "absent"). */
static const char *scalar(const yaml_node_t *n)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE)
        return NULL;
    const char *v = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    if (len == 0)
        return NULL;
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        (strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0))
        return NULL;
    return v;
}

static int is_null(const yaml_node_t *n)
{
    return n == NULL || (n->type == YAML_SCALAR_NODE && scalar(n) == NULL);
}

static yaml_node_t *map_get(const struct doc *d, const yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(d, p->key);
        if (k != NULL && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0)
            return node(d, p->value);
    }
    return NULL;
}

/*
 * Reads the string field key of map into *out (NULL when absent). where names
 * map in messages. Returns 0, or -1 when the field is not a string.
 */
static int get_string(const struct doc *d, const yaml_node_t *map, const char *key, const char *where, const char **out,
                      struct error *err)
{
    yaml_node_t *n = map_get(d, map, key);
    *out = NULL;
    if (is_null(n))
        return 0;
    if (n->type != YAML_SCALAR_NODE) {
        error_setf(err, "%s.%s: must be a string", where, key);
        return -1;
    }
    if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
        error_setf(err, "%s.%s: contains a NUL character", where, key);
        return -1;
    }
    *out = scalar(n);
    return 0;
}

/* YAML 1.1 booleans, as Kubernetes' YAML decoder reads them. */
static int get_bool(const struct doc *d, const yaml_node_t *map, const char *key, const char *where, int *out, struct error *err)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "y", "Y", "on", "On", "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "n", "N", "off", "Off", "OFF"};
    const char *v;
    *out = 0;
    if (get_string(d, map, key, where, &v, err) != 0)
        return -1;
    if (v == NULL)
        return 0;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(v, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcmp(v, no[i]) == 0)
            return 0;
    }
    error_setf(err, "%s.%s: \"%.40s\" is not a boolean", where, key, v);
    return -1;
}

/* The file path field key, resolved against the kubeconfig's folder; new string or NULL. */
static int get_path(const struct doc *d, const yaml_node_t *map, const char *key, const char *where, char **out, struct error *err)
{
    const char *v;
    *out = NULL;
    if (get_string(d, map, key, where, &v, err) != 0)
        return -1;
    if (v == NULL)
        return 0;
    if (v[0] == '/' || d->base_dir == NULL || d->base_dir[0] == '\0') {
        *out = util_strdup(v);
        return 0;
    }
    *out = util_strdupf("%s%s%s", d->base_dir, d->base_dir[strlen(d->base_dir) - 1] == '/' ? "" : "/", v);
    return 0;
}

static int get_base64(const struct doc *d, const yaml_node_t *map, const char *key, const char *where, char **out, size_t *out_len,
                      struct error *err)
{
    const char *v;
    *out = NULL;
    *out_len = 0;
    if (get_string(d, map, key, where, &v, err) != 0)
        return -1;
    if (v == NULL)
        return 0;
    if ((*out = util_base64_decode(v, strlen(v), out_len)) == NULL) {
        error_setf(err, "%s.%s: invalid base64", where, key);
        return -1;
    }
    return 0;
}

/*
 * Finds the entry named name in the top-level list (clusters, users,
 * contexts) and returns its body (entry[field]), or NULL with err.
 */
static yaml_node_t *find_named(const struct doc *d, const yaml_node_t *root, const char *list, const char *field, const char *name,
                               struct error *err)
{
    yaml_node_t *seq = map_get(d, root, list);
    if (!is_null(seq) && seq->type != YAML_SEQUENCE_NODE) {
        error_setf(err, "%s: must be a list", list);
        return NULL;
    }
    if (seq != NULL && seq->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
            yaml_node_t *entry = node(d, *it);
            const char *entry_name = scalar(map_get(d, entry, "name"));
            if (entry_name == NULL || strcmp(entry_name, name) != 0)
                continue;
            yaml_node_t *body = map_get(d, entry, field);
            if (body == NULL || body->type != YAML_MAPPING_NODE) {
                error_setf(err, "%s[%.64s].%s: missing or not a mapping", list, name, field);
                return NULL;
            }
            return body;
        }
    }
    error_setf(err, "%s: no entry named \"%.64s\"", list, name);
    return NULL;
}

static int parse_cluster(const struct doc *d, const yaml_node_t *cl, struct kubeconfig *out, struct error *err)
{
    char where[96];
    snprintf(where, sizeof(where), "clusters[%.64s].cluster", out->cluster);
    const char *server;
    if (get_string(d, cl, "server", where, &server, err) != 0)
        return -1;
    if (server == NULL) {
        error_setf(err, "%s.server: missing", where);
        return -1;
    }
    size_t scheme = strncmp(server, "https://", 8) == 0 ? 8 : strncmp(server, "http://", 7) == 0 ? 7 : 0;
    if (scheme == 0) {
        error_setf(err, "%s.server: \"%.64s\" must start with https:// or http://", where, server);
        return -1;
    }
    /* "https://" or "https:///path" would leave curl without a host (found by fuzz_kubeconfig). */
    if (server[scheme] == '\0' || server[scheme] == '/') {
        error_setf(err, "%s.server: \"%.64s\" names no host", where, server);
        return -1;
    }
    out->server = util_strdup(server);
    size_t n = strlen(out->server);
    while (n > 0 && out->server[n - 1] == '/')
        out->server[--n] = '\0';
    if (get_path(d, cl, "certificate-authority", where, &out->ca_file, err) != 0 ||
        get_base64(d, cl, "certificate-authority-data", where, &out->ca_data, &out->ca_data_len, err) != 0 ||
        get_bool(d, cl, "insecure-skip-tls-verify", where, &out->insecure_skip_tls_verify, err) != 0)
        return -1;
    if (out->ca_data != NULL) { /* client-go: the data form overrides the file */
        free(out->ca_file);
        out->ca_file = NULL;
    }
    if (out->insecure_skip_tls_verify && (out->ca_file != NULL || out->ca_data != NULL)) {
        error_setf(err, "%s: a certificate authority with insecure-skip-tls-verify is not allowed", where);
        return -1;
    }
    return 0;
}

static int parse_user(const struct doc *d, const yaml_node_t *u, struct kubeconfig *out, struct error *err)
{
    char where[96];
    snprintf(where, sizeof(where), "users[%.64s].user", out->user);
    if (!is_null(map_get(d, u, "exec"))) {
        error_setf(err, "%s.exec: exec credential plugins are not supported; use a token or a client certificate", where);
        return -1;
    }
    if (!is_null(map_get(d, u, "auth-provider"))) {
        error_setf(err, "%s.auth-provider: auth provider plugins are not supported; use a token or a client certificate", where);
        return -1;
    }
    if (!is_null(map_get(d, u, "username")) || !is_null(map_get(d, u, "password"))) {
        error_setf(err, "%s: basic authentication (username/password) is not supported", where);
        return -1;
    }
    const char *token;
    if (get_string(d, u, "token", where, &token, err) != 0)
        return -1;
    out->token = token != NULL ? util_strdup(token) : NULL;
    if (get_path(d, u, "tokenFile", where, &out->token_file, err) != 0 ||
        get_path(d, u, "client-certificate", where, &out->client_cert_file, err) != 0 ||
        get_base64(d, u, "client-certificate-data", where, &out->client_cert_data, &out->client_cert_data_len, err) != 0 ||
        get_path(d, u, "client-key", where, &out->client_key_file, err) != 0 ||
        get_base64(d, u, "client-key-data", where, &out->client_key_data, &out->client_key_data_len, err) != 0)
        return -1;
    if (out->client_cert_data != NULL) {
        free(out->client_cert_file);
        out->client_cert_file = NULL;
    }
    if (out->client_key_data != NULL) {
        free(out->client_key_file);
        out->client_key_file = NULL;
    }
    int have_cert = out->client_cert_file != NULL || out->client_cert_data != NULL;
    int have_key = out->client_key_file != NULL || out->client_key_data != NULL;
    if (have_cert != have_key) {
        error_setf(err, "%s: %s without %s", where, have_cert ? "client-certificate" : "client-key",
                   have_cert ? "client-key" : "client-certificate");
        return -1;
    }
    return 0;
}

static int parse_root(const struct doc *d, const char *context, struct kubeconfig *out, struct error *err)
{
    yaml_node_t *root = yaml_document_get_root_node(d->y);
    if (root == NULL || root->type != YAML_MAPPING_NODE) {
        error_setf(err, "kubeconfig: %s", root == NULL ? "empty document" : "the top level must be a mapping");
        return -1;
    }
    const char *kind;
    if (get_string(d, root, "kind", "kubeconfig", &kind, err) != 0)
        return -1;
    if (kind != NULL && strcmp(kind, "Config") != 0) {
        error_setf(err, "kind: \"%.64s\", expected Config", kind);
        return -1;
    }
    if (context == NULL) {
        if (get_string(d, root, "current-context", "kubeconfig", &context, err) != 0)
            return -1;
        if (context == NULL) {
            error_setf(err, "current-context: not set and no context was given");
            return -1;
        }
    }
    out->context = util_strdup(context);
    yaml_node_t *ctx = find_named(d, root, "contexts", "context", context, err);
    if (ctx == NULL)
        return -1;
    char where[96];
    snprintf(where, sizeof(where), "contexts[%.64s].context", context);
    const char *cluster, *user, *ns;
    if (get_string(d, ctx, "cluster", where, &cluster, err) != 0 || get_string(d, ctx, "user", where, &user, err) != 0 ||
        get_string(d, ctx, "namespace", where, &ns, err) != 0)
        return -1;
    if (cluster == NULL) {
        error_setf(err, "%s.cluster: missing", where);
        return -1;
    }
    out->namespace = ns != NULL ? util_strdup(ns) : NULL;
    out->cluster = util_strdup(cluster);
    yaml_node_t *cl = find_named(d, root, "clusters", "cluster", cluster, err);
    if (cl == NULL || parse_cluster(d, cl, out, err) != 0)
        return -1;
    if (user != NULL) { /* a context without a user is anonymous */
        out->user = util_strdup(user);
        yaml_node_t *u = find_named(d, root, "users", "user", user, err);
        if (u == NULL || parse_user(d, u, out, err) != 0)
            return -1;
    }
    return 0;
}

int kubeconfig_parse(const char *buf, size_t len, const char *base_dir, const char *context, struct kubeconfig *out,
                     struct error *err)
{
    yaml_parser_t parser;
    yaml_document_t ydoc;
    int rc = -1;

    kubeconfig_finish(out);
    if (!yaml_parser_initialize(&parser))
        abort();
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    if (!yaml_parser_load(&parser, &ydoc)) {
        error_setf(err, "kubeconfig: invalid YAML at line %zu column %zu: %s", parser.problem_mark.line + 1,
                   parser.problem_mark.column + 1, parser.problem != NULL ? parser.problem : "unknown error");
        one_line(err);
        yaml_parser_delete(&parser);
        return -1;
    }
    struct doc d = {.y = &ydoc, .base_dir = base_dir};
    rc = parse_root(&d, context, out, err);
    yaml_document_delete(&ydoc);
    yaml_parser_delete(&parser);
    if (rc != 0) {
        one_line(err);
        kubeconfig_finish(out);
    }
    return rc;
}

/* Reads a whole (small) file into a new NUL-terminated buffer. */
static char *read_file(const char *path, size_t max, size_t *len, struct error *err)
{
    char *buf = util_read_file(path, max, len);
    if (buf == NULL)
        error_setf(err, "cannot read %s: %s", path, errno == EFBIG ? "file too large" : strerror(errno));
    return buf;
}

int kubeconfig_load_file(const char *path, const char *context, struct kubeconfig *out, struct error *err)
{
    size_t len;
    char *buf = read_file(path, KUBECONFIG_MAX_BYTES, &len, err);
    if (buf == NULL) {
        one_line(err);
        return -1;
    }
    char *dir = util_strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int rc = kubeconfig_parse(buf, len, dir, context, out, err);
    if (rc != 0) {
        /* Prefix the file so the user knows which kubeconfig is wrong. */
        char msg[sizeof(err->message)];
        snprintf(msg, sizeof(msg), "%s", err->message);
        error_setf(err, "%.120s: %s", path, msg);
        one_line(err);
    }
    free(dir);
    free(buf);
    return rc;
}

int kubeconfig_load_incluster(const char *sa_dir, struct kubeconfig *out, struct error *err)
{
    kubeconfig_finish(out);
    if (sa_dir == NULL)
        sa_dir = KUBECONFIG_SA_DIR;
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0') {
        error_setf(err,
                   "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (not running in a pod?)");
        return -1;
    }
    if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 || strpbrk(host, "/?#@ []") != NULL) {
        error_setf(err, "in-cluster config: invalid KUBERNETES_SERVICE_HOST/PORT");
        return -1;
    }
    /* An IPv6 service address needs brackets in a URL. */
    out->server = util_strdupf(strchr(host, ':') != NULL ? "https://[%s]:%s" : "https://%s:%s", host, port);
    out->token_file = util_strdupf("%s/token", sa_dir);
    out->ca_file = util_strdupf("%s/ca.crt", sa_dir);
    char *ns_file = util_strdupf("%s/namespace", sa_dir);
    int rc = -1;
    if (access(out->token_file, R_OK) != 0) {
        error_setf(err, "in-cluster config: cannot read %s: %s", out->token_file, strerror(errno));
        goto out;
    }
    if (access(out->ca_file, R_OK) != 0) {
        error_setf(err, "in-cluster config: cannot read %s: %s", out->ca_file, strerror(errno));
        goto out;
    }
    size_t len;
    struct error ignored;
    char *ns = read_file(ns_file, 253, &len, &ignored);
    if (ns != NULL) {
        while (len > 0 && (ns[len - 1] == '\n' || ns[len - 1] == '\r' || ns[len - 1] == ' '))
            ns[--len] = '\0';
        if (len > 0)
            out->namespace = ns;
        else
            free(ns);
    }
    rc = 0;
out:
    free(ns_file);
    if (rc != 0) {
        one_line(err);
        kubeconfig_finish(out);
    }
    return rc;
}

int kubeconfig_load(const char *path, const char *context, struct kubeconfig *out, struct error *err)
{
    if (path != NULL)
        return kubeconfig_load_file(path, context, out, err);
    const char *env = getenv("KUBECONFIG");
    if (env != NULL && env[0] != '\0') {
        const char *colon = strchr(env, ':');
        char *first = colon != NULL ? util_memdup(env, (size_t)(colon - env)) : util_strdup(env);
        int rc = kubeconfig_load_file(first, context, out, err);
        free(first);
        return rc;
    }
    return kubeconfig_load_incluster(NULL, out, err);
}
