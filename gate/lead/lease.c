#include "lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

void lease_action_init(struct lease_action *a)
{
    memset(a, 0, sizeof(*a));
}

void lease_action_finish(struct lease_action *a)
{
    if (a == NULL)
        return;
    json_decref(a->body);
    lease_record_finish(&a->record);
    memset(a, 0, sizeof(*a));
}

void lease_record_finish(struct lease_record *rec)
{
    if (rec == NULL)
        return;
    free(rec->holder);
    free(rec->acquire_time);
    free(rec->renew_time);
    memset(rec, 0, sizeof(*rec));
}

static void record_copy(struct lease_record *dst, const struct lease_record *src)
{
    dst->holder = util_strdup(src->holder);
    dst->duration_s = src->duration_s;
    dst->acquire_time = util_strdup(src->acquire_time);
    dst->renew_time = util_strdup(src->renew_time);
    dst->transitions = src->transitions;
}

/* A string field of spec into *out (new copy, "" when absent). -1 if present and not a string. */
static int spec_string(const json_t *spec, const char *field, char **out)
{
    const json_t *v = json_object_get(spec, field);
    if (v != NULL && !json_is_null(v) && !json_is_string(v))
        return -1;
    *out = util_strdup(json_is_string(v) ? json_string_value(v) : "");
    return 0;
}

static int spec_integer(const json_t *spec, const char *field, long *out)
{
    const json_t *v = json_object_get(spec, field);
    if (v != NULL && !json_is_null(v) && !json_is_integer(v))
        return -1;
    json_int_t i = json_is_integer(v) ? json_integer_value(v) : 0;
    if (i < 0 || i > 0x7fffffff) /* int32 in the API */
        return -1;
    *out = (long)i;
    return 0;
}

int lease_record_parse(const json_t *lease, struct lease_record *rec)
{
    memset(rec, 0, sizeof(*rec));
    if (!json_is_object(lease))
        goto fail;
    const json_t *spec = json_object_get(lease, "spec");
    if (spec != NULL && !json_is_null(spec) && !json_is_object(spec))
        goto fail;
    if (spec_string(spec, "holderIdentity", &rec->holder) != 0 ||
        spec_integer(spec, "leaseDurationSeconds", &rec->duration_s) != 0 ||
        spec_string(spec, "acquireTime", &rec->acquire_time) != 0 || spec_string(spec, "renewTime", &rec->renew_time) != 0 ||
        spec_integer(spec, "leaseTransitions", &rec->transitions) != 0)
        goto fail;
    return 0;
fail:
    lease_record_finish(rec);
    rec->holder = util_strdup("");
    rec->acquire_time = util_strdup("");
    rec->renew_time = util_strdup("");
    return -1;
}

int lease_record_equal(const struct lease_record *a, const struct lease_record *b)
{
    return strcmp(a->holder, b->holder) == 0 && a->duration_s == b->duration_s && strcmp(a->acquire_time, b->acquire_time) == 0 &&
           strcmp(a->renew_time, b->renew_time) == 0 && a->transitions == b->transitions;
}

char *lease_microtime(long long unix_us, char *buf, size_t size)
{
    long long secs = unix_us / 1000000, us = unix_us % 1000000;
    if (us < 0) {
        us += 1000000;
        secs--;
    }
    time_t t = (time_t)secs;
    struct tm tm;
    gmtime_r(&t, &tm);
    char date[24];
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    util_format(buf, size, "%s.%06lldZ", date, us);
    return buf;
}

int lease_config_check(const struct lease_config *cfg)
{
    if (cfg->namespace_ == NULL || cfg->namespace_[0] == '\0' || cfg->name == NULL || cfg->name[0] == '\0' ||
        cfg->identity == NULL || cfg->identity[0] == '\0')
        return -1;
    /* client-go: LeaseDuration > RenewDeadline > RetryPeriod (x JitterFactor) > 0. */
    if (cfg->retry_period_ms <= 0 || cfg->renew_deadline_ms <= cfg->retry_period_ms || cfg->duration_ms <= cfg->renew_deadline_ms)
        return -1;
    /* The record holds whole seconds. */
    if (cfg->duration_ms < 1000 || cfg->duration_ms % 1000 != 0)
        return -1;
    return 0;
}

void lease_elector_init(struct lease_elector *le, const struct lease_config *cfg)
{
    memset(le, 0, sizeof(*le));
    le->namespace_ = util_strdup(cfg->namespace_);
    le->name = util_strdup(cfg->name);
    le->identity = util_strdup(cfg->identity);
    le->duration_ms = cfg->duration_ms;
    le->renew_deadline_ms = cfg->renew_deadline_ms;
    le->retry_period_ms = cfg->retry_period_ms;
}

void lease_elector_finish(struct lease_elector *le)
{
    if (le == NULL)
        return;
    free(le->namespace_);
    free(le->name);
    free(le->identity);
    json_decref(le->lease);
    lease_record_finish(&le->record);
    memset(le, 0, sizeof(*le));
}

/* client-go's IsLeader: the record we last observed names us. */
static int is_holder(const struct lease_elector *le)
{
    return le->observed && strcmp(le->record.holder, le->identity) == 0;
}

/* client-go's isLeaseValid: observed time + the record's lease duration is still ahead. */
static int lease_valid(const struct lease_elector *le, long long now_ms)
{
    return le->observed && le->observed_ms + (long long)le->record.duration_s * 1000 > now_ms;
}

/*
 * Fills out with a write of rec: an UPDATE of base (borrowed; deep-copied,
 * so its metadata, resourceVersion included, and any spec field we do not
 * own are kept) or, when base is NULL, a CREATE of a new Lease. Steals rec's strings.
 */
static void make_action(const struct lease_elector *le, const struct lease_time *now, const json_t *base, struct lease_record *rec,
                        struct lease_action *out)
{
    json_t *body;
    if (base != NULL) {
        body = json_deep_copy(base);
        out->kind = LEASE_ACTION_UPDATE;
    } else {
        body = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
                         le->name, "namespace", le->namespace_);
        out->kind = LEASE_ACTION_CREATE;
    }
    json_t *spec = json_object_get(body, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(body, "spec", spec);
    }
    json_object_set_new(spec, "holderIdentity", json_string(rec->holder));
    json_object_set_new(spec, "leaseDurationSeconds", json_integer(rec->duration_s));
    json_object_set_new(spec, "acquireTime", json_string(rec->acquire_time));
    json_object_set_new(spec, "renewTime", json_string(rec->renew_time));
    json_object_set_new(spec, "leaseTransitions", json_integer(rec->transitions));
    out->body = body;
    out->record = *rec;
    memset(rec, 0, sizeof(*rec));
    out->at = *now;
}

/* Our record as of now (client-go's default leaderElectionRecord), acquired now. */
static void new_record(const struct lease_elector *le, const struct lease_time *now, struct lease_record *rec)
{
    char t[40];
    lease_microtime(now->wall_us, t, sizeof(t));
    rec->holder = util_strdup(le->identity);
    rec->duration_s = le->duration_ms / 1000;
    rec->acquire_time = util_strdup(t);
    rec->renew_time = util_strdup(t);
    rec->transitions = 0;
}

enum lease_action_kind lease_elector_try_fast(struct lease_elector *le, const struct lease_time *now, struct lease_action *out)
{
    lease_action_finish(out);
    if (le->lease == NULL || !is_holder(le) || !lease_valid(le, now->mono_ms))
        return out->kind;
    struct lease_record rec;
    new_record(le, now, &rec);
    free(rec.acquire_time);
    rec.acquire_time = util_strdup(le->record.acquire_time);
    rec.transitions = le->record.transitions;
    make_action(le, now, le->lease, &rec, out);
    return out->kind;
}

enum lease_action_kind lease_elector_try(struct lease_elector *le, const struct lease_time *now, const json_t *lease,
                                         struct lease_action *out)
{
    lease_action_finish(out);
    if (lease == NULL) {
        /*
         * None exists: create it (the server refuses a second create with
         * 409). A leader whose Lease vanished (deleted by hand) cannot tell
         * whether another candidate is creating it right now: it stops
         * leading until its own create succeeds. (client-go keeps leading.)
         */
        le->leading = 0;
        struct lease_record rec;
        new_record(le, now, &rec);
        make_action(le, now, NULL, &rec, out);
        return out->kind;
    }
    struct lease_record seen;
    if (lease_record_parse(lease, &seen) != 0) {
        lease_record_finish(&seen);
        return out->kind;
    }
    json_decref(le->lease);
    le->lease = json_deep_copy(lease);
    if (!le->observed || !lease_record_equal(&seen, &le->record)) {
        lease_record_finish(&le->record);
        le->record = seen;
        le->observed = 1;
        le->observed_ms = now->mono_ms;
    } else {
        lease_record_finish(&seen);
    }

    if (!is_holder(le)) {
        /* Someone else's name is on it: whatever our deadline says, we no longer lead. */
        le->leading = 0;
        if (le->record.holder[0] != '\0' && lease_valid(le, now->mono_ms))
            return out->kind;
    }

    struct lease_record rec;
    new_record(le, now, &rec);
    if (is_holder(le)) {
        free(rec.acquire_time);
        rec.acquire_time = util_strdup(le->record.acquire_time);
        rec.transitions = le->record.transitions;
    } else {
        rec.transitions = le->record.transitions + 1;
    }
    make_action(le, now, le->lease, &rec, out);
    return out->kind;
}

void lease_elector_done(struct lease_elector *le, const struct lease_action *a, const json_t *reply)
{
    if (a->kind == LEASE_ACTION_NONE || reply == NULL)
        return;
    json_decref(le->lease);
    le->lease = json_deep_copy(reply);
    lease_record_finish(&le->record);
    record_copy(&le->record, &a->record);
    le->observed = 1;
    le->observed_ms = a->at.mono_ms;
    if (is_holder(le)) {
        le->leading = 1;
        le->renewed_ms = a->at.mono_ms;
    } else {
        le->leading = 0;
    }
}

int lease_elector_leading(const struct lease_elector *le, long long now_mono_ms)
{
    return le->leading && now_mono_ms - le->renewed_ms < le->renew_deadline_ms;
}

int lease_elector_check(struct lease_elector *le, long long now_mono_ms)
{
    if (!lease_elector_leading(le, now_mono_ms))
        le->leading = 0;
    int change = le->leading == le->reported ? 0 : le->leading ? 1 : -1;
    le->reported = le->leading;
    return change;
}

enum lease_action_kind lease_elector_release(struct lease_elector *le, const struct lease_time *now, struct lease_action *out)
{
    lease_action_finish(out);
    le->leading = 0;
    if (le->lease == NULL || !is_holder(le))
        return out->kind;
    char t[40];
    lease_microtime(now->wall_us, t, sizeof(t));
    struct lease_record rec = {
        .holder = util_strdup(""),
        .duration_s = 1,
        .acquire_time = util_strdup(t),
        .renew_time = util_strdup(t),
        .transitions = le->record.transitions,
    };
    make_action(le, now, le->lease, &rec, out);
    return out->kind;
}
