#include "leader.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "lease.h"
#include "log.h"
#include "util.h"

struct leader {
    struct kube_client *client;
    char *path;       /* the Lease */
    char *collection; /* its namespace's leases, to create it */
    char *identity;
    void (*notify)(void *arg);
    void *notify_arg;

    pthread_t thread;
    int started;
    pthread_mutex_t mu; /* guards le, stopping and the condition */
    pthread_cond_t cond;
    int stopping;
    struct lease_elector le;
    char *holder_logged; /* the holder we last said holds the lease */
};

static struct lease_time time_now(void)
{
    struct timespec w;
    clock_gettime(CLOCK_REALTIME, &w);
    return (struct lease_time){.mono_ms = clock_mono_ms(), .wall_us = (long long)w.tv_sec * 1000000 + w.tv_nsec / 1000};
}

static uint32_t random32(void)
{
    uint32_t r = 0;
    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        r = (uint32_t)getpid() ^ (uint32_t)clock_mono_ms();
    return r;
}

struct leader *leader_create(const struct kubeconfig *cfg, const struct leader_options *opts, struct error *err)
{
    char host[256] = "raygate-gate";
    gethostname(host, sizeof(host) - 1);
    char *identity = opts->identity != NULL ? util_strdup(opts->identity) : util_strdupf("%s_%08x", host, random32());
    struct lease_config lc = {
        .namespace_ = opts->namespace_,
        .name = opts->name,
        .identity = identity,
        .duration_ms = opts->duration_ms > 0 ? opts->duration_ms : LEASE_DEFAULT_DURATION_MS,
        .renew_deadline_ms = opts->renew_deadline_ms > 0 ? opts->renew_deadline_ms : LEASE_DEFAULT_RENEW_DEADLINE_MS,
        .retry_period_ms = opts->retry_period_ms > 0 ? opts->retry_period_ms : LEASE_DEFAULT_RETRY_PERIOD_MS,
    };
    if (lease_config_check(&lc) != 0) {
        error_setf(err,
                   "leader election: need a namespace, a name, and 0 < retry period (%ld ms) < renew deadline (%ld ms) < "
                   "lease duration (%ld ms, whole seconds)",
                   lc.retry_period_ms, lc.renew_deadline_ms, lc.duration_ms);
        free(identity);
        return NULL;
    }
    long per_request = lc.renew_deadline_ms / 2 > 1000 ? lc.renew_deadline_ms / 2 : 1000;
    struct kube_client_options copts = {
        .request_timeout_ms = per_request,
        .connect_timeout_ms = per_request,
        .backoff_base_ms = 200,
        .backoff_max_ms = 1000,
        .retry_after_max_ms = 1000,
        .max_retries = 1,
        .metrics = opts->metrics,
    };
    struct kube_client *client = kube_client_create(cfg, &copts, err);
    if (client == NULL) {
        free(identity);
        return NULL;
    }
    struct leader *l = util_calloc(1, sizeof(*l));
    l->client = client;
    l->identity = identity;
    l->path = util_strdupf("/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", lc.namespace_, lc.name);
    l->collection = util_strdupf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", lc.namespace_);
    lease_elector_init(&l->le, &lc);
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cond, &ca);
    pthread_condattr_destroy(&ca);
    return l;
}

const char *leader_identity(const struct leader *l)
{
    return l->identity;
}

void leader_set_notify(struct leader *l, void (*fn)(void *arg), void *arg)
{
    l->notify = fn;
    l->notify_arg = arg;
}

int leader_is_leading(struct leader *l)
{
    pthread_mutex_lock(&l->mu);
    int leading = lease_elector_leading(&l->le, clock_mono_ms());
    pthread_mutex_unlock(&l->mu);
    return leading;
}

/* Sends a's write; reports the outcome to the elector. Returns 0 if it was written. */
static int write_lease(struct leader *l, struct lease_action *a)
{
    struct kube_response r;
    kube_client_response_init(&r);
    int rc = a->kind == LEASE_ACTION_CREATE ? kube_create(l->client, l->collection, a->body, &r)
                                            : kube_update(l->client, l->path, a->body, &r);
    pthread_mutex_lock(&l->mu);
    lease_elector_done(&l->le, a, rc == 0 ? r.body : NULL);
    pthread_mutex_unlock(&l->mu);
    if (rc != 0) {
        /* A 409 is the algorithm working (someone wrote first): read again next time. */
        if (r.status == 409)
            log_debugf("leader election: %s", r.message);
        else
            log_warnf("leader election: %s", r.message);
    }
    kube_client_response_finish(&r);
    return rc;
}

/* Under the lock: says who holds the lease when that changed. */
static void log_holder(struct leader *l)
{
    const char *h = l->le.observed ? l->le.record.holder : NULL;
    if (h == NULL || (l->holder_logged != NULL && strcmp(h, l->holder_logged) == 0))
        return;
    free(l->holder_logged);
    l->holder_logged = util_strdup(h);
    if (strcmp(h, l->identity) != 0)
        log_infof("leader election: lease %s held by %s", l->path, h[0] != '\0' ? h : "nobody (released)");
}

/* One client-go tryAcquireOrRenew. */
static void try_acquire_or_renew(struct leader *l)
{
    struct lease_action a;
    lease_action_init(&a);
    struct lease_time now = time_now();
    pthread_mutex_lock(&l->mu);
    enum lease_action_kind kind = lease_elector_try_fast(&l->le, &now, &a);
    pthread_mutex_unlock(&l->mu);
    if (kind == LEASE_ACTION_UPDATE && write_lease(l, &a) == 0)
        goto out;

    struct kube_response r;
    kube_client_response_init(&r);
    int rc = kube_get(l->client, l->path, &r);
    if (rc != 0 && r.status != 404) {
        log_warnf("leader election: %s", r.message);
        kube_client_response_finish(&r);
        goto out;
    }
    /* The read's answer is as new as now: judge expiry from here. */
    now = time_now();
    pthread_mutex_lock(&l->mu);
    kind = lease_elector_try(&l->le, &now, rc == 0 ? r.body : NULL, &a);
    log_holder(l);
    pthread_mutex_unlock(&l->mu);
    kube_client_response_finish(&r);
    if (kind != LEASE_ACTION_NONE)
        write_lease(l, &a);
out:
    lease_action_finish(&a);
}

static void *run(void *arg)
{
    struct leader *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->stopping) {
        pthread_mutex_unlock(&l->mu);
        try_acquire_or_renew(l);
        pthread_mutex_lock(&l->mu);
        long long now = clock_mono_ms();
        int change = lease_elector_check(&l->le, now);
        int leading = l->le.leading;
        long long wait = l->le.retry_period_ms;
        if (leading) {
            /* Wake at the renew deadline at the latest, to say we lost. */
            long long left = l->le.renewed_ms + l->le.renew_deadline_ms - now;
            if (left < wait)
                wait = left > 0 ? left : 0;
        } else {
            wait += (long long)((double)wait * 1.2 * (double)(random32() % 1000) / 1000.0);
        }
        if (change > 0)
            log_infof("leader election: leading as %s (lease %s, %ld transitions)", l->identity, l->path, l->le.record.transitions);
        else if (change < 0)
            log_warnf("leader election: no longer leading (lease %s not renewed in time or taken over): writing nothing", l->path);
        if (change != 0 && l->notify != NULL) {
            pthread_mutex_unlock(&l->mu);
            l->notify(l->notify_arg);
            pthread_mutex_lock(&l->mu);
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += wait / 1000;
        until.tv_nsec += (wait % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        while (!l->stopping && pthread_cond_timedwait(&l->cond, &l->mu, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int leader_start(struct leader *l)
{
    if (pthread_create(&l->thread, NULL, run, l) != 0)
        return -1;
    l->started = 1;
    log_infof("leader election: candidate %s for lease %s", l->identity, l->path);
    return 0;
}

void leader_stop(struct leader *l)
{
    if (l == NULL)
        return;
    pthread_mutex_lock(&l->mu);
    int was_stopping = l->stopping;
    l->stopping = 1;
    pthread_cond_signal(&l->cond);
    pthread_mutex_unlock(&l->mu);
    if (l->started) {
        pthread_join(l->thread, NULL);
        l->started = 0;
    }
    if (was_stopping)
        return;
    struct lease_action a;
    lease_action_init(&a);
    struct lease_time now = time_now();
    pthread_mutex_lock(&l->mu);
    enum lease_action_kind kind = lease_elector_release(&l->le, &now, &a);
    pthread_mutex_unlock(&l->mu);
    if (kind != LEASE_ACTION_NONE && write_lease(l, &a) == 0)
        log_infof("leader election: %s released lease %s", l->identity, l->path);
    lease_action_finish(&a);
}

void leader_destroy(struct leader *l)
{
    if (l == NULL)
        return;
    leader_stop(l);
    lease_elector_finish(&l->le);
    kube_client_destroy(l->client);
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->mu);
    free(l->holder_logged);
    free(l->path);
    free(l->collection);
    free(l->identity);
    free(l);
}
