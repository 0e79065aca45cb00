#include "preemptdomain.h"

#include <stdlib.h>
#include <string.h>

#include "topoplace.h"
#include "util.h"

const struct topo_constraint *preemptdomain_constraint(const struct topo_request *r)
{
    if (r == NULL)
        return NULL;
    if (r->gang.mode != TOPO_MODE_NONE)
        return &r->gang;
    for (size_t i = 0; i < r->ngroups; i++) {
        if (r->groups[i].c.mode != TOPO_MODE_NONE)
            return &r->groups[i].c;
    }
    return NULL;
}

int preemptdomain_touches(const struct fit *f, const struct topo_domain *d, struct cache_pod *const *pods, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = pods[i]->counted != NULL ? fit_node_index(f, pods[i]->counted) : SIZE_MAX;
        if (k != SIZE_MAX && k <= UINT32_MAX && topodomain_has(d, (uint32_t)k))
            return 1;
    }
    return 0;
}

int preemptdomain_better(const struct preemptdomain_score *a, const struct preemptdomain_score *b)
{
    if (a->nvictims != b->nvictims)
        return a->nvictims < b->nvictims;
    if (a->priorities != b->priorities)
        return a->priorities < b->priorities;
    if (a->left != b->left)
        return a->left < b->left;
    return a->order < b->order;
}

/* a + b, at INT64_MAX when it overflows (weights for a comparison only). */
static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t s;
    return __builtin_add_overflow(a, b, &s) ? INT64_MAX : s;
}

/* The resource the preemptor asks most of: an extended one (GPUs) first, then cpu, then memory; UINT32_MAX: none. */
static uint32_t dominant(const struct fit *f, const struct cache *c, struct cache_pod *const *pods, size_t n)
{
    uint32_t nres = fit_resources(f);
    int64_t *sum = util_calloc((size_t)nres + 1, sizeof(*sum));
    for (size_t i = 0; i < n; i++) {
        const struct shape_rl *rl = pods[i]->request;
        for (uint32_t k = 0; rl != NULL && k < rl->len; k++) {
            if (rl->items[k].id < nres && rl->items[k].value > 0)
                sum[rl->items[k].id] = add_sat(sum[rl->items[k].id], rl->items[k].value);
        }
    }
    uint32_t best = UINT32_MAX, cpu = UINT32_MAX, memory = UINT32_MAX;
    for (uint32_t k = 0; k < nres; k++) {
        if (sum[k] == 0)
            continue;
        const char *name = cache_resource_name(c, k);
        if (strcmp(name, "cpu") == 0)
            cpu = k;
        else if (strcmp(name, "memory") == 0)
            memory = k;
        else if (best == UINT32_MAX || sum[k] > sum[best])
            best = k;
    }
    free(sum);
    return best != UINT32_MAX ? best : cpu != UINT32_MAX ? cpu : memory;
}

/* The free room of resource id over d's nodes now. */
static int64_t room_left(const struct fit *f, const struct topo_domain *d, uint32_t id)
{
    if (id == UINT32_MAX)
        return 0;
    int64_t left = 0, pods;
    for (size_t i = 0; i < d->nn; i++)
        left = add_sat(left, fit_node_free(f, d->nodes[i], &pods)[id]);
    return left;
}

/* The domain of out's primary set (NULL: a primary set spread, or none placed). */
static const struct topo_domain *primary_domain(const struct topoplace_out *out, const struct topo_constraint *primary)
{
    const struct topo_domain *d = NULL;
    for (size_t i = 0; i < out->nsets; i++) {
        if (out->sets[i].c != primary)
            continue;
        if (out->sets[i].domain == NULL)
            return NULL;
        if (d == NULL)
            d = out->sets[i].domain;
    }
    return d;
}

/* Places the preemptor tentatively (topoplace_gang): its primary set's domain, or NULL with nothing placed. */
static const struct topo_domain *place(struct fit *f, struct topodomains *t, const struct cache *c, const struct topo_request *r,
                                       struct cache_pod *const *pods, size_t n)
{
    struct cache_pod **unbound = util_calloc(n + 1, sizeof(*unbound)), **bound = util_calloc(n + 1, sizeof(*bound));
    size_t nu = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (pods[i]->node != NULL)
            bound[nb++] = pods[i];
        else
            unbound[nu++] = pods[i];
    }
    struct topoplace_out out;
    topoplace_out_init(&out);
    char *why = NULL;
    const struct topo_domain *d = NULL;
    size_t mark = fit_mark(f);
    if (topoplace_gang(f, t, c, r, unbound, nu, bound, nb, &out, &why) == 1) {
        d = primary_domain(&out, preemptdomain_constraint(r));
        if (d == NULL)
            fit_undo(f, mark);
    }
    free(why);
    topoplace_out_finish(&out);
    free(bound);
    free(unbound);
    return d;
}

static void release(struct fit *f, const struct preemptdomain_victim *victims, size_t nv)
{
    for (size_t i = 0; i < nv; i++) {
        for (size_t j = 0; j < victims[i].npods; j++)
            fit_release(f, victims[i].pods[j]);
    }
}

int preemptdomain_fits(struct fit *f, struct topodomains *t, const struct cache *c, const struct topo_request *r,
                       struct cache_pod *const *pods, size_t n, const struct preemptdomain_victim *victims, size_t nv,
                       const struct topo_domain **landed, int64_t *left)
{
    if (preemptdomain_constraint(r) == NULL)
        return 0;
    size_t mark = fit_mark(f);
    release(f, victims, nv);
    const struct topo_domain *d = place(f, t, c, r, pods, n);
    if (d != NULL && left != NULL)
        *left = room_left(f, d, dominant(f, c, pods, n));
    fit_undo(f, mark);
    if (landed != NULL)
        *landed = d;
    return d != NULL;
}

const struct topo_domain *preemptdomain_hold(struct fit *f, struct topodomains *t, const struct cache *c,
                                             const struct topo_request *r, struct cache_pod *const *pods, size_t n,
                                             struct cache_gang *const *victims, size_t nv)
{
    struct preemptdomain_victim *vs = util_calloc(nv + 1, sizeof(*vs));
    struct cache_pod ***counted = util_calloc(nv + 1, sizeof(*counted));
    for (size_t i = 0; i < nv; i++) {
        counted[i] = util_calloc(victims[i]->npods + 1, sizeof(**counted));
        struct cache_pod *p;
        cache_gang_for_each_pod(p, victims[i]) {
            if (p->counted != NULL)
                counted[i][vs[i].npods++] = p;
        }
        vs[i].pods = counted[i];
    }
    const struct topo_domain *d = NULL;
    if (preemptdomain_fits(f, t, c, r, pods, n, vs, nv, &d, NULL)) {
        for (size_t i = 0; i < n; i++) {
            struct cache_pod *pod = pods[i];
            if (pod->node == NULL && fit_place_on(f, &pod, 1, d->nodes, d->nn) == 1)
                fit_commit(f);
        }
    }
    for (size_t i = 0; i < nv; i++)
        free(counted[i]);
    free(counted);
    free(vs);
    return d;
}
