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
#include "clock.h"
#include "events.h"
#include "evictor.h"
#include "evictscan.h"
#include "preempthold.h"
#include "preemptscan.h"
#include "fault.h"
#include "jsonpatch.h"
#include "legacy.h"
#include "log.h"
#include "podgroup.h"
#include "rerun.h"
#include "statuswriter.h"
#include "ungate.h"
#include "util.h"

enum watch_kind {
    WATCH_PODS,
    WATCH_NODES,
    WATCH_RAYCLUSTERS,
    WATCH_QUEUES,
    WATCH_PODGROUPS,
    WATCH_LEGACY, /* the legacy operator's RayClusters (lib/gang/legacy.h), when its CRD is installed */
    WATCH_COUNT,
};

/* The watches decisions need; the PodGroup watch only feeds status writes. */
#define DECISION_WATCHES ((1u << WATCH_PODS) | (1u << WATCH_NODES) | (1u << WATCH_RAYCLUSTERS) | (1u << WATCH_QUEUES))

#define VOLCANO_API "/apis/" PODGROUP_GROUP_VERSION
#define LEGACY_API "/apis/" LEGACY_API_VERSION

static const struct {
    const char *name;
    const char *path;
} watch_specs[WATCH_COUNT] = {
    [WATCH_PODS] = {"pods", "/api/v1/pods"},
    [WATCH_NODES] = {"nodes", "/api/v1/nodes"},
    [WATCH_RAYCLUSTERS] = {"rayclusters", "/apis/ray.io/v1/rayclusters"},
    [WATCH_QUEUES] = {"queues", VOLCANO_API "/queues"},
    [WATCH_PODGROUPS] = {"podgroups", VOLCANO_API "/podgroups"},
    [WATCH_LEGACY] = {"legacy-rayclusters", LEGACY_API "/rayclusters"},
};

/* The apiVersion of a decision's RayCluster: KubeRay's, or the legacy operator's. */
static const char *rc_api_version(const struct admit_decision *d)
{
    return d->legacy ? LEGACY_API_VERSION : "ray.io/v1";
}

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
    struct admit *admit; /* the decision state of cache */
    unsigned synced;  /* bit per watch_kind (set too for a watch not started: its CRD is not installed) */
    unsigned started; /* bit per watch_kind */
    int changed;      /* an event arrived since the last pass */
    struct watch_ctx watch_ctx[WATCH_COUNT];

    /* Volcano status (podgroup.h). What the API showed last, and what our queued or in-flight writes will make it. */
    unsigned crds;          /* PODGROUP_CRD_* found by discovery */
    int discovered;         /* discovery answered at least once */
    int status_full;        /* the next status sync looks at every gang and queue */
    json_t *pgs;            /* "ns/name" -> trimmed PodGroup (podgroup_trim), from the watch and our writes */
    json_t *pg_expected;    /* "ns/name" -> {"seq": n, "obj": trimmed PodGroup as our queued write leaves it} */
    json_t *pg_dirty;       /* "ns/name" -> true: the PodGroup changed; look at its gang after the next pass */
    json_t *queue_status;   /* queue name -> {"rv": resourceVersion, "status": {...}} */
    json_t *queue_expected; /* queue name -> {"seq": n, "status": {...}} */
    struct podgroup_metrics *qmetrics;
    struct statuswriter *writer;

    /* metrics (families borrowed from reg) */
    struct metrics_family *m_admitted;
    struct metrics_family *m_pass_seconds;
    struct metrics_family *m_ungate_seconds;
    struct metrics_family *m_wait_seconds;
    struct metrics_family *m_spread_seconds;
    struct ungate_spread *spread; /* gangs whose admission left gates behind */
    long long woke_ms; /* monotonic ms when the current pass's first event arrived */
    struct metrics_family *m_decisions;
    struct metrics_family *m_leader;

    /* Evictions (evictor.h); the controller thread's. */
    struct evictor *evictor;
    int64_t started_wall_ms; /* no eviction clock starts earlier (evictscan.h's floor) */
    json_t *evict_warned;    /* the queue annotation warnings already logged (message -> true) */

    /* Preemption (preemptscan.h), when opts.preemption. */
    struct metrics_family *m_preemptions;
};

static void wake(struct controller *c)
{
    uint64_t one = 1;
    ssize_t n = write(c->wake_fd, &one, sizeof(one));
    (void)n;
}

/* Whether this process may write to the cluster now (asked before every write). */
static int may_write(struct controller *c)
{
    return c->opts.leader == NULL || leader_is_leading(c->opts.leader);
}

/* The leader's notification (its thread): leadership changed, look again. */
static int writer_may_write(void *arg)
{
    return may_write(arg);
}

static void on_leadership(void *arg)
{
    wake(arg);
}

static const char *obj_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

/*
 * Whether resourceVersion a is older than b. They are etcd revisions in
 * practice; what does not parse as one is never older (the newer copy wins).
 */
static int rv_older(const char *a, const char *b)
{
    if (a == NULL || b == NULL || a[0] == '\0' || b[0] == '\0')
        return 0;
    char *ea, *eb;
    unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
    return *ea == '\0' && *eb == '\0' && x < y;
}

/* A PodGroup from the watch or a write's answer (borrowed); under the lock. Only ray-<cluster>-pg ones are kept. */
static void record_podgroup(struct controller *c, enum kube_watch_event ev, const json_t *obj)
{
    const char *ns = obj_str(obj, "namespace"), *name = obj_str(obj, "name");
    char *cluster = podgroup_cluster_of(name);
    if (cluster == NULL || ns == NULL) {
        free(cluster);
        return;
    }
    free(cluster);
    char *key = util_strdupf("%s/%s", ns, name);
    json_t *old = json_object_get(c->pgs, key);
    if (ev == KUBE_WATCH_DELETED) {
        /* Not the deletion of an older object of that name that our copy has replaced. */
        const char *uid = obj_str(obj, "uid"), *old_uid = obj_str(old, "uid");
        if (old != NULL && (uid == NULL || old_uid == NULL || strcmp(uid, old_uid) == 0)) {
            json_object_del(c->pgs, key);
            json_object_del(c->pg_expected, key); /* what we expected of it is moot: compare with nothing */
        }
    } else if (old == NULL || !rv_older(obj_str(obj, "resourceVersion"), obj_str(old, "resourceVersion"))) {
        json_object_set_new(c->pgs, key, podgroup_trim(obj));
    }
    json_object_set_new(c->pg_dirty, key, json_true());
    free(key);
}

/* A Queue's status (obj borrowed), to write only what differs from it; under the lock. */
static void record_queue_status(struct controller *c, enum kube_watch_event ev, const json_t *obj)
{
    const char *name = obj_str(obj, "name");
    if (name == NULL)
        return;
    if (ev == KUBE_WATCH_DELETED) {
        json_object_del(c->queue_status, name);
        json_object_del(c->queue_expected, name);
        return;
    }
    const char *rv = obj_str(obj, "resourceVersion");
    json_t *old = json_object_get(c->queue_status, name);
    if (old != NULL && rv_older(rv, json_string_value(json_object_get(old, "rv"))))
        return;
    json_t *status = json_object_get(obj, "status");
    json_object_set_new(c->queue_status, name,
                        json_pack("{s:s?,s:o}", "rv", rv, "status", status != NULL ? json_deep_copy(status) : json_null()));
}

/* Runs on the watcher thread. object borrowed. */
static void on_watch(void *arg, enum kube_watch_event ev, json_t *object)
{
    struct watch_ctx *w = arg;
    struct controller *c = w->c;
    struct error err = {{0}};
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    if (ev == KUBE_WATCH_SYNCED) {
        if (!(c->synced & (1u << w->kind)))
            log_infof("watch %s synced", watch_specs[w->kind].name);
        c->synced |= 1u << w->kind;
        if (w->kind == WATCH_PODGROUPS)
            c->status_full = 1; /* every PodGroup is known now: compare them all */
    } else if (w->kind == WATCH_PODGROUPS) {
        record_podgroup(c, ev, object);
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
            case WATCH_LEGACY:
                cache_delete_raycluster(c->cache, ns != NULL ? ns : "", name);
                break;
            case WATCH_QUEUES:
                cache_delete_queue(c->cache, name);
                record_queue_status(c, ev, object);
                break;
            case WATCH_PODGROUPS:
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
        case WATCH_LEGACY:
            rc = cache_upsert_raycluster(c->cache, object, &err);
            break;
        case WATCH_QUEUES:
            rc = cache_upsert_queue(c->cache, object, &err);
            record_queue_status(c, ev, object);
            break;
        case WATCH_PODGROUPS:
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

/*
 * What our write of key (in map, seq) is expected to leave: forgotten once the
 * write is done (the API's answer or the watch say what is there), or, after a
 * failure, kept and marked failed, so that the same write is not tried again
 * at every pass but at the next resync (drop_failed).
 */
static void expected_done(json_t *map, const char *key, uint64_t seq, int failed)
{
    json_t *exp = json_object_get(map, key);
    if (exp == NULL || (uint64_t)json_integer_value(json_object_get(exp, "seq")) != seq)
        return; /* a later write of key is queued */
    if (failed)
        json_object_set_new(exp, "failed", json_true());
    else
        json_object_del(map, key);
}

static void drop_failed(json_t *map)
{
    const char *key;
    json_t *exp, *tmp;
    json_object_foreach_safe(map, tmp, key, exp)
    {
        if (json_is_true(json_object_get(exp, "failed")))
            json_object_del(map, key);
    }
}

/* Whether a refusal (a Status, borrowed) is the namespace's deletion: its RayClusters are going too. */
static int namespace_terminating(const json_t *status)
{
    size_t i;
    const json_t *cause;
    json_array_foreach(json_object_get(json_object_get(status, "details"), "causes"), i, cause)
    {
        const char *type = json_string_value(json_object_get(cause, "reason")); /* StatusCause.Type */
        if (type != NULL && strcmp(type, "NamespaceTerminating") == 0)
            return 1;
    }
    return 0;
}

/*
 * The outcome of a status write (statuswriter's thread). Success: the answer is
 * what the API shows now. A PodGroup gone under a patch is created again; one
 * that already exists on create arrives by the watch; none is created in a
 * namespace being deleted. Other failures are logged and tried again at the
 * next resync.
 */
static void on_written(void *arg, const struct statuswriter_result *r)
{
    struct controller *c = arg;
    int again = 0;
    pthread_mutex_lock(&c->mu);
    if (strncmp(r->key, "queue:", 6) == 0) {
        const char *name = r->key + 6;
        int ok = r->rc == 0 && json_is_object(r->body);
        expected_done(c->queue_expected, name, r->seq, !ok);
        if (ok) {
            record_queue_status(c, KUBE_WATCH_MODIFIED, r->body);
            log_debugf("wrote Queue %s status", name);
        } else {
            log_warnf("Queue %s status not written: %s", name, r->message);
        }
    } else {
        const char *key = strchr(r->key, ':') + 1; /* "pg:ns/name", "pgstatus:ns/name" */
        int ok = r->rc == 0 && json_is_object(r->body);
        int gone = r->status == 404 && strcmp(r->method, "PATCH") == 0;
        int exists = r->status == 409 && strcmp(r->method, "POST") == 0;
        int terminating = r->status == 403 && namespace_terminating(r->body);
        expected_done(c->pg_expected, key, r->seq, !ok && !gone && !exists && !terminating);
        if (ok) {
            record_podgroup(c, KUBE_WATCH_MODIFIED, r->body);
            log_debugf("wrote PodGroup %s (%s)", key, strcmp(r->method, "POST") == 0 ? "created" : "patched");
        } else if (gone) {
            json_object_del(c->pgs, key);
            json_object_set_new(c->pg_dirty, key, json_true());
            c->changed = again = 1;
        } else if (exists) {
            log_debugf("PodGroup %s exists already: the watch will show it", key);
        } else if (terminating) {
            log_debugf("PodGroup %s not written: its namespace is being deleted", key);
        } else {
            log_warnf("PodGroup %s not written: %s", key, r->message);
        }
    }
    pthread_mutex_unlock(&c->mu);
    if (again)
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
    c->admit = admit_create(c->cache);
    admit_set_evict(c->admit, &c->opts.evict);
    fault_arm(FAULT_AFTER_RECORD, opts->fault_exit_after_ungates);
    fault_arm(FAULT_AFTER_EVICT_RECORD, opts->fault_exit_after_evict_deletes);
    c->evictor = evictor_create(client, reg, c->instance);
    c->started_wall_ms = clock_wall_ms();
    c->evict_warned = json_object();
    static const char *const preempt_labels[] = {"queue", "kind"};
    c->m_preemptions = metrics_counter_create(reg, "raygate_preemptions_total",
                                              "Gangs evicted whole to admit a waiting gang, by the victim's queue and kind "
                                              "(preempt: within its queue; reclaim: across queues).",
                                              2, preempt_labels);
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
    c->m_leader = metrics_gauge_create(reg, "raygate_leader",
                                       "1 while this controller acts on the cluster (it holds the leader election lease, "
                                       "or runs without leader election), else 0.",
                                       0, NULL);
    metrics_gauge_set(c->m_leader, NULL, c->opts.leader == NULL ? 1 : 0);
    if (c->opts.leader != NULL)
        leader_set_notify(c->opts.leader, on_leadership, c);
    static const double wait_buckets[] = {0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};
    c->m_wait_seconds = metrics_histogram_create(reg, "raygate_gang_wait_duration_seconds",
                                                 "Time from a gang being complete (all its pods created) to its admission.",
                                                 0, NULL, wait_buckets, sizeof(wait_buckets) / sizeof(wait_buckets[0]));
    static const double spread_buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60};
    c->m_spread_seconds = metrics_histogram_create(reg, "raygate_gang_ungate_spread_seconds",
                                                   "Time from a gang's first scheduling gate removed to its last (the gang is partly "
                                                   "released meanwhile).",
                                                   0, NULL, spread_buckets, sizeof(spread_buckets) / sizeof(spread_buckets[0]));
    c->spread = ungate_spread_create();
    static const char *const queue_reason[] = {"queue", "reason"}, *const queue_resource[] = {"queue", "resource"};
    c->qmetrics = podgroup_metrics_create(
        metrics_gauge_create(reg, "raygate_gangs_pending", "Gangs not admitted, by queue and reason.", 2, queue_reason),
        metrics_gauge_create(reg, "raygate_queue_allocated",
                             "What the queue's admitted gangs hold, by resource (cpu in cores, others in base units).", 2,
                             queue_resource),
        metrics_gauge_create(reg, "raygate_queue_capability", "The queue's capability, by resource (cpu in cores, others in base units).",
                             2, queue_resource));
    c->pgs = json_object();
    c->pg_expected = json_object();
    c->pg_dirty = json_object();
    c->queue_status = json_object();
    c->queue_expected = json_object();
    c->writer = statuswriter_create(client, writer_may_write, on_written, c);
    if (c->writer == NULL) {
        controller_destroy(c);
        return NULL;
    }
    return c;
}

static int start_watch(struct controller *c, enum watch_kind k, struct error *err)
{
    c->watch_ctx[k].c = c;
    c->watch_ctx[k].kind = k;
    struct kube_watch_spec spec = {
        .name = watch_specs[k].name,
        .path = watch_specs[k].path,
        .fn = on_watch,
        .arg = &c->watch_ctx[k],
    };
    if (kube_watch_start(c->watcher, &spec, err) != 0)
        return -1;
    c->started |= 1u << k;
    return 0;
}

/*
 * Which of Volcano's CRDs the apiserver serves (GET /apis/scheduling.volcano.sh/v1beta1).
 * Returns 0 with *flags (PODGROUP_CRD_*; 0 when the group is not served), or -1 when it did not answer.
 */
static int discover(struct controller *c, unsigned *flags)
{
    struct kube_response r;
    kube_response_init(&r);
    int out = 0;
    if (kube_get(c->client, VOLCANO_API, &r) == 0) {
        *flags = podgroup_discovery(r.body);
    } else if (r.status == 404) {
        *flags = 0;
    } else {
        log_warnf("discovery of %s: %s", VOLCANO_API, r.message);
        out = -1;
    }
    kube_response_finish(&r);
    return out;
}

/* Whether an APIResourceList (borrowed) names resource. */
static int resource_listed(const json_t *list, const char *resource)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(list, "resources"), i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        if (name != NULL && strcmp(name, resource) == 0)
            return 1;
    }
    return 0;
}

/*
 * The legacy operator's RayCluster CRD (GET /apis/cluster.ray.io/v1): once it
 * is served, its clusters are watched (and gated) like KubeRay's. Looked for at
 * start and at every resync until found. Returns 0, or -1 with err when the
 * watch cannot start.
 */
static int discover_legacy(struct controller *c, struct error *err)
{
    if (c->started & (1u << WATCH_LEGACY))
        return 0;
    struct kube_response r;
    kube_response_init(&r);
    int served = kube_get(c->client, LEGACY_API, &r) == 0 && resource_listed(r.body, "rayclusters");
    kube_response_finish(&r);
    if (!served)
        return 0;
    log_infof("legacy RayCluster CRD (rayclusters.cluster.ray.io) found: the legacy Ray operator's clusters are gated too");
    return start_watch(c, WATCH_LEGACY, err);
}

/*
 * Discovery, and the watches it allows. A CRD that is not installed is said
 * once, and again only if that changes. Without the Queue CRD no queue exists
 * (its watch counts as synced, every gang waits for its queue); without the
 * PodGroup CRD no PodGroup is written. When discovery does not answer, the
 * Queue watch is started anyway (its list retries) and PodGroups wait for the
 * next try. Controller thread (or before it runs).
 */
static int apply_discovery(struct controller *c, struct error *err)
{
    unsigned flags = 0;
    int known = discover(c, &flags) == 0;
    pthread_mutex_lock(&c->mu);
    if (!known) /* as before, else as both Volcano's Queue CRD and ours are */
        flags = c->crds | PODGROUP_CRD_QUEUES | PODGROUP_CRD_QUEUES_STATUS;
    unsigned was = c->crds;
    int first = !c->discovered;
    c->crds = flags;
    c->discovered |= known;
    if (!(flags & PODGROUP_CRD_QUEUES))
        c->synced |= 1u << WATCH_QUEUES;
    pthread_mutex_unlock(&c->mu);
    if (known && (first || ((was ^ flags) & PODGROUP_CRD_QUEUES)))
        log_infof((flags & PODGROUP_CRD_QUEUES) ? "Queue CRD (queues.scheduling.volcano.sh) found"
                                                : "Queue CRD (queues.scheduling.volcano.sh) is not installed: no queue exists, so "
                                                  "every gang waits for its queue, and no Queue status is written");
    if (known && (first || ((was ^ flags) & PODGROUP_CRD_PODGROUPS)))
        log_infof((flags & PODGROUP_CRD_PODGROUPS)
                      ? "PodGroup CRD (podgroups.scheduling.volcano.sh) found: writing PodGroups"
                      : "PodGroup CRD (podgroups.scheduling.volcano.sh) is not installed: PodGroups are not written");
    if ((flags & PODGROUP_CRD_QUEUES) && !(c->started & (1u << WATCH_QUEUES)) && start_watch(c, WATCH_QUEUES, err) != 0)
        return -1;
    if ((flags & PODGROUP_CRD_PODGROUPS) && !(c->started & (1u << WATCH_PODGROUPS)) &&
        start_watch(c, WATCH_PODGROUPS, err) != 0)
        return -1;
    return discover_legacy(c, err);
}

int controller_start(struct controller *c, struct error *err)
{
    c->watcher = kube_watcher_create(c->client, err);
    if (c->watcher == NULL)
        return -1;
    if (start_watch(c, WATCH_PODS, err) != 0 || start_watch(c, WATCH_NODES, err) != 0 ||
        start_watch(c, WATCH_RAYCLUSTERS, err) != 0)
        return -1;
    return apply_discovery(c, err);
}

int controller_synced(struct controller *c)
{
    pthread_mutex_lock(&c->mu);
    int s = (c->synced & DECISION_WATCHES) == DECISION_WATCHES;
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
    statuswriter_destroy(c->writer);
    podgroup_metrics_destroy(c->qmetrics);
    ungate_spread_destroy(c->spread);
    evictor_destroy(c->evictor);
    json_decref(c->evict_warned);
    json_decref(c->pgs);
    json_decref(c->pg_expected);
    json_decref(c->pg_dirty);
    json_decref(c->queue_status);
    json_decref(c->queue_expected);
    admit_destroy(c->admit);
    cache_destroy(c->cache);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    pthread_mutex_destroy(&c->mu);
    free(c->instance);
    free(c);
}

/* ------------------------------------------------------------------ actions */

/* The pass's ungates (ungate.h), stopped early when this process may not write any more. */
static int ungate_may_write(void *arg)
{
    struct controller *c = arg;
    return !c->stopping && may_write(c);
}

static size_t ungate_jobs(struct controller *c, struct ungate_job *jobs, size_t n)
{
    struct ungate_options o = {.may_write = ungate_may_write, .arg = c};
    return ungate_pods(c->client, jobs, n, &o);
}

/* The spread of a gang's gate removals (ungate_spread_note), observed once the gang has none left; logged over a second. */
static void note_spread(struct controller *c, const struct admit_decision *d, const struct ungate_job *jobs)
{
    if (d->action != ADMIT_ACTION_ADMIT && d->action != ADMIT_ACTION_FINISH)
        return;
    long long ms = ungate_spread_note(c->spread, d->namespace_, d->cluster, d->action == ADMIT_ACTION_ADMIT, jobs, d->npods,
                                      clock_mono_ms());
    if (ms < 0)
        return;
    metrics_histogram_observe(c->m_spread_seconds, NULL, (double)ms / 1000.0);
    if (ms > 1000)
        log_warnf("gang %s/%s: %.3f s from its first gate removed to its last (partly released meanwhile)", d->namespace_,
                  d->gang, (double)ms / 1000.0);
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
    if (l->len == 0 || !may_write(c))
        return;
    struct kube_batch_item *items = util_calloc(l->len, sizeof(*items));
    char **paths = util_calloc(l->len, sizeof(*paths));
    for (size_t i = 0; i < l->len; i++) {
        paths[i] = util_strdupf("/api/v1/namespaces/%s/events", l->items[i].ns);
        items[i] = (struct kube_batch_item){.method = "POST", .path = paths[i], .body = l->items[i].event};
    }
    kube_batch(c->client, items, l->len, 32);
    /* An event in a namespace being deleted has nobody to tell. */
    size_t failed = 0, first = 0;
    for (size_t i = 0; i < l->len; i++) {
        if (items[i].rc != 0 && !(items[i].resp.status == 403 && namespace_terminating(items[i].resp.body)) && failed++ == 0)
            first = i;
    }
    if (failed > 0)
        log_warnf("%zu of %zu events not recorded (first: %s)", failed, l->len, items[first].resp.message);
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
 * current reason (all of them after a change; a pod that joins later, once),
 * "waiting for pods" included: when KubeRay cannot create a pod (a quota, a
 * bad template), the gated pods that exist say why they wait.
 */
static void wait_events(struct controller *c, struct event_list *l, const struct admit_decision *d, int changed,
                        const char *now)
{
    if (changed) {
        struct events_object rc = {rc_api_version(d), "RayCluster", d->namespace_, d->cluster, d->cluster_uid};
        events_add(l, &rc, "Warning", "GangWaiting", d->message, now, c->instance);
        log_infof("gang %s/%s waits: %s", d->namespace_, d->gang, d->message);
    }
    struct cache_gang *g = cache_gang_get(c->cache, d->namespace_, d->cluster);
    for (struct cache_pod *p = g != NULL ? g->pods : NULL; p != NULL; p = p->gang_next) {
        if (!cache_pod_live(p) || !cache_pod_gated(p) || (p->flags & CACHE_POD_TOLD))
            continue;
        cache_pod_mark_told(p);
        struct events_object po = {"v1", "Pod", p->namespace_, p->name, p->uid};
        events_add(l, &po, "Warning", "GangWaiting", d->message, now, c->instance);
    }
}

/* A decision that removes gates (ADMIT, FINISH, TAIL_ADMIT), and what became of it. */
struct act {
    struct admit_decision *d;
    int report;              /* its reason changed (admit_reason_changed): tell it */
    int skip;                /* an ADMIT not recorded: 1 its RayCluster is gone, -1 the record failed; its gates stay */
    struct ungate_job *jobs; /* its d->npods pods, in the pass's batch */
};

/* One pass's decisions being carried out. */
struct carry {
    struct controller *c;
    char now[32]; /* Event and admitted-at timestamp */
    struct event_list events;
    struct act *acts;
    size_t nacts;
    struct ungate_job *jobs;
    size_t njobs;
    int retry; /* something failed that a pass soon should try again */
};

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
static void record_admissions(struct carry *x)
{
    struct controller *c = x->c;
    struct kube_batch_item *items = util_calloc(x->nacts + 1, sizeof(*items));
    json_t **patches = util_calloc(x->nacts + 1, sizeof(*patches));
    char **paths = util_calloc(x->nacts + 1, sizeof(*paths));
    size_t n = x->nacts;
    for (size_t i = 0; i < n; i++) {
        const struct admit_decision *d = x->acts[i].d;
        paths[i] = util_strdupf("/apis/%s/namespaces/%s/rayclusters/%s", rc_api_version(d), d->namespace_, d->cluster);
        items[i] = (struct kube_batch_item){.method = "GET", .path = paths[i]};
        if (d->action != ADMIT_ACTION_ADMIT)
            continue;
        patches[i] = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", NAMES_ANNOTATION_ADMITTED, x->now);
        if (d->cluster_uid != NULL) /* never stamp a new RayCluster of the same name */
            json_object_set_new(json_object_get(patches[i], "metadata"), "uid", json_string(d->cluster_uid));
        items[i].method = "PATCH";
        items[i].content_type = kube_patch_content_type(KUBE_PATCH_MERGE);
        items[i].body = patches[i];
    }
    int leading = n > 0 && may_write(c);
    if (leading)
        kube_batch(c->client, items, n, 64);
    for (size_t i = 0; i < n; i++) {
        long st = items[i].resp.status;
        struct act *a = &x->acts[i];
        if (!leading)
            a->skip = 1;
        else if (a->d->action == ADMIT_ACTION_ADMIT)
            a->skip = items[i].rc == 0 ? 0 : (st == 404 || st == 409) ? 1 : -1;
        else
            a->skip = ungate_owner_verdict(st, items[i].resp.body, a->d->cluster_uid);
        if (a->skip < 0)
            log_warnf("%s %s/%s: %s", a->d->action == ADMIT_ACTION_ADMIT ? "record admission of" : "read RayCluster",
                      a->d->namespace_, a->d->cluster, items[i].resp.message);
        else if (a->skip > 0 && leading && a->d->action != ADMIT_ACTION_ADMIT)
            log_infof("%s %s/%s: its RayCluster is gone or being deleted: gates kept", admit_action_name(a->d->action),
                      a->d->namespace_, a->d->gang);
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

/* TAIL_WAIT: each waiting pod is told why, once per story: the first one why it does not fit, the others whom they wait behind. */
static void tail_wait_events(struct carry *x, const struct admit_decision *d, int report)
{
    struct controller *c = x->c;
    if (report)
        log_infof("gang %s/%s: autoscaled pods wait: %s", d->namespace_, d->gang, d->message);
    pthread_mutex_lock(&c->mu);
    for (size_t k = 0; k < d->npods; k++) {
        struct cache_pod *p = cache_pod_by_uid(c->cache, d->pods[k].uid);
        if (p == NULL || (p->flags & CACHE_POD_TOLD))
            continue;
        cache_pod_mark_told(p);
        struct events_object po = {"v1", "Pod", d->namespace_, d->pods[k].name, d->pods[k].uid};
        events_add(&x->events, &po, "Warning", "GangWaiting", d->pods[k].message != NULL ? d->pods[k].message : d->message, x->now,
                   c->instance);
    }
    pthread_mutex_unlock(&c->mu);
}

/* Counts every decision and tells the waits (their Events); the others become x->acts. Stops when not leading any more. */
static void sort_decisions(struct carry *x, struct admit_result *res, const int *report)
{
    struct controller *c = x->c;
    x->acts = util_calloc(res->len + 1, sizeof(*x->acts));
    for (size_t i = 0; i < res->len; i++) {
        struct admit_decision *d = &res->items[i];
        if (!may_write(c)) {
            log_warnf("not leading any more: %zu decisions of this pass abandoned", res->len - i);
            break;
        }
        count_decision(c, d);
        if (d->action == ADMIT_ACTION_WAIT) {
            pthread_mutex_lock(&c->mu);
            wait_events(c, &x->events, d, report[i], x->now);
            pthread_mutex_unlock(&c->mu);
        } else if (d->action == ADMIT_ACTION_TAIL_WAIT) {
            tail_wait_events(x, d, report[i]);
        } else {
            x->acts[x->nacts++] = (struct act){.d = d, .report = report[i]};
        }
    }
}

/*
 * Test-only fault point (fault.h): when FAULT_AFTER_RECORD is armed, die
 * mid-admission, after d's record and its first gates, as a crash would.
 */
static void fault_after_record(struct controller *c, const struct admit_decision *d)
{
    long ungates;
    if (!fault_armed(FAULT_AFTER_RECORD, &ungates))
        return;
    size_t n = d->npods, k = (size_t)ungates < n ? (size_t)ungates : n;
    for (size_t j = 0; j < k; j++) {
        struct ungate_job one = {d->namespace_, &d->pods[j], 0, -1};
        ungate_jobs(c, &one, 1);
    }
    fault_exit(FAULT_AFTER_RECORD, "exiting after recording the admission of %s/%s and ungating %zu of %zu pods", d->namespace_,
               d->cluster, k, n);
}

/* An ADMIT recorded: the cache knows it at once, and its wait (from complete to admitted) is observed. */
static void note_admitted(struct carry *x, const struct admit_decision *d)
{
    struct controller *c = x->c;
    pthread_mutex_lock(&c->mu);
    struct cache_gang *g = cache_gang_get(c->cache, d->namespace_, d->cluster);
    long long since = c->woke_ms;
    if (g != NULL) {
        cache_gang_mark_admitted(c->cache, g, x->now);
        if (g->complete_ms > 0)
            since = g->complete_ms;
        cache_gang_set_complete_ms(c->cache, g, 0);
    }
    pthread_mutex_unlock(&c->mu);
    metrics_histogram_observe(c->m_wait_seconds, NULL, (double)(clock_mono_ms() - since) / 1000.0);
    const char *ql[] = {d->queue != NULL ? d->queue : ""};
    metrics_counter_add(c->m_admitted, ql, 1);
    fault_after_record(c, d);
}

/* Every gate of the acts not skipped, in one batch (ungate.h). */
static void remove_gates(struct carry *x)
{
    size_t n = 0;
    for (size_t i = 0; i < x->nacts; i++)
        n += x->acts[i].skip == 0 ? x->acts[i].d->npods : 0;
    x->jobs = util_calloc(n + 1, sizeof(*x->jobs));
    for (size_t i = 0; i < x->nacts; i++) {
        struct act *a = &x->acts[i];
        if (a->skip != 0)
            continue;
        a->jobs = x->jobs + x->njobs;
        for (size_t k = 0; k < a->d->npods; k++)
            x->jobs[x->njobs++] = (struct ungate_job){a->d->namespace_, &a->d->pods[k], 0, -1};
    }
    if (x->njobs > 0)
        x->retry |= ungate_jobs(x->c, x->jobs, x->njobs) > 0;
}

/* What one act's gates came to: metrics, the cache's marks, its Normal Events, the log. secs: the batch's duration. */
static void report_act(struct carry *x, const struct act *a, double secs)
{
    struct controller *c = x->c;
    const struct admit_decision *d = a->d;
    size_t n = d->npods, failed = 0;
    for (size_t k = 0; k < n; k++)
        failed += !a->jobs[k].ok;
    if (d->action == ADMIT_ACTION_ADMIT && failed == 0)
        metrics_histogram_observe(c->m_ungate_seconds, NULL, secs);
    note_spread(c, d, a->jobs);

    pthread_mutex_lock(&c->mu);
    for (size_t k = 0; k < n; k++) {
        struct cache_pod *p = a->jobs[k].ok ? cache_pod_by_uid(c->cache, d->pods[k].uid) : NULL;
        if (p != NULL)
            cache_pod_mark_ungated(c->cache, p);
    }
    if (a->report && d->action != ADMIT_ACTION_FINISH) {
        struct events_object rc = {rc_api_version(d), "RayCluster", d->namespace_, d->cluster, d->cluster_uid};
        /* A gang's admission is told once, on its RayCluster (each pod then gets the scheduler's Scheduled Event);
           a pod admitted beyond the gang (TAIL_ADMIT) is told on itself, having no other record. */
        if (d->action == ADMIT_ACTION_ADMIT)
            events_add(&x->events, &rc, "Normal", "GangAdmitted", d->message, x->now, c->instance);
        for (size_t k = 0; k < n && d->action == ADMIT_ACTION_TAIL_ADMIT; k++) {
            struct events_object po = {"v1", "Pod", d->namespace_, d->pods[k].name, d->pods[k].uid};
            if (a->jobs[k].ok)
                events_add(&x->events, &po, "Normal", "GangAdmitted", d->message, x->now, c->instance);
        }
    }
    pthread_mutex_unlock(&c->mu);
    log_infof("%s %s/%s (queue %s): gates removed from %zu of %zu pods in %.3f s", admit_action_name(d->action), d->namespace_,
              d->gang, d->queue != NULL ? d->queue : "", n - failed, n, secs);
}

/*
 * Carries out one pass's decisions (report[i]: decision i's reason changed).
 * Called without the lock; takes it for the cache lookups and marks. Returns
 * -1 if something failed and should be retried soon.
 *
 * The pass's admissions, ungates and tail admissions together: every
 * RayCluster's admission recorded in one concurrent batch, then every gate in
 * one more (a pass admitting 50 gangs costs two round trips, not 100). A
 * gang's record still precedes its gates (crash-consistent, see
 * controller.h).
 */
static int carry_out(struct controller *c, struct admit_result *res, const int *report)
{
    struct carry x = {.c = c};
    events_timestamp(time(NULL), x.now, sizeof(x.now));
    sort_decisions(&x, res, report);

    long long t0 = clock_mono_ms();
    record_admissions(&x);
    for (size_t i = 0; i < x.nacts; i++) {
        if (x.acts[i].d->action == ADMIT_ACTION_ADMIT && x.acts[i].skip == 0)
            note_admitted(&x, x.acts[i].d);
        x.retry |= x.acts[i].skip < 0;
    }
    remove_gates(&x);
    double secs = (double)(clock_mono_ms() - t0) / 1000.0;
    for (size_t i = 0; i < x.nacts; i++) {
        if (x.acts[i].skip == 0)
            report_act(&x, &x.acts[i], secs);
    }

    free(x.jobs);
    free(x.acts);
    events_post(c, &x.events);
    events_list_finish(&x.events);
    return x.retry ? -1 : 0;
}

/* Keeps gang->complete_ms: when a waiting gang was first seen with all its pods. Caller holds the lock. */
static void note_complete(struct controller *c, const struct admit_decision *d, long long now)
{
    if (d->action != ADMIT_ACTION_WAIT)
        return;
    struct cache_gang *g = cache_gang_get(c->cache, d->namespace_, d->cluster);
    if (g == NULL)
        return;
    if (d->reason == ADMIT_REASON_PODS || d->reason == ADMIT_REASON_INVALID)
        cache_gang_set_complete_ms(c->cache, g, 0);
    else if (g->complete_ms == 0)
        cache_gang_set_complete_ms(c->cache, g, now);
}

/* ------------------------------------------------------------ Volcano status */

struct sync_ctx {
    struct controller *c;
    int full;       /* every queue, else those the pass just run evaluated */
    int podgroups;  /* PodGroups may be written */
    int queues;     /* Queue status may be written */
    char now[32];
    size_t npodgroups, nqueues, nwrites; /* compared, and writes queued (for the debug log) */
};

/* Brings gang g's PodGroup up to date (under the lock): a write is queued only when something differs. */
static void sync_podgroup(struct sync_ctx *x, struct cache_gang *g)
{
    struct controller *c = x->c;
    char *name = podgroup_name(cache_gang_group(g));
    char *key = util_strdupf("%s/%s", g->namespace_, name);
    json_t *exp = json_object_get(json_object_get(c->pg_expected, key), "obj");
    const json_t *observed = exp != NULL ? exp : json_object_get(c->pgs, key);
    struct podgroup_gang pg;
    podgroup_gang_from_cache(g, &pg);
    const struct preempthold_item *held = admit_held(c->admit, g);
    pg.preempting = held != NULL && held->victims_remain ? held->victims : NULL;
    json_t *body = NULL;
    enum podgroup_write w = podgroup_sync(&pg, observed, x->now, &body);
    x->npodgroups++;
    x->nwrites += w == PODGROUP_WRITE_CREATE || w == PODGROUP_WRITE_PATCH;
    char *wkey = util_strdupf("pg:%s", key);
    char *path = NULL;
    json_t *expect = NULL;
    uint64_t seq = 0;
    if (w == PODGROUP_WRITE_CREATE) {
        expect = podgroup_trim(body);
        path = util_strdupf(VOLCANO_API "/namespaces/%s/podgroups", g->namespace_);
        seq = statuswriter_submit_new(c->writer, wkey, "POST", path, NULL, body);
    } else if (w == PODGROUP_WRITE_PATCH) {
        expect = jsonpatch_merge_apply(observed, body);
        path = util_strdupf(VOLCANO_API "/namespaces/%s/podgroups/%s", g->namespace_, name);
        const char *merge = kube_patch_content_type(KUBE_PATCH_MERGE);
        if ((c->crds & PODGROUP_CRD_PODGROUPS_STATUS) && json_object_get(body, "status") != NULL) {
            /* A PodGroup CRD with a status subresource takes status only there. */
            char *skey = util_strdupf("pgstatus:%s", key), *spath = util_strdupf("%s/status", path);
            seq = statuswriter_submit_new(c->writer, skey, "PATCH", spath, merge,
                                      json_pack("{s:O}", "status", json_object_get(body, "status")));
            json_object_del(body, "status");
            free(skey);
            free(spath);
        }
        if (json_object_size(body) > 0)
            seq = statuswriter_submit_new(c->writer, wkey, "PATCH", path, merge, body);
        else
            json_decref(body);
    } else if (w == PODGROUP_WRITE_FOREIGN) {
        log_debugf("PodGroup %s belongs to an earlier RayCluster %s: left to the garbage collector", key, g->name);
    }
    if (expect != NULL)
        json_object_set_new(c->pg_expected, key, json_pack("{s:I,s:o}", "seq", (json_int_t)seq, "obj", expect));
    free(path);
    free(wkey);
    free(key);
    free(name);
}

/* One queue: its gangs' PodGroups, its status and its gauges. */
static void sync_queue(struct sync_ctx *x, struct cache_queue *q)
{
    struct controller *c = x->c;
    for (struct cache_gang *g = q->gangs; x->podgroups && g != NULL; g = g->queue_next) {
        if (podgroup_wanted(g))
            sync_podgroup(x, g);
    }
    struct podgroup_queue_status st;
    struct error err;
    podgroup_queue_status_init(&st);
    if (podgroup_queue_status(c->cache, q, &st, &err) != 0) {
        log_warnf("queue %s: status not computed: %s", q->name, err.message);
        podgroup_queue_status_finish(&st);
        return;
    }
    podgroup_metrics_queue(c->qmetrics, c->cache, q, &st);
    x->nqueues++;
    if (x->queues && q->present) {
        json_t *exp = json_object_get(c->queue_expected, q->name);
        const json_t *observed = exp != NULL ? json_object_get(exp, "status")
                                             : json_object_get(json_object_get(c->queue_status, q->name), "status");
        json_t *patch = podgroup_queue_patch(observed, &st);
        if (patch != NULL) {
            json_t *expect = jsonpatch_merge_apply(observed, json_object_get(patch, "status"));
            char *key = util_strdupf("queue:%s", q->name);
            char *path = util_strdupf(VOLCANO_API "/queues/%s%s", q->name, (c->crds & PODGROUP_CRD_QUEUES_STATUS) ? "/status" : "");
            uint64_t seq = statuswriter_submit_new(c->writer, key, "PATCH", path, kube_patch_content_type(KUBE_PATCH_MERGE), patch);
            json_object_set_new(c->queue_expected, q->name, json_pack("{s:I,s:o}", "seq", (json_int_t)seq, "status", expect));
            x->nwrites++;
            free(path);
            free(key);
        }
    }
    podgroup_queue_status_finish(&st);
}

/*
 * After a pass (res) and its gate removals: the PodGroups of the gangs of the
 * queues it evaluated (and of PodGroups that changed), those queues' status
 * and gauges. Writes are queued for the status writer, never waited for.
 * resync: a periodic full pass, when failed writes are tried again.
 */
static void sync_status(struct controller *c, const struct admit_result *res, int resync)
{
    struct sync_ctx x = {.c = c};
    events_timestamp(time(NULL), x.now, sizeof(x.now));
    pthread_mutex_lock(&c->mu);
    if (resync) { /* writes that failed are tried again */
        drop_failed(c->pg_expected);
        drop_failed(c->queue_expected);
    }
    x.full = c->status_full;
    x.podgroups = (c->crds & PODGROUP_CRD_PODGROUPS) && (c->synced & (1u << WATCH_PODGROUPS));
    x.queues = (c->crds & PODGROUP_CRD_QUEUES) && (c->synced & (1u << WATCH_QUEUES));
    struct cache_queue *q;
    if (x.full) {
        cache_queue_for_each(q, c->cache)
            sync_queue(&x, q);
    } else {
        for (size_t i = 0; i < res->queues_evaluated; i++) {
            if ((q = cache_queue_get(c->cache, res->queues[i])) != NULL)
                sync_queue(&x, q);
        }
    }
    const char *key;
    json_t *v;
    json_object_foreach(c->pg_dirty, key, v)
    {
        const char *slash = strchr(key, '/');
        char *ns = slash != NULL ? util_memdup(key, (size_t)(slash - key)) : NULL;
        char *cluster = slash != NULL ? podgroup_cluster_of(slash + 1) : NULL;
        struct cache_gang *g = cluster != NULL ? cache_gang_get(c->cache, ns, cluster) : NULL;
        if (x.podgroups && g != NULL && podgroup_wanted(g))
            sync_podgroup(&x, g);
        free(cluster);
        free(ns);
    }
    json_object_clear(c->pg_dirty);
    podgroup_metrics_sweep(c->qmetrics, c->cache);
    if (x.podgroups)
        c->status_full = 0;
    pthread_mutex_unlock(&c->mu);
    if (x.npodgroups > 0 || x.nqueues > 0)
        log_debugf("status: %zu PodGroups and %zu queues compared, %zu writes queued", x.npodgroups, x.nqueues, x.nwrites);
}

/* The controller thread's loop state. */
struct run_state {
    long long next_resync; /* CLOCK_MONOTONIC ms of the next periodic full pass */
    long long retry_at;    /* an earlier full pass, after a failure; -1: none */
    int was_synced;        /* the decision watches had all synced */
    int was_leading;
    int lead_pass;        /* just became leader: the next pass is full */
    long long evict_at;   /* CLOCK_MONOTONIC ms of the next deadline or requeue-at (evictscan); -1: none */
    long long scan_after; /* an eviction scan due after passes (at most one a second); -1: none */
    long long evict_last; /* when the last scan ran */
};

#define EVICT_SCAN_MIN_MS 1000 /* after passes, scans at most this often */

/* evictor's hook: an eviction recorded; the cache knows it at once. */
static void on_evicted(void *arg, const struct evictscan_gang *e)
{
    struct controller *c = arg;
    pthread_mutex_lock(&c->mu);
    struct cache_gang *g = cache_gang_get(c->cache, e->namespace_, e->cluster);
    if (g != NULL && g->uid != NULL && e->cluster_uid != NULL && strcmp(g->uid, e->cluster_uid) == 0) {
        cache_gang_mark_evicted(c->cache, g, &e->record);
        if (e->preempted_by != NULL) /* in flight from now on (preemptscan, preempthold), before the watch shows it */
            cache_gang_mark_preempted(c->cache, g, e->preempted_by);
    }
    c->changed = 1;
    pthread_mutex_unlock(&c->mu);
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
    pthread_mutex_lock(&c->mu);
    evictscan_run(c->cache, &c->opts.evict, wall, c->started_wall_ms, (uint32_t)wall ^ (uint32_t)(mono * 2654435761u), &r);
    if (deadline) {
        cache_mark_all_dirty(c->cache); /* a backoff that ended lets its gang be admitted */
        c->changed = 1;
    }
    pthread_mutex_unlock(&c->mu);
    rs->evict_last = mono;
    rs->scan_after = -1;
    rs->evict_at = r.next_ms > 0 ? mono + (r.next_ms - wall) : -1;
    log_evict_warnings(c, &r);
    long stop = -1;
    if (!fault_armed(FAULT_AFTER_EVICT_RECORD, &stop))
        stop = -1;
    struct evictor_hooks h = {.may_write = writer_may_write, .evicted = on_evicted, .arg = c, .stop_after_deletes = stop};
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
        evict_record_next(&g->record, &c->opts.evict, e->reason, g->generation, wall, 0, &e->record);
        e->message = util_strdup(r->victim_message);
        e->preempted_by = util_strdup(by);
        e->pods = util_calloc(v->npods + 1, sizeof(*e->pods));
        for (size_t k = 0; k < v->npods; k++) {
            e->pods[k].name = util_strdup(v->pods[k].name);
            e->pods[k].uid = util_strdup(v->pods[k].uid);
            e->pods[k].member = 1;
        }
        e->npods = v->npods;
    }
    free(by);
}

/* The Preempting Event on the preemptor's RayCluster (uid: borrowed, may be NULL). */
static void tell_preempting(struct controller *c, const struct preemptscan_result *r, const char *uid, const char *now)
{
    struct event_list l = {0};
    struct events_object rc = {"ray.io/v1", "RayCluster", r->namespace_, r->cluster, uid};
    events_add(&l, &rc, "Normal", "Preempting", r->preemptor_message, now, c->instance);
    events_post(c, &l);
    free(l.items);
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
    pthread_mutex_lock(&c->mu);
    int rc = preemptscan_run(c->cache, res, wall, &r, &err);
    if (rc == 0 && r.kind != PREEMPT_KIND_NONE) {
        preemption_evictions(c, &r, wall, &er);
        const struct cache_gang *p = cache_gang_get(c->cache, r.namespace_, r.cluster);
        uid = util_strdup(p != NULL ? p->uid : NULL);
    }
    pthread_mutex_unlock(&c->mu);
    if (rc < 0)
        log_warnf("preempt: %s", err.message);
    if (er.len > 0) {
        char now[32];
        events_timestamp(wall / 1000, now, sizeof(now));
        log_infof("preempt: %s/%s (priority %d, queue %s): %s", r.namespace_, r.gang, (int)r.priority, r.queue,
                  r.preemptor_message);
        tell_preempting(c, &r, uid, now);
        struct evictor_hooks h = {.may_write = writer_may_write, .evicted = on_evicted, .arg = c, .stop_after_deletes = -1};
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
    if (c->stopping)
        return -1;
    /* Let a burst of watch events land before deciding. */
    if (pr > 0 && c->opts.debounce_ms > 0)
        usleep((useconds_t)c->opts.debounce_ms * 1000);
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
    if ((c->synced & DECISION_WATCHES) != DECISION_WATCHES)
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

/*
 * Under the lock: one decision pass into res, timed, and what the controller
 * keeps of its decisions (reasons, completeness). Returns, per decision,
 * whether its reason changed (new array).
 */
static int *run_pass(struct controller *c, unsigned flags, long long now, struct admit_result *res)
{
    c->changed = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    admit_set_now(c->admit, clock_wall_ms());
    admit_pass(c->admit, flags, res);
    clock_gettime(CLOCK_MONOTONIC, &b);
    metrics_histogram_observe(c->m_pass_seconds, NULL, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    int *report = util_calloc(res->len + 1, sizeof(*report));
    for (size_t i = 0; i < res->len; i++) {
        report[i] = admit_reason_changed(c->cache, &res->items[i]);
        note_complete(c, &res->items[i], now);
    }
    return report;
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
    while (!c->stopping) {
        if (wait_for_work(c, &rs) != 0)
            break;
        if (!check_leading(c, &rs))
            continue;
        long long now = clock_mono_ms();
        /* A CRD installed since the last look: start using it. */
        if (now >= rs.next_resync && (!c->discovered || !(c->crds & PODGROUP_CRD_PODGROUPS) || !(c->crds & PODGROUP_CRD_QUEUES) ||
                                      !(c->started & (1u << WATCH_LEGACY)))) {
            struct error err = {{0}};
            if (apply_discovery(c, &err) != 0)
                log_warnf("watch: %s", err.message);
        }
        unsigned flags;
        pthread_mutex_lock(&c->mu);
        if (!pass_due(c, &rs, now, &flags)) {
            pthread_mutex_unlock(&c->mu);
            if (rs.was_synced)
                scan_evictions(c, &rs, 0);
            continue;
        }
        struct admit_result res;
        admit_result_init(&res);
        int *report = run_pass(c, flags, now, &res);
        pthread_mutex_unlock(&c->mu);

        if (res.len > 0 && carry_out(c, &res, report) != 0)
            rs.retry_at = clock_mono_ms() + 1000;
        free(report);
        if (may_write(c))
            sync_status(c, &res, (flags & ADMIT_PASS_FULL) != 0);
        scan_preemption(c, &res);
        admit_result_finish(&res);
        scan_evictions(c, &rs, 1);
        if ((flags & ADMIT_PASS_FULL) && may_write(c)) {
            /* RayJobs suspended to rerun them after an eviction, once KubeRay has (rerun.h). */
            struct error err = {{0}};
            if (rerun_resume_all(c->client, &err) < 0)
                log_warnf("rerun: %s", err.message);
        }
    }
}
