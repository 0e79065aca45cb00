/*
 * libFuzzer harness: lib/dra. The first byte picks what the rest is: a CEL
 * selector (devsel), or a DeviceClass, ResourceSlice or claim spec as JSON.
 * A selector always compiles; it is exact exactly when nothing is named
 * unevaluated; a driver conjunct it names excludes every other driver's
 * device, and an inexact selector matches every device of that driver. A
 * parse either succeeds with its fields set or fails with a message and
 * leaves its output empty.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimspec.h"
#include "deviceclass.h"
#include "resourceslice.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                                                \
    do {                                                                                                                           \
        if (!(cond)) {                                                                                                             \
            fprintf(stderr, "%s:%d: %s fails for \"%s\"\n", __FILE__, __LINE__, #cond, s);                                         \
            abort();                                                                                                               \
        }                                                                                                                          \
    } while (0)

static const struct devsel_attr attrs[] = {
    {"model", {.kind = DEVSEL_STRING, .s = "a100"}},    {"index", {.kind = DEVSEL_INT, .i = 2}},
    {"healthy", {.kind = DEVSEL_BOOL, .i = 1}},         {"driverVersion", {.kind = DEVSEL_VERSION, .s = "1.2.3"}},
    {"x.io/type", {.kind = DEVSEL_STRING, .s = "gpu"}}, {"x.io/bad", {.kind = DEVSEL_VERSION, .s = "1.02"}},
};
static const struct devsel_attr capacity[] = {{"memory", {.kind = DEVSEL_QUANTITY, .i = (int64_t)80 << 30}}};

static void selector(const char *s)
{
    struct devsel *sel = devsel_compile(s);
    CHECK(sel != NULL);
    const char *u = devsel_unevaluated(sel), *driver = devsel_driver(sel);
    CHECK(devsel_exact(sel) == (u == NULL));
    struct devsel_device dev = {"gpu.example.com", attrs, sizeof(attrs) / sizeof(attrs[0]), capacity, 1};
    struct devsel_device none = {"gpu.example.com", NULL, 0, NULL, 0};
    int m = devsel_match(sel, &dev);
    CHECK(m == 0 || m == 1);
    CHECK(devsel_match(sel, &none) == 0 || devsel_match(sel, &none) == 1);
    if (driver != NULL) {
        struct devsel_device other = {strcmp(driver, "zz.invalid") == 0 ? "yy.invalid" : "zz.invalid", attrs, 6, capacity, 1};
        CHECK(devsel_match(sel, &other) == 0);
        dev.driver = driver;
        if (!devsel_exact(sel))
            CHECK(devsel_match(sel, &dev) == 1);
    } else if (!devsel_exact(sel)) {
        CHECK(m == 1);
    }
    devsel_free(sel);
}

static void object(int kind, const char *s)
{
    json_t *obj = json_loads(s, 0, NULL);
    if (obj == NULL)
        return;
    struct error err = {{0}};
    if (kind == 1) {
        struct deviceclass dc;
        int rc = deviceclass_parse(obj, &dc, &err);
        CHECK(rc == 0 ? dc.name != NULL && dc.resource != NULL : dc.name == NULL && dc.nsel == 0 && err.message[0] != '\0');
        deviceclass_finish(&dc);
    } else if (kind == 2) {
        struct resourceslice rs;
        int rc = resourceslice_parse(obj, &rs, &err);
        CHECK(rc == 0 ? rs.driver != NULL && rs.pool != NULL : rs.name == NULL && rs.ndevices == 0 && err.message[0] != '\0');
        for (size_t k = 0; rc == 0 && k < rs.ndevices; k++)
            CHECK(rs.devices[k].name != NULL && rs.devices[k].device.driver == rs.driver);
        resourceslice_finish(&rs);
    } else {
        struct claimspec cs;
        int rc = claimspec_parse(obj, "spec", &cs, &err);
        CHECK(rc == 0 || (cs.nrequests == 0 && err.message[0] != '\0'));
        for (size_t k = 0; rc == 0 && k < cs.nrequests; k++)
            CHECK(cs.requests[k].count >= 1 || (cs.requests[k].flags & CLAIMSPEC_ALL));
        claimspec_finish(&cs);
    }
    json_decref(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 8192)
        return 0;
    char *s = malloc(size);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    if (strlen(s) == size - 1) { /* an embedded NUL: C strings cannot carry it */
        if (data[0] % 4 == 0)
            selector(s);
        else
            object(data[0] % 4, s);
    }
    free(s);
    return 0;
}
