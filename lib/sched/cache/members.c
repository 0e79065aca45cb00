#include "members.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

int members_role(const struct cache_gang *g, const struct cache_pod *pod)
{
    if (pod->node_type == NULL)
        return MEMBERS_ROLE_UNKNOWN;
    if (strcmp(pod->node_type, "head") == 0)
        return 0;
    if (pod->group == NULL)
        return MEMBERS_ROLE_UNKNOWN;
    for (uint32_t i = 0; i < g->ngroups; i++) {
        if (g->groups[i].name != NULL && pod->group == g->groups[i].name) /* both interned */
            return 1 + (int)i;
    }
    return MEMBERS_ROLE_EXTRA;
}

size_t members_order(const struct cache_gang *g, struct cache_pod **live, size_t nlive)
{
    if (nlive == 0 || g->min_member <= 0)
        return 0;
    size_t ncore = 0;
    int64_t *need = util_calloc((size_t)g->ngroups + 1, sizeof(*need));
    int *role = util_calloc(nlive, sizeof(*role));
    uint8_t *member = util_calloc(nlive, sizeof(*member));
    int64_t left = 1;
    need[0] = 1;
    for (uint32_t i = 0; i < g->ngroups; i++) {
        need[1 + i] = g->groups[i].pods;
        left = util_sat_add(left, g->groups[i].pods);
    }
    for (size_t i = 0; i < nlive; i++)
        role[i] = members_role(g, live[i]);
    for (int unknown = 0; unknown < 2; unknown++) {
        for (int ungated = 1; ungated >= 0; ungated--) {
            for (size_t i = 0; i < nlive && left > 0; i++) {
                if (member[i] || (!cache_pod_gated(live[i])) != ungated) /* nothing is admitted yet this pass */
                    continue;
                if (unknown ? role[i] != MEMBERS_ROLE_UNKNOWN : (role[i] < 0 || need[role[i]] == 0))
                    continue;
                if (!unknown)
                    need[role[i]]--;
                member[i] = 1;
                left--;
                ncore++;
            }
        }
    }
    /* Stable partition: members, then the rest (the tail). */
    struct cache_pod **sorted = util_calloc(nlive, sizeof(*sorted));
    size_t k = 0;
    for (int pass = 1; pass >= 0; pass--) {
        for (size_t i = 0; i < nlive; i++) {
            if (member[i] == pass)
                sorted[k++] = live[i];
        }
    }
    memcpy(live, sorted, nlive * sizeof(*sorted));
    free(sorted);
    free(member);
    free(role);
    free(need);
    return ncore;
}

size_t members_of(const struct cache_gang *g, struct cache_pod ***out)
{
    struct cache_pod **live = util_calloc(g->npods + 1, sizeof(*live));
    size_t nlive = 0;
    struct cache_pod *pod;
    cache_gang_for_each_pod(pod, g) {
        if (cache_pod_live(pod))
            live[nlive++] = pod;
    }
    *out = live;
    return members_order(g, live, nlive);
}
