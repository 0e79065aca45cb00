#include "sharedcarry.h"

#include <string.h>

#include "devices.h"

/* At most this many shared claims one pod carries; more than that are carried by the next pod that names them. */
#define SHAREDCARRY_MAX 8

/* Whether name is among names[0..n). */
static int among(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], name) == 0)
            return 1;
    }
    return 0;
}

/*
 * The shared claims pod carries (into mine, at most SHAREDCARRY_MAX): those
 * it names that are not allocated and that no pod before it carries (taken,
 * *ntaken long; the pod's are added). Returns how many.
 */
static size_t pod_carries(const struct draset *s, const struct cache_pod *pod, const char **taken, size_t *ntaken, size_t cap,
                          const char **mine)
{
    size_t n = 0;
    if (pod->node != NULL || !model_pod_live(pod))
        return 0;
    for (size_t i = 0; i < pod->dev->claims.n && n < SHAREDCARRY_MAX && *ntaken < cap; i++) {
        const struct gangclaims_use *u = &pod->dev->claims.uses[i];
        if (!u->shared || among(taken, *ntaken, u->name) || draset_claim_allocated(s, pod->namespace_, u->name) != 0)
            continue;
        mine[n++] = u->name;
        taken[(*ntaken)++] = u->name;
    }
    return n;
}

/* Chooses g's carriers again; returns 1 when one changed. */
static int gang_carriers(struct cache *c, struct cache_gang *g)
{
    const char *taken[64], *mine[SHAREDCARRY_MAX];
    size_t ntaken = 0;
    int changed = 0, carried = 0;
    for (struct cache_pod *pod = g->pods; pod != NULL; pod = pod->gang_next) {
        if (pod->dev == NULL)
            continue;
        size_t n = pod_carries(c->dra, pod, taken, &ntaken, sizeof(taken) / sizeof(taken[0]), mine);
        changed |= devices_pod_carry(&c->shapes, c->dra, pod, mine, n);
        carried |= pod->dev->carry != NULL;
    }
    c->carried_gangs += (size_t)carried;
    c->carried_gangs -= g->carried;
    g->carried = (uint8_t)carried;
    return changed;
}

size_t sharedcarry_prepare(struct cache *c)
{
    size_t changed = 0;
    if (c->shared_gangs == 0 && c->carried_gangs == 0)
        return 0; /* no claim is shared: a pass pays nothing for this */
    struct cache_gang *g;
    cache_for_each_gang(g, c)
    {
        if ((g->carried || devices_gang_shares(g)) && gang_carriers(c, g)) {
            cache_gang_mark_changed(c, g);
            changed++;
        }
    }
    return changed;
}
