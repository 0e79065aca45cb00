#include "members.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

int members_role(const struct cache_gang *g, const struct cache_pod *pod)
{
    if (pod->node_type == NULL)
        return MEMBERS_ROLE_UNKNOWN;
    if (pod->node_type[0] == 'h' && strcmp(pod->node_type, "head") == 0) /* most are workers: no call */
        return 0;
    if (pod->group == NULL)
        return MEMBERS_ROLE_UNKNOWN;
    for (uint32_t i = 0; i < g->ngroups; i++) {
        if (g->groups[i].name != NULL && pod->group == g->groups[i].name) /* both interned */
            return 1 + (int)i;
    }
    return MEMBERS_ROLE_EXTRA;
}

/* Small gangs, the most, sort in these; larger ones on the heap. */
enum { MEMBERS_STACK_PODS = 64, MEMBERS_STACK_ROLES = 16 };

/* Marks member[i] for the pods that are members (ungated first, then in order; pods of unknown role last). */
static size_t mark_members(const struct cache_gang *g, struct cache_pod **live, size_t nlive, const int *role, int64_t *need,
                           uint8_t *member)
{
    size_t ncore = 0;
    int64_t left = 1;
    need[0] = 1;
    for (uint32_t i = 0; i < g->ngroups; i++) {
        need[1 + i] = g->groups[i].pods;
        left = util_sat_add(left, g->groups[i].pods);
    }
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
    return ncore;
}

/*
 * Whether every live pod is a member: each of a known role, none beyond its
 * role's count (the head, one; each group, its pods). Then mark_members()
 * would take them all, and the order stays: most gangs in a pass, whose walk
 * this spares.
 */
static int all_members(const struct cache_gang *g, struct cache_pod *const *live, size_t nlive)
{
    if (g->ngroups >= MEMBERS_STACK_ROLES)
        return 0;
    int64_t left[MEMBERS_STACK_ROLES];
    left[0] = 1;
    for (uint32_t i = 0; i < g->ngroups; i++)
        left[1 + i] = g->groups[i].pods;
    for (size_t i = 0; i < nlive; i++) {
        int role = members_role(g, live[i]);
        if (role < 0 || left[role] <= 0)
            return 0;
        left[role]--;
    }
    return 1;
}

size_t members_order(const struct cache_gang *g, struct cache_pod **live, size_t nlive)
{
    if (nlive == 0 || g->min_member <= 0)
        return 0;
    if (all_members(g, live, nlive))
        return nlive;
    int64_t need_s[MEMBERS_STACK_ROLES];
    int role_s[MEMBERS_STACK_PODS];
    uint8_t member_s[MEMBERS_STACK_PODS];
    struct cache_pod *sorted_s[MEMBERS_STACK_PODS];
    int small = nlive <= MEMBERS_STACK_PODS, few = g->ngroups < MEMBERS_STACK_ROLES;
    int64_t *need = few ? need_s : util_calloc((size_t)g->ngroups + 1, sizeof(*need));
    int *role = small ? role_s : util_calloc(nlive, sizeof(*role));
    uint8_t *member = small ? member_s : util_calloc(nlive, sizeof(*member));
    struct cache_pod **sorted = small ? sorted_s : util_calloc(nlive, sizeof(*sorted));
    memset(member, 0, nlive * sizeof(*member));
    for (size_t i = 0; i < nlive; i++)
        role[i] = members_role(g, live[i]);
    size_t ncore = mark_members(g, live, nlive, role, need, member);
    /* Stable partition: members, then the rest (the tail). */
    size_t k = 0;
    for (int pass = 1; pass >= 0; pass--) {
        for (size_t i = 0; i < nlive; i++) {
            if (member[i] == pass)
                sorted[k++] = live[i];
        }
    }
    memcpy(live, sorted, nlive * sizeof(*sorted));
    if (!small) {
        free(sorted);
        free(member);
        free(role);
    }
    if (!few)
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
