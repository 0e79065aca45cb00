#include "deviceclass.h"

#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/*
 * A resource name as a pod's extended resource is named: a qualified name,
 * an optional DNS subdomain prefix and '/', then a name of at most 63
 * characters (alphanumerics, '-', '_', '.' inside). A plain name (no prefix)
 * is taken too, for a queue's own resource names.
 */
#define NAME_RE "[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
#define PREFIX_RE "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"

static int is_resource_name(const char *s)
{
    regex_t re;
    const char *slash = strchr(s, '/');
    size_t prefix = slash != NULL ? (size_t)(slash - s) : 0;
    size_t name = strlen(s) - (slash != NULL ? prefix + 1 : 0);
    if (name == 0 || name > 63 || prefix > 253)
        return 0;
    if (regcomp(&re, "^(" PREFIX_RE "/)?" NAME_RE "$", REG_EXTENDED | REG_NOSUB) != 0)
        return 0;
    int ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

static int fail(struct deviceclass *out, struct error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct deviceclass *out, struct error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vsetf(err, fmt, ap);
    va_end(ap);
    deviceclass_finish(out);
    return -1;
}

void deviceclass_finish(struct deviceclass *dc)
{
    if (dc == NULL)
        return;
    for (size_t k = 0; k < dc->nsel; k++)
        devsel_free(dc->sel[k]);
    free(dc->sel);
    free(dc->name);
    free(dc->resource);
    memset(dc, 0, sizeof(*dc));
}

/* spec.selectors[].cel.expression, compiled into out->sel. */
static int parse_selectors(const json_t *sels, struct deviceclass *out, struct error *err)
{
    size_t k;
    const json_t *sel;
    if (sels == NULL || json_is_null(sels))
        return 0;
    if (!json_is_array(sels)) {
        error_setf(err, "spec.selectors: must be an array");
        return -1;
    }
    out->sel = util_calloc(json_array_size(sels), sizeof(*out->sel));
    json_array_foreach((json_t *)sels, k, sel)
    {
        const char *expr = json_string_value(json_object_get(json_object_get(sel, "cel"), "expression"));
        if (expr == NULL) {
            error_setf(err, "spec.selectors[%zu].cel.expression: must be a string", k);
            return -1;
        }
        out->sel[out->nsel++] = devsel_compile(expr);
    }
    return 0;
}

/* The queue resource: spec.extendedResourceName, the annotation, or the implicit name (deviceclass.h). */
static int parse_resource(const json_t *obj, struct deviceclass *out, struct error *err)
{
    const json_t *ext = json_object_get(json_object_get(obj, "spec"), "extendedResourceName");
    const json_t *ann =
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), DEVICECLASS_QUOTA_ANNOTATION);
    const char *field = "spec.extendedResourceName", *value;
    if (ext == NULL || json_is_null(ext)) {
        ext = ann;
        field = "metadata.annotations." DEVICECLASS_QUOTA_ANNOTATION;
    }
    if (ext == NULL || json_is_null(ext)) {
        out->resource = util_strdupf("%s%s", DEVICECLASS_IMPLICIT_PREFIX, out->name);
        return 0;
    }
    value = json_string_value(ext);
    if (value == NULL) {
        error_setf(err, "%s: must be a string", field);
        return -1;
    }
    if (!is_resource_name(value)) {
        char shown[96];
        util_format(shown, sizeof(shown), "%s", value);
        util_one_line(shown);
        error_setf(err, "%s: \"%s\" is not a resource name", field, shown);
        return -1;
    }
    out->resource = util_strdup(value);
    return 0;
}

int deviceclass_parse(const json_t *obj, struct deviceclass *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    const json_t *spec = json_object_get(obj, "spec");
    if (name == NULL || name[0] == '\0')
        return fail(out, err, "metadata.name: must be a non-empty string");
    if (spec != NULL && !json_is_null(spec) && !json_is_object(spec))
        return fail(out, err, "spec: must be an object");
    out->name = util_strdup(name);
    if (parse_resource(obj, out, err) != 0 || parse_selectors(json_object_get(spec, "selectors"), out, err) != 0) {
        deviceclass_finish(out);
        return -1;
    }
    return 0;
}

int deviceclass_exact(const struct deviceclass *dc)
{
    return deviceclass_unevaluated(dc) == NULL;
}

const char *deviceclass_unevaluated(const struct deviceclass *dc)
{
    for (size_t k = 0; k < dc->nsel; k++)
        if (!devsel_exact(dc->sel[k]))
            return devsel_unevaluated(dc->sel[k]);
    return NULL;
}

int deviceclass_match(const struct deviceclass *dc, const struct devsel_device *d)
{
    for (size_t k = 0; k < dc->nsel; k++)
        if (!devsel_match(dc->sel[k], d))
            return 0;
    return 1;
}
