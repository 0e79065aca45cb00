#include "ungate.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "clock.h"
#include "log.h"
#include "ungatepace.h"
#include "util.h"

json_t *ungate_gates_without_ours(const json_t *pod, int *ours)
{
    json_t *keep = json_array();
    *ours = 0;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "schedulingGates"), i, g)
    {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (name != NULL && strcmp(name, NAMES_GATE) == 0)
            *ours = 1;
        else
            json_array_append(keep, g);
    }
    return keep;
}

/* What ungate_pods keeps per job. */
struct attempt {
    char *path;
    json_t *patch;     /* owned */
    unsigned hopeless; /* answers that retrying cannot cure */
    int warned;        /* its first failure was logged */
    char why[320];     /* the last failure */
};

/* A 4xx that a retry does not cure (404 and 409 are handled before). */
static int hopeless(long status)
{
    return status >= 400 && status < 500 && status != 408 && status != 429;
}

/* A failed answer for job i: keep it for the next round, unless hopeless too often. Returns 1 to retry. */
static int failed(struct ungate_job *job, struct attempt *t, long status, const char *message)
{
    util_format(t->why, sizeof(t->why), "%s", message);
    if (hopeless(status) && ++t->hopeless >= UNGATE_HOPELESS_TRIES)
        return 0;
    if (!t->warned) {
        t->warned = 1;
        log_warnf("ungate %s/%s: %s (retrying)", job->ns, job->pod->name, message);
    }
    return 1;
}

/*
 * Reads the pods of the 409 answers again (batched). A pod free of our gate is
 * done; one that still has it gets a patch of its new version. Appends to
 * retry the jobs to patch again; returns how many. *others set when a read failed.
 */
static size_t reread(struct kube_client *k, struct ungate_job *jobs, struct attempt *tries, const size_t *idx, size_t n,
                     size_t concurrency, size_t *retry, int *others)
{
    struct kube_batch_item *items = util_calloc(n + 1, sizeof(*items));
    for (size_t j = 0; j < n; j++)
        items[j] = (struct kube_batch_item){.method = "GET", .path = tries[idx[j]].path};
    kube_batch(k, items, n, concurrency);
    size_t nretry = 0;
    for (size_t j = 0; j < n; j++) {
        size_t i = idx[j];
        struct ungate_job *job = &jobs[i];
        const json_t *pod = items[j].resp.body;
        const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
        if (items[j].resp.status == 404 ||
            (items[j].rc == 0 && job->pod->uid != NULL && uid != NULL && strcmp(uid, job->pod->uid) != 0)) {
            job->ok = 1; /* gone (a new pod of that name is not ours to release) */
        } else if (items[j].rc == 0) {
            int ours;
            json_t *keep = ungate_gates_without_ours(pod, &ours);
            if (!ours) {
                job->ok = 1; /* an earlier try of ours was applied (its answer lost), or another hand removed it */
                job->removed_ms = clock_mono_ms();
            } else {
                struct admit_pod fresh = {
                    .name = job->pod->name,
                    .uid = job->pod->uid,
                    .resource_version =
                        (char *)json_string_value(json_object_get(json_object_get(pod, "metadata"), "resourceVersion")),
                    .keep_gates = keep,
                };
                if (fresh.resource_version != NULL) {
                    json_decref(tries[i].patch);
                    tries[i].patch = admit_result_ungate_patch(&fresh);
                }
                retry[nretry++] = i;
            }
            json_decref(keep);
        } else {
            *others = 1;
            if (failed(job, &tries[i], items[j].resp.status, items[j].resp.message))
                retry[nretry++] = i; /* the old patch: its 409 brings us back here */
        }
        kube_client_response_finish(&items[j].resp);
    }
    free(items);
    return nretry;
}

/* One round: PATCHes the pending jobs idx[0..n). Fills retry; *others set when a failure was not a 409. */
static size_t patch_round(struct kube_client *k, struct ungate_job *jobs, struct attempt *tries, const size_t *idx, size_t n,
                          size_t concurrency, size_t *retry, int *others)
{
    struct kube_batch_item *items = util_calloc(n + 1, sizeof(*items));
    size_t *conflicts = util_calloc(n + 1, sizeof(*conflicts));
    for (size_t j = 0; j < n; j++) {
        items[j] = (struct kube_batch_item){
            .method = "PATCH",
            .path = tries[idx[j]].path,
            .content_type = kube_patch_content_type(KUBE_PATCH_MERGE),
            .body = tries[idx[j]].patch,
            .status_only = 1, /* a released gang of 1,000 would hold 1,000 parsed pods until the round ends */
        };
    }
    kube_batch(k, items, n, concurrency);
    size_t nretry = 0, nconflicts = 0;
    for (size_t j = 0; j < n; j++) {
        size_t i = idx[j];
        long st = items[j].resp.status;
        if (items[j].rc == 0) {
            jobs[i].ok = 1;
            jobs[i].removed_ms = clock_mono_ms();
        } else if (st == 404) {
            jobs[i].ok = 1;
        } else if (st == 409) {
            conflicts[nconflicts++] = i;
        } else {
            *others = 1;
            if (failed(&jobs[i], &tries[i], st, items[j].resp.message))
                retry[nretry++] = i;
        }
        kube_client_response_finish(&items[j].resp);
    }
    free(items);
    if (nconflicts > 0)
        nretry += reread(k, jobs, tries, conflicts, nconflicts, concurrency, retry + nretry, others);
    free(conflicts);
    return nretry;
}

/* Rounds of PATCHes for jobs idx[0..n) (idx is overwritten), retried as ungate.h says; returns when all are done or given up. */
static void release(struct kube_client *k, struct ungate_job *jobs, struct attempt *tries, size_t *idx, size_t n,
                    const struct ungate_options *opt, size_t *retry)
{
    long long start = clock_mono_ms(), step = opt->step_ms;
    size_t pending = n;
    while (pending > 0) {
        if (opt->may_write != NULL && !opt->may_write(opt->arg))
            break;
        int others = 0;
        size_t nretry = patch_round(k, jobs, tries, idx, pending, opt->concurrency, retry, &others);
        memcpy(idx, retry, nretry * sizeof(*idx));
        pending = nretry;
        long long left = opt->persist_ms - (clock_mono_ms() - start);
        if (pending == 0 || left <= 0)
            break;
        if (others) { /* a 409 is retried at once with its new version; anything else after a short, growing pause */
            clock_sleep_ms(step < left ? step : left);
            step = step * 2 < UNGATE_STEP_MAX_MS ? step * 2 : UNGATE_STEP_MAX_MS;
        }
    }
}

/*
 * The paced release (ungatepace.h): order[0..n) is the jobs, heads first; the
 * gates go in batches sized by how fast the released pods bind.
 */
static void release_paced(struct kube_client *k, struct ungate_job *jobs, struct attempt *tries, const size_t *order, size_t n,
                          const struct ungate_options *opt, size_t *idx, size_t *retry)
{
    struct ungatepace pace;
    ungatepace_init(&pace, opt->pace);
    size_t done = 0, bound = 0, batches = 0, peak = 0;
    long long t0 = clock_mono_ms();
    while (done < n) {
        if (opt->may_write != NULL && !opt->may_write(opt->arg))
            break;
        long long now = clock_mono_ms();
        if (done > 0) {
            bound = opt->bound(opt->arg, jobs, order, done);
            ungatepace_observe(&pace, now, 0, bound);
        }
        size_t heads = 0;
        while (done + heads < n && jobs[order[done + heads]].pod->head)
            heads++;
        size_t m = heads > 0 ? heads : ungatepace_batch(&pace, now, n - done);
        if (m == 0) {
            clock_sleep_ms(opt->pace_tick_ms);
            continue;
        }
        memcpy(idx, order + done, m * sizeof(*idx));
        struct ungate_options o = *opt;
        if (ungatepace_behind(&pace, now)) /* pacing gave up: as fast as the API server takes them */
            o.concurrency = UNGATE_CATCHUP_CONCURRENCY;
        release(k, jobs, tries, idx, m, &o, retry);
        done += m;
        batches++;
        peak = ungatepace_rate(&pace) > peak ? ungatepace_rate(&pace) : peak;
        ungatepace_observe(&pace, clock_mono_ms(), m, bound);
    }
    log_infof("ungate: %zu gates paced in %zu batches over %lld ms (binds seen up to %zu/s)", done, batches, clock_mono_ms() - t0,
              peak);
}

/* Job indices, heads first (the rest in their order). */
static void head_first(const struct ungate_job *jobs, size_t n, size_t *order)
{
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].pod->head)
            order[j++] = i;
    for (size_t i = 0; i < n; i++)
        if (!jobs[i].pod->head)
            order[j++] = i;
}

size_t ungate_pods(struct kube_client *k, struct ungate_job *jobs, size_t n, const struct ungate_options *o)
{
    struct ungate_options opt = o != NULL ? *o : (struct ungate_options){0};
    if (opt.persist_ms <= 0)
        opt.persist_ms = UNGATE_PERSIST_MS;
    if (opt.step_ms <= 0)
        opt.step_ms = UNGATE_STEP_MS;
    if (opt.concurrency == 0)
        opt.concurrency = UNGATE_CONCURRENCY;
    if (opt.pace_tick_ms <= 0)
        opt.pace_tick_ms = UNGATE_PACE_TICK_MS;
    struct attempt *tries = util_calloc(n + 1, sizeof(*tries));
    size_t *idx = util_calloc(n + 1, sizeof(*idx)), *retry = util_calloc(n + 1, sizeof(*retry));
    size_t *order = util_calloc(n + 1, sizeof(*order));
    for (size_t i = 0; i < n; i++) {
        jobs[i].ok = 0;
        jobs[i].removed_ms = -1;
        tries[i].path = util_strdupf("/api/v1/namespaces/%s/pods/%s", jobs[i].ns, jobs[i].pod->name);
        tries[i].patch = admit_result_ungate_patch(jobs[i].pod);
    }
    long long start = clock_mono_ms();
    head_first(jobs, n, order);
    if (opt.bound != NULL && n > opt.pace_over) {
        release_paced(k, jobs, tries, order, n, &opt, idx, retry);
    } else {
        memcpy(idx, order, n * sizeof(*idx));
        release(k, jobs, tries, idx, n, &opt, retry);
    }
    size_t notok = 0;
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].ok) {
            notok++;
            log_warnf("ungate %s/%s: gave up for this pass after %lld ms: %s", jobs[i].ns, jobs[i].pod->name,
                      clock_mono_ms() - start, tries[i].why[0] != '\0' ? tries[i].why : "not leading any more");
        } else if (tries[i].warned) {
            log_infof("ungate %s/%s: gate removed after retries (%lld ms)", jobs[i].ns, jobs[i].pod->name, clock_mono_ms() - start);
        }
        json_decref(tries[i].patch);
        free(tries[i].path);
    }
    free(tries);
    free(idx);
    free(retry);
    free(order);
    return notok;
}

int ungate_owner_verdict(long status, const json_t *body, const char *uid)
{
    if (status == 404)
        return 1;
    if (status < 200 || status > 299 || !json_is_object(body))
        return -1;
    const json_t *meta = json_object_get(body, "metadata");
    const char *have = json_string_value(json_object_get(meta, "uid"));
    if (uid != NULL && (have == NULL || strcmp(have, uid) != 0))
        return 1;
    return json_object_get(meta, "deletionTimestamp") != NULL ? 1 : 0;
}

/* ------------------------------------------------------------------ spread */

#define SPREAD_FORGET_MS (3600LL * 1000) /* a gang deleted half-ungated is forgotten after this */

struct ungate_spread {
    json_t *gangs; /* "ns/cluster" -> [first removal ms or -1, last removal ms or -1, noted ms] */
};

struct ungate_spread *ungate_spread_create(void)
{
    struct ungate_spread *s = util_calloc(1, sizeof(*s));
    s->gangs = json_object();
    return s;
}

void ungate_spread_destroy(struct ungate_spread *s)
{
    if (s == NULL)
        return;
    json_decref(s->gangs);
    free(s);
}

size_t ungate_spread_pending(const struct ungate_spread *s)
{
    return json_object_size(s->gangs);
}

static void forget_old(struct ungate_spread *s, long long now_ms)
{
    const char *key;
    json_t *v, *tmp;
    json_object_foreach_safe(s->gangs, tmp, key, v)
    {
        if (now_ms - json_integer_value(json_array_get(v, 2)) > SPREAD_FORGET_MS)
            json_object_del(s->gangs, key);
    }
}

long long ungate_spread_note(struct ungate_spread *s, const char *ns, const char *cluster, int begins,
                             const struct ungate_job *jobs, size_t n, long long now_ms)
{
    forget_old(s, now_ms);
    char *key = util_strdupf("%s/%s", ns, cluster);
    json_t *entry = json_object_get(s->gangs, key);
    if (begins) {
        json_object_del(s->gangs, key);
        entry = NULL;
    } else if (entry == NULL) {
        free(key);
        return -1; /* its admission removed every gate: a pod replaced since is no spread */
    }
    long long first = entry != NULL ? json_integer_value(json_array_get(entry, 0)) : -1;
    long long last = entry != NULL ? json_integer_value(json_array_get(entry, 1)) : -1;
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        left += !jobs[i].ok;
        long long t = jobs[i].removed_ms;
        if (t < 0)
            continue;
        if (first < 0 || t < first)
            first = t;
        if (t > last)
            last = t;
    }
    long long spread = -1;
    if (left > 0) {
        json_object_set_new(s->gangs, key, json_pack("[I,I,I]", (json_int_t)first, (json_int_t)last, (json_int_t)now_ms));
    } else {
        json_object_del(s->gangs, key);
        if (first >= 0)
            spread = last - first;
    }
    free(key);
    return spread;
}
