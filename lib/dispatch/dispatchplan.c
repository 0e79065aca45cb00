#include "dispatchplan.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "evict.h"
#include "flags.h"
#include "util.h"

void dispatch_plan_state_init(struct dispatch_state *st)
{
    memset(st, 0, sizeof(*st));
}

void dispatch_plan_state_finish(struct dispatch_state *st)
{
    if (st == NULL)
        return;
    free(st->uid);
    free(st->dispatched_to);
    dispatch_plan_state_init(st);
}

/* An optional RFC 3339 annotation into *ms (0 when absent); -1 with err naming it when malformed. */
static int parse_time(const json_t *annotations, const char *key, int64_t *ms, struct error *err)
{
    const json_t *v = json_object_get(annotations, key);
    *ms = 0;
    if (v == NULL)
        return 0;
    if (!json_is_string(v) || evict_parse_time(json_string_value(v), ms) != 0) {
        error_setf(err, "%s: not an RFC 3339 UTC time", key);
        return -1;
    }
    return 0;
}

static int has_finalizer(const json_t *meta)
{
    const json_t *f = json_object_get(meta, "finalizers");
    for (size_t i = 0; i < json_array_size(f); i++) {
        const char *s = json_string_value(json_array_get(f, i));
        if (s != NULL && strcmp(s, NAMES_FINALIZER_DISPATCH) == 0)
            return 1;
    }
    return 0;
}

static int parse_annotations(const json_t *annotations, struct dispatch_state *st, struct error *err)
{
    if (parse_time(annotations, NAMES_ANNOTATION_DISPATCHED_AT, &st->dispatched_at, err) != 0 ||
        parse_time(annotations, NAMES_ANNOTATION_DISPATCH_RENEWED, &st->renewed_at, err) != 0)
        return -1;
    const char *to = json_string_value(json_object_get(annotations, NAMES_ANNOTATION_DISPATCHED_TO));
    if (to != NULL && to[0] != '\0') {
        if (st->dispatched_at == 0) {
            error_setf(err, NAMES_ANNOTATION_DISPATCHED_TO " is set without " NAMES_ANNOTATION_DISPATCHED_AT);
            return -1;
        }
        st->dispatched_to = util_strdup(to);
    }
    const json_t *give_up = json_object_get(annotations, NAMES_ANNOTATION_DISPATCH_GIVE_UP);
    if (give_up != NULL) {
        struct error why;
        if (!json_is_string(give_up) ||
            flags_parse_duration(json_string_value(give_up), 1000, DISPATCH_GIVE_UP_MAX_MS, &st->give_up_ms, &why) != 0) {
            error_setf(err, NAMES_ANNOTATION_DISPATCH_GIVE_UP ": %s", json_is_string(give_up) ? why.message : "not a string");
            return -1;
        }
    }
    return 0;
}

int dispatch_plan_state_parse(const json_t *obj, struct dispatch_state *st, struct error *err)
{
    dispatch_plan_state_finish(st);
    const json_t *meta = json_object_get(obj, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    if (dispatch_copy_kind_of(obj, &st->kind, err) != 0)
        return -1;
    if (uid == NULL || uid[0] == '\0') {
        error_setf(err, "metadata.uid: missing");
        return -1;
    }
    if (parse_annotations(json_object_get(meta, "annotations"), st, err) != 0) {
        util_one_line(err->message);
        dispatch_plan_state_finish(st);
        return -1;
    }
    st->uid = util_strdup(uid);
    const char *created = json_string_value(json_object_get(meta, "creationTimestamp"));
    if (created == NULL || evict_parse_time(created, &st->created) != 0)
        st->created = 0;
    const json_t *deletion = json_object_get(meta, "deletionTimestamp");
    st->deleting = deletion != NULL && !json_is_null(deletion);
    st->finalizer = has_finalizer(meta);
    if (st->kind == DISPATCH_KIND_RAYJOB) {
        const char *deployment = json_string_value(json_object_get(json_object_get(obj, "status"), "jobDeploymentStatus"));
        /* Suspended for a KubeRay on the manager: a Suspended there is KubeRay's; the worker's is in an annotation. */
        if (dispatch_copy_suspended(obj) && !dispatch_copy_remote_terminal(deployment))
            deployment =
                json_string_value(json_object_get(json_object_get(meta, "annotations"), NAMES_ANNOTATION_DISPATCH_WORKER_STATE));
        st->terminal = dispatch_copy_remote_terminal(deployment);
        st->started = dispatch_copy_remote_started(deployment);
    }
    return 0;
}

/* ------------------------------------------------ the plan */

static void set(struct dispatch_plan *out, enum dispatch_action action, size_t worker, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set(struct dispatch_plan *out, enum dispatch_action action, size_t worker, const char *fmt, ...)
{
    out->action = action;
    out->worker = worker;
    va_list ap;
    va_start(ap, fmt);
    struct error e;
    error_vsetf(&e, fmt, ap);
    va_end(ap);
    util_format(out->reason, sizeof(out->reason), "%s", e.message);
}

/* The earliest of the plan's next time and t (t <= 0: none). */
static void next_at(struct dispatch_plan *out, int64_t t)
{
    if (t > 0 && (out->next_ms == 0 || t < out->next_ms))
        out->next_ms = t;
}

static size_t worker_index(const struct dispatch_plan_input *in, const char *name)
{
    for (size_t i = 0; name != NULL && i < in->nworkers; i++)
        if (strcmp(in->workers[i].name, name) == 0)
            return i;
    return DISPATCH_NO_WORKER;
}

static void plan_deleting(const struct dispatch_plan_input *in, struct dispatch_plan *out)
{
    if (!in->st->finalizer) {
        set(out, DISPATCH_ACTION_NONE, DISPATCH_NO_WORKER, "deleted");
        return;
    }
    size_t going = DISPATCH_NO_WORKER;
    for (size_t i = 0; i < in->nworkers; i++) {
        const struct dispatch_worker_view *v = &in->workers[i];
        if (v->up && v->copy && !v->going) {
            set(out, DISPATCH_ACTION_FINALIZE, i, "deleted on the manager: deleting its copy on %s", v->name);
            return;
        }
        if (v->up && v->copy && going == DISPATCH_NO_WORKER)
            going = i;
    }
    if (going != DISPATCH_NO_WORKER) {
        set(out, DISPATCH_ACTION_NONE, going, "deleted on the manager: waiting for its copy on %s to be gone",
            in->workers[going].name);
        return;
    }
    set(out, DISPATCH_ACTION_FINALIZE, DISPATCH_NO_WORKER, "deleted on the manager: no copy left on a reachable worker");
}

/* A time plus a duration, saturated. */
static int64_t after(int64_t t, int64_t d)
{
    return util_sat_add(t, d);
}

static void plan_lost(const struct dispatch_plan_input *in, size_t w, struct dispatch_plan *out)
{
    const struct dispatch_state *st = in->st;
    int64_t last = st->renewed_at > st->dispatched_at ? st->renewed_at : st->dispatched_at;
    int64_t deadline = after(last, util_sat_add(in->cfg.lease_ms, in->cfg.margin_ms));
    const char *why = w == DISPATCH_NO_WORKER ? "is not registered" : "is unreachable";
    if (in->now_ms > deadline) {
        set(out, DISPATCH_ACTION_REDISPATCH, w, "worker %s %s and the lease plus margin has passed since the last renewal",
            st->dispatched_to, why);
        return;
    }
    set(out, DISPATCH_ACTION_WAIT_LOST, w, "worker %s %s: waiting for its lease to expire (%llds left)", st->dispatched_to, why,
        (long long)((deadline - in->now_ms) / 1000));
    next_at(out, after(deadline, 1));
}

static void plan_dispatched(const struct dispatch_plan_input *in, struct dispatch_plan *out)
{
    const struct dispatch_state *st = in->st;
    size_t w = worker_index(in, st->dispatched_to);
    if (w == DISPATCH_NO_WORKER || !in->workers[w].up) {
        plan_lost(in, w, out);
        return;
    }
    const struct dispatch_worker_view *v = &in->workers[w];
    int64_t timeout_at = after(st->dispatched_at, in->cfg.timeout_ms);
    if (!v->copy) {
        if (st->terminal || st->started)
            set(out, DISPATCH_ACTION_NONE, w, "%s on %s: its copy is gone there", st->terminal ? "finished" : "started", v->name);
        else if (in->now_ms <= timeout_at) {
            set(out, DISPATCH_ACTION_NOMINATE, w, "no copy on %s yet: creating it", v->name);
            next_at(out, after(timeout_at, 1));
        } else
            set(out, DISPATCH_ACTION_REDISPATCH, w, "no copy on %s since its nomination: nominating again", v->name);
        return;
    }
    if (!v->admitted && in->now_ms > timeout_at) {
        set(out, DISPATCH_ACTION_WITHDRAW, w, "not admitted on %s within the dispatch timeout", v->name);
        return;
    }
    int64_t renew_at = st->renewed_at != 0 ? after(st->renewed_at, in->cfg.lease_ms / 4) : 0;
    if (st->renewed_at == 0 || in->now_ms >= renew_at) {
        set(out, DISPATCH_ACTION_RENEW, w, "renewing the lease on %s", v->name);
        return;
    }
    if (!v->shown)
        set(out, DISPATCH_ACTION_MIRROR, w, "showing the status of %s", v->name);
    else
        set(out, DISPATCH_ACTION_NONE, w, "%s on %s", v->admitted ? "runs" : "waits for admission", v->name);
    next_at(out, renew_at);
    if (!v->admitted)
        next_at(out, after(timeout_at, 1));
}

static void plan_waiting(const struct dispatch_plan_input *in, struct dispatch_plan *out)
{
    const struct dispatch_state *st = in->st;
    if (st->terminal) {
        set(out, DISPATCH_ACTION_NONE, DISPATCH_NO_WORKER, "finished");
        return;
    }
    if (st->give_up_ms > 0) {
        int64_t since = st->dispatched_at > st->created ? st->dispatched_at : st->created;
        int64_t give_up_at = after(since, st->give_up_ms);
        if (in->now_ms >= give_up_at) {
            set(out, DISPATCH_ACTION_GIVE_UP, DISPATCH_NO_WORKER, "no worker took it within " NAMES_ANNOTATION_DISPATCH_GIVE_UP);
            return;
        }
        next_at(out, give_up_at);
    }
    if (!in->quota_room)
        set(out, DISPATCH_ACTION_WAIT_QUOTA, DISPATCH_NO_WORKER, "the manager queue's capability is used up");
    else if (!in->pick_ran)
        set(out, DISPATCH_ACTION_PICK, DISPATCH_NO_WORKER, "weighing the workers");
    else if (in->pick == DISPATCH_NO_WORKER || in->pick >= in->nworkers)
        set(out, DISPATCH_ACTION_WAIT_FIT, DISPATCH_NO_WORKER, "no worker fits");
    else
        set(out, DISPATCH_ACTION_NOMINATE, in->pick, "fits %s best", in->workers[in->pick].name);
}

void dispatch_plan(const struct dispatch_plan_input *in, struct dispatch_plan *out)
{
    memset(out, 0, sizeof(*out));
    const struct dispatch_state *st = in->st;
    if (st->deleting) {
        plan_deleting(in, out);
        return;
    }
    if (!st->finalizer) {
        set(out, DISPATCH_ACTION_ADD_FINALIZER, DISPATCH_NO_WORKER, "adding the finalizer " NAMES_FINALIZER_DISPATCH);
        return;
    }
    size_t w = worker_index(in, st->dispatched_to);
    for (size_t i = 0; i < in->nworkers; i++)
        if (i != w && in->workers[i].up && in->workers[i].copy) {
            if (in->workers[i].going)
                set(out, DISPATCH_ACTION_NONE, i, "waiting for the stale copy on %s to be gone", in->workers[i].name);
            else
                set(out, DISPATCH_ACTION_DELETE_STALE, i, "stale copy on %s (dispatched to %s)", in->workers[i].name,
                    st->dispatched_to != NULL ? st->dispatched_to : "none");
            return;
        }
    if (st->dispatched_to != NULL)
        plan_dispatched(in, out);
    else
        plan_waiting(in, out);
}

const char *dispatch_plan_action_name(enum dispatch_action a)
{
    static const char *const names[] = {
        [DISPATCH_ACTION_NONE] = "none",           [DISPATCH_ACTION_ADD_FINALIZER] = "add-finalizer",
        [DISPATCH_ACTION_PICK] = "pick",           [DISPATCH_ACTION_NOMINATE] = "nominate",
        [DISPATCH_ACTION_WAIT_FIT] = "wait-fit",   [DISPATCH_ACTION_WAIT_QUOTA] = "wait-quota",
        [DISPATCH_ACTION_WITHDRAW] = "withdraw",   [DISPATCH_ACTION_RENEW] = "renew",
        [DISPATCH_ACTION_MIRROR] = "mirror",       [DISPATCH_ACTION_DELETE_STALE] = "delete-stale",
        [DISPATCH_ACTION_WAIT_LOST] = "wait-lost", [DISPATCH_ACTION_REDISPATCH] = "redispatch",
        [DISPATCH_ACTION_GIVE_UP] = "give-up",     [DISPATCH_ACTION_FINALIZE] = "finalize",
    };
    if ((size_t)a >= sizeof(names) / sizeof(names[0]) || names[a] == NULL)
        return "unknown";
    return names[a];
}
