/* topology: what a Ray cluster asks of its pods' placement (topology.h). */
#include "topology.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "util.h"

#define PATH_LEN 192

/* Where one object's metadata and cluster spec are, and how their fields are named. */
struct source {
    const json_t *labels, *annotations; /* borrowed, may be NULL */
    const json_t *spec;                 /* the RayCluster spec (borrowed), may be NULL */
    const char *spec_path;              /* "spec", "spec.rayClusterSpec" or "spec.rayClusterConfig" */
};

/* error_setf, made one printable line: values and keys come from the object. */
static int fail(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vsetf(err, fmt, ap);
    va_end(ap);
    if (err != NULL)
        util_one_line(err->message);
    return -1;
}

void topology_request_init(struct topo_request *r)
{
    memset(r, 0, sizeof(*r));
}

static void constraint_finish(struct topo_constraint *c)
{
    free(c->key);
    memset(c, 0, sizeof(*c));
}

void topology_request_finish(struct topo_request *r)
{
    if (r == NULL)
        return;
    constraint_finish(&r->gang);
    for (size_t i = 0; i < r->ngroups; i++) {
        free(r->groups[i].name);
        constraint_finish(&r->groups[i].c);
    }
    free(r->groups);
    topology_request_init(r);
}

const char *topology_mode_name(enum topo_mode m)
{
    switch (m) {
    case TOPO_MODE_HARD:
        return "hard";
    case TOPO_MODE_SOFT:
        return "soft";
    case TOPO_MODE_NONE:
        break;
    }
    return "none";
}

void topology_constraint_text(const struct topo_constraint *c, char *buf, size_t size)
{
    if (c == NULL || c->mode == TOPO_MODE_NONE)
        util_format(buf, size, "no topology constraint");
    else if (c->by == TOPO_BY_LABEL)
        util_format(buf, size, "one %s domain", c->key != NULL ? c->key : "");
    else if (c->max_tier > 0)
        util_format(buf, size, "one HyperNode of tier <= %d", (int)c->max_tier);
    else
        util_format(buf, size, "one HyperNode");
}

int topology_request_any(const struct topo_request *r)
{
    if (r->gang.mode != TOPO_MODE_NONE)
        return 1;
    for (size_t i = 0; i < r->ngroups; i++)
        if (r->groups[i].c.mode != TOPO_MODE_NONE)
            return 1;
    return 0;
}

int topology_constrained(const json_t *obj)
{
    struct topo_request r;
    struct error err = {{0}};
    topology_request_init(&r);
    int constrained = topology_request_parse(obj, &r, &err) != 0 || topology_request_any(&r);
    topology_request_finish(&r);
    return constrained;
}

const struct topo_constraint *topology_request_for(const struct topo_request *r, const char *group)
{
    static const struct topo_constraint none;
    if (group == NULL)
        return r->include_head ? &r->gang : &none;
    for (size_t i = 0; i < r->ngroups; i++)
        if (r->groups[i].name != NULL && strcmp(r->groups[i].name, group) == 0 && r->groups[i].c.mode != TOPO_MODE_NONE)
            return &r->groups[i].c;
    return &r->gang;
}

/* ---- label keys, as Kubernetes validates them (IsQualifiedName) ---- */

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
}

/* What is wrong with key as a node label key, or NULL when it is valid. */
static const char *label_key_problem(const char *key)
{
    const char *slash = strchr(key, '/');
    const char *name = slash != NULL ? slash + 1 : key;
    size_t n = strlen(name);
    if (slash != NULL && strchr(name, '/') != NULL)
        return "at most one '/'";
    if (slash != NULL && !names_dns_subdomain(key, (size_t)(slash - key)))
        return "the prefix before '/' must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 "
               "characters)";
    if (n == 0 || n > 63)
        return "the name must be 1 to 63 characters";
    if (!is_alnum(name[0]) || !is_alnum(name[n - 1]))
        return "the name must start and end with a letter or digit";
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
            return "the name may hold only letters, digits, '-', '_' and '.'";
    return NULL;
}

/* ---- reading values ---- */

/* map[key] (borrowed map, may be NULL) as a string into *out (NULL when absent); -1 when it is not a string. */
static int string_at(const json_t *map, const char *map_path, const char *key, const char **out, struct error *err)
{
    const json_t *v = json_object_get(map, key);
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return fail(err, "%s[%s]: must be a string", map_path, key);
    *out = json_string_value(v);
    return 0;
}

/* A Volcano key from the labels, else the annotations; both set and different is an error. */
static int volcano_value(const struct source *src, const char *key, const char **out, const char **where, struct error *err)
{
    const char *label, *annotation;
    if (string_at(src->labels, "metadata.labels", key, &label, err) != 0 ||
        string_at(src->annotations, "metadata.annotations", key, &annotation, err) != 0)
        return -1;
    if (label != NULL && annotation != NULL && strcmp(label, annotation) != 0)
        return fail(err, "metadata.annotations[%s]: \"%s\" differs from metadata.labels[%s] \"%s\"", key, annotation, key, label);
    *out = label != NULL ? label : annotation;
    *where = label != NULL ? "metadata.labels" : "metadata.annotations";
    return 0;
}

/* A tier: a positive decimal integer that fits in int32 (leading zeros allowed, as strconv.Atoi reads them). */
static int parse_tier(const char *s, const char *where, int32_t *tier, struct error *err)
{
    int64_t v = 0;
    int ok = s[0] != '\0';
    for (const char *p = s; ok && *p != '\0'; p++) {
        ok = *p >= '0' && *p <= '9';
        v = v * 10 + (*p - '0'); /* v <= INT32_MAX before: no overflow */
        ok = ok && v <= INT32_MAX;
    }
    if (!ok || v < 1)
        return fail(err, "%s[%s]: \"%s\" is not a tier (a positive integer)", where, TOPOLOGY_VOLCANO_TIER, s);
    *tier = (int32_t)v;
    return 0;
}

/* The Volcano way: mode and tier from the labels or annotations. A tier alone asks nothing (as in KubeRay). */
static int parse_volcano(const struct source *src, struct topo_constraint *c, const char **mode_where, struct error *err)
{
    const char *mode, *tier, *tier_where;
    int32_t max_tier = 0;
    if (volcano_value(src, TOPOLOGY_VOLCANO_MODE, &mode, mode_where, err) != 0 ||
        volcano_value(src, TOPOLOGY_VOLCANO_TIER, &tier, &tier_where, err) != 0)
        return -1;
    if (tier != NULL && parse_tier(tier, tier_where, &max_tier, err) != 0)
        return -1;
    if (mode == NULL)
        return 0;
    if (strcmp(mode, "hard") != 0 && strcmp(mode, "soft") != 0)
        return fail(err, "%s[%s]: unknown mode \"%s\" (hard or soft)", *mode_where, TOPOLOGY_VOLCANO_MODE, mode);
    c->mode = strcmp(mode, "hard") == 0 ? TOPO_MODE_HARD : TOPO_MODE_SOFT;
    c->by = TOPO_BY_HYPERNODE;
    c->max_tier = max_tier;
    return 0;
}

/* raygate's way: raygate.io/topology-required or -preferred in annotations (borrowed, may be NULL) at path. */
static int parse_by_label(const json_t *annotations, const char *path, struct topo_constraint *c, struct error *err)
{
    const char *required, *preferred;
    if (string_at(annotations, path, TOPOLOGY_REQUIRED, &required, err) != 0 ||
        string_at(annotations, path, TOPOLOGY_PREFERRED, &preferred, err) != 0)
        return -1;
    if (required != NULL && preferred != NULL)
        return fail(err, "%s[%s]: %s is set as well (one constraint per object: required or preferred)", path, TOPOLOGY_PREFERRED,
                    TOPOLOGY_REQUIRED);
    const char *key = required != NULL ? required : preferred;
    if (key == NULL)
        return 0;
    const char *field = required != NULL ? TOPOLOGY_REQUIRED : TOPOLOGY_PREFERRED;
    if (key[0] == '\0')
        return fail(err, "%s[%s]: empty label key", path, field);
    const char *problem = label_key_problem(key);
    if (problem != NULL)
        return fail(err, "%s[%s]: invalid label key \"%s\": %s", path, field, key, problem);
    c->mode = required != NULL ? TOPO_MODE_HARD : TOPO_MODE_SOFT;
    c->by = TOPO_BY_LABEL;
    c->key = util_strdup(key);
    return 0;
}

/* The whole gang's constraint and the head's inclusion, from the object's metadata. */
static int parse_gang(const struct source *src, struct topo_request *out, struct error *err)
{
    struct topo_constraint volcano = {0};
    const char *mode_where = NULL, *head;
    if (parse_volcano(src, &volcano, &mode_where, err) != 0 ||
        parse_by_label(src->annotations, "metadata.annotations", &out->gang, err) != 0)
        return -1;
    if (volcano.mode != TOPO_MODE_NONE && out->gang.mode != TOPO_MODE_NONE)
        return fail(err, "%s[%s]: %s is set as well (ask one way: a HyperNode tier or a node label)", mode_where,
                    TOPOLOGY_VOLCANO_MODE, out->gang.mode == TOPO_MODE_HARD ? TOPOLOGY_REQUIRED : TOPOLOGY_PREFERRED);
    if (volcano.mode != TOPO_MODE_NONE)
        out->gang = volcano;
    if (string_at(src->annotations, "metadata.annotations", TOPOLOGY_INCLUDE_HEAD, &head, err) != 0)
        return -1;
    if (head != NULL && strcmp(head, "true") != 0 && strcmp(head, "false") != 0)
        return fail(err, "metadata.annotations[%s]: \"%s\" is not true or false", TOPOLOGY_INCLUDE_HEAD, head);
    out->include_head = head != NULL && strcmp(head, "true") == 0;
    return 0;
}

/* A group's numOfHosts; anything but a positive integer counts as 1 (the gang arithmetic, gang.h, denies it). */
static int64_t group_hosts(const json_t *group)
{
    const json_t *v = json_object_get(group, "numOfHosts");
    json_int_t n = json_is_integer(v) ? json_integer_value(v) : 1;
    return n >= 1 && n <= INT32_MAX ? (int64_t)n : 1;
}

/* Worker group i of n's own constraint; kept in out->groups when it has one, or slices under the gang's. */
static int parse_group(const struct source *src, const json_t *group, size_t i, size_t n, struct topo_request *out,
                       struct error *err)
{
    char path[PATH_LEN];
    struct topo_group g = {0};
    util_format(path, sizeof(path), "%s.workerGroupSpecs[%zu].template.metadata.annotations", src->spec_path, i);
    const json_t *annotations = json_object_get(json_object_get(json_object_get(group, "template"), "metadata"), "annotations");
    if (parse_by_label(json_is_object(annotations) ? annotations : NULL, path, &g.c, err) != 0)
        return -1;
    g.hosts = group_hosts(group);
    if (g.c.mode == TOPO_MODE_NONE && (g.hosts <= 1 || out->gang.mode == TOPO_MODE_NONE))
        return 0;
    g.name = util_strdup(json_string_value(json_object_get(group, "groupName")));
    if (out->groups == NULL)
        out->groups = util_calloc(n, sizeof(*out->groups));
    out->groups[out->ngroups++] = g;
    return 0;
}

/* Where obj's metadata and RayCluster spec are: a RayJob's spec.rayClusterSpec, a RayService's spec.rayClusterConfig. */
static void find_source(const json_t *obj, struct source *src)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *labels = json_object_get(meta, "labels"), *annotations = json_object_get(meta, "annotations");
    src->labels = json_is_object(labels) ? labels : NULL;
    src->annotations = json_is_object(annotations) ? annotations : NULL;
    src->spec = json_is_object(spec) ? spec : NULL;
    src->spec_path = "spec";
    if (json_is_object(json_object_get(spec, "rayClusterSpec"))) {
        src->spec = json_object_get(spec, "rayClusterSpec");
        src->spec_path = "spec.rayClusterSpec";
    } else if (json_is_object(json_object_get(spec, "rayClusterConfig"))) {
        src->spec = json_object_get(spec, "rayClusterConfig");
        src->spec_path = "spec.rayClusterConfig";
    }
}

int topology_request_parse(const json_t *obj, struct topo_request *out, struct error *err)
{
    struct source src;
    topology_request_finish(out);
    find_source(obj, &src);
    if (parse_gang(&src, out, err) != 0)
        goto fail;
    const json_t *workers = json_object_get(src.spec, "workerGroupSpecs");
    size_t n = json_is_array(workers) ? json_array_size(workers) : 0;
    for (size_t i = 0; i < n; i++)
        if (parse_group(&src, json_array_get(workers, i), i, n, out, err) != 0)
            goto fail;
    return 0;

fail:
    topology_request_finish(out);
    return -1;
}
