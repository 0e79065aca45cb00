#include "dispatchlease.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "util.h"

/* Decimal digits only, within max; no sign, no space (which strtoull would take). Returns 0, or -1. */
static int parse_decimal(const char *s, uint64_t max, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int dispatchlease_parse(const char *counter, const char *seconds, uint64_t *counter_out, int64_t *seconds_out, struct error *err)
{
    uint64_t c = 0, s = 0;
    if (counter == NULL && seconds == NULL)
        return 0;
    if (counter == NULL)
        error_setf(err, "annotation %s is set but %s is missing", NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS,
                   NAMES_ANNOTATION_DISPATCH_LEASE);
    else if (seconds == NULL)
        error_setf(err, "annotation %s is set but %s is missing", NAMES_ANNOTATION_DISPATCH_LEASE,
                   NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS);
    else if (parse_decimal(counter, UINT64_MAX, &c) != 0)
        error_setf(err, "annotation %s: \"%.64s\" is not a decimal counter", NAMES_ANNOTATION_DISPATCH_LEASE, counter);
    else if (parse_decimal(seconds, (uint64_t)DISPATCHLEASE_SECONDS_MAX, &s) != 0 || s == 0)
        error_setf(err, "annotation %s: \"%.64s\" is not a whole number of seconds in 1..%lld",
                   NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS, seconds, (long long)DISPATCHLEASE_SECONDS_MAX);
    else {
        *counter_out = c;
        *seconds_out = (int64_t)s;
        return 1;
    }
    util_one_line(err->message);
    return -1;
}

void dispatchlease_drop(struct dispatchlease **l)
{
    if (l == NULL || *l == NULL)
        return;
    free((*l)->uid);
    free((*l)->error);
    free(*l);
    *l = NULL;
}

static int same_uid(const char *a, const char *b)
{
    return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

void dispatchlease_observe(struct dispatchlease **l, const json_t *meta, int64_t now_ms)
{
    const json_t *ann = json_object_get(meta, "annotations");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    uint64_t counter = 0;
    int64_t seconds = 0;
    struct error err = {{0}};
    int rc = dispatchlease_parse(json_string_value(json_object_get(ann, NAMES_ANNOTATION_DISPATCH_LEASE)),
                                 json_string_value(json_object_get(ann, NAMES_ANNOTATION_DISPATCH_LEASE_SECONDS)), &counter,
                                 &seconds, &err);
    if (rc == 0 || (*l != NULL && !same_uid((*l)->uid, uid)))
        dispatchlease_drop(l); /* no lease, or another object: what was seen is forgotten */
    if (rc == 0)
        return;
    if (*l == NULL) {
        *l = util_calloc(1, sizeof(**l));
        (*l)->uid = util_strdup(uid);
    }
    struct dispatchlease *x = *l;
    free(x->error);
    x->error = NULL;
    x->valid = rc == 1;
    if (rc < 0) {
        x->error = util_strdup(err.message);
        return;
    }
    x->seconds = seconds;
    if (!x->counted || x->counter != counter) {
        x->counted = 1;
        x->counter = counter;
        x->seen_ms = now_ms;
    }
}

enum dispatchlease_state dispatchlease_check(const struct dispatchlease *l, int64_t now_ms, int64_t *deadline_ms)
{
    if (deadline_ms != NULL)
        *deadline_ms = 0;
    if (l == NULL)
        return DISPATCHLEASE_NONE;
    if (!l->valid)
        return DISPATCHLEASE_BAD;
    /* seconds <= 30 days and seen_ms a time of the gate's clock: no overflow. */
    int64_t deadline = l->seen_ms + l->seconds * 1000 + 1;
    if (now_ms >= deadline)
        return DISPATCHLEASE_EXPIRED;
    if (deadline_ms != NULL)
        *deadline_ms = deadline;
    return DISPATCHLEASE_NONE;
}

/* The time since l's counter last changed, in whole seconds rounded up: past a 20s lease by 1 ms is "21s", never "20s". */
static int64_t unrenewed_s(const struct dispatchlease *l, int64_t now_ms)
{
    return now_ms > l->seen_ms ? (now_ms - l->seen_ms + 999) / 1000 : 0;
}

char *dispatchlease_wait_message(const char *gang, const struct dispatchlease *l, int64_t now_ms)
{
    switch (dispatchlease_check(l, now_ms, NULL)) {
    case DISPATCHLEASE_EXPIRED:
        return util_strdupf("gang %s waits: its dispatch lease (%s) was not renewed for %llds (lease %llds); it may be admitted "
                            "again when the dispatcher renews it",
                            gang, NAMES_ANNOTATION_DISPATCH_LEASE, (long long)unrenewed_s(l, now_ms), (long long)l->seconds);
    case DISPATCHLEASE_BAD:
        return util_strdupf("gang %s waits: %s", gang, l->error);
    case DISPATCHLEASE_NONE:
        break;
    }
    return NULL;
}

char *dispatchlease_evict_message(const char *gang, const struct dispatchlease *l, int64_t now_ms)
{
    return util_strdupf("gang %s evicted: its dispatch lease (%s) was not renewed for %llds (lease %llds): the manager may run "
                        "it elsewhere; its pods are deleted and it waits until the dispatcher renews the lease",
                        gang, NAMES_ANNOTATION_DISPATCH_LEASE, (long long)unrenewed_s(l, now_ms), (long long)l->seconds);
}
