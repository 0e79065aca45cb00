#include "apply.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "declare.h"
#include "events.h"
#include "evict.h"
#include "fault.h"
#include "legacy.h"
#include "log.h"
#include "names.h"
#include "topology.h"
#include "ungate.h"
#include "util.h"
#include "waitevents.h"

struct apply {
    struct apply_config cfg;
    struct waitevents *waits;     /* the GangWaiting Warnings, once per gang and reason */
    struct ungate_spread *spread; /* gangs whose admission left gates behind */
    struct metrics_family *m_admitted;
    struct metrics_family *m_decisions;
    struct metrics_family *m_ungate_seconds;
    struct metrics_family *m_wait_seconds;
    struct metrics_family *m_spread_seconds;
    struct cacheguard *guard; /* during apply_carry_out: the cache's lock, for ungate_bound */
    struct cache *cache;
};

/* A decision that removes gates (ADMIT, FINISH, TAIL_ADMIT), and what became of it. */
struct apply_act {
    struct admit_decision *d;
    int report;              /* its reason changed (admit_reason_changed): tell it */
    long long since;         /* ADMIT: when its wait began (CLOCK_MONOTONIC ms) */
    int skip;                /* not recorded or read: 1 its RayCluster is gone, -1 failed; its gates stay */
    struct ungate_job *jobs; /* its d->npods pods, in the pass's batch */
    int native;              /* its gang takes the native step (native_want): want is filled */
    struct native_want want;
    int held;                /* its RayCluster is held suspended (heldsuspend.h): its admission record clears spec.suspend */
    int64_t held_generation; /* held: the generation after that clear (NAMES_ANNOTATION_HELD_GENERATION) */
    int restamp;             /* held with an eviction record: the record keeps held_generation (evictscan_record_next) */
};

/* Passes releasing more gates than this are paced by the binds (ungatepace.h); smaller ones go at once. */
#define APPLY_PACE_OVER 32

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

static void create_metrics(struct apply *a, struct metrics_registry *reg)
{
    static const char *const queue_label[] = {"queue"};
    static const char *const action_labels[] = {"action", "reason"};
    static const double ungate_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10};
    static const double wait_buckets[] = {0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};
    static const double spread_buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60};
    a->m_admitted = metrics_counter_create(reg, "raygate_gangs_admitted_total", "Gangs admitted, by queue.", 1, queue_label);
    a->m_decisions =
        metrics_counter_create(reg, "raygate_decisions_total", "Decisions carried out, by action and reason.", 2, action_labels);
    a->m_ungate_seconds = metrics_histogram_create(reg, "raygate_gate_removal_duration_seconds",
                                                   "Time from admission to all of a gang's gates removed.", 0, NULL, ungate_buckets,
                                                   NKEYS(ungate_buckets));
    a->m_wait_seconds = metrics_histogram_create(reg, "raygate_gang_wait_duration_seconds",
                                                 "Time from a gang being complete (all its pods created) to its admission.", 0,
                                                 NULL, wait_buckets, NKEYS(wait_buckets));
    a->m_spread_seconds =
        metrics_histogram_create(reg, "raygate_gang_ungate_spread_seconds",
                                 "Time from a gang's first scheduling gate removed to its last (the gang is partly "
                                 "released meanwhile).",
                                 0, NULL, spread_buckets, NKEYS(spread_buckets));
}

struct apply *apply_create(const struct apply_config *cfg)
{
    struct apply *a = util_calloc(1, sizeof(*a));
    a->cfg = *cfg;
    a->spread = ungate_spread_create();
    a->waits = waitevents_create(cfg->settle_ms);
    create_metrics(a, cfg->reg);
    return a;
}

void apply_destroy(struct apply *a)
{
    if (a == NULL)
        return;
    ungate_spread_destroy(a->spread);
    waitevents_destroy(a->waits);
    free(a);
}

/* The apiVersion of a decision's RayCluster: KubeRay's, or the legacy operator's. */
static const char *rc_api_version(const struct admit_decision *d)
{
    return d->legacy ? LEGACY_API_VERSION : "ray.io/v1";
}

static int may_write(struct apply *a)
{
    return a->cfg.may_write == NULL || a->cfg.may_write(a->cfg.arg);
}

/* The pass's ungates (ungate.h), stopped early when this process may not write any more. */
static int ungate_may_write(void *arg)
{
    struct apply *a = arg;
    return !atomic_load(a->cfg.stopping) && may_write(a);
}

/* How many of the released pods the cache (the pod watch) has seen bound, for the paced release (ungate.h). */
static size_t ungate_bound(void *arg, const struct ungate_job *jobs, const size_t *order, size_t n)
{
    struct apply *a = arg;
    size_t bound = 0;
    cacheguard_lock(a->guard);
    for (size_t i = 0; i < n; i++) {
        const struct ungate_job *job = &jobs[order[i]];
        const struct cache_pod *pod = job->ok ? cache_pod_by_uid(a->cache, job->pod->uid) : NULL;
        bound += job->ok && (pod == NULL || pod->node != NULL); /* a pod gone counts as done */
    }
    cacheguard_unlock(a->guard);
    return bound;
}

static size_t ungate_jobs(struct apply *a, struct ungate_job *jobs, size_t n)
{
    struct ungate_options o = {.may_write = ungate_may_write, .arg = a, .pace_over = APPLY_PACE_OVER};
    if (a->guard != NULL && a->cache != NULL)
        o.bound = ungate_bound;
    return ungate_pods(a->cfg.client, jobs, n, &o);
}

/* ------------------------------------------------------------------ plan (under the lock) */

/*
 * The GangWaiting Warnings of a decision (waitevents.h): one per gang and
 * reason, on its RayCluster and head pod (a tail's: its first waiting pod),
 * once the reason has lasted a second; every decision is noted, for an ADMIT
 * or FINISH ends its gang's wait.
 */
static void wait_events(struct apply *a, struct apply_pass *p, struct cache *cache, const struct admit_decision *d, int changed)
{
    struct waitevents_pass x = {&p->events, p->now, a->cfg.instance, p->mono_ms};
    if (changed && d->action == ADMIT_ACTION_WAIT)
        log_debugf("gang %s/%s waits: %s", d->namespace_, d->gang, d->message);
    else if (changed && d->action == ADMIT_ACTION_TAIL_WAIT)
        log_debugf("gang %s/%s: autoscaled pods wait: %s", d->namespace_, d->gang, d->message);
    waitevents_note(a->waits, cache, d, &x);
}

/* After the pass's decisions: the waits settled since (waitevents_flush); a pass is wanted when the next settles. */
static void settled_waits(struct apply *a, struct apply_pass *p, struct cache *cache)
{
    struct waitevents_pass x = {&p->events, p->now, a->cfg.instance, p->mono_ms};
    p->settle_at = waitevents_flush(a->waits, cache, &x);
}

/* Keeps gang->complete_ms: when a waiting gang was first seen with all its pods. */
static void note_complete(struct cache *cache, const struct admit_decision *d, long long now)
{
    if (d->action != ADMIT_ACTION_WAIT)
        return;
    struct cache_gang *g = cache_gang_get(cache, d->namespace_, d->cluster);
    if (g == NULL)
        return;
    if (d->reason == ADMIT_REASON_PODS || d->reason == ADMIT_REASON_INVALID)
        cache_gang_set_complete_ms(cache, g, 0);
    else if (g->complete_ms == 0)
        cache_gang_set_complete_ms(cache, g, now);
}

/* An ADMIT's wait began when its gang was complete, else when the pass woke. */
static long long wait_since(struct cache *cache, const struct admit_decision *d, long long woke_ms)
{
    const struct cache_gang *g = cache_gang_get(cache, d->namespace_, d->cluster);
    return g != NULL && g->complete_ms > 0 ? g->complete_ms : woke_ms;
}

void apply_plan(struct apply *a, struct apply_pass *p, struct cache *cache, struct admit_result *res, long long woke_ms)
{
    *p = (struct apply_pass){.res = res, .settle_at = -1};
    events_timestamp(time(NULL), p->now, sizeof(p->now));
    p->acts = util_calloc(res->len + 1, sizeof(*p->acts));
    long long mono = clock_mono_ms();
    p->mono_ms = mono;
    int abandoned = 0;
    for (size_t i = 0; i < res->len; i++) {
        struct admit_decision *d = &res->items[i];
        int report = admit_reason_changed(cache, d); /* for every decision: it keeps the reason told */
        note_complete(cache, d, mono);
        if (!abandoned && !may_write(a)) {
            abandoned = 1;
            log_warnf("not leading any more: %zu decisions of this pass abandoned", res->len - i);
        }
        if (abandoned)
            continue;
        const char *labels[] = {admit_result_action_name(d->action), admit_result_reason_name(d->reason)};
        metrics_counter_add(a->m_decisions, labels, 1);
        wait_events(a, p, cache, d, report);
        if (d->action == ADMIT_ACTION_WAIT || d->action == ADMIT_ACTION_TAIL_WAIT) {
            release_note(&p->releases, cache, d);
            continue;
        }
        struct apply_act *act = &p->acts[p->nacts++];
        *act = (struct apply_act){.d = d, .report = report, .since = wait_since(cache, d, woke_ms)};
        act->native = native_want(a->cfg.native, cache, d, &act->want);
        const struct cache_gang *g = cache_gang_get(cache, d->namespace_, d->cluster);
        act->held = g != NULL && g->held;
        act->held_generation = act->held ? g->generation + 1 : 0;
        act->restamp = act->held && g->record.evicted_at_ms > 0;
    }
    if (!abandoned)
        settled_waits(a, p, cache);
}

/* ------------------------------------------------------------------ carry out (without the lock) */

/* A held RayCluster's admission record (patch, borrowed): spec.suspend cleared, and the generation that makes. */
static void held_record(json_t *patch, const struct apply_act *act)
{
    json_t *annotations = json_object_get(json_object_get(patch, "metadata"), "annotations");
    json_object_set_new(patch, "spec", json_pack("{s:b}", "suspend", 0));
    json_object_set_new(annotations, NAMES_ANNOTATION_HELD_GENERATION, json_sprintf("%" PRId64, act->held_generation));
    if (act->restamp) /* that clear is no spec change of the user's: the record's count goes on */
        json_object_set_new(annotations, EVICT_ANNOTATION_EVICTED_GENERATION, json_sprintf("%" PRId64, act->held_generation));
}

/*
 * Before any gate goes, its RayCluster is asked, concurrently for all acts:
 * an ADMIT records raygate.io/admitted-at on it (a PATCH with its uid as a
 * precondition); a FINISH or TAIL_ADMIT reads it (ungate_owner_verdict), for
 * the cache may be behind: after a relist of the pods, the RayClusters' watch
 * not relisted yet, a RayCluster deleted meanwhile still looks admitted, and
 * pods a lagging operator made for it looked like members to finish. Sets each
 * act's skip: 0 go on, 1 the RayCluster is gone (or is another one of that
 * name, or is being deleted), -1 failed (logged). Not leading any more:
 * nothing is asked, every act is skipped.
 */
static void record_admissions(struct apply *a, struct apply_pass *p)
{
    size_t n = p->nacts;
    struct kube_batch_item *items = util_calloc(n + 1, sizeof(*items));
    json_t **patches = util_calloc(n + 1, sizeof(*patches));
    char **paths = util_calloc(n + 1, sizeof(*paths));
    for (size_t i = 0; i < n; i++) {
        const struct admit_decision *d = p->acts[i].d;
        paths[i] = util_strdupf("/apis/%s/namespaces/%s/rayclusters/%s", rc_api_version(d), d->namespace_, d->cluster);
        items[i] = (struct kube_batch_item){.method = "GET", .path = paths[i]};
        if (d->action != ADMIT_ACTION_ADMIT)
            continue;
        /* Where a topology-constrained gang was placed goes in the same write (pods that come later follow it); null
           clears an older admission's. */
        patches[i] = json_pack("{s:{s:{s:s,s:s?}}}", "metadata", "annotations", NAMES_ANNOTATION_ADMITTED, p->now, TOPOLOGY_PLACED,
                               d->topology);
        if (d->cluster_uid != NULL) /* never stamp a new RayCluster of the same name */
            json_object_set_new(json_object_get(patches[i], "metadata"), "uid", json_string(d->cluster_uid));
        if (p->acts[i].held) /* KubeRay makes its pods now, members born without the gate (heldset.h) */
            held_record(patches[i], &p->acts[i]);
        items[i].method = "PATCH";
        items[i].content_type = kube_patch_content_type(KUBE_PATCH_MERGE);
        items[i].body = patches[i];
        items[i].status_only = 1; /* only a read's answer is looked at */
    }
    int leading = n > 0 && may_write(a);
    if (leading)
        kube_batch(a->cfg.client, items, n, 64);
    for (size_t i = 0; i < n; i++) {
        long st = items[i].resp.status;
        struct apply_act *act = &p->acts[i];
        const struct admit_decision *d = act->d;
        if (!leading)
            act->skip = 1;
        else if (d->action == ADMIT_ACTION_ADMIT)
            act->skip = items[i].rc == 0 ? 0 : (st == 404 || st == 409) ? 1 : -1;
        else
            act->skip = ungate_owner_verdict(st, items[i].resp.body, d->cluster_uid);
        if (act->skip < 0)
            log_warnf("%s %s/%s: %s", d->action == ADMIT_ACTION_ADMIT ? "record admission of" : "read RayCluster", d->namespace_,
                      d->cluster, items[i].resp.message);
        else if (act->skip > 0 && leading && d->action != ADMIT_ACTION_ADMIT)
            log_infof("%s %s/%s: its RayCluster is gone or being deleted: gates kept", admit_result_action_name(d->action),
                      d->namespace_, d->gang);
        kube_client_response_finish(&items[i].resp);
        json_decref(patches[i]);
        free(paths[i]);
    }
    free(items);
    free(patches);
    free(paths);
}

/*
 * Test-only fault point (fault.h): when FAULT_AFTER_RECORD is armed, die
 * mid-admission, after d's record and its first gates, as a crash would.
 */
static void fault_after_record(struct apply *a, const struct admit_decision *d)
{
    long ungates;
    if (!fault_armed(FAULT_AFTER_RECORD, &ungates))
        return;
    size_t n = d->npods, k = (size_t)ungates < n ? (size_t)ungates : n;
    for (size_t j = 0; j < k; j++) {
        struct ungate_job one = {d->namespace_, &d->pods[j], 0, -1};
        ungate_jobs(a, &one, 1);
    }
    fault_exit(FAULT_AFTER_RECORD, "exiting after recording the admission of %s/%s and ungating %zu of %zu pods", d->namespace_,
               d->cluster, k, n);
}

/* The ADMITs recorded: their wait (from complete to admitted) observed, counted. */
static void note_admitted(struct apply *a, struct apply_pass *p)
{
    for (size_t i = 0; i < p->nacts; i++) {
        const struct apply_act *act = &p->acts[i];
        if (act->d->action != ADMIT_ACTION_ADMIT || act->skip != 0)
            continue;
        metrics_histogram_observe(a->m_wait_seconds, NULL, (double)(clock_mono_ms() - act->since) / 1000.0);
        const char *ql[] = {act->d->queue != NULL ? act->d->queue : ""};
        metrics_counter_add(a->m_admitted, ql, 1);
        fault_after_record(a, act->d);
    }
}

/*
 * The native PodGroups of the acts not skipped (native.h), in one go: an act
 * whose group could not be made sure of keeps its gates (skip -1), so that no
 * pod is released into a group kube-scheduler does not know.
 */
static void ensure_native(struct apply *a, struct apply_pass *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nacts; i++)
        n += p->acts[i].skip == 0 && p->acts[i].native;
    if (n == 0)
        return;
    struct nativegang_spec *specs = util_calloc(n, sizeof(*specs));
    enum nativegang_op *ops = util_calloc(n, sizeof(*ops));
    int *ok = util_calloc(n, sizeof(*ok));
    size_t k = 0;
    for (size_t i = 0; i < p->nacts; i++) {
        if (p->acts[i].skip == 0 && p->acts[i].native) {
            specs[k] = p->acts[i].want.spec;
            ops[k++] = p->acts[i].want.op;
        }
    }
    native_ensure(a->cfg.client, specs, ops, n, ok, a->cfg.may_write, a->cfg.arg);
    k = 0;
    for (size_t i = 0; i < p->nacts; i++) {
        struct apply_act *act = &p->acts[i];
        if (act->skip != 0 || !act->native)
            continue;
        if (!ok[k++]) {
            act->skip = -1;
            log_warnf("%s %s/%s: its native PodGroup could not be written: gates kept", admit_result_action_name(act->d->action),
                      act->d->namespace_, act->d->gang);
        }
    }
    long unused;
    int wrote = 0;
    for (size_t i = 0; i < n; i++)
        wrote |= ops[i] != NATIVEGANG_NONE && ok[i];
    if (wrote && fault_armed(FAULT_AFTER_NATIVE, &unused))
        fault_exit(FAULT_AFTER_NATIVE, "exiting after writing %zu native PodGroups, before removing their gates", n);
    free(specs);
    free(ops);
    free(ok);
}

/*
 * ungate_jobs() on the jobs[0..n) of pods in the API: a held gang's declared
 * pods (declare.h) have no gate to remove there, and are done at once.
 * Returns how many are not done.
 */
static size_t ungate_real(struct apply *a, struct ungate_job *jobs, size_t n)
{
    struct ungate_job *send = util_calloc(n + 1, sizeof(*send));
    size_t *from = util_calloc(n + 1, sizeof(*from)), nsend = 0;
    long long now = clock_mono_ms();
    for (size_t i = 0; i < n; i++) {
        if (declare_uid_is(jobs[i].pod->uid)) {
            jobs[i].ok = 1;
            jobs[i].removed_ms = now;
            continue;
        }
        from[nsend] = i;
        send[nsend++] = jobs[i];
    }
    size_t notok = nsend > 0 ? ungate_jobs(a, send, nsend) : 0;
    for (size_t k = 0; k < nsend; k++)
        jobs[from[k]] = send[k];
    free(send);
    free(from);
    return notok;
}

/* Every gate of the acts not skipped, in one batch (ungate.h). Returns the batch; *failed: some gate stayed. */
static struct ungate_job *remove_gates(struct apply *a, struct apply_pass *p, int *failed)
{
    size_t n = 0, njobs = 0;
    for (size_t i = 0; i < p->nacts; i++)
        n += p->acts[i].skip == 0 ? p->acts[i].d->npods : 0;
    struct ungate_job *jobs = util_calloc(n + 1, sizeof(*jobs));
    for (size_t i = 0; i < p->nacts; i++) {
        struct apply_act *act = &p->acts[i];
        if (act->skip != 0)
            continue;
        act->jobs = jobs + njobs;
        for (size_t k = 0; k < act->d->npods; k++)
            jobs[njobs++] = (struct ungate_job){act->d->namespace_, &act->d->pods[k], 0, -1};
    }
    *failed = njobs > 0 && ungate_real(a, jobs, njobs) > 0;
    return jobs;
}

/* The spread of a gang's gate removals (ungate_spread_note), observed once the gang has none left; logged over a second. */
static void note_spread(struct apply *a, const struct admit_decision *d, const struct ungate_job *jobs)
{
    if (d->action != ADMIT_ACTION_ADMIT && d->action != ADMIT_ACTION_FINISH)
        return;
    long long ms =
        ungate_spread_note(a->spread, d->namespace_, d->cluster, d->action == ADMIT_ACTION_ADMIT, jobs, d->npods, clock_mono_ms());
    if (ms < 0)
        return;
    metrics_histogram_observe(a->m_spread_seconds, NULL, (double)ms / 1000.0);
    if (ms > 1000)
        log_warnf("gang %s/%s: %.3f s from its first gate removed to its last (partly released meanwhile)", d->namespace_, d->gang,
                  (double)ms / 1000.0);
}

/* What one act's gates came to: metrics, its Normal Events, the log. secs: the batch's duration. */
static void report_act(struct apply *a, struct apply_pass *p, const struct apply_act *act, double secs)
{
    const struct admit_decision *d = act->d;
    size_t n = d->npods, failed = 0;
    for (size_t k = 0; k < n; k++)
        failed += !act->jobs[k].ok;
    if (d->action == ADMIT_ACTION_ADMIT && failed == 0)
        metrics_histogram_observe(a->m_ungate_seconds, NULL, secs);
    note_spread(a, d, act->jobs);
    if (act->report && d->action != ADMIT_ACTION_FINISH) {
        struct events_object rc = {rc_api_version(d), "RayCluster", d->namespace_, d->cluster, d->cluster_uid};
        /* A gang's admission is told once, on its RayCluster (each pod then gets the scheduler's Scheduled Event);
           a pod admitted beyond the gang (TAIL_ADMIT) is told on itself, having no other record. */
        if (d->action == ADMIT_ACTION_ADMIT)
            eventpost_add(&p->events, &rc, "Normal", "GangAdmitted", d->message, p->now, a->cfg.instance);
        for (size_t k = 0; k < n && d->action == ADMIT_ACTION_TAIL_ADMIT; k++) {
            struct events_object po = {"v1", "Pod", d->namespace_, d->pods[k].name, d->pods[k].uid};
            if (act->jobs[k].ok)
                eventpost_add(&p->events, &po, "Normal", "GangAdmitted", d->message, p->now, a->cfg.instance);
        }
    }
    log_infof("%s %s/%s (queue %s): gates removed from %zu of %zu pods in %.3f s", admit_result_action_name(d->action),
              d->namespace_, d->gang, d->queue != NULL ? d->queue : "", n - failed, n, secs);
}

/*
 * The one trip back into the cache (under the lock): the gangs whose record
 * the API accepted are admitted, the pods whose gate it removed ungated.
 * Only now is it known which writes were accepted; the cache must never
 * believe one that was refused (the gang would hold no room while gated).
 */
static void commit(struct apply_pass *p, struct cacheguard *guard, struct cache *cache)
{
    cacheguard_lock(guard);
    for (size_t i = 0; i < p->nacts; i++) {
        const struct apply_act *act = &p->acts[i];
        const struct admit_decision *d = act->d;
        if (act->skip != 0)
            continue;
        struct cache_gang *g = d->action == ADMIT_ACTION_ADMIT ? cache_gang_get(cache, d->namespace_, d->cluster) : NULL;
        if (g != NULL) {
            cache_gang_mark_admitted(cache, g, p->now);
            cache_gang_mark_placed(g, d->topology);
            cache_gang_set_complete_ms(cache, g, 0);
        }
        for (size_t k = 0; k < d->npods; k++) {
            struct cache_pod *pod = act->jobs[k].ok ? cache_pod_by_uid(cache, d->pods[k].uid) : NULL;
            if (pod != NULL)
                cache_pod_mark_ungated(cache, pod);
        }
    }
    cacheguard_unlock(guard);
}

int apply_carry_out(struct apply *a, struct apply_pass *p, struct cacheguard *guard, struct cache *cache)
{
    int retry = p->settle_at >= 0; /* a wait to tell once settled: a pass then */
    long long t0 = clock_mono_ms();
    a->guard = guard;
    a->cache = cache;
    if (p->releases.n > 0 && may_write(a))
        release_send(a->cfg.client, &p->releases);
    release_list_finish(&p->releases);
    record_admissions(a, p);
    note_admitted(a, p);
    ensure_native(a, p);
    for (size_t i = 0; i < p->nacts; i++)
        retry |= p->acts[i].skip < 0;
    int failed = 0;
    struct ungate_job *jobs = remove_gates(a, p, &failed);
    a->guard = NULL;
    a->cache = NULL;
    retry |= failed;
    double secs = (double)(clock_mono_ms() - t0) / 1000.0;
    for (size_t i = 0; i < p->nacts; i++) {
        if (p->acts[i].skip == 0)
            report_act(a, p, &p->acts[i], secs);
    }
    commit(p, guard, cache);
    eventpost_send(a->cfg.client, &p->events, a->cfg.may_write, a->cfg.arg, "events");
    eventpost_list_finish(&p->events);
    free(jobs);
    for (size_t i = 0; i < p->nacts; i++)
        native_want_finish(&p->acts[i].want);
    free(p->acts);
    p->acts = NULL;
    p->nacts = 0;
    return retry ? -1 : 0;
}
