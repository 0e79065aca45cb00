#include "evictor.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "clock.h"
#include "eventpost.h"
#include "evict.h"
#include "log.h"
#include "preempt.h"
#include "rerun.h"
#include "util.h"

int evictor_record(struct kube_client *k, const char *ns, const char *name, const char *uid, const json_t *patch, char *why,
                   size_t why_size)
{
    json_t *body = json_deep_copy(patch);
    if (uid != NULL) /* never touch a new RayCluster of the same name */
        json_object_set_new(json_object_get(body, "metadata"), "uid", json_string(uid));
    char *path = util_strdupf("/apis/ray.io/v1/namespaces/%s/rayclusters/%s", ns, name);
    struct kube_batch_item it = {
        .method = "PATCH",
        .path = path,
        .content_type = kube_patch_content_type(KUBE_PATCH_MERGE),
        .body = body,
    };
    kube_batch(k, &it, 1, 1);
    long st = it.resp.status;
    int rc = it.rc == 0 ? 0 : (st == 404 || st == 409) ? 1 : -1;
    if (rc != 0)
        util_format(why, why_size, "%s", it.resp.message);
    kube_client_response_finish(&it.resp);
    json_decref(body);
    free(path);
    return rc;
}

/* What evictor_delete_pods keeps per pod. */
struct attempt {
    char *path;
    json_t *precondition; /* owned: DeleteOptions with the uid */
    unsigned hopeless;
    int warned;
    char why[320];
};

static int hopeless(long status)
{
    return status >= 400 && status < 500 && status != 408 && status != 429;
}

/* The DisruptionTarget conditions, one batch; best effort (a failure is logged, the deletion goes on). A pod found gone is done. */
static void mark_pods(struct kube_client *k, struct evictor_pod *pods, struct attempt *tries, size_t n,
                      const struct evictor_options *o)
{
    struct kube_batch_item *items = util_calloc(n + 1, sizeof(*items));
    json_t **bodies = util_calloc(n + 1, sizeof(*bodies));
    char **paths = util_calloc(n + 1, sizeof(*paths));
    for (size_t i = 0; i < n; i++) {
        bodies[i] = evict_disruption_patch(o->message, o->now);
        if (pods[i].uid != NULL)
            json_object_set_new(bodies[i], "metadata", json_pack("{s:s}", "uid", pods[i].uid));
        paths[i] = util_strdupf("%s/status", tries[i].path);
        items[i] = (struct kube_batch_item){
            .method = "PATCH",
            .path = paths[i],
            .content_type = kube_patch_content_type(KUBE_PATCH_STRATEGIC),
            .body = bodies[i],
            .status_only = 1,
        };
    }
    kube_batch(k, items, n, o->concurrency);
    size_t failed = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        long st = items[i].resp.status;
        if (items[i].rc != 0 && (st == 404 || st == 409))
            pods[i].done = 1; /* gone, or another pod of that name */
        else if (items[i].rc != 0 && failed++ == 0)
            first = i;
        kube_client_response_finish(&items[i].resp);
        json_decref(bodies[i]);
        free(paths[i]);
    }
    if (failed > 0)
        log_warnf("evict: DisruptionTarget not recorded on %zu of %zu pods (first: %s/%s); deleting them anyway", failed, n,
                  pods[first].ns, pods[first].name);
    free(items);
    free(bodies);
    free(paths);
}

/* One round of deletions of the pending pods idx[0..n). Fills retry; returns its length. *others: a failure to pause after. */
static size_t delete_round(struct kube_client *k, struct evictor_pod *pods, struct attempt *tries, const size_t *idx, size_t n,
                           const struct evictor_options *o, size_t *deleted, size_t *retry, int *others)
{
    struct kube_batch_item *items = util_calloc(n + 1, sizeof(*items));
    for (size_t j = 0; j < n; j++)
        items[j] = (struct kube_batch_item){
            .method = "DELETE", .path = tries[idx[j]].path, .body = tries[idx[j]].precondition, .status_only = 1};
    kube_batch(k, items, n, o->concurrency);
    size_t nretry = 0;
    for (size_t j = 0; j < n; j++) {
        size_t i = idx[j];
        long st = items[j].resp.status;
        if (items[j].rc == 0 || st == 404 || st == 409) {
            pods[i].done = 1; /* deleted; gone; or a new pod of that name (uid precondition) */
            *deleted += items[j].rc == 0;
        } else {
            *others = 1;
            util_format(tries[i].why, sizeof(tries[i].why), "%s", items[j].resp.message);
            if (!(hopeless(st) && ++tries[i].hopeless >= EVICTOR_HOPELESS_TRIES))
                retry[nretry++] = i;
            if (!tries[i].warned) {
                tries[i].warned = 1;
                log_warnf("evict: delete %s/%s: %s (retrying)", pods[i].ns, pods[i].name, items[j].resp.message);
            }
        }
        kube_client_response_finish(&items[j].resp);
    }
    free(items);
    return nretry;
}

/* The crash drill's fault point: deletes only the first `limit` pods still to delete, one at a time. */
static void delete_some(struct kube_client *k, struct evictor_pod *pods, struct attempt *tries, const size_t *idx, size_t pending,
                        size_t limit, const struct evictor_options *o)
{
    size_t deleted = 0;
    for (size_t j = 0; j < pending && deleted < limit; j++) {
        size_t retry;
        int others = 0;
        delete_round(k, pods, tries, &idx[j], 1, o, &deleted, &retry, &others);
    }
}

size_t evictor_delete_pods(struct kube_client *k, struct evictor_pod *pods, size_t n, const struct evictor_options *o)
{
    struct evictor_options opt = *o;
    opt.persist_ms = opt.persist_ms > 0 ? opt.persist_ms : EVICTOR_PERSIST_MS;
    opt.step_ms = opt.step_ms > 0 ? opt.step_ms : EVICTOR_STEP_MS;
    opt.concurrency = opt.concurrency > 0 ? opt.concurrency : 64;
    struct attempt *tries = util_calloc(n + 1, sizeof(*tries));
    size_t *idx = util_calloc(n + 1, sizeof(*idx)), *retry = util_calloc(n + 1, sizeof(*retry));
    for (size_t i = 0; i < n; i++) {
        pods[i].done = 0;
        tries[i].path = util_strdupf("/api/v1/namespaces/%s/pods/%s", pods[i].ns, pods[i].name);
        tries[i].precondition = json_pack("{s:s,s:s}", "apiVersion", "v1", "kind", "DeleteOptions");
        if (pods[i].uid != NULL)
            json_object_set_new(tries[i].precondition, "preconditions", json_pack("{s:s}", "uid", pods[i].uid));
    }
    long long start = clock_mono_ms(), step = opt.step_ms;
    if (n > 0 && (opt.may_write == NULL || opt.may_write(opt.arg)))
        mark_pods(k, pods, tries, n, &opt);
    size_t pending = 0, deleted = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pods[i].done)
            idx[pending++] = i;
    }
    if (opt.stop_after_deletes >= 0) {
        delete_some(k, pods, tries, idx, pending, (size_t)opt.stop_after_deletes, &opt);
        pending = 0;
    }
    while (pending > 0) {
        if (opt.may_write != NULL && !opt.may_write(opt.arg))
            break;
        int others = 0;
        pending = delete_round(k, pods, tries, idx, pending, &opt, &deleted, retry, &others);
        memcpy(idx, retry, pending * sizeof(*idx));
        long long left = opt.persist_ms - (clock_mono_ms() - start);
        if (pending == 0 || left <= 0)
            break;
        clock_sleep_ms(step < left ? step : left);
        step = step * 2 < EVICTOR_STEP_MAX_MS ? step * 2 : EVICTOR_STEP_MAX_MS;
    }
    size_t notdone = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pods[i].done) {
            notdone++;
            log_warnf("evict: delete %s/%s: gave up for now after %lld ms: %s", pods[i].ns, pods[i].name, clock_mono_ms() - start,
                      tries[i].why[0] != '\0' ? tries[i].why : "not leading any more");
        }
        json_decref(tries[i].precondition);
        free(tries[i].path);
    }
    free(tries);
    free(idx);
    free(retry);
    return notdone;
}

/* ------------------------------------------------------------------ carrying out a scan */

struct evictor {
    struct kube_client *k;
    struct metrics_family *m_evicted;
    char *instance;
    json_t *sent; /* pod uid -> CLOCK_MONOTONIC ms its deletion was sent */
};

struct evictor *evictor_create(struct kube_client *k, struct metrics_registry *reg, const char *instance)
{
    struct evictor *e = util_calloc(1, sizeof(*e));
    static const char *const labels[] = {"queue", "reason"};
    e->k = k;
    e->m_evicted = metrics_counter_create(reg, "raygate_gangs_evicted_total",
                                          "Gangs taken back whole after a timeout (requeued), by queue and reason "
                                          "(PlacementTimeout, PodsReadyTimeout, DispatchLeaseExpired).",
                                          2, labels);
    e->instance = util_strdup(instance);
    e->sent = json_object();
    return e;
}

void evictor_destroy(struct evictor *e)
{
    if (e == NULL)
        return;
    json_decref(e->sent);
    free(e->instance);
    free(e);
}

/* The GangEvicted (or Preempted, or DispatchLeaseExpired) Events of an eviction: on the RayCluster and on each of its pods. */
static void tell(struct evictor *e, const struct evictscan_gang *g, const char *now, const struct evictor_hooks *h)
{
    struct eventpost_list l;
    eventpost_list_init(&l);
    struct events_object rc = {"ray.io/v1", "RayCluster", g->namespace_, g->cluster, g->cluster_uid};
    const char *reason = g->preempted_by != NULL                    ? "Preempted"
                         : g->reason == EVICT_REASON_DISPATCH_LEASE ? evict_reason_name(g->reason)
                                                                    : "GangEvicted";
    eventpost_add(&l, &rc, "Warning", reason, g->message, now, e->instance);
    for (size_t i = 0; i < g->npods; i++) {
        struct events_object po = {"v1", "Pod", g->namespace_, g->pods[i].name, g->pods[i].uid};
        eventpost_add(&l, &po, "Warning", reason, g->message, now, e->instance);
    }
    eventpost_send(e->k, &l, h->may_write, h->arg, "GangEvicted Events");
    eventpost_list_finish(&l);
}

/* Step 1 and what follows it: 0 written (the cache marked, Events sent), else why not (logged). */
static int record_one(struct evictor *e, const struct evictscan_gang *g, const char *now, const struct evictor_hooks *h)
{
    char why[320];
    json_t *patch = evict_record_patch(&g->record, NAMES_ANNOTATION_ADMITTED, g->resource_version);
    if (g->preempted_by != NULL) /* in the same PATCH: a victim never evicts its preemptor back, even after a restart */
        json_object_set_new(json_object_get(json_object_get(patch, "metadata"), "annotations"), NAMES_ANNOTATION_PREEMPTED_BY,
                            json_string(g->preempted_by));
    if (g->held) /* in the same PATCH: KubeRay deletes its pods and makes none until it is admitted again (heldsuspend.h) */
        json_object_set_new(patch, "spec", json_pack("{s:b}", "suspend", 1));
    int rc = evictor_record(e->k, g->namespace_, g->cluster, g->cluster_uid, patch, why, sizeof(why));
    json_decref(patch);
    if (rc == 1) {
        log_infof("evict: %s/%s changed or is gone since it was judged: judged again", g->namespace_, g->gang);
        return 1;
    }
    if (rc < 0) {
        log_warnf("evict: recording the eviction of %s/%s: %s", g->namespace_, g->gang, why);
        return -1;
    }
    if (h->evicted != NULL)
        h->evicted(h->arg, g);
    const char *labels[] = {g->queue, evict_reason_name(g->reason)};
    metrics_counter_add(e->m_evicted, labels, 1);
    log_warnf("evict: %s: %s", g->namespace_, g->message);
    tell(e, g, now, h);
    return 0;
}

/*
 * After the record of a RayJob's gang: the RayJob suspended (rerun.h), to run
 * again from the start on a new RayCluster once resumed and re-admitted,
 * carrying the record (KubeRay copies its annotations onto that cluster, so
 * the backoff and the requeue count hold, and a dispatched one's lease
 * counts from this gate's sighting, not afresh). When KubeRay would not suspend it,
 * the eviction goes on as for any RayCluster: KubeRay recreates its pods.
 */
static void rerun_rayjob(struct evictor *e, const struct evictscan_gang *g, const char *now)
{
    json_t *record = evictscan_rayjob_record(g);
    struct error why = {{0}};
    switch (rerun_suspend(e->k, g->namespace_, g->rayjob, g->rayjob_uid, record, now, &why)) {
    case RERUN_SUSPENDED:
        log_infof("evict: RayJob %s/%s suspended: it runs again from the start once resumed and re-admitted", g->namespace_,
                  g->rayjob);
        break;
    case RERUN_NOT_POSSIBLE:
        log_infof("evict: RayJob %s/%s not suspended (%s): KubeRay recreates its pods, queued again", g->namespace_, g->rayjob,
                  why.message);
        break;
    case RERUN_FAILED:
        log_warnf("evict: RayJob %s/%s not suspended: %s; KubeRay recreates its pods, queued again", g->namespace_, g->rayjob,
                  why.message);
        break;
    }
    json_decref(record);
}

/* Step 2: deletes g's pods (those not sent lately when finishing); returns how many are not done. */
static size_t delete_gang_pods(struct evictor *e, const struct evictscan_gang *g, const char *now, const struct evictor_hooks *h)
{
    long long mono = clock_mono_ms();
    struct evictor_pod *pods = util_calloc(g->npods + 1, sizeof(*pods));
    size_t n = 0;
    for (size_t i = 0; i < g->npods; i++) {
        json_t *at = json_object_get(e->sent, g->pods[i].uid);
        if (g->reason == EVICT_REASON_NONE && at != NULL && mono - json_integer_value(at) < EVICTOR_REDELETE_MS)
            continue;
        pods[n++] = (struct evictor_pod){g->namespace_, g->pods[i].name, g->pods[i].uid, 0};
    }
    char *finish = g->reason != EVICT_REASON_NONE ? NULL
                   : g->surplus
                       ? util_strdupf("raygate deletes this pod: gang %s is admitted with one head, and this is a second one "
                                      "(born ungated, not counted in its admission)",
                                      g->gang)
                       : util_strdupf("raygate finishes the eviction of gang %s: this pod was left behind", g->gang);
    struct evictor_options o = {
        .message = finish != NULL ? finish : g->message,
        .now = now,
        .may_write = h->may_write,
        .arg = h->arg,
        .stop_after_deletes = h->stop_after_deletes,
    };
    size_t left = n > 0 ? evictor_delete_pods(e->k, pods, n, &o) : 0;
    /* From the end of the batch: a large gang's watch events may lag its deletions by seconds. */
    long long done = clock_mono_ms();
    for (size_t i = 0; i < n; i++) {
        if (pods[i].done)
            json_object_set_new(e->sent, pods[i].uid, json_integer(done));
    }
    if (n > 0)
        log_infof("evict: %s/%s: %zu of %zu pods deleted%s", g->namespace_, g->gang, n - left, n,
                  g->surplus       ? " (a second head)"
                  : finish != NULL ? " (finishing an earlier eviction)"
                                   : "");
    free(finish);
    free(pods);
    return left;
}

/* Forgets deletions sent long ago. */
static void forget_sent(struct evictor *e)
{
    long long mono = clock_mono_ms();
    const char *key;
    json_t *v, *tmp;
    json_object_foreach_safe(e->sent, tmp, key, v)
    {
        if (mono - json_integer_value(v) >= EVICTOR_REDELETE_MS)
            json_object_del(e->sent, key);
    }
}

long evictor_carry_out(struct evictor *e, const struct evictscan_result *r, const char *now, const struct evictor_hooks *h)
{
    long failed = 0;
    forget_sent(e);
    for (size_t i = 0; i < r->len; i++) {
        const struct evictscan_gang *g = &r->items[i];
        if (h->may_write != NULL && !h->may_write(h->arg))
            break;
        if (g->reason != EVICT_REASON_NONE) {
            int rc = record_one(e, g, now, h);
            failed += rc != 0; /* judged again soon: failed, or the RayCluster changed since */
            if (rc != 0)
                continue; /* not recorded: no pod is touched */
            if (g->rayjob != NULL && g->rayjob_uid != NULL)
                rerun_rayjob(e, g, now);
        }
        failed += delete_gang_pods(e, g, now, h) > 0;
        if (h->stop_after_deletes >= 0 && g->reason != EVICT_REASON_NONE)
            return -1;
    }
    return failed;
}
