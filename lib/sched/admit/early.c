#include "early.h"

#include <stdint.h>
#include <stdlib.h>

#include "fithold.h"
#include "members.h"
#include "util.h"

int early_applies(const struct cache_gang *g)
{
    return g->present && g->spec_ok && !g->legacy && g->topo == NULL && g->min_member > 0;
}

int early_reserves(const struct cache_gang *g)
{
    /* Fewer pods ungated than members, or some gated (a member among them, made again, while the tail runs). */
    return early_applies(g) && g->admitted && ((int64_t)g->nopen < g->min_member || g->nopen < g->nlive);
}

/* A pod of role r among live[0..nlive), or NULL. */
static struct cache_pod *exemplar(const struct cache_gang *g, int r, struct cache_pod *const *live, size_t nlive)
{
    for (size_t i = 0; i < nlive; i++) {
        if (members_role(g, live[i]) == r)
            return live[i];
    }
    return NULL;
}

size_t early_missing(const struct cache_gang *g, struct cache_pod *const *filled, size_t nfilled, struct cache_pod *const *live,
                     size_t nlive, struct cache_pod **out, int *complete)
{
    *complete = 1;
    size_t nroles = (size_t)g->ngroups + 1;
    int64_t *lack = util_calloc(nroles, sizeof(*lack));
    lack[0] = 1;
    for (uint32_t i = 0; i < g->ngroups; i++)
        lack[1 + i] = g->groups[i].pods;
    for (size_t i = 0; i < nfilled; i++) {
        int r = members_role(g, filled[i]);
        if (r >= 0 && lack[r] > 0)
            lack[r]--;
    }
    int64_t room = g->min_member - (int64_t)nfilled; /* slots left: unplaced pods may have filled some */
    size_t n = 0;
    for (size_t r = 0; r < nroles && room > 0; r++) {
        if (lack[r] == 0)
            continue;
        struct cache_pod *like = exemplar(g, (int)r, live, nlive);
        if (like == NULL) {
            *complete = 0;
            continue;
        }
        for (int64_t k = 0; k < lack[r] && room > 0; k++, room--, n++)
            if (out != NULL)
                out[n] = like;
    }
    free(lack);
    return n;
}

/* Appends to *out (grown, *cap its room) the copies g's members not ungated yet reserve; returns how many. */
static size_t gang_copies(const struct cache_gang *g, struct cache_pod ***out, size_t *n, size_t *cap)
{
    struct cache_pod **live;
    members_of(g, &live); /* its live pods: g->nlive of them (the cache counts them by the same test) */
    size_t nlive = g->nlive, nopen = 0;
    struct cache_pod **open = util_calloc(nlive + 1, sizeof(*open));
    for (size_t i = 0; i < nlive; i++) {
        if (!cache_pod_gated(live[i]))
            open[nopen++] = live[i];
    }
    size_t want = *n + (size_t)g->min_member;
    if (want > *cap) {
        *cap = want * 2;
        *out = util_realloc(*out, *cap * sizeof(**out));
    }
    nopen = members_order(g, open, nopen); /* the ungated members: a tail pod fills no member's slot */
    int complete;
    /* A role with no pod at all has nothing to copy: its pods come gated, and hold room once ungated. */
    size_t k = early_missing(g, open, nopen, live, nlive, *out + *n, &complete);
    *n += k;
    free(open);
    free(live);
    return k;
}

size_t early_reserve(const struct cache *c, struct fit *f)
{
    struct cache_pod **copies = NULL;
    size_t n = 0, cap = 0;
    for (const struct cache_gang *g = c->early; g != NULL; g = g->early_next) {
        if (early_reserves(g))
            gang_copies(g, &copies, &n, &cap);
    }
    fit_sort_larger_first(f, copies, n);
    for (size_t i = 0; i < n; i++)
        fithold_reserve(f, copies[i]);
    free(copies);
    return n;
}

void early_prune(struct cache *c)
{
    model_gang_early_prune(&c->early, early_reserves);
}
