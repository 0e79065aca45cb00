#include "claimspec.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static void request_finish(struct claimspec_request *r)
{
    for (size_t k = 0; k < r->nsel; k++) {
        devsel_free(r->sel[k]);
        free(r->exprs[k]);
    }
    free(r->sel);
    free(r->exprs);
    free(r->name);
    free(r->device_class);
}

void claimspec_finish(struct claimspec *cs)
{
    if (cs == NULL)
        return;
    for (size_t k = 0; k < cs->nrequests; k++)
        request_finish(&cs->requests[k]);
    free(cs->requests);
    memset(cs, 0, sizeof(*cs));
}

static int parse_selectors(const json_t *sels, const char *path, struct claimspec_request *r, struct error *err)
{
    size_t k;
    const json_t *sel;
    if (sels == NULL || json_is_null(sels))
        return 0;
    if (!json_is_array(sels)) {
        error_setf(err, "%s.selectors: must be an array", path);
        return -1;
    }
    r->sel = util_calloc(json_array_size(sels), sizeof(*r->sel));
    r->exprs = util_calloc(json_array_size(sels), sizeof(*r->exprs));
    json_array_foreach((json_t *)sels, k, sel)
    {
        const char *expr = json_string_value(json_object_get(json_object_get(sel, "cel"), "expression"));
        if (expr == NULL) {
            error_setf(err, "%s.selectors[%zu].cel.expression: must be a string", path, k);
            return -1;
        }
        r->exprs[r->nsel] = util_strdup(expr);
        r->sel[r->nsel++] = devsel_compile(expr);
    }
    return 0;
}

/*
 * The fields an `exactly` request and a firstAvailable subrequest share:
 * deviceClassName, selectors, allocationMode and count. path names obj
 * ("spec.devices.requests[0].exactly") in messages and in r->path.
 */
static int parse_exact(const json_t *obj, const char *path, struct claimspec_request *r, struct error *err)
{
    const char *cls = json_string_value(json_object_get(obj, "deviceClassName"));
    const json_t *mode = json_object_get(obj, "allocationMode"), *count = json_object_get(obj, "count");
    util_format(r->path, sizeof(r->path), "%s", path);
    if (!json_is_object(obj)) {
        error_setf(err, "%s: must be an object", path);
        return -1;
    }
    if (cls == NULL || cls[0] == '\0') {
        error_setf(err, "%s.deviceClassName: must be a non-empty string", path);
        return -1;
    }
    r->device_class = util_strdup(cls);
    const char *m = mode == NULL || json_is_null(mode) ? "ExactCount" : json_string_value(mode);
    if (util_streq(m, "All")) {
        r->flags |= CLAIMSPEC_ALL;
        r->count = 0;
    } else if (util_streq(m, "ExactCount")) {
        if (count != NULL && !json_is_null(count) && !json_is_integer(count)) {
            error_setf(err, "%s.count: must be an integer", path);
            return -1;
        }
        r->count = count == NULL || json_is_null(count) ? 1 : json_integer_value(count);
        if (r->count < 1) {
            error_setf(err, "%s.count: must be at least 1", path);
            return -1;
        }
    } else {
        error_setf(err, "%s.allocationMode: must be ExactCount or All", path);
        return -1;
    }
    return parse_selectors(json_object_get(obj, "selectors"), path, r, err);
}

/* requests[i]: {name, exactly} or {name, firstAvailable: [...]}, the first subrequest counted. */
static int parse_request(const json_t *req, const char *path, struct claimspec_request *r, struct error *err)
{
    const char *name = json_string_value(json_object_get(req, "name"));
    const json_t *exactly = json_object_get(req, "exactly"), *first = json_object_get(req, "firstAvailable");
    char sub[160];
    if (name == NULL || name[0] == '\0') {
        error_setf(err, "%s.name: must be a non-empty string", path);
        return -1;
    }
    int has_exactly = exactly != NULL && !json_is_null(exactly), has_first = first != NULL && !json_is_null(first);
    if (has_exactly == has_first) {
        error_setf(err, "%s: must have exactly one of exactly and firstAvailable", path);
        return -1;
    }
    if (has_exactly) {
        r->name = util_strdup(name);
        util_format(sub, sizeof(sub), "%s.exactly", path);
        return parse_exact(exactly, sub, r, err);
    }
    if (!json_is_array(first) || json_array_size(first) == 0) {
        error_setf(err, "%s.firstAvailable: must be a non-empty array", path);
        return -1;
    }
    const json_t *sr = json_array_get(first, 0);
    const char *subname = json_string_value(json_object_get(sr, "name"));
    if (subname == NULL || subname[0] == '\0') {
        error_setf(err, "%s.firstAvailable[0].name: must be a non-empty string", path);
        return -1;
    }
    r->name = util_strdupf("%s/%s", name, subname);
    r->flags |= CLAIMSPEC_FIRST_AVAILABLE;
    util_format(sub, sizeof(sub), "%s.firstAvailable[0]", path);
    return parse_exact(sr, sub, r, err);
}

int claimspec_parse(const json_t *spec, const char *path, struct claimspec *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    const json_t *devices = json_object_get(spec, "devices"), *reqs = json_object_get(devices, "requests"), *req;
    char sub[160];
    size_t k;
    path = path != NULL ? path : "spec";
    if (!json_is_object(spec)) {
        error_setf(err, "%s: must be an object", path);
        return -1;
    }
    if (devices != NULL && !json_is_null(devices) && !json_is_object(devices)) {
        error_setf(err, "%s.devices: must be an object", path);
        return -1;
    }
    if (reqs == NULL || json_is_null(reqs))
        return 0;
    if (!json_is_array(reqs)) {
        error_setf(err, "%s.devices.requests: must be an array", path);
        return -1;
    }
    out->requests = util_calloc(json_array_size(reqs), sizeof(*out->requests));
    json_array_foreach((json_t *)reqs, k, req)
    {
        util_format(sub, sizeof(sub), "%s.devices.requests[%zu]", path, k);
        if (parse_request(req, sub, &out->requests[out->nrequests++], err) != 0) {
            claimspec_finish(out);
            return -1;
        }
    }
    return 0;
}

int claimspec_request_match(const struct claimspec_request *r, const struct devsel_device *d)
{
    for (size_t k = 0; k < r->nsel; k++)
        if (!devsel_match(r->sel[k], d))
            return 0;
    return 1;
}
