#include "controller.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "cache.h"
#include "events.h"
#include "log.h"
#include "util.h"

enum watch_kind {
    WATCH_PODS,
    WATCH_NODES,
    WATCH_RAYCLUSTERS,
    WATCH_QUEUES,
    WATCH_COUNT,
};

static const struct {
    const char *name;
    const char *path;
} watch_specs[WATCH_COUNT] = {
    [WATCH_PODS] = {"pods", "/api/v1/pods"},
    [WATCH_NODES] = {"nodes", "/api/v1/nodes"},
    [WATCH_RAYCLUSTERS] = {"rayclusters", "/apis/ray.io/v1/rayclusters"},
    [WATCH_QUEUES] = {"queues", "/apis/scheduling.volcano.sh/v1beta1/queues"},
};

struct watch_ctx {
    struct controller *c;
    enum watch_kind kind;
};

struct controller {
    struct kube_client *client;
    struct kube_watcher *watcher;
    struct metrics_registry *reg;
    struct controller_options opts;
    char *instance;
    int wake_fd;
    volatile sig_atomic_t stopping;

    pthread_mutex_t mu; /* guards everything below */
    struct cache *cache;
    unsigned synced; /* bit per watch_kind */
    int changed;     /* an event arrived since the last pass */
    struct watch_ctx watch_ctx[WATCH_COUNT];

    /* metrics (families borrowed from reg) */
    struct metrics_family *m_admitted;
    struct metrics_family *m_pass_seconds;
    struct metrics_family *m_ungate_seconds;
    struct metrics_family *m_decisions;
};

static long long now_ms(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wake(struct controller *c)
{
    uint64_t one = 1;
    ssize_t n = write(c->wake_fd, &one, sizeof(one));
    (void)n;
}

static const char *obj_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

/* Runs on the watcher thread. object borrowed. */
static void on_watch(void *arg, enum kube_watch_event ev, json_t *object)
{
    struct watch_ctx *w = arg;
    struct controller *c = w->c;
    struct gang_error err = {{0}};
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    if (ev == KUBE_WATCH_SYNCED) {
        if (!(c->synced & (1u << w->kind)))
            log_infof("watch %s synced", watch_specs[w->kind].name);
        c->synced |= 1u << w->kind;
    } else if (ev == KUBE_WATCH_DELETED) {
        const char *ns = obj_str(object, "namespace"), *name = obj_str(object, "name");
        if (name != NULL) {
            switch (w->kind) {
            case WATCH_PODS:
                cache_delete_pod(c->cache, ns != NULL ? ns : "", name);
                break;
            case WATCH_NODES:
                cache_delete_node(c->cache, name);
                break;
            case WATCH_RAYCLUSTERS:
                cache_delete_raycluster(c->cache, ns != NULL ? ns : "", name);
                break;
            case WATCH_QUEUES:
                cache_delete_queue(c->cache, name);
                break;
            case WATCH_COUNT:
                break;
            }
        }
    } else {
        switch (w->kind) {
        case WATCH_PODS:
            rc = cache_upsert_pod(c->cache, object, &err);
            break;
        case WATCH_NODES:
            rc = cache_upsert_node(c->cache, object, &err);
            break;
        case WATCH_RAYCLUSTERS:
            rc = cache_upsert_raycluster(c->cache, object, &err);
            break;
        case WATCH_QUEUES:
            rc = cache_upsert_queue(c->cache, object, &err);
            break;
        case WATCH_COUNT:
            break;
        }
    }
    c->changed = 1;
    pthread_mutex_unlock(&c->mu);
    if (rc != 0)
        log_warnf("watch %s: object ignored: %s", watch_specs[w->kind].name, err.message);
    wake(c);
}

struct controller *controller_create(struct kube_client *client, struct metrics_registry *reg,
                                     const struct controller_options *opts)
{
    struct controller *c = util_calloc(1, sizeof(*c));
    c->client = client;
    c->reg = reg;
    c->opts = *opts;
    if (c->opts.resync_ms <= 0)
        c->opts.resync_ms = 30000;
    if (c->opts.debounce_ms < 0)
        c->opts.debounce_ms = 0;
    c->instance = util_strdup(opts->instance != NULL ? opts->instance : "raygate-gate");
    c->opts.instance = c->instance;
    c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    c->cache = cache_create();
    if (c->wake_fd < 0 || c->cache == NULL) {
        controller_destroy(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    static const char *const queue_label[] = {"queue"};
    static const char *const action_labels[] = {"action", "reason"};
    static const double pass_buckets[] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1};
    static const double ungate_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10};
    c->m_admitted = metrics_counter_create(reg, "raygate_gangs_admitted_total", "Gangs admitted, by queue.", 1, queue_label);
    c->m_decisions = metrics_counter_create(reg, "raygate_decisions_total", "Decisions carried out, by action and reason.", 2,
                                            action_labels);
    c->m_pass_seconds = metrics_histogram_create(reg, "raygate_admission_pass_duration_seconds",
                                                 "Duration of one admission decision pass.", 0, NULL, pass_buckets,
                                                 sizeof(pass_buckets) / sizeof(pass_buckets[0]));
    c->m_ungate_seconds = metrics_histogram_create(reg, "raygate_gate_removal_duration_seconds",
                                                   "Time from admission to all of a gang's gates removed.", 0, NULL,
                                                   ungate_buckets, sizeof(ungate_buckets) / sizeof(ungate_buckets[0]));
    return c;
}

int controller_start(struct controller *c, struct kube_error *err)
{
    c->watcher = kube_watcher_create(c->client, err);
    if (c->watcher == NULL)
        return -1;
    for (int k = 0; k < WATCH_COUNT; k++) {
        c->watch_ctx[k].c = c;
        c->watch_ctx[k].kind = (enum watch_kind)k;
        struct kube_watch_spec spec = {
            .name = watch_specs[k].name,
            .path = watch_specs[k].path,
            .fn = on_watch,
            .arg = &c->watch_ctx[k],
        };
        if (kube_watch_start(c->watcher, &spec, err) != 0)
            return -1;
    }
    return 0;
}

int controller_synced(struct controller *c)
{
    pthread_mutex_lock(&c->mu);
    int s = c->synced == (1u << WATCH_COUNT) - 1;
    pthread_mutex_unlock(&c->mu);
    return s;
}

void controller_stop(struct controller *c)
{
    c->stopping = 1;
    wake(c);
}

void controller_destroy(struct controller *c)
{
    if (c == NULL)
        return;
    kube_watcher_destroy(c->watcher);
    cache_destroy(c->cache);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    pthread_mutex_destroy(&c->mu);
    free(c->instance);
    free(c);
}

/* ------------------------------------------------------------------ actions */

static char *pod_path(const char *ns, const char *name)
{
    return util_strdupf("/api/v1/namespaces/%s/pods/%s", ns, name);
}

/* The gates of a pod (borrowed JSON) other than ours, as [{"name":...}] (new); *ours set if ours is there. */
static json_t *gates_without_ours(const json_t *pod, int *ours)
{
    json_t *keep = json_array();
    *ours = 0;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "schedulingGates"), i, g)
    {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (name != NULL && strcmp(name, CACHE_GATE_NAME) == 0)
            *ours = 1;
        else
            json_array_append(keep, g);
    }
    return keep;
}

/* A pod to ungate; ok is set to 1 once it is free of our gate (or gone). */
struct ungate_job {
    const char *ns;
    const struct admit_pod *pod;
    int ok;
};

/*
 * Removes our gate from the n pods of jobs, concurrently (the gangs of a whole
 * pass in one batch: one round trip for all, not one per gang). Returns the
 * number that failed.
 */
static size_t ungate_jobs(struct controller *c, struct ungate_job *jobs, size_t n)
{
    struct kube_batch_item *items = util_calloc(n, sizeof(*items));
    json_t **patches = util_calloc(n, sizeof(*patches));
    char **paths = util_calloc(n, sizeof(*paths));
    size_t *idx = util_calloc(n, sizeof(*idx));
    for (size_t i = 0; i < n; i++) {
        jobs[i].ok = 0;
        paths[i] = pod_path(jobs[i].ns, jobs[i].pod->name);
        patches[i] = admit_ungate_patch(jobs[i].pod);
    }
    size_t pending = n, failed = 0;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;

    for (int round = 0; pending > 0 && round < 6; round++) {
        for (size_t k = 0; k < pending; k++) {
            size_t i = idx[k];
            items[k] = (struct kube_batch_item){
                .method = "PATCH",
                .path = paths[i],
                .content_type = kube_patch_content_type(KUBE_PATCH_MERGE),
                .body = patches[i],
            };
        }
        kube_batch(c->client, items, pending, 64);
        size_t retry = 0;
        for (size_t k = 0; k < pending; k++) {
            size_t i = idx[k];
            long st = items[k].resp.status;
            if (items[k].rc == 0 || st == 404) {
                jobs[i].ok = 1;
            } else if (st == 409 && round < 5) {
                /* The pod changed since we read it: read it again, recompute. */
                struct kube_response r;
                kube_response_init(&r);
                if (kube_get(c->client, paths[i], &r) == 0) {
                    int ours;
                    json_t *keep = gates_without_ours(r.body, &ours);
                    if (!ours) {
                        jobs[i].ok = 1;
                        json_decref(keep);
                    } else {
                        struct admit_pod fresh = {
                            .name = jobs[i].pod->name,
                            .uid = jobs[i].pod->uid,
                            .resource_version = (char *)obj_str(r.body, "resourceVersion"),
                            .keep_gates = keep,
                        };
                        json_decref(patches[i]);
                        patches[i] = admit_ungate_patch(&fresh);
                        json_decref(keep);
                        idx[retry++] = i;
                    }
                } else if (r.status == 404) {
                    jobs[i].ok = 1;
                } else {
                    log_warnf("ungate %s/%s: %s", jobs[i].ns, jobs[i].pod->name, r.message);
                }
                kube_response_finish(&r);
            } else {
                log_warnf("ungate %s/%s: %s", jobs[i].ns, jobs[i].pod->name, items[k].resp.message);
            }
            kube_response_finish(&items[k].resp);
        }
        pending = retry;
    }
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].ok)
            failed++;
        json_decref(patches[i]);
        free(paths[i]);
    }
    free(items);
    free(patches);
    free(paths);
    free(idx);
    return failed;
}

/* One Event to post. */
struct pending_event {
    char *ns;
    json_t *event; /* owned */
};

struct event_list {
    struct pending_event *items;
    size_t len, cap;
};

static void events_add(struct event_list *l, const struct events_object *obj, const char *type, const char *reason,
                       const char *message, const char *now, const char *instance)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = util_realloc(l->items, l->cap * sizeof(*l->items));
    }
    l->items[l->len].ns = util_strdup(obj->namespace_);
    l->items[l->len].event = events_build(obj, type, reason, message, now, instance);
    l->len++;
}

static void events_post(struct controller *c, struct event_list *l)
{
    if (l->len == 0)
        return;
    struct kube_batch_item *items = util_calloc(l->len, sizeof(*items));
    char **paths = util_calloc(l->len, sizeof(*paths));
    for (size_t i = 0; i < l->len; i++) {
        paths[i] = util_strdupf("/api/v1/namespaces/%s/events", l->items[i].ns);
        items[i] = (struct kube_batch_item){.method = "POST", .path = paths[i], .body = l->items[i].event};
    }
    size_t failed = kube_batch(c->client, items, l->len, 32);
    if (failed > 0)
        log_warnf("%zu of %zu events not recorded (first: %s)", failed, l->len, items[0].resp.message);
    for (size_t i = 0; i < l->len; i++) {
        kube_response_finish(&items[i].resp);
        free(paths[i]);
        json_decref(l->items[i].event);
        free(l->items[i].ns);
    }
    free(items);
    free(paths);
    l->len = 0;
}

static void events_list_finish(struct event_list *l)
{
    for (size_t i = 0; i < l->len; i++) {
        json_decref(l->items[i].event);
        free(l->items[i].ns);
    }
    free(l->items);
}

/*
 * Warning events for a waiting gang (under the lock): on the RayCluster when
 * its reason changed (changed), and on every gated pod not yet told the
 * current reason (all of them after a change; a pod that joins later, once).
 * "Waiting for pods" is not told to the pods: it is how every gang starts
 * while KubeRay creates them, usually for well under a second, and one Event
 * per pod for it was a third of the apiserver writes a gang cost (see
 * hack/bench.sh); the RayCluster's Event says it.
 */
static void wait_events(struct controller *c, struct event_list *l, const struct admit_decision *d, int changed,
                        const char *now)
{
    if (changed) {
        struct events_object rc = {"ray.io/v1", "RayCluster", d->namespace_, d->cluster, d->cluster_uid};
        events_add(l, &rc, "Warning", "GangWaiting", d->message, now, c->instance);
        log_infof("gang %s/%s waits: %s", d->namespace_, d->gang, d->message);
    }
    if (d->reason == ADMIT_REASON_PODS)
        return;
    struct cache_gang *g = cache_gang_get(c->cache, d->namespace_, d->cluster);
    for (struct cache_pod *p = g != NULL ? g->pods : NULL; p != NULL; p = p->gang_next) {
        if (!cache_pod_live(p) || !cache_pod_gated(p) || (p->flags & CACHE_POD_TOLD))
            continue;
        cache_pod_mark_told(p);
        struct events_object po = {"v1", "Pod", p->namespace_, p->name, p->uid};
        events_add(l, &po, "Warning", "GangWaiting", d->message, now, c->instance);
    }
}

/*
 * Records raygate.io/admitted-at on the RayClusters of the n ADMIT decisions
 * ds, concurrently. out[i]: 0 recorded, 1 the RayCluster is gone (or is
 * another one of that name), -1 failed (logged).
 */
static void record_admissions(struct controller *c, struct admit_decision *const *ds, size_t n, const char *at, int *out)
{
    struct kube_batch_item *items = util_calloc(n, sizeof(*items));
    json_t **patches = util_calloc(n, sizeof(*patches));
    char **paths = util_calloc(n, sizeof(*paths));
    for (size_t i = 0; i < n; i++) {
        paths[i] = util_strdupf("/apis/ray.io/v1/namespaces/%s/rayclusters/%s", ds[i]->namespace_, ds[i]->cluster);
        patches[i] = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", CACHE_ANNOTATION_ADMITTED, at);
        if (ds[i]->cluster_uid != NULL) /* never stamp a new RayCluster of the same name */
            json_object_set_new(json_object_get(patches[i], "metadata"), "uid", json_string(ds[i]->cluster_uid));
        items[i] = (struct kube_batch_item){
            .method = "PATCH",
            .path = paths[i],
            .content_type = kube_patch_content_type(KUBE_PATCH_MERGE),
            .body = patches[i],
        };
    }
    kube_batch(c->client, items, n, 64);
    for (size_t i = 0; i < n; i++) {
        long st = items[i].resp.status;
        out[i] = items[i].rc == 0 ? 0 : (st == 404 || st == 409) ? 1 : -1;
        if (out[i] < 0)
            log_warnf("record admission of %s/%s: %s", ds[i]->namespace_, ds[i]->cluster, items[i].resp.message);
        kube_response_finish(&items[i].resp);
        json_decref(patches[i]);
        free(paths[i]);
    }
    free(items);
    free(patches);
    free(paths);
}

static void count_decision(struct controller *c, const struct admit_decision *d)
{
    const char *labels[] = {admit_action_name(d->action), admit_reason_name(d->reason)};
    metrics_counter_add(c->m_decisions, labels, 1);
}

/*
 * Carries out one pass's decisions. Called without the lock; takes it for the
 * cache lookups and marks. Returns -1 if something failed and should be
 * retried soon.
 */
static int carry_out(struct controller *c, struct admit_result *res, const int *report)
{
    struct event_list events = {0};
    char now[32];
    events_timestamp(time(NULL), now, sizeof(now));
    int retry = 0;
    struct admit_decision **acts = util_calloc(res->len + 1, sizeof(*acts)); /* ADMIT, FINISH, TAIL_ADMIT */
    size_t nacts = 0;

    for (size_t i = 0; i < res->len; i++) {
        struct admit_decision *d = &res->items[i];
        count_decision(c, d);
        if (d->action == ADMIT_ACTION_WAIT) {
            pthread_mutex_lock(&c->mu);
            wait_events(c, &events, d, report[i], now);
            pthread_mutex_unlock(&c->mu);
            continue;
        }
        if (d->action == ADMIT_ACTION_TAIL_WAIT) {
            if (report[i]) {
                log_infof("gang %s/%s: autoscaled pod waits: %s", d->namespace_, d->gang, d->message);
                for (size_t k = 0; k < d->npods; k++) {
                    struct events_object po = {"v1", "Pod", d->namespace_, d->pods[k].name, d->pods[k].uid};
                    events_add(&events, &po, "Warning", "GangWaiting", d->message, now, c->instance);
                }
            }
            continue;
        }

        acts[nacts++] = d;
    }

    /*
     * The pass's admissions, ungates and tail admissions together: every
     * RayCluster's admission recorded in one concurrent batch, then every gate
     * in one more (a pass admitting 50 gangs costs two round trips, not 100).
     * A gang's record still precedes its gates (crash-consistent, see
     * controller.h).
     */
    long long t0 = now_ms(CLOCK_MONOTONIC);
    struct admit_decision **admits = util_calloc(nacts + 1, sizeof(*admits));
    int *recorded = util_calloc(nacts + 1, sizeof(*recorded)); /* by index in acts: 0 go on, else skip */
    size_t nadmits = 0, njobs = 0;
    for (size_t i = 0; i < nacts; i++) {
        if (acts[i]->action == ADMIT_ACTION_ADMIT)
            admits[nadmits++] = acts[i];
    }
    int *rec = util_calloc(nadmits + 1, sizeof(*rec));
    if (nadmits > 0)
        record_admissions(c, admits, nadmits, now, rec);
    for (size_t i = 0, a = 0; i < nacts; i++) {
        struct admit_decision *d = acts[i];
        if (d->action != ADMIT_ACTION_ADMIT)
            continue;
        int r = rec[a++];
        recorded[i] = r;
        if (r != 0) {
            retry |= r < 0;
            continue;
        }
        pthread_mutex_lock(&c->mu);
        struct cache_gang *g = cache_gang_get(c->cache, d->namespace_, d->cluster);
        if (g != NULL)
            cache_gang_mark_admitted(c->cache, g, now);
        pthread_mutex_unlock(&c->mu);
        const char *ql[] = {d->queue != NULL ? d->queue : ""};
        metrics_counter_add(c->m_admitted, ql, 1);
        if (c->opts.fault_exit_after_ungates >= 0) {
            /* Test-only: die mid-admission, after the record and some gates. */
            size_t n = d->npods;
            size_t k = (size_t)c->opts.fault_exit_after_ungates < n ? (size_t)c->opts.fault_exit_after_ungates : n;
            for (size_t j = 0; j < k; j++) {
                struct ungate_job one = {d->namespace_, &d->pods[j], 0};
                ungate_jobs(c, &one, 1);
            }
            log_warnf("test fault: exiting after recording the admission of %s/%s and ungating %zu of %zu pods",
                      d->namespace_, d->cluster, k, n);
            _exit(3);
        }
    }
    for (size_t i = 0; i < nacts; i++)
        njobs += recorded[i] == 0 ? acts[i]->npods : 0;
    struct ungate_job *jobs = util_calloc(njobs + 1, sizeof(*jobs));
    size_t j = 0;
    for (size_t i = 0; i < nacts; i++) {
        for (size_t k = 0; recorded[i] == 0 && k < acts[i]->npods; k++)
            jobs[j++] = (struct ungate_job){acts[i]->namespace_, &acts[i]->pods[k], 0};
    }
    if (njobs > 0)
        retry |= ungate_jobs(c, jobs, njobs) > 0;
    double secs = (double)(now_ms(CLOCK_MONOTONIC) - t0) / 1000.0;

    j = 0;
    for (size_t i = 0; i < nacts; i++) {
        struct admit_decision *d = acts[i];
        if (recorded[i] != 0)
            continue;
        struct ungate_job *mine = &jobs[j];
        size_t n = d->npods, failed = 0;
        j += n;
        for (size_t k = 0; k < n; k++)
            failed += !mine[k].ok;
        if (d->action == ADMIT_ACTION_ADMIT && failed == 0)
            metrics_histogram_observe(c->m_ungate_seconds, NULL, secs);

        pthread_mutex_lock(&c->mu);
        for (size_t k = 0; k < n; k++) {
            struct cache_pod *p = mine[k].ok ? cache_pod_by_uid(c->cache, d->pods[k].uid) : NULL;
            if (p != NULL)
                cache_pod_mark_ungated(c->cache, p);
        }
        if (report[d - res->items] && d->action != ADMIT_ACTION_FINISH) {
            struct events_object rc = {"ray.io/v1", "RayCluster", d->namespace_, d->cluster, d->cluster_uid};
            /* A gang's admission is told once, on its RayCluster (each pod then gets the scheduler's Scheduled Event);
               a pod admitted beyond the gang (TAIL_ADMIT) is told on itself, having no other record. */
            if (d->action == ADMIT_ACTION_ADMIT)
                events_add(&events, &rc, "Normal", "GangAdmitted", d->message, now, c->instance);
            for (size_t k = 0; k < n && d->action == ADMIT_ACTION_TAIL_ADMIT; k++) {
                struct events_object po = {"v1", "Pod", d->namespace_, d->pods[k].name, d->pods[k].uid};
                if (mine[k].ok)
                    events_add(&events, &po, "Normal", "GangAdmitted", d->message, now, c->instance);
            }
        }
        pthread_mutex_unlock(&c->mu);
        log_infof("%s %s/%s (queue %s): gates removed from %zu of %zu pods in %.3f s", admit_action_name(d->action),
                  d->namespace_, d->gang, d->queue != NULL ? d->queue : "", n - failed, n, secs);
    }
    free(jobs);
    free(rec);
    free(recorded);
    free(admits);
    free(acts);
    events_post(c, &events);
    events_list_finish(&events);
    return retry ? -1 : 0;
}

void controller_run(struct controller *c)
{
    long long next_resync = now_ms(CLOCK_MONOTONIC) + c->opts.resync_ms;
    long long retry_at = -1;
    int was_synced = 0;

    while (!c->stopping) {
        long long now = now_ms(CLOCK_MONOTONIC);
        long long until = next_resync;
        if (retry_at >= 0 && retry_at < until)
            until = retry_at;
        int timeout = until > now ? (int)(until - now) : 0;
        struct pollfd pfd = {.fd = c->wake_fd, .events = POLLIN};
        int pr = poll(&pfd, 1, timeout);
        if (pr < 0 && errno != EINTR) {
            log_errorf("poll: %s", strerror(errno));
            break;
        }
        uint64_t v;
        while (read(c->wake_fd, &v, sizeof(v)) > 0)
            ;
        if (c->stopping)
            break;
        /* Let a burst of watch events land before deciding. */
        if (pr > 0 && c->opts.debounce_ms > 0)
            usleep((useconds_t)c->opts.debounce_ms * 1000);

        now = now_ms(CLOCK_MONOTONIC);
        unsigned flags = 0;
        pthread_mutex_lock(&c->mu);
        int synced = c->synced == (1u << WATCH_COUNT) - 1;
        if (!synced) {
            pthread_mutex_unlock(&c->mu);
            continue;
        }
        if (!was_synced) {
            log_infof("caches synced: deciding");
            was_synced = 1;
            flags |= ADMIT_PASS_FULL;
        }
        if (now >= next_resync || (retry_at >= 0 && now >= retry_at)) {
            cache_mark_all_dirty(c->cache);
            flags |= ADMIT_PASS_FULL;
            next_resync = now + c->opts.resync_ms;
            retry_at = -1;
        }
        if (!c->changed && !(flags & ADMIT_PASS_FULL)) {
            pthread_mutex_unlock(&c->mu);
            continue;
        }
        c->changed = 0;
        struct admit_result res;
        admit_result_init(&res);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        admit_pass(c->cache, flags, &res);
        clock_gettime(CLOCK_MONOTONIC, &b);
        metrics_histogram_observe(c->m_pass_seconds, NULL,
                                  (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
        int *report = util_calloc(res.len, sizeof(*report));
        for (size_t i = 0; i < res.len; i++)
            report[i] = admit_reason_changed(c->cache, &res.items[i]);
        pthread_mutex_unlock(&c->mu);

        if (res.len > 0 && carry_out(c, &res, report) != 0)
            retry_at = now_ms(CLOCK_MONOTONIC) + 1000;
        free(report);
        admit_result_finish(&res);
    }
}
