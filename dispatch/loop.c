#include "loop.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "act.h"
#include "dispatchcopy.h"
#include "dispatchmemo.h"
#include "events.h"
#include "log.h"
#include "manager.h"
#include "object.h"
#include "rayjob.h"
#include "dispatchpick.h"
#include "util.h"
#include "workers.h"

struct dispatch_loop {
    const struct dispatch_options *opt;
    struct kube_client *manager;
    struct dispatchworkers workers;
    struct dispatchmanager mgr;
    json_t *told;      /* keys of the once-only Events posted ("uid/WorkerLost/at"): not repeated every pass */
    json_t *nominated; /* worker names whose copy's create failed in this pass: nothing more goes there in it */
    json_t *warned;    /* object memo key -> the last warning logged about it (dispatchmemo.h) */
    json_t *said;      /* the loop's own warnings ("workers", "manager") -> the last logged */
    struct metrics_family *actions;
    int64_t nominations; /* dispatched-to written, since the start */
    atomic_bool stop;    /* set by dispatchloop_stop, from a signal handler on any thread */
    atomic_int synced;
    int64_t now_ms;
    char now[32];
};

struct dispatch_loop *dispatchloop_create(const struct dispatch_options *opt, struct kube_client *manager,
                                          struct metrics_registry *reg)
{
    static const char *const labels[] = {"action"};
    struct dispatch_loop *l = util_calloc(1, sizeof(*l));
    l->opt = opt;
    l->manager = manager;
    dispatchworkers_init(&l->workers, opt, manager, reg);
    dispatchmanager_init(&l->mgr);
    l->told = json_object();
    l->warned = json_object();
    l->said = json_object();
    l->nominated = json_object();
    if (reg != NULL)
        l->actions =
            metrics_counter_create(reg, "raygate_dispatch_actions_total",
                                   "What the dispatcher did to manager objects, by action (dispatchplan's names).", 1, labels);
    return l;
}

void dispatchloop_destroy(struct dispatch_loop *l)
{
    if (l == NULL)
        return;
    dispatchworkers_finish(&l->workers);
    dispatchmanager_finish(&l->mgr);
    json_decref(l->told);
    json_decref(l->warned);
    json_decref(l->said);
    json_decref(l->nominated);
    free(l);
}

void dispatchloop_stop(struct dispatch_loop *l)
{
    atomic_store(&l->stop, true);
}

int dispatchloop_synced(const struct dispatch_loop *l)
{
    return atomic_load(&((struct dispatch_loop *)l)->synced);
}

/* Warns about key ("workers", "manager") once per distinct message (a failing list fails every pass). */
static void warn_once(struct dispatch_loop *l, const char *key, const char *msg)
{
    const char *last = json_string_value(json_object_get(l->said, key));
    if (last != NULL && strcmp(last, msg) == 0)
        return;
    log_warnf("%s: %s", key, msg);
    json_object_set_new(l->said, key, json_string(msg));
}

/*
 * The state of each worker reached in this pass: "up", or, when it lacks a
 * Queue that a manager Queue dispatching to it names (no gang of that Queue
 * ever fits there), "up; no Queue q", shown on its Secret and in an Event.
 */
static void settle_states(struct dispatch_loop *l)
{
    for (size_t i = 0; i < l->workers.len; i++) {
        struct dispatch_worker *w = l->workers.items[i];
        if (!w->reached)
            continue;
        struct util_buf b = {0};
        for (size_t j = 0; j < l->mgr.nqueues; j++) {
            const struct dispatchmanager_queue *q = &l->mgr.queues[j];
            if (dispatch_pick_to_index(&q->to, w->name) != DISPATCH_NO_WORKER && !dispatchview_has_queue(&w->view, q->name))
                util_buf_printf(&b, "%s%s", b.len == 0 ? "up; no Queue " : ", ", q->name);
        }
        dispatchworkers_set_state(&l->workers, w, 1, b.data);
        util_buf_finish(&b);
    }
}

/* Step 1: the registry, each worker's view, watched (their state is reported once the manager's Queues are known). */
static void refresh_workers(struct dispatch_loop *l)
{
    struct error err = {{0}};
    if (dispatchworkers_sync(&l->workers, &err) != 0)
        warn_once(l, "workers", err.message);
    for (size_t i = 0; i < l->workers.len; i++) {
        struct dispatch_worker *w = l->workers.items[i];
        if (w->client == NULL)
            continue; /* its kubeconfig does not parse: down since it was read */
        w->reached = dispatchview_sync(&w->view, w->client, w->name, l->opt->cluster_name, &err) == 0;
        if (!w->reached)
            dispatchworkers_set_state(&l->workers, w, 0, err.message);
    }
}

/* The uids of the manager's objects (a new JSON object used as a set). */
static json_t *manager_uids(const struct dispatchmanager *m)
{
    json_t *uids = json_object();
    size_t i;
    json_t *obj;
    json_array_foreach(m->objects, i, obj)
    {
        const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
        if (uid != NULL)
            json_object_set_new(uids, uid, json_true());
    }
    return uids;
}

/*
 * Step 4: a copy of this manager's on a reachable worker whose manager object
 * is gone (deleted while the worker was lost, or without the finalizer) is
 * deleted. The RayClusters KubeRay made for copied RayJobs go with their RayJob.
 */
static void sweep_orphans(struct dispatch_loop *l)
{
    json_t *uids = manager_uids(&l->mgr);
    for (size_t i = 0; i < l->workers.len; i++) {
        struct dispatch_worker *w = l->workers.items[i];
        if (!w->up)
            continue;
        const char *key;
        json_t *copy;
        json_object_foreach(w->view.copies, key, copy)
        {
            const char *owner = NULL, *owner_uid = NULL;
            const char *origin = dispatch_copy_origin(copy, l->opt->cluster_name);
            const json_t *meta = json_object_get(copy, "metadata");
            if (origin == NULL || json_object_get(uids, origin) != NULL || rayjob_owner_of(copy, &owner, &owner_uid) ||
                json_object_get(meta, "deletionTimestamp") != NULL)
                continue;
            struct error err = {{0}};
            if (dispatchact_delete_copy(w->client, copy, &err) == 0)
                log_infof("worker %s: deleted %s: its manager object (uid %s) is gone", w->name, key, origin);
            else
                log_warnf("worker %s: cannot delete orphan %s: %s", w->name, key, err.message);
        }
    }
    json_decref(uids);
}

void dispatchloop_pass(struct dispatch_loop *l, int64_t now_ms)
{
    l->now_ms = now_ms;
    events_timestamp(now_ms / 1000, l->now, sizeof(l->now));
    refresh_workers(l);
    struct error err = {{0}};
    if (dispatchmanager_list(&l->mgr, l->manager, &err) != 0) {
        warn_once(l, "manager", err.message);
        settle_states(l);
        dispatchworkers_report(&l->workers, l->now);
        return;
    }
    settle_states(l);
    dispatchworkers_report(&l->workers, l->now);
    json_object_del(l->said, "manager");
    /* Objects deleted without our finalizer (or while we were down) are forgotten here. */
    dispatch_memo_prune(l->told, l->warned, l->mgr.objects);
    json_object_clear(l->nominated);
    struct dispatchobject_env env = {
        .opt = l->opt,
        .manager = l->manager,
        .workers = &l->workers,
        .mgr = &l->mgr,
        .told = l->told,
        .nominated = l->nominated,
        .warned = l->warned,
        .actions = l->actions,
        .nominations = &l->nominations,
        .now_ms = now_ms,
        .now = l->now,
    };
    size_t i;
    json_t *obj;
    json_array_foreach(l->mgr.objects, i, obj)
    {
        if (dispatchobject_involved(&env, obj))
            dispatchobject_run(&env, obj);
    }
    sweep_orphans(l);
    atomic_store(&l->synced, 1);
}

void dispatchloop_run(struct dispatch_loop *l)
{
    while (!atomic_load(&l->stop)) {
        long long start = clock_mono_ms();
        dispatchloop_pass(l, clock_wall_ms());
        long long took = clock_mono_ms() - start;
        /* Longer than a quarter lease, and renewals come late: the leases themselves are at risk. */
        if (took > l->opt->lease_ms / 4)
            log_warnf("a pass took %lld ms, longer than a quarter of --dispatch-lease: renewals come late", took);
        else if (took > l->opt->resync_ms)
            log_debugf("a pass took %lld ms, longer than --resync", took);
        /* Sleep in short steps so that a signal ends the loop promptly. */
        for (long long left = l->opt->resync_ms - took; left > 0 && !atomic_load(&l->stop); left -= 100)
            clock_sleep_ms(left < 100 ? left : 100);
    }
}
