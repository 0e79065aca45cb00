#include "leaseseen.h"

#include <stdlib.h>
#include <string.h>

#include "cachelease.h"
#include "dispatchlease.h"
#include "legacy.h"
#include "log.h"
#include "util.h"

/* One record to write, with what it needs of the cache (copied under the lock). */
struct record {
    char *namespace_;
    char *name;
    char *uid;     /* the precondition; may be NULL */
    char *path;    /* the RayCluster's */
    json_t *patch; /* owned: dispatchlease_record_patch's */
    uint64_t counter;
};

static int may_write(const struct leaseseen_config *cfg)
{
    return cfg->may_write == NULL || cfg->may_write(cfg->arg);
}

/* Under the lock: the records the cache's leases want, into *out (new array, caller frees); their number. */
static size_t collect(struct cache *c, struct record **out)
{
    size_t n = 0, cap = 0;
    struct record *r = NULL;
    struct cache_gang *g;
    cache_for_each_gang(g, c)
    {
        if (!g->present || !dispatchlease_record_wanted(g->lease))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            r = util_realloc(r, cap * sizeof(*r));
        }
        struct record *x = &r[n++];
        *x = (struct record){.namespace_ = util_strdup(g->namespace_), .name = util_strdup(g->name), .uid = util_strdup(g->uid)};
        x->path = util_strdupf("/apis/%s/namespaces/%s/rayclusters/%s", g->legacy ? LEGACY_API_VERSION : "ray.io/v1", g->namespace_,
                               g->name);
        x->patch = dispatchlease_record_patch(g->lease, g->uid, &x->counter);
    }
    *out = r;
    return n;
}

static void records_free(struct record *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].namespace_);
        free(r[i].name);
        free(r[i].uid);
        free(r[i].path);
        json_decref(r[i].patch);
    }
    free(r);
}

/* Under the lock: what became of each write (items[i].rc, status) marked on the cache's gang, if it is still that RayCluster. */
static long mark(struct cache *c, const struct record *r, const struct kube_batch_item *items, size_t n)
{
    long written = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        long st = items[i].resp.status;
        struct cache_gang *g = cache_gang_get(c, r[i].namespace_, r[i].name);
        int same = g != NULL && g->present && util_streq(g->uid, r[i].uid);
        if (items[i].rc == 0) {
            written++;
            log_debugf("dispatch lease of %s/%s: sighting recorded (%s)", r[i].namespace_, r[i].name,
                       json_string_value(json_object_get(json_object_get(json_object_get(r[i].patch, "metadata"), "annotations"),
                                                         NAMES_ANNOTATION_DISPATCH_LEASE_SEEN)));
        } else if (st != 404 && st != 409) {
            failed++;
            log_warnf("record the dispatch lease sighting of %s/%s: %s", r[i].namespace_, r[i].name, items[i].resp.message);
        }
        if (same && (items[i].rc == 0 || (st != 404 && st != 409)))
            cachelease_written(c, g, r[i].counter, items[i].rc == 0);
    }
    return failed > 0 ? -1 : written;
}

long leaseseen_sync(const struct leaseseen_config *cfg)
{
    if (!may_write(cfg))
        return 0; /* the cache keeps them wanted, for when this gate leads */
    struct record *r = NULL;
    cacheguard_lock(cfg->guard);
    size_t n = cachelease_take_news(cfg->cache) ? collect(cfg->cache, &r) : 0;
    cacheguard_unlock(cfg->guard);
    if (n > 0 && !may_write(cfg)) {
        cacheguard_lock(cfg->guard);
        cachelease_keep_news(cfg->cache); /* the next leader's, or ours when leading again */
        cacheguard_unlock(cfg->guard);
        records_free(r, n);
        return 0;
    }
    if (n == 0) {
        free(r);
        return 0;
    }
    struct kube_batch_item *items = util_calloc(n, sizeof(*items));
    for (size_t i = 0; i < n; i++)
        items[i] = (struct kube_batch_item){.method = "PATCH",
                                            .path = r[i].path,
                                            .content_type = kube_patch_content_type(KUBE_PATCH_MERGE),
                                            .body = r[i].patch,
                                            .status_only = 1};
    kube_batch(cfg->client, items, n, 32);
    cacheguard_lock(cfg->guard);
    long rc = mark(cfg->cache, r, items, n);
    cacheguard_unlock(cfg->guard);
    for (size_t i = 0; i < n; i++)
        kube_client_response_finish(&items[i].resp);
    free(items);
    records_free(r, n);
    return rc;
}
