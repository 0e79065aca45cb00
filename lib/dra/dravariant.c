#include "dravariant.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static int same(const struct dravariant *v, const struct claimspec_request *r)
{
    if (v->nsel != r->nsel || strcmp(v->cls, r->device_class) != 0)
        return 0;
    for (size_t k = 0; k < r->nsel; k++) {
        if (strcmp(v->exprs[k], r->exprs[k]) != 0)
            return 0;
    }
    return 1;
}

int dravariant_find(const struct dravariants *vs, const struct claimspec_request *r)
{
    if (r->nsel == 0 || r->device_class == NULL)
        return -1;
    for (size_t i = 0; i < vs->n; i++) {
        if (same(&vs->v[i], r))
            return vs->v[i].resource;
    }
    return -1;
}

char *dravariant_name(const struct claimspec_request *r)
{
    struct util_buf b = {0};
    util_buf_printf(&b, "%s devices where ", r->device_class);
    for (size_t k = 0; k < r->nsel; k++)
        util_buf_printf(&b, r->nsel > 1 ? "%s(%s)" : "%s%s", k > 0 ? " && " : "", r->exprs[k]);
    return util_buf_take(&b);
}

void dravariant_add(struct dravariants *vs, const struct claimspec_request *r, int resource)
{
    vs->v = util_realloc(vs->v, (vs->n + 1) * sizeof(*vs->v));
    struct dravariant *v = &vs->v[vs->n++];
    *v = (struct dravariant){util_strdup(r->device_class), util_calloc(r->nsel, sizeof(char *)),
                             util_calloc(r->nsel, sizeof(struct devsel *)), r->nsel, resource};
    for (size_t k = 0; k < r->nsel; k++) {
        v->exprs[k] = util_strdup(r->exprs[k]);
        v->sel[k] = devsel_compile(r->exprs[k]);
    }
}

int dravariant_match(const struct dravariant *v, const struct devsel_device *d)
{
    for (size_t k = 0; k < v->nsel; k++) {
        if (!devsel_match(v->sel[k], d))
            return 0;
    }
    return 1;
}

void dravariant_clear(struct dravariants *vs)
{
    for (size_t i = 0; i < vs->n; i++) {
        struct dravariant *v = &vs->v[i];
        for (size_t k = 0; k < v->nsel; k++) {
            free(v->exprs[k]);
            devsel_free(v->sel[k]);
        }
        free(v->exprs);
        free(v->sel);
        free(v->cls);
    }
    free(vs->v);
    vs->v = NULL;
    vs->n = 0;
}
