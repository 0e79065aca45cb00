#include "object.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act.h"
#include "dispatchcopy.h"
#include "dispatchmemo.h"
#include "dispatchpick.h"
#include "dispatchplan.h"
#include "dispatchsim.h"
#include "log.h"
#include "names.h"
#include "notify.h"
#include "util.h"

/* At most this many plans per object and pass (a finalizer added, a pick run, then the action). */
#define PLANS_PER_PASS 4

/* One object at one pass: the plan's input and what the action needs. */
struct ctx {
    struct dispatchobject_env *env;
    json_t *obj;                     /* owned reference: the object as last read or written */
    char key[DISPATCH_MEMO_KEY_MAX]; /* "RayCluster ns/name": for logs, and its key in env->warned */
    struct dispatch_state st;
    struct dispatchmanager_queue *q; /* its Queue, or NULL */
    size_t n;                        /* registered workers */
    struct dispatch_worker_view *views;
    struct dispatch_remote *remotes;
    const json_t **copies;   /* per worker: its copy (borrowed from the view), or NULL */
    const json_t **clusters; /* per worker, for a RayJob: the RayCluster KubeRay made for the copy, or NULL */
    size_t ncand;            /* the pick: candidates in dispatch-to order */
    struct dispatch_candidate *cand;
    struct dispatch_verdict *verdicts;
};

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static const char *annotation(const json_t *obj, const char *name)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), name));
}

int dispatchobject_involved(const struct dispatchobject_env *env, const json_t *obj)
{
    const struct dispatchmanager_queue *q = dispatchmanager_queue_of(env->mgr, obj);
    if (q != NULL && q->to.n > 0)
        return 1;
    if (annotation(obj, NAMES_ANNOTATION_DISPATCHED_TO) != NULL)
        return 1;
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "finalizers"), i, f)
    {
        if (json_is_string(f) && strcmp(json_string_value(f), NAMES_FINALIZER_DISPATCH) == 0)
            return 1;
    }
    return 0;
}

/* The plan's view of every registered worker, from its view of the worker. */
static void read_workers(struct ctx *x)
{
    const struct dispatchworkers *ws = x->env->workers;
    const char *ns = meta_str(x->obj, "namespace"), *name = meta_str(x->obj, "name");
    const char *kind = x->st.kind == DISPATCH_KIND_RAYJOB ? "RayJob" : "RayCluster";
    for (size_t i = 0; i < x->n; i++) {
        const struct dispatch_worker *w = ws->items[i];
        struct dispatch_worker_view *v = &x->views[i];
        v->name = w->name;
        v->up = w->up && w->view.refreshed;
        if (!v->up)
            continue;
        const json_t *copy = dispatchview_copy(&w->view, kind, ns, name);
        const char *origin = copy != NULL ? dispatch_copy_origin(copy, x->env->opt->cluster_name) : NULL;
        if (origin == NULL || x->st.uid == NULL || strcmp(origin, x->st.uid) != 0)
            continue;
        x->copies[i] = copy;
        if (x->st.kind == DISPATCH_KIND_RAYJOB)
            x->clusters[i] = dispatchview_rayjob_cluster(&w->view, ns, name);
        struct error err = {{0}};
        if (dispatch_copy_remote_read(copy, x->clusters[i], &x->remotes[i], &err) != 0) {
            log_warnf("%s on %s: %s", x->key, w->name, err.message);
            continue;
        }
        dispatch_copy_remote_for_suspended(x->obj, &x->remotes[i]);
        v->copy = 1;
        v->going = json_object_get(json_object_get(copy, "metadata"), "deletionTimestamp") != NULL;
        v->admitted = x->remotes[i].admitted;
        v->shown = dispatch_copy_remote_shown(x->obj, &x->remotes[i]);
    }
}

/* Reads x->obj's state and workers; returns 0, or -1 (warned once) when its state does not parse. */
static int ctx_read(struct ctx *x)
{
    dispatch_plan_state_finish(&x->st);
    dispatch_plan_state_init(&x->st);
    struct error err = {{0}};
    if (dispatch_plan_state_parse(x->obj, &x->st, &err) != 0) {
        const char *last = json_string_value(json_object_get(x->env->warned, x->key));
        if (last == NULL || strcmp(last, err.message) != 0)
            log_warnf("%s: left alone: %s", x->key, err.message);
        json_object_set_new(x->env->warned, x->key, json_string(err.message));
        return -1;
    }
    json_object_del(x->env->warned, x->key);
    for (size_t i = 0; i < x->n; i++) {
        dispatch_copy_remote_finish(&x->remotes[i]);
        dispatch_copy_remote_init(&x->remotes[i]);
        x->copies[i] = x->clusters[i] = NULL;
        memset(&x->views[i], 0, sizeof(x->views[i]));
    }
    read_workers(x);
    return 0;
}

static void ctx_init(struct ctx *x, struct dispatchobject_env *env, const json_t *obj)
{
    memset(x, 0, sizeof(*x));
    x->env = env;
    x->obj = json_incref((json_t *)obj);
    dispatch_memo_key(obj, x->key, sizeof(x->key));
    dispatch_plan_state_init(&x->st);
    x->q = dispatchmanager_queue_of(env->mgr, obj);
    x->n = env->workers->len;
    x->views = util_calloc(x->n + 1, sizeof(*x->views));
    x->remotes = util_calloc(x->n + 1, sizeof(*x->remotes));
    for (size_t i = 0; i < x->n; i++)
        dispatch_copy_remote_init(&x->remotes[i]);
    x->copies = util_calloc(x->n + 1, sizeof(*x->copies));
    x->clusters = util_calloc(x->n + 1, sizeof(*x->clusters));
}

static void ctx_finish(struct ctx *x)
{
    for (size_t i = 0; i < x->n; i++)
        dispatch_copy_remote_finish(&x->remotes[i]);
    for (size_t i = 0; i < x->ncand; i++)
        dispatch_sim_verdict_finish(&x->verdicts[i]);
    free(x->verdicts);
    free(x->cand);
    free(x->views);
    free(x->remotes);
    free(x->copies);
    free(x->clusters);
    dispatch_plan_state_finish(&x->st);
    json_decref(x->obj);
}

/* The index of the registered worker named name, or DISPATCH_NO_WORKER. */
static size_t worker_index(const struct ctx *x, const char *name)
{
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->env->workers->items[i]->name, name) == 0)
            return i;
    return DISPATCH_NO_WORKER;
}

/* A worker whose copy's create failed in this pass (it may exist all the same): not weighed before the next. */
static void busy_verdict(struct dispatch_verdict *v)
{
    v->fits = 0;
    v->reason = ADMIT_REASON_NONE;
    v->message = util_strdup("a copy's create failed there in this pass: weighed again at the next");
    v->stranded = DISPATCH_PPM;
}

/* Runs the simulation on every worker the Queue names; returns the index of the registered worker picked, or none. */
static size_t run_pick(struct ctx *x)
{
    const struct dispatchobject_env *env = x->env;
    for (size_t i = 0; i < x->ncand; i++)
        dispatch_sim_verdict_finish(&x->verdicts[i]);
    free(x->verdicts);
    free(x->cand);
    x->ncand = x->q != NULL ? x->q->to.n : 0;
    x->cand = util_calloc(x->ncand + 1, sizeof(*x->cand));
    x->verdicts = util_calloc(x->ncand + 1, sizeof(*x->verdicts));
    for (size_t i = 0; i < x->ncand; i++) {
        const char *name = x->q->to.names[i];
        struct dispatch_worker *w = dispatchworkers_get(env->workers, name);
        dispatch_sim_verdict_init(&x->verdicts[i]);
        x->cand[i].name = name;
        if (w == NULL) {
            x->cand[i].error = "not registered (no Secret labelled " NAMES_LABEL_WORKER_CLUSTER " with its name)";
            continue;
        }
        if (!w->up || !w->view.refreshed) {
            x->cand[i].error = w->status;
            continue;
        }
        x->cand[i].up = 1;
        x->cand[i].verdict = &x->verdicts[i];
        struct error err = {{0}};
        if (json_object_get(env->nominated, name) != NULL)
            busy_verdict(&x->verdicts[i]);
        else if (dispatchview_sim(&w->view, x->obj, env->now_ms, &x->verdicts[i], &err) != 0)
            log_debugf("%s on %s: %s", x->key, name, err.message);
    }
    size_t p = dispatch_pick(x->cand, x->ncand);
    return p == DISPATCH_NO_WORKER ? DISPATCH_NO_WORKER : worker_index(x, x->cand[p].name);
}

/* Merge-patches the object's annotations (stolen); on success x->obj is the API's answer. Returns 0, or -1 (logged). */
static int annotate(struct ctx *x, json_t *annotations)
{
    json_t *updated = NULL;
    struct error err = {{0}};
    int rc = dispatchact_annotate(x->env->manager, x->obj, annotations, &updated, &err);
    json_decref(annotations);
    if (rc != 0) {
        log_warnf("%s: cannot write its annotations: %s", x->key, err.message);
    } else if (updated != NULL) {
        json_decref(x->obj);
        x->obj = updated;
    }
    return rc;
}

static void event(struct ctx *x, const char *type, const char *reason, const char *message)
{
    struct events_object o = {"ray.io/v1", json_string_value(json_object_get(x->obj, "kind")), meta_str(x->obj, "namespace"),
                              meta_str(x->obj, "name"), meta_str(x->obj, "uid")};
    dispatchnotify_event(x->env->manager, &o, type, reason, message, x->env->now);
}

/* The manager-side PodGroup's Dispatched condition. */
static void podgroup(struct ctx *x, const char *status, const char *reason, const char *message)
{
    struct error err = {{0}};
    if (dispatchact_podgroup(x->env->manager, x->obj, status, reason, message, x->env->now, &err) != 0)
        log_warnf("%s: cannot write its PodGroup: %s", x->key, err.message);
}

/* Whether token differs from what was last shown for this object (then it is recorded): once-only Events. */
static int first_time(struct ctx *x, const char *token)
{
    const char *last = json_string_value(json_object_get(x->env->told, x->st.uid));
    if (last != NULL && strcmp(last, token) == 0)
        return 0;
    json_object_set_new(x->env->told, x->st.uid, json_string(token));
    return 1;
}

/*
 * Test-only fault point (--test-fault-exit-at-nomination): the process ends,
 * as a crash would, between writing dispatched-to and creating the copy (the
 * e2e test of a dispatcher restart, tests/e2e/test_dispatch_restart.sh).
 */
static void fault_point(struct ctx *x, const char *worker)
{
    int64_t at = x->env->opt->fault_exit_at_nomination;
    if (at <= 0 || x->env->nominations == NULL || ++*x->env->nominations != at)
        return;
    log_warnf("test fault: exiting at nomination %lld, %s dispatched to %s and not yet created there", (long long)at, x->key,
              worker);
    _exit(3);
}

static void do_nominate(struct ctx *x, size_t wi)
{
    struct dispatch_worker *w = x->env->workers->items[wi];
    struct error err = {{0}};
    json_t *copy = dispatch_copy_worker(x->obj, x->env->opt->cluster_name, x->env->opt->lease_ms / 1000, &err);
    if (copy == NULL) {
        log_warnf("%s: no copy for %s: %s", x->key, w->name, err.message);
        return;
    }
    int fresh = x->st.dispatched_to == NULL || strcmp(x->st.dispatched_to, w->name) != 0;
    /* dispatched-to first: a restart between the two writes then creates the copy again, never a second one elsewhere. */
    if (fresh && annotate(x, json_pack("{s:s,s:s,s:n,s:n}", NAMES_ANNOTATION_DISPATCHED_TO, w->name, NAMES_ANNOTATION_DISPATCHED_AT,
                                       x->env->now, NAMES_ANNOTATION_DISPATCH_RENEWED, NAMES_ANNOTATION_DISPATCH_REASONS)) != 0) {
        json_decref(copy);
        return;
    }
    if (fresh)
        fault_point(x, w->name);
    if (fresh && x->q != NULL)
        dispatchmanager_quota_take(x->q, x->obj);
    if (dispatchact_create_copy(w->client, copy, &err) != 0) {
        /* Maybe created after all (an answer lost): nothing more goes there in this pass. */
        json_object_set_new(x->env->nominated, w->name, json_true());
        /* Retried at the next passes until the timeout (then nominated again): shown, not only logged. */
        char msg[sizeof(err.message) + 64];
        util_format(msg, sizeof(msg), "cannot create it on worker %s: %s", w->name, err.message);
        log_warnf("%s: %s", x->key, msg);
        podgroup(x, "False", "CreateFailed", msg);
    } else {
        /* Counted at its full demand from now on, though no watch event has brought it yet (dispatchsim.h). */
        dispatchview_created(&w->view, x->st.kind == DISPATCH_KIND_RAYJOB ? "RayJob" : "RayCluster", copy);
        char msg[256];
        util_format(msg, sizeof(msg), "dispatched to worker %s", w->name);
        log_infof("%s: %s", x->key, msg);
        event(x, "Normal", DISPATCHOBJECT_REASON_DISPATCHED, msg);
        podgroup(x, "True", DISPATCHOBJECT_REASON_DISPATCHED, msg);
        first_time(x, "dispatched");
    }
    json_decref(copy);
}

static void do_wait_fit(struct ctx *x)
{
    json_t *reasons = dispatch_pick_reasons(x->cand, x->ncand);
    char *text = json_dumps(reasons, JSON_COMPACT);
    const char *old = annotation(x->obj, NAMES_ANNOTATION_DISPATCH_REASONS);
    if (old == NULL || strcmp(old, text) != 0) {
        char *why = x->ncand > 0 ? dispatch_pick_why(x->cand, x->ncand)
                                 : util_strdup("its Queue names no worker (" NAMES_ANNOTATION_DISPATCH_TO ")");
        log_infof("%s: no worker fits: %s", x->key, why);
        if (annotate(x, json_pack("{s:s}", NAMES_ANNOTATION_DISPATCH_REASONS, text)) == 0)
            podgroup(x, "False", "NoWorkerFits", why);
        free(why);
    }
    free(text);
    json_decref(reasons);
}

/* Clears dispatched-to (and the renewal) and tells why (Event DispatchWithdrawn, a Warning when warning; PodGroup reason
   pg_reason). */
static void undispatch(struct ctx *x, const char *pg_reason, const char *message, int warning)
{
    if (annotate(x, json_pack("{s:n,s:n}", NAMES_ANNOTATION_DISPATCHED_TO, NAMES_ANNOTATION_DISPATCH_RENEWED)) != 0)
        return;
    log_infof("%s: %s", x->key, message);
    event(x, warning ? "Warning" : "Normal", DISPATCHOBJECT_REASON_WITHDRAWN, message);
    podgroup(x, "False", pg_reason, message);
}

/* Deletes the copy on worker wi; returns 0 when it is gone (or was never there). */
static int delete_copy(struct ctx *x, size_t wi, const char *why)
{
    struct dispatch_worker *w = x->env->workers->items[wi];
    if (x->copies[wi] == NULL)
        return 0;
    struct error err = {{0}};
    if (dispatchact_delete_copy(w->client, x->copies[wi], &err) != 0) {
        log_warnf("%s: cannot delete its copy on worker %s: %s", x->key, w->name, err.message);
        return -1;
    }
    log_infof("%s: deleted its copy on worker %s (%s)", x->key, w->name, why);
    return 0;
}

/*
 * Renews the lease on worker wi: renewed-at on the manager first, then the
 * bump of the copy (and for a RayJob of its RayCluster there), none when that
 * write failed. renewed-at is then never earlier than a bump the worker may
 * have applied, even one whose answer a partition lost (dispatchplan.h).
 */
static void do_renew(struct ctx *x, size_t wi)
{
    struct dispatch_worker *w = x->env->workers->items[wi];
    if (annotate(x, json_pack("{s:s}", NAMES_ANNOTATION_DISPATCH_RENEWED, x->env->now)) != 0)
        return;
    struct error err = {{0}};
    const json_t *objs[2] = {x->copies[wi], x->clusters[wi]};
    for (size_t i = 0; i < 2; i++) {
        if (objs[i] != NULL && dispatchact_renew(w->client, objs[i], &err) != 0) {
            log_warnf("%s: cannot renew its lease on worker %s: %s", x->key, w->name, err.message);
            return;
        }
    }
}

/* The worker's status on the manager object; for one suspended for a KubeRay there, its live state in an annotation too. */
static void do_mirror(struct ctx *x, size_t wi)
{
    struct error err = {{0}};
    const struct dispatch_remote *r = &x->remotes[wi];
    if (r->worker_state != NULL && annotate(x, json_pack("{s:O}", NAMES_ANNOTATION_DISPATCH_WORKER_STATE, r->worker_state)) != 0)
        return;
    if (json_object_size(r->status) > 0 && dispatchact_mirror(x->env->manager, x->obj, r->status, &err) != 0)
        log_warnf("%s: cannot mirror its status from worker %s: %s", x->key, x->views[wi].name, err.message);
}

static void do_lost(struct ctx *x, size_t wi, const char *reason)
{
    const struct dispatch_worker *w = wi != DISPATCH_NO_WORKER ? x->env->workers->items[wi] : NULL;
    char token[320], msg[DISPATCHWORKERS_STATUS_MAX + 256];
    util_format(token, sizeof(token), "lost %s", x->st.dispatched_to);
    if (!first_time(x, token))
        return;
    util_format(msg, sizeof(msg), "worker %s is lost (%s): %s", x->st.dispatched_to, w != NULL ? w->status : "not registered",
                reason);
    log_warnf("%s: %s", x->key, msg);
    event(x, "Warning", DISPATCHOBJECT_REASON_WORKER_LOST, msg);
    podgroup(x, "False", DISPATCHOBJECT_REASON_WORKER_LOST, msg);
}

static void do_give_up(struct ctx *x, const char *reason)
{
    if (!first_time(x, "gave up"))
        return;
    const char *reasons = annotation(x->obj, NAMES_ANNOTATION_DISPATCH_REASONS);
    char msg[1024];
    util_format(msg, sizeof(msg), "%s%s%s", reason, reasons != NULL ? ": " : "", reasons != NULL ? reasons : "");
    log_warnf("%s: %s", x->key, msg);
    event(x, "Warning", DISPATCHOBJECT_REASON_GAVE_UP, msg);
    podgroup(x, "False", "Unschedulable", msg);
}

static void do_quota(struct ctx *x)
{
    char msg[320];
    util_format(msg, sizeof(msg), "the manager Queue %s's capability has no room for it besides what it has dispatched",
                x->q != NULL ? x->q->name : "?");
    if (first_time(x, "quota")) {
        log_infof("%s: %s", x->key, msg);
        podgroup(x, "False", "QueueCapability", msg);
    }
}

/* Drops our finalizer (the copies are deleted); the object then goes. */
static void do_unfinalize(struct ctx *x)
{
    struct error err = {{0}};
    if (dispatchact_finalizer(x->env->manager, x->obj, 0, NULL, &err) != 0)
        log_warnf("%s: cannot remove the finalizer %s: %s", x->key, NAMES_FINALIZER_DISPATCH, err.message);
    else
        json_object_del(x->env->told, x->st.uid);
}

/* Adds our finalizer; returns 1 to plan again with the object the API returned. */
static int do_add_finalizer(struct ctx *x)
{
    json_t *updated = NULL;
    struct error err = {{0}};
    if (dispatchact_finalizer(x->env->manager, x->obj, 1, &updated, &err) != 0) {
        log_warnf("%s: cannot add the finalizer %s: %s", x->key, NAMES_FINALIZER_DISPATCH, err.message);
        return 0;
    }
    if (updated == NULL)
        return 0;
    json_decref(x->obj);
    x->obj = updated;
    return 1;
}

/* Carries out plan p; returns 1 when the object is to be planned again in this pass. */
static int act(struct ctx *x, const struct dispatch_plan *p)
{
    size_t w = p->worker;
    int on_worker = w != DISPATCH_NO_WORKER && w < x->n;
    switch (p->action) {
    case DISPATCH_ACTION_ADD_FINALIZER:
        return do_add_finalizer(x);
    case DISPATCH_ACTION_NOMINATE:
        if (on_worker)
            do_nominate(x, w);
        break;
    case DISPATCH_ACTION_WAIT_FIT:
        do_wait_fit(x);
        break;
    case DISPATCH_ACTION_WAIT_QUOTA:
        do_quota(x);
        break;
    case DISPATCH_ACTION_WITHDRAW:
        if (on_worker && delete_copy(x, w, p->reason) == 0)
            undispatch(x, "Withdrawn", p->reason, 0);
        break;
    case DISPATCH_ACTION_RENEW:
        if (on_worker)
            do_renew(x, w);
        break;
    case DISPATCH_ACTION_MIRROR:
        if (on_worker)
            do_mirror(x, w);
        break;
    case DISPATCH_ACTION_DELETE_STALE:
        if (on_worker)
            delete_copy(x, w, p->reason);
        break;
    case DISPATCH_ACTION_WAIT_LOST:
        do_lost(x, w, p->reason);
        break;
    case DISPATCH_ACTION_REDISPATCH:
        undispatch(x, "Redispatching", p->reason, 1);
        break;
    case DISPATCH_ACTION_GIVE_UP:
        do_give_up(x, p->reason);
        break;
    case DISPATCH_ACTION_FINALIZE:
        if (on_worker)
            delete_copy(x, w, "its manager object is being deleted");
        else
            do_unfinalize(x);
        break;
    case DISPATCH_ACTION_NONE:
    case DISPATCH_ACTION_PICK:
        break;
    }
    return 0;
}

void dispatchobject_run(struct dispatchobject_env *env, const json_t *obj)
{
    struct ctx x;
    ctx_init(&x, env, obj);
    struct dispatch_plan_input in = {
        .now_ms = env->now_ms,
        .cfg = {.timeout_ms = env->opt->timeout_ms, .lease_ms = env->opt->lease_ms, .margin_ms = env->opt->margin_ms},
    };
    int read = 1;
    for (int i = 0; i < PLANS_PER_PASS; i++) {
        if (read && ctx_read(&x) != 0)
            break;
        read = 0;
        in.st = &x.st;
        in.workers = x.views;
        in.nworkers = x.n;
        in.quota_room = x.q != NULL ? dispatchmanager_quota_room(x.q, x.obj) : 1;
        struct dispatch_plan p;
        dispatch_plan(&in, &p);
        log_debugf("%s: plan %s (%s)", x.key, dispatch_plan_action_name(p.action), p.reason);
        if (p.action != DISPATCH_ACTION_NONE && env->actions != NULL) {
            const char *labels[] = {dispatch_plan_action_name(p.action)};
            metrics_counter_add(env->actions, labels, 1);
        }
        if (p.action == DISPATCH_ACTION_PICK) {
            in.pick = run_pick(&x);
            in.pick_ran = 1;
            continue;
        }
        if (!act(&x, &p))
            break;
        in.pick_ran = 0;
        read = 1;
    }
    ctx_finish(&x);
}
