#include "admittopo.h"

#include <stdlib.h>
#include <string.h>

#include "topoconfine.h"
#include "topoplace.h"
#include "util.h"

int admittopo_place(struct pass *p, const struct work *w, struct cache_pod **unbound, size_t n)
{
    const struct cache_gang *g = w->g;
    struct cache_pod **bound = util_calloc(w->ncore ? w->ncore : 1, sizeof(*bound));
    size_t nbound = 0;
    for (size_t i = 0; i < w->ncore; i++) {
        if (w->live[i]->node != NULL)
            bound[nbound++] = w->live[i];
    }
    char *why = NULL;
    topoplace_out_finish(&p->placed);
    int rc = topoplace_gang(p->fit, p->a->topo, p->c, g->topo, unbound, n, bound, nbound, &p->placed, &why);
    free(bound);
    if (rc == 1) {
        fit_commit(p->fit);
        free(why);
        return 1;
    }
    struct util_buf b = {0};
    admitpass_put_gang(p, g, &b);
    util_buf_printf(&b, rc == 0 ? " %s" : " does not fit the nodes: %s", why);
    free(why);
    admitpass_wait(p, w, rc == 0 ? ADMIT_REASON_TOPOLOGY : ADMIT_REASON_NODES, util_buf_take(&b));
    return 0;
}

void admittopo_pod(struct pass *p, const struct work *w, struct admit_decision *d, const struct cache_pod *pod)
{
    d->pods[d->npods - 1].confine = topoconfine_pod(topoplace_set_of(&p->placed, w->g->topo, pod), pod, p->fit);
}

void admittopo_admitted(struct pass *p, struct admit_decision *d)
{
    struct util_buf b = {0};
    util_buf_puts(&b, d->message);
    for (size_t i = 0; i < p->placed.nsets; i++) {
        const struct topoplace_set *s = &p->placed.sets[i];
        char what[256];
        topology_constraint_text(s->c, what, sizeof(what));
        util_buf_puts(&b, i == 0 ? "; " : ", ");
        if (s->replica != NULL)
            util_buf_printf(&b, "slice %s ", s->replica);
        else if (s->group != NULL)
            util_buf_printf(&b, "group %s ", s->group);
        if (s->domain != NULL)
            util_buf_printf(&b, "in %s (%s)", s->domain->name, what + (strncmp(what, "one ", 4) == 0 ? 4 : 0));
        else
            util_buf_printf(&b, "spread: no single domain held it (%s preferred)", what);
    }
    free(d->message);
    d->message = util_buf_take(&b);
    d->topology = topoconfine_record(&p->placed);
    d->spread = p->placed.spread;
    topoplace_out_finish(&p->placed);
}

void admittopo_finish(struct pass *p, const struct work *w, struct admit_decision *d, const struct cache_pod *pod)
{
    const struct cache_gang *g = w->g;
    if (g->topo == NULL || g->topo_placed == NULL)
        return;
    d->pods[d->npods - 1].confine = topoconfine_recorded(g->topo_placed, g->topo, pod, p->a->topo, p->fit);
}
