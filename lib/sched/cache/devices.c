#include "devices.h"

#include <stdlib.h>
#include <string.h>

#include "gangclaims.h"
#include "util.h"

/* base plus what dev's claims count as (with_shared: the gang's shared claims too), or base when they cannot be counted. */
static const struct shape_rl *price(struct shape_pool *p, const struct draset *s, const char *ns, struct cache_devices *dev,
                                    const struct resources *base, int with_shared)
{
    free(dev->wait);
    dev->wait = NULL;
    dev->priced = s != NULL ? draset_demand_generation(s) : 0;
    if (s == NULL)
        return shape_rl_ref(dev->bare);
    struct resources sum;
    struct error why = {{0}};
    resources_init(&sum);
    resources_copy(&sum, base);
    const struct shape_rl *rl;
    if (gangclaims_price(&dev->claims, s, ns, with_shared, &sum, &why) != 0) {
        dev->wait = util_strdup(why.message);
        rl = shape_rl_ref(dev->bare);
    } else {
        rl = shape_rl_intern(p, &sum, 0, NULL);
    }
    resources_finish(&sum);
    return rl;
}

/* The resource list rl as a resources list (into out, initialised). */
static void rl_resources(const struct shape_pool *p, const struct shape_rl *rl, struct resources *out)
{
    for (uint32_t k = 0; rl != NULL && k < rl->len; k++) {
        struct quantity q = {rl->items[k].value, (enum quantity_format)rl->items[k].format};
        resources_set(out, p->resource_names[rl->items[k].id], &q);
    }
}

/*
 * The pod's fit request (interned): request rl plus its claims' variants (draset_template_fit); NULL when they add
 * nothing (or cannot be counted: the pod waits through dev->wait).
 */
static const struct shape_rl *price_fit(struct shape_pool *p, const struct draset *s, const struct cache_pod *pod,
                                        const struct shape_rl *rl)
{
    struct resources extra, sum;
    struct error why = {{0}};
    resources_init(&extra);
    const struct shape_rl *fit = NULL;
    if (s != NULL && pod->dev->wait == NULL && gangclaims_price_fit(&pod->dev->claims, s, pod->namespace_, &extra, &why) == 0 &&
        extra.len > 0) {
        resources_init(&sum);
        rl_resources(p, rl, &sum);
        if (resources_add_scaled(&sum, &extra, 1, &why) == 0)
            fit = shape_rl_intern(p, &sum, 0, NULL);
        resources_finish(&sum);
    }
    resources_finish(&extra);
    return fit;
}

int devices_pod_price(struct shape_pool *p, const struct draset *s, struct cache_pod *pod)
{
    struct resources base;
    resources_init(&base);
    rl_resources(p, pod->dev->bare, &base);
    const struct shape_rl *rl = price(p, s, pod->namespace_, pod->dev, &base, 0);
    resources_finish(&base);
    const struct shape_rl *fit = price_fit(p, s, pod, rl), *old_fit = pod->dev->fit;
    int fit_changed = fit != old_fit; /* both alive here: interned, equal contents share one pointer */
    pod->dev->fit = fit;
    shape_rl_release(p, old_fit);
    if (rl == pod->request) {
        shape_rl_release(p, rl);
        return fit_changed;
    }
    if (pod->counted != NULL) {
        model_node_account(pod->counted, pod->request, -1, pod->queue == NULL);
        model_node_account(pod->counted, rl, 1, pod->queue == NULL);
    }
    shape_rl_release(p, pod->request);
    pod->request = rl;
    return 1;
}

/* Adds into out what the shared claims names[0..n) count as on the nodes; 0, 1 (one cannot be counted) or -1. */
static int carried(const struct draset *s, const char *ns, const char *const *names, size_t n, struct resources *out)
{
    struct error why = {{0}};
    for (size_t i = 0; i < n; i++) {
        int rc = draset_claim_demand(s, ns, names[i], out, &why);
        if (rc == 0)
            rc = draset_claim_fit(s, ns, names[i], out, &why);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int devices_pod_carry(struct shape_pool *p, const struct draset *s, struct cache_pod *pod, const char *const *names, size_t n)
{
    const struct shape_rl *carry = NULL, *old = pod->dev->carry;
    if (n == 0) { /* most pods of a gang that shares a claim carry nothing: no sum to build */
        pod->dev->carry = NULL;
        shape_rl_release(p, old);
        return old != NULL;
    }
    struct resources sum;
    resources_init(&sum);
    rl_resources(p, pod->dev->fit != NULL ? pod->dev->fit : pod->request, &sum);
    if (s != NULL && carried(s, pod->namespace_, names, n, &sum) == 0)
        carry = shape_rl_intern(p, &sum, 0, NULL);
    resources_finish(&sum);
    pod->dev->carry = carry;
    shape_rl_release(p, old); /* both alive until here: interned, equal contents share one pointer */
    return carry != old;
}

void devices_pod_parse(struct shape_pool *p, const struct draset *s, struct cache_pod *pod, const json_t *obj)
{
    struct gangclaims gc;
    struct error err;
    if (gangclaims_from_pod_spec(json_object_get(obj, "spec"), &gc, &err) != 0 || gc.n == 0) {
        gangclaims_finish(&gc); /* a spec the apiserver accepted: a bad entry counts nothing */
        return;
    }
    pod->dev = util_calloc(1, sizeof(*pod->dev));
    pod->dev->claims = gc;
    pod->dev->bare = shape_rl_ref(pod->request);
    resources_init(&pod->dev->bare_res);
    devices_pod_price(p, s, pod);
}

int devices_gang_price(struct shape_pool *p, const struct draset *s, struct cache_gang *g)
{
    const struct shape_rl *rl = price(p, s, g->namespace_, g->dev, &g->dev->bare_res, 1);
    if (rl == g->min_rl) {
        shape_rl_release(p, rl);
        return 0;
    }
    shape_rl_release(p, g->min_rl);
    g->min_rl = rl;
    resources_finish(&g->min_resources);
    resources_init(&g->min_resources);
    rl_resources(p, rl, &g->min_resources);
    return 1;
}

void devices_gang_parse(struct shape_pool *p, const struct draset *s, struct cache_gang *g, const json_t *obj)
{
    if (!g->spec_ok || g->legacy)
        return;
    struct gang_spec spec;
    struct gangclaims gc = {0};
    struct error err;
    gang_spec_init(&spec);
    int rc = gang_from_raycluster(obj, &spec, &err) == 0 ? gangclaims_from_raycluster(obj, &spec, &gc, &err) : -1;
    gang_spec_finish(&spec);
    if (rc != 0 || gc.n == 0) {
        gangclaims_finish(&gc);
        return;
    }
    g->dev = util_calloc(1, sizeof(*g->dev));
    g->dev->claims = gc;
    g->dev->bare = shape_rl_ref(g->min_rl);
    resources_init(&g->dev->bare_res);
    resources_copy(&g->dev->bare_res, &g->min_resources);
    devices_gang_price(p, s, g);
}

int devices_gang_shares(const struct cache_gang *g)
{
    for (size_t i = 0; g->dev != NULL && i < g->dev->claims.n; i++) {
        if (g->dev->claims.uses[i].shared)
            return 1;
    }
    return 0;
}

const char *devices_gang_wait(const struct cache_gang *g)
{
    if (g->dev != NULL && g->dev->wait != NULL)
        return g->dev->wait;
    if (g->ndev == 0)
        return NULL; /* no pod of it names a claim (the common case: no walk of its pods) */
    for (const struct cache_pod *pod = g->pods; pod != NULL; pod = pod->gang_next) {
        if (pod->dev != NULL && pod->dev->wait != NULL && model_pod_live(pod))
            return pod->dev->wait;
    }
    return NULL;
}
