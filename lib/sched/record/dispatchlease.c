#include "dispatchlease.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The milliseconds of an RFC 3339 time's fraction (".5" is 500; digits past the third dropped); 0 without one. */
static int64_t fraction_ms(const char *t)
{
    const char *dot = strchr(t, '.');
    int64_t ms = 0;
    int digits = 0;
    for (const char *p = dot != NULL ? dot + 1 : ""; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
        ms = ms * 10 + (*p - '0');
    for (; digits > 0 && digits < 3; digits++)
        ms *= 10;
    return ms;
}

int dispatchlease_seen_parse(const char *value, struct dispatchlease_seen *out, struct error *err)
{
    if (value == NULL)
        return 0;
    const char *at = strchr(value, '@');
    char counter[24];
    uint64_t c;
    int64_t secs;
    size_t n = at != NULL ? (size_t)(at - value) : 0;
    if (at == NULL || n == 0 || n >= sizeof(counter)) {
        error_setf(err, "annotation %s: \"%.64s\" is not COUNTER@TIME", NAMES_ANNOTATION_DISPATCH_LEASE_SEEN, value);
    } else {
        memcpy(counter, value, n);
        counter[n] = '\0';
        if (parse_decimal(counter, UINT64_MAX, &c) != 0)
            error_setf(err, "annotation %s: \"%.64s\": \"%s\" is not a decimal counter", NAMES_ANNOTATION_DISPATCH_LEASE_SEEN,
                       value, counter);
        else if (util_parse_time(at + 1, &secs) != 0 || secs > INT64_MAX / 1000 - 1)
            error_setf(err, "annotation %s: \"%.64s\": \"%.40s\" is not an RFC 3339 UTC time", NAMES_ANNOTATION_DISPATCH_LEASE_SEEN,
                       value, at + 1);
        else {
            out->counter = c;
            out->at_ms = secs * 1000 + fraction_ms(at + 1);
            return 1;
        }
    }
    util_one_line(err->message);
    return -1;
}

char *dispatchlease_seen_format(const struct dispatchlease_seen *s, char *buf, size_t size)
{
    int64_t ms = s->at_ms > 0 ? s->at_ms : 0;
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char date[24];
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    util_format(buf, size, "%llu@%s.%03dZ", (unsigned long long)s->counter, date, (int)(ms % 1000));
    return buf;
}

void dispatchlease_sight(const struct dispatchlease *mem, uint64_t counter, int64_t seconds, const char *recorded, int64_t now_ms,
                         struct dispatchlease_sighting *out)
{
    struct dispatchlease_seen rec = {0};
    struct error err = {{0}};
    int rc = dispatchlease_seen_parse(recorded, &rec, &err);
    int counting = mem != NULL && mem->counted && mem->counter == counter;
    *out = (struct dispatchlease_sighting){.seen_ms = now_ms};
    if (counting) {
        out->seen_ms = mem->seen_ms;
        out->unknown = mem->unknown;
    } else if (rc < 0 && (mem == NULL || !mem->counted)) {
        /* Started without knowing when the counter changed: it may have been a whole lease ago, or longer. */
        out->seen_ms = now_ms - seconds * 1000 - 1;
        out->unknown = 1;
    }
    if (rc == 1 && rec.counter == counter) {
        /* A record ahead of this gate's clock is read as now: it never counts from later than a sighting of our own. */
        int64_t at = rec.at_ms < now_ms ? rec.at_ms : now_ms;
        if (at < out->seen_ms) {
            out->seen_ms = at;
            out->unknown = 0;
        }
        out->recorded = 1;
    }
}

int dispatchlease_record_wanted(const struct dispatchlease *l)
{
    return l != NULL && l->valid && l->counted && !l->recorded;
}

int dispatchlease_observe(struct dispatchlease **l, const json_t *meta, int64_t now_ms)
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
        return 0;
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
        return 0;
    }
    struct dispatchlease_sighting s;
    dispatchlease_sight(x, counter, seconds, json_string_value(json_object_get(ann, NAMES_ANNOTATION_DISPATCH_LEASE_SEEN)), now_ms,
                        &s);
    /* Our own write, seen before the watch brings it back, stays written while the counter is the same. */
    int written = x->counted && x->counter == counter && x->recorded;
    x->seconds = seconds;
    x->counted = 1;
    x->counter = counter;
    x->seen_ms = s.seen_ms;
    x->unknown = s.unknown;
    x->recorded = s.recorded || written;
    return dispatchlease_record_wanted(x);
}

json_t *dispatchlease_record_patch(const struct dispatchlease *l, const char *uid, uint64_t *counter)
{
    if (!dispatchlease_record_wanted(l))
        return NULL;
    char value[DISPATCHLEASE_SEEN_SIZE];
    struct dispatchlease_seen s = {.counter = l->counter, .at_ms = l->seen_ms};
    dispatchlease_seen_format(&s, value, sizeof(value));
    json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", NAMES_ANNOTATION_DISPATCH_LEASE_SEEN, value);
    if (uid != NULL)
        json_object_set_new(json_object_get(patch, "metadata"), "uid", json_string(uid));
    if (counter != NULL)
        *counter = l->counter;
    return patch;
}

void dispatchlease_mark_recorded(struct dispatchlease *l, uint64_t counter)
{
    if (l != NULL && l->counted && l->counter == counter)
        l->recorded = 1;
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
        if (l->unknown)
            return util_strdupf(
                "gang %s waits: its dispatch lease (%s, lease %llds) counts as run out: when it was last renewed is "
                "unknown (%s did not parse when this gate started); it may be admitted again when the "
                "dispatcher renews it",
                gang, NAMES_ANNOTATION_DISPATCH_LEASE, (long long)l->seconds, NAMES_ANNOTATION_DISPATCH_LEASE_SEEN);
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
    if (l->unknown)
        return util_strdupf("gang %s evicted: its dispatch lease (%s, lease %llds) counts as run out: when it was last renewed is "
                            "unknown (%s did not parse when this gate started): the manager may run it elsewhere; its pods are "
                            "deleted and it waits until the dispatcher renews the lease",
                            gang, NAMES_ANNOTATION_DISPATCH_LEASE, (long long)l->seconds, NAMES_ANNOTATION_DISPATCH_LEASE_SEEN);
    return util_strdupf("gang %s evicted: its dispatch lease (%s) was not renewed for %llds (lease %llds): the manager may run "
                        "it elsewhere; its pods are deleted and it waits until the dispatcher renews the lease",
                        gang, NAMES_ANNOTATION_DISPATCH_LEASE, (long long)unrenewed_s(l, now_ms), (long long)l->seconds);
}
