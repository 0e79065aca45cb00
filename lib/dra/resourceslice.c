#include "resourceslice.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"
#include "util.h"

/* Sets err, empties out and returns -1: the one failure path of resourceslice_parse. */
static int fail(struct resourceslice *out, struct error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct resourceslice *out, struct error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vsetf(err, fmt, ap);
    va_end(ap);
    resourceslice_finish(out);
    return -1;
}

static void attrs_free(const struct devsel_attr *attrs, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        free((char *)attrs[k].name);
        free((char *)attrs[k].value.s);
    }
    free((struct devsel_attr *)attrs);
}

void resourceslice_finish(struct resourceslice *s)
{
    if (s == NULL)
        return;
    for (size_t k = 0; k < s->ndevices; k++) {
        struct resourceslice_device *d = &s->devices[k];
        free(d->name);
        attrs_free(d->device.attrs, d->device.nattrs);
        attrs_free(d->device.capacity, d->device.ncapacity);
    }
    free(s->devices);
    free(s->name);
    free(s->driver);
    free(s->pool);
    free(s->node);
    json_decref(s->node_selector);
    memset(s, 0, sizeof(*s));
}

/* One attribute value ({int: N}, {bool: B}, {string: S} or {version: V}) into *v; path names it in err. */
static int parse_value(const json_t *obj, const char *path, struct devsel_value *v, struct error *err)
{
    static const char *const keys[] = {"int", "bool", "string", "version"};
    static const uint8_t kinds[] = {DEVSEL_INT, DEVSEL_BOOL, DEVSEL_STRING, DEVSEL_VERSION};
    if (!json_is_object(obj)) {
        error_setf(err, "%s: must be an object", path);
        return -1;
    }
    int found = -1;
    for (int k = 0; k < 4; k++) {
        const json_t *x = json_object_get(obj, keys[k]);
        if (x == NULL || json_is_null(x))
            continue;
        if (found >= 0) {
            error_setf(err, "%s: more than one value (%s and %s)", path, keys[found], keys[k]);
            return -1;
        }
        found = k;
        int ok = k == 0 ? json_is_integer(x) : k == 1 ? json_is_boolean(x) : json_is_string(x);
        if (!ok) {
            error_setf(err, "%s.%s: must be %s", path, keys[k], k == 0 ? "an integer" : k == 1 ? "a boolean" : "a string");
            return -1;
        }
        v->kind = kinds[k];
        v->i = k == 0 ? json_integer_value(x) : k == 1 ? json_is_true(x) : 0;
        v->s = k >= 2 ? util_strdup(json_string_value(x)) : NULL;
    }
    if (found < 0) {
        error_setf(err, "%s: no value", path);
        return -1;
    }
    return 0;
}

/* One capacity ({value: "80Gi"}) into *v, a quantity in base units. */
static int parse_capacity(const json_t *obj, const char *path, struct devsel_value *v, struct error *err)
{
    const json_t *value = json_object_get(obj, "value");
    struct quantity q;
    struct error qerr = {{0}};
    if (!json_is_string(value)) {
        error_setf(err, "%s.value: must be a quantity string", path);
        return -1;
    }
    if (quantity_parse(json_string_value(value), QUANTITY_UNIT_BASE, &q, &qerr) != 0) {
        error_setf(err, "%s.value: %s", path, qerr.message);
        return -1;
    }
    v->kind = DEVSEL_QUANTITY;
    v->i = q.value;
    return 0;
}

/* devices[i].attributes or .capacity (field) into *attrs, *n (owned); path is "spec.devices[i]". */
static int parse_map(const json_t *dev, const char *field, const char *path, const struct devsel_attr **attrs, size_t *n,
                     struct error *err)
{
    const json_t *map = json_object_get(dev, field), *v;
    const char *key;
    char sub[256];
    if (map == NULL || json_is_null(map))
        return 0;
    if (!json_is_object(map)) {
        error_setf(err, "%s.%s: must be an object", path, field);
        return -1;
    }
    struct devsel_attr *out = util_calloc(json_object_size(map), sizeof(*out));
    *attrs = out;
    json_object_foreach((json_t *)map, key, v)
    {
        util_format(sub, sizeof(sub), "%s.%s.%s", path, field, key);
        out[*n].name = util_strdup(key);
        (*n)++;
        int rc = strcmp(field, "capacity") == 0 ? parse_capacity(v, sub, &out[*n - 1].value, err)
                                                : parse_value(v, sub, &out[*n - 1].value, err);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int parse_devices(const json_t *devices, struct resourceslice *out, struct error *err)
{
    size_t k;
    const json_t *dev;
    char path[64];
    if (devices == NULL || json_is_null(devices))
        return 0;
    if (!json_is_array(devices)) {
        error_setf(err, "spec.devices: must be an array");
        return -1;
    }
    out->devices = util_calloc(json_array_size(devices), sizeof(*out->devices));
    json_array_foreach((json_t *)devices, k, dev)
    {
        struct resourceslice_device *d = &out->devices[out->ndevices++];
        const char *name = json_string_value(json_object_get(dev, "name"));
        util_format(path, sizeof(path), "spec.devices[%zu]", k);
        if (name == NULL || name[0] == '\0') {
            error_setf(err, "%s.name: must be a non-empty string", path);
            return -1;
        }
        d->name = util_strdup(name);
        d->device.driver = out->driver;
        if (parse_map(dev, "attributes", path, &d->device.attrs, &d->device.nattrs, err) != 0 ||
            parse_map(dev, "capacity", path, &d->device.capacity, &d->device.ncapacity, err) != 0)
            return -1;
    }
    return 0;
}

/*
 * spec.nodeName, spec.nodeSelector or spec.allNodes: exactly one. A slice of
 * shared counters alone (no devices) may name none: it is kept with scope
 * RESOURCESLICE_NODE and no node, and serves nothing. perDeviceNodeSelection
 * (each device names its nodes) is not counted: refused, naming the field.
 */
static int parse_scope(const json_t *spec, struct resourceslice *out, struct error *err)
{
    const json_t *node = json_object_get(spec, "nodeName"), *sel = json_object_get(spec, "nodeSelector");
    int all = json_is_true(json_object_get(spec, "allNodes"));
    if (json_is_true(json_object_get(spec, "perDeviceNodeSelection"))) {
        error_setf(err, "spec.perDeviceNodeSelection: not supported: raygate counts slices whose nodes the slice names");
        return -1;
    }
    if (node != NULL && !json_is_null(node) && (!json_is_string(node) || json_string_length(node) == 0)) {
        error_setf(err, "spec.nodeName: must be a non-empty string");
        return -1;
    }
    if (sel != NULL && !json_is_null(sel) && !json_is_object(sel)) {
        error_setf(err, "spec.nodeSelector: must be an object");
        return -1;
    }
    int has_node = json_is_string(node), has_sel = json_is_object(sel);
    if (has_node + has_sel + all > 1) {
        error_setf(err, "spec: only one of nodeName, nodeSelector and allNodes may be set");
        return -1;
    }
    if (has_node + has_sel + all == 0 && json_array_size(json_object_get(spec, "devices")) > 0) {
        error_setf(err, "spec: one of nodeName, nodeSelector and allNodes must be set");
        return -1;
    }
    out->scope = has_sel ? RESOURCESLICE_SELECTOR : all ? RESOURCESLICE_ALL_NODES : RESOURCESLICE_NODE;
    out->node = has_node ? util_strdup(json_string_value(node)) : NULL;
    out->node_selector = has_sel ? json_incref((json_t *)sel) : NULL;
    return 0;
}

int resourceslice_parse(const json_t *obj, struct resourceslice *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    const json_t *spec = json_object_get(obj, "spec"), *pool = json_object_get(spec, "pool");
    const json_t *generation = json_object_get(pool, "generation");
    if (name == NULL)
        return fail(out, err, "metadata.name: must be a string");
    out->name = util_strdup(name);
    if (!json_is_object(spec))
        return fail(out, err, "spec: must be an object");
    const char *driver = json_string_value(json_object_get(spec, "driver"));
    if (driver == NULL || driver[0] == '\0')
        return fail(out, err, "spec.driver: must be a non-empty string");
    out->driver = util_strdup(driver);
    if (!json_is_object(pool) || !json_is_string(json_object_get(pool, "name")))
        return fail(out, err, "spec.pool.name: must be a string");
    out->pool = util_strdup(json_string_value(json_object_get(pool, "name")));
    if (generation != NULL && (!json_is_integer(generation) || json_integer_value(generation) < 0))
        return fail(out, err, "spec.pool.generation: must be a non-negative integer");
    out->generation = json_integer_value(generation);
    if (parse_scope(spec, out, err) != 0 || parse_devices(json_object_get(spec, "devices"), out, err) != 0) {
        if (err != NULL)
            util_one_line(err->message); /* a field path holds the object's own keys */
        resourceslice_finish(out);
        return -1;
    }
    return 0;
}
