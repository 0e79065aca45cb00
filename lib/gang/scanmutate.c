#include "scanmutate.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang.h"
#include "jsonpatch.h"
#include "legacy.h"
#include "names.h"
#include "submitter.h"

#define PATH_LEN 192

/* One string member to set: its name and value, and the value's JSON text (NULL: the value quoted, it being plain). */
struct member {
    const char *key, *text, *json;
};

/* What every template gets: the cluster's queue, group (may be NULL) and priority (may be NULL). */
struct cluster {
    const char *queue, *group, *priority;
};

struct writer {
    const struct jsonscan *s;
    struct util_buf *patch;
    size_t ops;
    struct mutate_result *out;
};

/*
 * A non-empty string member's value as a new C string in *text: 1; 0 when it
 * is absent, empty or not a string (*text NULL); -1 when it carries escapes
 * (its text is not what jansson would write).
 */
static int plain_member(const struct jsonscan *s, long obj, const char *key, char **text)
{
    long i = jsonscan_get(s, obj, key);
    *text = NULL;
    if (jsonscan_type(s, i) != JSONSCAN_STRING || s->tokens[i].len == 0)
        return 0;
    if (s->tokens[i].escaped)
        return -1;
    *text = util_strdupf("%.*s", (int)s->tokens[i].len, s->text + s->tokens[i].start);
    return 1;
}

/* Token i's value when it is a string (new; decoded when it has escapes), else NULL. */
static char *string_of(const struct jsonscan *s, long i)
{
    if (jsonscan_type(s, i) != JSONSCAN_STRING)
        return NULL;
    if (!s->tokens[i].escaped)
        return util_strdupf("%.*s", (int)s->tokens[i].len, s->text + s->tokens[i].start);
    json_t *v = jsonscan_value(s, i, JSONSCAN_WHOLE, NULL); /* no \u escapes: no NUL inside */
    char *text = util_strdup(json_string_value(v));
    json_decref(v);
    return text;
}

/* Whether token i is a string of value text, as json_equal() finds it. */
static int string_equals(const struct jsonscan *s, long i, const char *text)
{
    if (jsonscan_type(s, i) != JSONSCAN_STRING)
        return 0;
    if (!s->tokens[i].escaped)
        return s->tokens[i].len == strlen(text) && memcmp(s->text + s->tokens[i].start, text, s->tokens[i].len) == 0;
    char *have = string_of(s, i);
    int equal = strcmp(have, text) == 0;
    free(have);
    return equal;
}

/* Opens an operation: {"op":op,"path":path[/token escaped],"value": */
static void op_begin(struct writer *w, const char *op, const char *path, const char *token)
{
    util_buf_puts(w->patch, w->ops++ == 0 ? "[{\"op\":\"" : ",{\"op\":\"");
    util_buf_puts(w->patch, op);
    util_buf_puts(w->patch, "\",\"path\":\"");
    if (token != NULL) {
        char *p = jsonpatch_pointer_join(path, token);
        util_buf_puts(w->patch, p);
        free(p);
    } else {
        util_buf_puts(w->patch, path);
    }
    util_buf_puts(w->patch, "\",\"value\":");
}

static void put_value(struct util_buf *b, const struct member *m)
{
    if (m->json != NULL) {
        util_buf_puts(b, m->json);
        return;
    }
    util_buf_puts(b, "\"");
    util_buf_puts(b, m->text);
    util_buf_puts(b, "\"");
}

/* The object of members m[0..n) in their order (a new object's: the order they were set in). */
static void put_object(struct util_buf *b, const struct member *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        util_buf_puts(b, i == 0 ? "{\"" : ",\"");
        util_buf_puts(b, m[i].key);
        util_buf_puts(b, "\":");
        put_value(b, &m[i]);
    }
    util_buf_puts(b, "}");
}

/*
 * What jsonpatch_diff() says when members m[0..n) (in key order) are set in the
 * member at path, token obj: each one that differs added or replaced when obj
 * is an object; else the whole object added (obj absent) or replaced.
 */
static void set_members(struct writer *w, const char *path, long obj, const struct member *m, size_t n)
{
    if (jsonscan_type(w->s, obj) == JSONSCAN_OBJECT) {
        for (size_t i = 0; i < n; i++) {
            long v = jsonscan_get(w->s, obj, m[i].key);
            if (string_equals(w->s, v, m[i].text))
                continue;
            op_begin(w, v < 0 ? "add" : "replace", path, m[i].key);
            put_value(w->patch, &m[i]);
            util_buf_puts(w->patch, "}");
        }
        return;
    }
    op_begin(w, obj < 0 ? "add" : "replace", path, NULL);
    put_object(w->patch, m, n);
    util_buf_puts(w->patch, "}");
}

/* mutate_pod_template()'s metadata: group annotation and queue label (where names the template in warnings). */
static void template_metadata(struct writer *w, const char *path, const char *where, long meta, const struct cluster *c)
{
    const struct member queue = {NAMES_LABEL_QUEUE, c->queue, NULL}, group = {NAMES_ANNOTATION_GROUP, c->group, NULL};
    char p[PATH_LEN];
    if (jsonscan_type(w->s, meta) != JSONSCAN_OBJECT) {
        /* A new metadata object: labels first, as mutate_pod_template() sets them. */
        op_begin(w, meta < 0 ? "add" : "replace", path, NULL);
        util_buf_puts(w->patch, "{\"labels\":");
        put_object(w->patch, &queue, 1);
        if (c->group != NULL) {
            util_buf_puts(w->patch, ",\"annotations\":");
            put_object(w->patch, &group, 1);
        }
        util_buf_puts(w->patch, "}}");
        return;
    }
    /* jsonpatch_diff() walks keys sorted: annotations before labels. */
    if (c->group != NULL) {
        util_format(p, sizeof(p), "%s/annotations", path);
        set_members(w, p, jsonscan_get(w->s, meta, "annotations"), &group, 1);
    }
    long labels = jsonscan_get(w->s, meta, "labels");
    char *have = string_of(w->s, jsonscan_get(w->s, labels, NAMES_LABEL_QUEUE));
    mutate_warn_queue(have, where, "RayCluster", c->queue, w->out);
    free(have);
    util_format(p, sizeof(p), "%s/labels", path);
    set_members(w, p, labels, &queue, 1);
}

/* mutate_pod_template() on the template at token template (an object: the gang arithmetic checked it). */
static void template_ops(struct writer *w, const char *path, const char *where, long template, const struct cluster *c)
{
    char p[PATH_LEN];
    util_format(p, sizeof(p), "%s/metadata", path);
    template_metadata(w, p, where, jsonscan_get(w->s, template, "metadata"), c);
    if (c->priority == NULL)
        return;
    /* The gang arithmetic checked that spec is an object. */
    long spec = jsonscan_get(w->s, template, "spec");
    long have = jsonscan_get(w->s, spec, "priorityClassName");
    if (jsonscan_type(w->s, have) == JSONSCAN_STRING && w->s->tokens[have].len > 0)
        return; /* non-empty: escapes stand for at least one character each */
    util_format(p, sizeof(p), "%s/spec", path);
    const struct member m = {"priorityClassName", c->priority, NULL};
    op_begin(w, have < 0 ? "add" : "replace", p, m.key);
    put_value(w->patch, &m);
    util_buf_puts(w->patch, "}");
}

/* mutate_cluster_templates() on the spec at token spec. */
static void templates_ops(struct writer *w, long spec, const struct cluster *c)
{
    char path[PATH_LEN], where[PATH_LEN];
    long head = jsonscan_get(w->s, spec, "headGroupSpec");
    template_ops(w, "/spec/headGroupSpec/template", "spec.headGroupSpec.template", jsonscan_get(w->s, head, "template"), c);
    long workers = jsonscan_get(w->s, spec, "workerGroupSpecs");
    if (jsonscan_type(w->s, workers) != JSONSCAN_ARRAY)
        return;
    long e = workers + 1;
    for (uint32_t i = 0; i < w->s->tokens[workers].count; i++) {
        util_format(path, sizeof(path), "/spec/workerGroupSpecs/%" PRIu32 "/template", i);
        util_format(where, sizeof(where), "spec.workerGroupSpecs[%" PRIu32 "].template", i);
        template_ops(w, path, where, jsonscan_get(w->s, e, "template"), c);
        e = (long)w->s->tokens[e].next;
    }
}

/* The cluster's annotations (meta: its metadata, an object) and the templates' operations, for gang. */
static void cluster_ops(struct writer *w, long object, long meta, const struct gang_spec *gang, const struct cluster *c)
{
    char member[24];
    snprintf(member, sizeof(member), "%" PRId64, gang->min_member);
    char *resources = resources_to_string(&gang->min_resources);
    json_t *text = json_string(resources);
    char *json = json_dumps(text, JSON_COMPACT | JSON_ENCODE_ANY); /* a JSON object in a string: quotes escaped */
    const struct member annotations[] = {
        {NAMES_ANNOTATION_MIN_MEMBER, member, NULL},
        {NAMES_ANNOTATION_MIN_RESOURCES, resources, json},
        {NAMES_ANNOTATION_GROUP, c->group, NULL},
    };
    set_members(w, "/metadata/annotations", jsonscan_get(w->s, meta, "annotations"), annotations, c->group != NULL ? 3 : 2);
    templates_ops(w, jsonscan_get(w->s, object, "spec"), c);
    free(json);
    json_decref(text);
    free(resources);
}

int scanmutate_raycluster(const struct jsonscan *s, long object, const json_t *raycluster, struct util_buf *patch,
                          struct mutate_result *out)
{
    struct writer w = {s, patch, 0, out};
    struct gang_spec gang;
    struct error err;
    struct cluster c = {NULL, NULL, NULL};
    char *queue = NULL, *name = NULL, *priority = NULL;
    long meta = jsonscan_get(s, object, "metadata"), labels = jsonscan_get(s, meta, "labels");
    int rc = 0;

    gang_spec_init(&gang);
    if (legacy_is_raycluster(raycluster))
        return 0;
    int q = plain_member(s, labels, NAMES_LABEL_QUEUE, &queue);
    if (q <= 0)
        return q == 0; /* no queue: nothing to change */
    if (plain_member(s, meta, "name", &name) < 0 || plain_member(s, labels, NAMES_LABEL_PRIORITY, &priority) < 0 ||
        submitter_cluster_gang(raycluster, &gang, &err) != 0)
        goto out;
    c.queue = queue;
    c.group = name != NULL ? util_strdupf("ray-%s-pg", name) : NULL;
    c.priority = priority;
    /* jsonpatch_diff() walks keys sorted: metadata before spec. */
    cluster_ops(&w, object, meta, &gang, &c);
    if (w.ops > 0)
        util_buf_puts(patch, "]");
    free((char *)c.group);
    rc = 1;
out:
    gang_spec_finish(&gang);
    free(priority);
    free(name);
    free(queue);
    return rc;
}
