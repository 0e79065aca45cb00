#include "controller.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "apply.h"
#include "cache.h"
#include "cacheguard.h"
#include "clock.h"
#include "eventplan.h"
#include "eventpost.h"
#include "events.h"
#include "evictor.h"
#include "evictscan.h"
#include "fault.h"
#include "declare.h"
#include "dracache.h"
#include "prioclass.h"
#include "heldnudge.h"
#include "hyperwatch.h"
#include "leaseseen.h"
#include "native.h"
#include "log.h"
#include "preemptscan.h"
#include "rerun.h"
#include "status.h"
#include "util.h"
#include "watches.h"

/*
 * Threads and locks. The controller's thread runs passes; the watcher's
 * thread (watches.h) feeds the cache; the status writer's thread (status.h)
 * writes PodGroups and Queue status; the leader's thread (leader.h) only
 * wakes us. Lock order: guard, then the status lock, then the status
 * writer's lock (cacheguard.h). A pass is decided under guard (admit_pass,
 * apply_plan) and carried out without it (apply_carry_out, which takes guard
 * once more to record what the API accepted); the status is compared under
 * guard and written by its thread.
 */
struct controller {
    struct kube_client *client;
    struct metrics_registry *reg;
    struct controller_options opts;
    char *instance;
    int wake_fd;
    atomic_bool stopping; /* set by controller_stop, from a signal handler on any thread */

    struct cacheguard *guard; /* the controller's lock: the cache, admit, changed, the watches' synced bits */
    struct cache *cache;
    struct admit *admit; /* the decision state of cache */
    int changed;         /* something arrived since the last pass */

    struct watches *watches;
    struct hyperwatch *hyper; /* Volcano's HyperNodes, which admit borrows; under guard */
    struct native *native;    /* Kubernetes' own PodGroups (native.h); under guard */
    struct draset *dra;       /* the DRA objects devices are counted by (dracache.h), which the cache borrows; under guard */
    char *dra_inexact;        /* the last draset_inexact() logged, or NULL; under guard */
    struct prioclasses *prio; /* PriorityClasses (prioclass.h), which the cache borrows; under guard */
    struct status *status;
    struct apply *apply;
    struct leaseseen_config leaseseen; /* the dispatch leases' sightings recorded (leaseseen.h) */
    struct heldnudge *nudge;           /* held RayClusters KubeRay is to be told are resumed (heldnudge.h) */

    struct metrics_family *m_pass_seconds;
    struct metrics_family *m_leader;
    struct metrics_family *m_preemptions;
    long long woke_ms; /* monotonic ms when the current pass's first event arrived */

    /* Evictions (evictor.h); the controller thread's. */
    struct evictor *evictor;
    int64_t started_wall_ms; /* no eviction clock starts earlier (evictscan.h's floor) */
    json_t *evict_warned;    /* the queue annotation warnings already logged (message -> true) */
};

static void wake(struct controller *c)
{
    uint64_t one = 1;
    ssize_t n = write(c->wake_fd, &one, sizeof(one));
    (void)n;
}

static void wake_fn(void *arg)
{
    wake(arg);
}

/* Whether this process may write to the cluster now (asked before every write). */
static int may_write(struct controller *c)
{
    return c->opts.leader == NULL || leader_is_leading(c->opts.leader);
}

/* may_write for the other modules (status writer, evictor, apply): any thread. */
static int may_write_fn(void *arg)
{
    return may_write(arg);
}

/* The status writer found a PodGroup gone (its thread, no lock held): a pass looks again. */
static void on_status_changed(void *arg)
{
    struct controller *c = arg;
    cacheguard_lock(c->guard);
    c->changed = 1;
    cacheguard_unlock(c->guard);
    wake(c);
}

static void create_metrics(struct controller *c)
{
    static const double pass_buckets[] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1};
    static const char *const preempt_labels[] = {"queue", "kind"};
    c->m_pass_seconds =
        metrics_histogram_create(c->reg, "raygate_admission_pass_duration_seconds", "Duration of one admission decision pass.", 0,
                                 NULL, pass_buckets, sizeof(pass_buckets) / sizeof(pass_buckets[0]));
    c->m_leader = metrics_gauge_create(c->reg, "raygate_leader",
                                       "1 while this controller acts on the cluster (it holds the leader election lease, "
                                       "or runs without leader election), else 0.",
                                       0, NULL);
    metrics_gauge_set(c->m_leader, NULL, c->opts.leader == NULL ? 1 : 0);
    c->m_preemptions = metrics_counter_create(c->reg, "raygate_preemptions_total",
                                              "Gangs evicted whole to admit a waiting gang, by the victim's queue and kind "
                                              "(preempt: within its queue; reclaim: across queues).",
                                              2, preempt_labels);
}

/* The rooms of c, each given what it borrows. Returns 0, or -1 when one cannot start. */
static int create_rooms(struct controller *c)
{
    c->cache = cache_create();
    if (c->cache == NULL)
        return -1;
    c->dra = draset_create();
    dracache_use(c->cache, c->dra);
    c->prio = prioclass_set_create();
    prioclass_use(c->cache, c->prio);
    c->admit = admit_create(c->cache);
    admit_set_evict(c->admit, &c->opts.evict);
    admit_set_early(c->admit, c->opts.early);
    c->hyper = hyperwatch_create();
    admit_set_hypernodes(c->admit, hyperwatch_set(c->hyper));
    c->native = native_create((enum native_mode)c->opts.native_gang);
    c->evictor = evictor_create(c->client, c->reg, c->instance);
    struct apply_config ac = {
        .client = c->client,
        .reg = c->reg,
        .instance = c->instance,
        .may_write = may_write_fn,
        .arg = c,
        .stopping = &c->stopping,
        .settle_ms = EVENTPLAN_SETTLE_MS,
        .native = c->native,
    };
    c->apply = apply_create(&ac);
    c->leaseseen =
        (struct leaseseen_config){.client = c->client, .guard = c->guard, .cache = c->cache, .may_write = may_write_fn, .arg = c};
    c->status = status_create(c->client, c->reg, may_write_fn, on_status_changed, c);
    if (c->status == NULL)
        return -1;
    status_set_native(c->status, c->native);
    c->nudge = heldnudge_create();
    struct watches_config wc = {
        .client = c->client,
        .guard = c->guard,
        .cache = c->cache,
        .status = c->status,
        .changed = &c->changed,
        .wake = wake_fn,
        .arg = c,
        .hyper = c->hyper,
        .native = c->native,
        .nudge = c->nudge,
    };
    c->watches = watches_create(&wc);
    return 0;
}

struct controller *controller_create(struct kube_client *client, struct metrics_registry *reg,
                                     const struct controller_options *opts)
{
    struct controller *c = util_calloc(1, sizeof(*c));
    /* First what controller_destroy undoes unconditionally: it may run from here on. */
    c->guard = cacheguard_create();
    c->wake_fd = -1;
    c->client = client;
    c->reg = reg;
    c->opts = *opts;
    if (c->opts.resync_ms <= 0)
        c->opts.resync_ms = 30000;
    if (c->opts.debounce_ms < 0)
        c->opts.debounce_ms = 0;
    c->instance = util_strdup(opts->instance != NULL ? opts->instance : "raygate-gate");
    c->opts.instance = c->instance;
    c->started_wall_ms = clock_wall_ms();
    c->evict_warned = json_object();
    c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (c->wake_fd < 0) {
        log_errorf("eventfd: %s", strerror(errno));
        controller_destroy(c);
        return NULL;
    }
    fault_arm(FAULT_AFTER_RECORD, opts->fault_exit_after_ungates);
    fault_arm(FAULT_AFTER_EVICT_RECORD, opts->fault_exit_after_evict_deletes);
    fault_arm(FAULT_AFTER_NATIVE, opts->fault_exit_after_native ? 0 : -1);
    create_metrics(c);
    if (create_rooms(c) != 0) {
        log_errorf("controller: cannot start its threads");
        controller_destroy(c);
        return NULL;
    }
    if (c->opts.leader != NULL)
        leader_set_notify(c->opts.leader, wake_fn, c);
    return c;
}

int controller_start(struct controller *c, struct error *err)
{
    return watches_start(c->watches, err);
}

int controller_synced(struct controller *c)
{
    cacheguard_lock(c->guard);
    int s = watches_synced(c->watches);
    cacheguard_unlock(c->guard);
    return s;
}

void controller_stop(struct controller *c)
{
    atomic_store(&c->stopping, true);
    wake(c);
}

void controller_destroy(struct controller *c)
{
    if (c == NULL)
        return;
    watches_destroy(c->watches); /* first the threads that call back into c: the watcher's, the status writer's */
    status_destroy(c->status);
    apply_destroy(c->apply);
    evictor_destroy(c->evictor);
    json_decref(c->evict_warned);
    admit_destroy(c->admit);
    hyperwatch_destroy(c->hyper);
    native_destroy(c->native);
    heldnudge_destroy(c->nudge);
    cache_destroy(c->cache);
    draset_destroy(c->dra);
    free(c->dra_inexact);
    prioclass_set_destroy(c->prio);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    cacheguard_destroy(c->guard);
    free(c->instance);
    free(c);
}

/* ------------------------------------------------------------ evictions and preemption */

/* The controller thread's loop state. */
struct run_state {
    long long next_resync; /* CLOCK_MONOTONIC ms of the next periodic full pass */
    long long retry_at;    /* an earlier full pass, after a failure; -1: none */
    int was_synced;        /* the decision watches had all synced */
    int was_leading;
    int lead_pass;         /* just became leader: the next pass is full */
    long long evict_at;    /* CLOCK_MONOTONIC ms of the next deadline or requeue-at (evictscan); -1: none */
    long long scan_after;  /* an eviction scan due after passes (at most one a second); -1: none */
    long long evict_last;  /* when the last scan ran */
    long long pass_ms;     /* how long the last pass took, status and scans included */
    long long pass_cpu_us; /* the controller thread's CPU time over the last pass, in microseconds */
    long long pass_at;     /* when the last pass began (CLOCK_MONOTONIC ms; 0: none yet) */
};

/* A burst of events waits at most this long for the pass before it to be repaid (wait_for_work). */
#define PASS_PACE_MAX_MS 100
/* ... and twice as long as that pass took: a pass's fixed part (the reservations, the queues' status) is then paid at
   most a third of the time, whatever the flood, where waiting as long as it took paid it half (docs/design.md, "Pacing"). */
#define PASS_PACE_FACTOR 2
/* ... and passes begin at least this far apart while events keep coming: a pass's fixed part (the reservations, the
   queues' status) is paid at most 20 times a second, however many cheap passes the events would start one after another
   (each ends before the next event, and pays it again). An event after a quiet spell waits only the above. */
#define PASS_INTERVAL_MIN_MS 50
/* ... or, farther, this many times the CPU the last pass took (at most PASS_INTERVAL_MAX_MS): a pass's fixed part grows
   with the gangs a flood has admitted, so at a fixed 20 passes a second a larger flood would pay more of it per pod.
   Its passes then cost at most a 40th of the controller's time while events keep coming. */
#define PASS_SPACE_FACTOR 40
#define PASS_INTERVAL_MAX_MS 250

#define EVICT_SCAN_MIN_MS 1000 /* after passes, scans at most this often */

uint32_t controller_jitter_seed(int64_t wall_ms, long long mono_ms)
{
    /* Knuth's multiplicative hash spreads the monotonic ms over the seed's bits. Unsigned, so that it wraps: the signed
       product overflows (undefined) once mono_ms passes 2^63 / 2654435761, after about 40 days of uptime. */
    return (uint32_t)wall_ms ^ (uint32_t)((uint64_t)mono_ms * 2654435761u);
}

/* evictor's hook: an eviction recorded; the cache knows it at once. */
static void on_evicted(void *arg, const struct evictscan_gang *e)
{
    struct controller *c = arg;
    cacheguard_lock(c->guard);
    struct cache_gang *g = cache_gang_get(c->cache, e->namespace_, e->cluster);
    if (g != NULL && g->uid != NULL && e->cluster_uid != NULL && strcmp(g->uid, e->cluster_uid) == 0) {
        cache_gang_mark_evicted(c->cache, g, &e->record);
        if (e->preempted_by != NULL) /* in flight from now on (preemptscan, preempthold), before the watch shows it */
            cache_gang_mark_preempted(c->cache, g, e->preempted_by);
    }
    c->changed = 1;
    cacheguard_unlock(c->guard);
}

/* The scan's complaints about queue annotations, each logged once. */
static void log_evict_warnings(struct controller *c, const struct evictscan_result *r)
{
    for (size_t i = 0; i < r->nwarnings; i++) {
        if (json_object_get(c->evict_warned, r->warnings[i]) != NULL)
            continue;
        json_object_set_new(c->evict_warned, r->warnings[i], json_true());
        log_warnf("%s", r->warnings[i]);
    }
}

/*
 * Scans for evictions and carries them out when due: a deadline or a
 * requeue-at came (then every queue is looked at again: a backoff may have
 * ended), or a pass ran (passed) and the last scan is a second old.
 */
static void scan_evictions(struct controller *c, struct run_state *rs, int passed)
{
    long long mono = clock_mono_ms();
    if (passed && rs->scan_after < 0)
        rs->scan_after = rs->evict_last + EVICT_SCAN_MIN_MS;
    int deadline = rs->evict_at >= 0 && mono >= rs->evict_at;
    if ((!deadline && (rs->scan_after < 0 || mono < rs->scan_after)) || !may_write(c))
        return;
    int64_t wall = clock_wall_ms();
    struct evictscan_result r;
    evictscan_result_init(&r);
    cacheguard_lock(c->guard);
    evictscan_run(c->cache, &c->opts.evict, wall, c->started_wall_ms, controller_jitter_seed(wall, mono), &r);
    if (deadline) {
        cache_mark_all_dirty(c->cache); /* a backoff that ended lets its gang be admitted */
        c->changed = 1;
    }
    cacheguard_unlock(c->guard);
    rs->evict_last = mono;
    rs->scan_after = -1;
    rs->evict_at = r.next_ms > 0 ? mono + (r.next_ms - wall) : -1;
    log_evict_warnings(c, &r);
    long stop = -1;
    if (!fault_armed(FAULT_AFTER_EVICT_RECORD, &stop))
        stop = -1;
    struct evictor_hooks h = {.may_write = may_write_fn, .evicted = on_evicted, .arg = c, .stop_after_deletes = stop};
    char now[32];
    events_timestamp(wall / 1000, now, sizeof(now));
    long failed = r.len > 0 ? evictor_carry_out(c->evictor, &r, now, &h) : 0;
    if (failed < 0)
        fault_exit(FAULT_AFTER_EVICT_RECORD, "exiting after recording an eviction and deleting %ld of its pods", stop);
    if (failed > 0)
        rs->scan_after = mono + EVICT_SCAN_MIN_MS; /* try again soon */
    if (deadline || r.len > 0)
        wake(c); /* a pass looks at what changed */
    evictscan_result_finish(&r);
}

/* r's victims as evictions (reason PREEMPTED or RECLAIMED, no backoff), read from the cache at wall. */
static void preemption_evictions(struct controller *c, const struct preemptscan_result *r, int64_t wall,
                                 struct evictscan_result *out)
{
    out->items = util_calloc(r->nvictims + 1, sizeof(*out->items));
    char *by = util_strdupf("%s/%s", r->namespace_, r->cluster);
    for (size_t i = 0; i < r->nvictims; i++) {
        const struct preemptscan_victim *v = &r->victims[i];
        const struct cache_gang *g = cache_gang_get(c->cache, v->namespace_, v->cluster);
        if (g == NULL)
            continue;
        struct evictscan_gang *e = &out->items[out->len++];
        e->reason = r->kind == PREEMPT_KIND_RECLAIM ? EVICT_REASON_RECLAIMED : EVICT_REASON_PREEMPTED;
        e->namespace_ = util_strdup(v->namespace_);
        e->cluster = util_strdup(v->cluster);
        e->cluster_uid = util_strdup(v->cluster_uid);
        e->resource_version = util_strdup(v->resource_version);
        e->gang = util_strdup(v->gang);
        e->queue = util_strdup(v->queue);
        evictscan_record_next(g, &c->opts.evict, e->reason, wall, 0, &e->record);
        e->message = util_strdup(r->victim_message);
        e->preempted_by = util_strdup(by);
        e->held = g->held;
        e->pods = util_calloc(v->npods + 1, sizeof(*e->pods));
        for (size_t k = 0; k < v->npods; k++) {
            if (declare_uid_is(v->pods[k].uid))
                continue; /* not in the API (declare.h) */
            e->pods[e->npods].name = util_strdup(v->pods[k].name);
            e->pods[e->npods].uid = util_strdup(v->pods[k].uid);
            e->pods[e->npods++].member = 1;
        }
    }
    free(by);
}

/* The Preempting Event on the preemptor's RayCluster (uid: borrowed, may be NULL). */
static void tell_preempting(struct controller *c, const struct preemptscan_result *r, const char *uid, const char *now)
{
    struct eventpost_list l;
    eventpost_list_init(&l);
    struct events_object rc = {"ray.io/v1", "RayCluster", r->namespace_, r->cluster, uid};
    eventpost_add(&l, &rc, "Normal", "Preempting", r->preemptor_message, now, c->instance);
    eventpost_send(c->client, &l, may_write_fn, c, "Preempting Events");
    eventpost_list_finish(&l);
}

/*
 * After a pass (res: its decisions): the one preemption preemptscan finds
 * (none while one is in flight: a victim's record written, its pods not gone),
 * carried out by the evictor (record first, then the victims' pods). On unless
 * --preemption=false.
 */
static void scan_preemption(struct controller *c, const struct admit_result *res)
{
    if (!c->opts.preemption || res->len == 0 || !may_write(c))
        return;
    int64_t wall = clock_wall_ms();
    struct preemptscan_result r;
    struct evictscan_result er;
    struct error err = {{0}};
    preemptscan_result_init(&r);
    evictscan_result_init(&er);
    char *uid = NULL;
    cacheguard_lock(c->guard);
    int rc = preemptscan_run(c->cache, res, hyperwatch_set(c->hyper), wall, &r, &err);
    if (rc == 0 && r.kind != PREEMPT_KIND_NONE) {
        preemption_evictions(c, &r, wall, &er);
        const struct cache_gang *p = cache_gang_get(c->cache, r.namespace_, r.cluster);
        uid = util_strdup(p != NULL ? p->uid : NULL);
    }
    cacheguard_unlock(c->guard);
    if (rc < 0)
        log_warnf("preempt: %s", err.message);
    if (er.len > 0) {
        char now[32];
        events_timestamp(wall / 1000, now, sizeof(now));
        log_infof("preempt: %s/%s (priority %d, queue %s): %s", r.namespace_, r.gang, (int)r.priority, r.queue,
                  r.preemptor_message);
        tell_preempting(c, &r, uid, now);
        struct evictor_hooks h = {.may_write = may_write_fn, .evicted = on_evicted, .arg = c, .stop_after_deletes = -1};
        evictor_carry_out(c->evictor, &er, now, &h);
        for (size_t i = 0; i < er.len; i++) {
            const char *labels[] = {er.items[i].queue, preempt_kind_name(r.kind)};
            metrics_counter_add(c->m_preemptions, labels, 1);
        }
        wake(c); /* a pass looks at what changed */
    }
    free(uid);
    evictscan_result_finish(&er);
    preemptscan_result_finish(&r);
}

/* The calling thread's CPU time, in microseconds. */
static long long thread_cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Sleeps until an event wakes the controller or a timer is due; returns 0, or -1 to stop. */
static int wait_for_work(struct controller *c, const struct run_state *rs)
{
    long long now = clock_mono_ms();
    long long until = rs->next_resync;
    if (rs->retry_at >= 0 && rs->retry_at < until)
        until = rs->retry_at;
    if (rs->evict_at >= 0 && rs->evict_at < until)
        until = rs->evict_at;
    if (rs->scan_after >= 0 && rs->scan_after < until)
        until = rs->scan_after;
    int timeout = until > now ? (int)(until - now) : 0;
    if (!rs->was_leading)
        timeout = -1; /* nothing to do on a timer: the leader wakes us when we lead */
    struct pollfd pfd = {.fd = c->wake_fd, .events = POLLIN};
    int pr = poll(&pfd, 1, timeout);
    if (pr < 0 && errno != EINTR) {
        log_errorf("poll: %s", strerror(errno));
        return -1;
    }
    uint64_t v;
    while (read(c->wake_fd, &v, sizeof(v)) > 0)
        ;
    c->woke_ms = clock_mono_ms();
    if (atomic_load(&c->stopping))
        return -1;
    /*
     * Let a burst of watch events land before deciding: debounce_ms, or twice as long as the last pass took (at most
     * PASS_PACE_MAX_MS), and PASS_INTERVAL_MIN_MS (or PASS_SPACE_FACTOR times its CPU, at most PASS_INTERVAL_MAX_MS) after the
     * last pass began. A pass costs about the gangs of the queues it touches,
     * so under a flood back-to-back passes would cost passes x gangs; paced, each takes in the events that came while the last one
     * ran, and the passes of a flood stay about as many whatever its size (docs/design.md, "Pacing").
     */
    long long paced = rs->pass_ms * PASS_PACE_FACTOR;
    long long wait = paced > c->opts.debounce_ms ? (paced < PASS_PACE_MAX_MS ? paced : PASS_PACE_MAX_MS) : c->opts.debounce_ms;
    long long interval = rs->pass_cpu_us * PASS_SPACE_FACTOR / 1000;
    interval = interval < PASS_INTERVAL_MIN_MS   ? PASS_INTERVAL_MIN_MS
               : interval > PASS_INTERVAL_MAX_MS ? PASS_INTERVAL_MAX_MS
                                                 : interval;
    long long spaced = rs->pass_at > 0 ? rs->pass_at + interval - c->woke_ms : 0;
    wait = spaced > wait ? spaced : wait;
    if (pr > 0 && wait > 0)
        usleep((useconds_t)wait * 1000);
    return 0;
}

/* Whether this process acts now. Caches stay warm either way; only a leader decides and writes. */
static int check_leading(struct controller *c, struct run_state *rs)
{
    int leading = may_write(c);
    if (leading != rs->was_leading) {
        metrics_gauge_set(c->m_leader, NULL, leading);
        log_infof(leading ? "leading: full pass, then acting on events" : "not leading: writing nothing");
        rs->was_leading = leading;
        rs->lead_pass = leading;
    }
    return leading;
}

/*
 * Under the lock: whether a pass is due now (the decision watches synced, and
 * something changed or a full pass is due), with its flags.
 */
static int pass_due(struct controller *c, struct run_state *rs, long long now, unsigned *flags)
{
    *flags = 0;
    if (!watches_synced(c->watches))
        return 0;
    if (!rs->was_synced) {
        log_infof("caches synced: deciding");
        rs->was_synced = 1;
        *flags |= ADMIT_PASS_FULL;
    }
    if (now >= rs->next_resync || (rs->retry_at >= 0 && now >= rs->retry_at) || rs->lead_pass) {
        cache_mark_all_dirty(c->cache);
        *flags |= ADMIT_PASS_FULL;
        rs->next_resync = now + c->opts.resync_ms;
        rs->retry_at = -1;
        rs->lead_pass = 0;
    }
    return c->changed || (*flags & ADMIT_PASS_FULL);
}

/* Under the lock: the DRA set's news before a pass (dracache.h); says once when a selector is not evaluated whole. */
static void prepare_devices(struct controller *c, unsigned *flags)
{
    if (dracache_prepare(c->cache))
        *flags |= ADMIT_PASS_FULL; /* what claims count as changed: every queue again */
    const char *inexact = draset_inexact(c->dra);
    if (inexact != NULL && !util_streq(inexact, c->dra_inexact))
        log_warnf("%s", inexact);
    free(c->dra_inexact);
    c->dra_inexact = util_strdup(inexact);
}

/* Under the lock: one decision pass into res, timed, and its plan (apply.h) into p. */
static void run_pass(struct controller *c, unsigned flags, struct admit_result *res, struct apply_pass *p)
{
    c->changed = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    admit_set_now(c->admit, clock_wall_ms());
    prepare_devices(c, &flags);
    admit_pass(c->admit, flags, res);
    clock_gettime(CLOCK_MONOTONIC, &b);
    metrics_histogram_observe(c->m_pass_seconds, NULL, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    apply_plan(c->apply, p, c->cache, res, c->woke_ms);
}

/* After a pass: the Volcano status compared under the lock, its writes queued (status.h). */
static void sync_status(struct controller *c, const struct admit_result *res, int resync)
{
    cacheguard_lock(c->guard);
    status_sync(c->status, c->cache, c->admit, res, watches_status_crds(c->watches), resync);
    cacheguard_unlock(c->guard);
}

/* The InvalidHyperNode Events found since the last pass (hyperwatch.h), posted without the lock. */
static void tell_hypernodes(struct controller *c)
{
    struct eventpost_list l;
    eventpost_list_init(&l);
    char now[32];
    events_timestamp(clock_wall_ms() / 1000, now, sizeof(now));
    cacheguard_lock(c->guard);
    size_t n = hyperwatch_take_events(c->hyper, &l, now, c->instance);
    cacheguard_unlock(c->guard);
    if (n > 0)
        eventpost_send(c->client, &l, may_write_fn, c, "InvalidHyperNode Events");
    eventpost_list_finish(&l);
}

/*
 * On a full pass: the native PodGroups (native.h) whose minCount no longer is
 * their admitted gang's minMember (an autoscaler moved minReplicas), patched.
 * A gang that grows is patched before its new members' gates go (apply.h);
 * this catches the ones that shrink.
 */
static void follow_native(struct controller *c)
{
    enum { NATIVE_DRIFT_MAX = 256 };
    struct native_want wants[NATIVE_DRIFT_MAX];
    cacheguard_lock(c->guard);
    size_t n = native_drift(c->native, c->cache, wants, NATIVE_DRIFT_MAX);
    cacheguard_unlock(c->guard);
    if (n == 0)
        return;
    struct nativegang_spec specs[NATIVE_DRIFT_MAX];
    enum nativegang_op ops[NATIVE_DRIFT_MAX];
    int ok[NATIVE_DRIFT_MAX];
    for (size_t i = 0; i < n; i++) {
        specs[i] = wants[i].spec;
        ops[i] = wants[i].op;
    }
    native_ensure(c->client, specs, ops, n, ok, may_write_fn, c);
    for (size_t i = 0; i < n; i++)
        native_want_finish(&wants[i]);
}

/* One pass, if due: decided under the lock, carried out without it, then status, preemption, evictions. */
static void pass(struct controller *c, struct run_state *rs, long long now)
{
    unsigned flags;
    cacheguard_lock(c->guard);
    if (!pass_due(c, rs, now, &flags)) {
        cacheguard_unlock(c->guard);
        if (rs->was_synced)
            scan_evictions(c, rs, 0);
        return;
    }
    struct admit_result res;
    struct apply_pass plan;
    admit_result_init(&res);
    run_pass(c, flags, &res, &plan);
    cacheguard_unlock(c->guard);

    if (apply_carry_out(c->apply, &plan, c->guard, c->cache) != 0)
        rs->retry_at = clock_mono_ms() + 1000;
    /* The dispatch leases' sightings, so that a restarted gate does not count them afresh. */
    if (leaseseen_sync(&c->leaseseen) < 0)
        rs->retry_at = clock_mono_ms() + 1000;
    if (may_write(c))
        sync_status(c, &res, (flags & ADMIT_PASS_FULL) != 0);
    scan_preemption(c, &res);
    admit_result_finish(&res);
    tell_hypernodes(c);
    scan_evictions(c, rs, 1);
    if ((flags & ADMIT_PASS_FULL) && may_write(c))
        follow_native(c);
    if ((flags & ADMIT_PASS_FULL) && may_write(c)) {
        /* RayJobs suspended to rerun them after an eviction, once KubeRay has (rerun.h). */
        struct error err = {{0}};
        if (rerun_resume_all(c->client, &err) < 0)
            log_warnf("rerun: %s", err.message);
    }
}

void controller_run(struct controller *c)
{
    struct run_state rs = {
        .next_resync = clock_mono_ms() + c->opts.resync_ms,
        .retry_at = -1,
        .was_leading = c->opts.leader == NULL,
        .evict_at = -1,
        .scan_after = -1,
    };
    while (!atomic_load(&c->stopping)) {
        if (wait_for_work(c, &rs) != 0)
            break;
        if (!check_leading(c, &rs))
            continue;
        long long now = clock_mono_ms();
        /* A CRD installed since the last look: start using it. */
        if (now >= rs.next_resync && watches_discovery_wanted(c->watches)) {
            struct error err = {{0}};
            if (watches_discover(c->watches, &err) != 0)
                log_warnf("watch: %s", err.message);
        }
        long long cpu = thread_cpu_us();
        pass(c, &rs, now);
        heldnudge_send(c->nudge, c->client, c->guard, may_write_fn, c);
        rs.pass_at = now;
        rs.pass_ms = clock_mono_ms() - now;
        rs.pass_cpu_us = thread_cpu_us() - cpu;
    }
}
