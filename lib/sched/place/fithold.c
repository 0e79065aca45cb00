#include "fithold.h"

#include <stdlib.h>
#include <string.h>

int fithold_place(struct fit *f, struct cache_pod *pod)
{
    char *why = NULL;
    struct cache_pod *one[1] = {pod};
    int placed = fit_place(f, one, 1, &why) == 1;
    if (placed)
        fit_commit(f);
    free(why);
    return placed;
}

/* How short node i is of pod's room: the largest fraction of a request (or of its one pod slot) it lacks; 0 when it fits. */
static double shortfall(const struct fit *f, size_t i, const struct cache_pod *pod)
{
    int64_t pods;
    const int64_t *room = fit_node_free(f, i, &pods);
    double worst = pods < 1 ? (double)(1 - pods) : 0.0;
    const struct shape_rl *req = model_pod_fit_request(pod);
    for (uint32_t k = 0; req != NULL && k < req->len; k++) {
        int64_t want = req->items[k].value, have = room[req->items[k].id];
        if (want > 0 && have < want) {
            double s = ((double)want - (double)have) / (double)want;
            worst = s > worst ? s : worst;
        }
    }
    return worst;
}

int fithold_reserve(struct fit *f, struct cache_pod *pod)
{
    if (fithold_place(f, pod))
        return 1;
    struct cache_node *const *nodes;
    size_t nn = fit_nodes(f, &nodes), best = SIZE_MAX;
    double least = 0;
    for (size_t i = 0; i < nn; i++) {
        if (!fit_node_matches(f, i, pod))
            continue;
        double s = shortfall(f, i, pod);
        if (best == SIZE_MAX || s < least) {
            best = i;
            least = s;
        }
    }
    if (best == SIZE_MAX)
        return -1;
    fit_take_on(f, best, pod);
    fit_commit(f);
    return 0;
}

size_t fithold_admitted(const struct cache *c, struct fit *f, struct cache_pod **scratch)
{
    size_t n = c->nreserving, short_ = 0;
    if (n > 0)
        memcpy(scratch, c->reserving, n * sizeof(*scratch));
    fit_sort_larger_first_stable(f, scratch, n); /* the room they take, not which pod takes it */
    for (size_t i = 0; i < n; i++)
        short_ += fithold_reserve(f, scratch[i]) != 1;
    return short_;
}
