/* hypercheck: the webhook's decision on a HyperNode (hypercheck.h). */
#include "hypercheck.h"

#include <regex.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

static int check_tier(const json_t *spec, struct error *err)
{
    const json_t *t = json_object_get(spec, "tier");
    if (t == NULL) {
        error_setf(err, "spec.tier: missing");
        return -1;
    }
    if (!json_is_integer(t) || json_integer_value(t) < 0 || json_integer_value(t) > INT32_MAX) {
        error_setf(err, "spec.tier: must be an integer >= 0");
        return -1;
    }
    return 0;
}

/* One matchExpressions requirement at path. */
static int check_expr(const json_t *x, const char *path, struct error *err)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist"};
    const char *key = json_string_value(json_object_get(x, "key"));
    const char *op = json_string_value(json_object_get(x, "operator"));
    const json_t *values = json_object_get(x, "values");
    if (key == NULL || key[0] == '\0') {
        error_setf(err, "%s.key: missing", path);
        return -1;
    }
    int code = -1;
    for (int k = 0; k < 4 && op != NULL; k++) {
        if (strcmp(op, ops[k]) == 0)
            code = k;
    }
    if (code < 0) {
        error_setf(err, "%s.operator: \"%s\" is not In, NotIn, Exists or DoesNotExist", path, op != NULL ? op : "");
        return -1;
    }
    size_t nv = json_array_size(values);
    if (code < 2 && nv == 0) {
        error_setf(err, "%s.values: must be non-empty for %s", path, op);
        return -1;
    }
    if (code >= 2 && nv != 0) {
        error_setf(err, "%s.values: must be empty for %s", path, op);
        return -1;
    }
    for (size_t i = 0; i < nv; i++) {
        if (!json_is_string(json_array_get(values, i))) {
            error_setf(err, "%s.values[%zu]: must be a string", path, i);
            return -1;
        }
    }
    return 0;
}

static int check_labels(const json_t *sel, const char *path, struct error *err)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), k, v)
    {
        if (!json_is_string(v)) {
            error_setf(err, "%s.matchLabels.%s: must be a string", path, k);
            return -1;
        }
    }
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, x)
    {
        char p[96];
        util_format(p, sizeof(p), "%s.matchExpressions[%zu]", path, i);
        if (check_expr(x, p, err) != 0)
            return -1;
    }
    return 0;
}

static int check_regex(const char *text, const char *path, struct error *err)
{
    regex_t re;
    int rc = regcomp(&re, text, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[128];
        regerror(rc, &re, why, sizeof(why));
        error_setf(err, "%s.regexMatch.pattern: \"%s\" is not a valid regular expression: %s", path, text, why);
        return -1;
    }
    regfree(&re);
    return 0;
}

/* The one selector of a member (hyper: of type HyperNode) at path. */
static int check_selector(const json_t *sel, int hyper, const char *path, struct error *err)
{
    static const char *const kinds[] = {"exactMatch", "regexMatch", "labelMatch"};
    const json_t *s = NULL;
    int count = 0, kind = 0;
    for (int k = 0; k < 3; k++) {
        const json_t *v = json_object_get(sel, kinds[k]);
        if (v != NULL && !json_is_null(v)) {
            s = v;
            kind = k;
            count++;
        }
    }
    if (count != 1) {
        error_setf(err, "%s: %s", path,
                   count == 0 ? "one of exactMatch, regexMatch or labelMatch is required"
                              : "only one of exactMatch, regexMatch or labelMatch may be given");
        return -1;
    }
    const char *text = json_string_value(json_object_get(s, kind == 0 ? "name" : "pattern"));
    if (kind != 2 && (text == NULL || text[0] == '\0')) {
        error_setf(err, "%s.%s.%s: missing", path, kinds[kind], kind == 0 ? "name" : "pattern");
        return -1;
    }
    if (kind == 1)
        return check_regex(text, path, err);
    if (kind == 2 && hyper) {
        error_setf(err, "%s.labelMatch: only members of type Node may select by label", path);
        return -1;
    }
    if (kind == 2) {
        char p[80];
        util_format(p, sizeof(p), "%s.labelMatch", path);
        return check_labels(s, p, err);
    }
    return 0;
}

int hypercheck_validate(const json_t *obj, struct error *err)
{
    const json_t *spec = json_object_get(obj, "spec");
    if (check_tier(spec, err) != 0)
        return -1;
    const json_t *members = json_object_get(spec, "members");
    size_t n = json_array_size(members);
    if (n == 0) {
        error_setf(err, "spec.members: at least one member is required");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *m = json_array_get(members, i);
        const char *type = json_string_value(json_object_get(m, "type"));
        if (type == NULL || (strcmp(type, "Node") != 0 && strcmp(type, "HyperNode") != 0)) {
            error_setf(err, "spec.members[%zu].type: \"%s\" is not Node or HyperNode", i, type != NULL ? type : "");
            return -1;
        }
        char path[64];
        util_format(path, sizeof(path), "spec.members[%zu].selector", i);
        if (check_selector(json_object_get(m, "selector"), strcmp(type, "HyperNode") == 0, path, err) != 0)
            return -1;
    }
    return 0;
}
