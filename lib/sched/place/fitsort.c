/* fitsort: pods larger first (fitsort.h). */
#include "fitsort.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A pod with its weights for "larger first": extended resources (GPUs) dominate, then cpu, then memory. */
struct fitsort_weighed {
    struct cache_pod *pod;
    int64_t w[3];
    size_t at; /* its place in the input: the stable order's tie-break */
};

/* Creation order, then namespace/name. */
static int cmp_created(const struct cache_pod *a, const struct cache_pod *b)
{
    if (a->created != b->created)
        return a->created < b->created ? -1 : 1;
    int r = a->namespace_ == b->namespace_ ? 0 : strcmp(a->namespace_, b->namespace_);
    return r != 0 ? r : strcmp(a->name, b->name);
}

static int cmp_weights(const struct fitsort_weighed *a, const struct fitsort_weighed *b)
{
    for (int i = 0; i < 3; i++) {
        if (a->w[i] != b->w[i])
            return a->w[i] > b->w[i] ? -1 : 1;
    }
    return 0;
}

static int cmp_weighed(const void *pa, const void *pb)
{
    const struct fitsort_weighed *a = pa, *b = pb;
    int r = cmp_weights(a, b);
    return r != 0 ? r : cmp_created(a->pod, b->pod);
}

static int cmp_weighed_stable(const void *pa, const void *pb)
{
    const struct fitsort_weighed *a = pa, *b = pb;
    int r = cmp_weights(a, b);
    return r != 0 ? r : (a->at > b->at) - (a->at < b->at);
}

/* Whether resource id weighs as an extended resource (not cpu, memory, ephemeral storage or huge pages); kept per id. */
static int extended(struct fitsort *s, uint32_t id)
{
    if (id < sizeof(s->rclass) && s->rclass[id] != 0)
        return s->rclass[id] == 1;
    const char *name = cache_resource_name(s->c, id);
    int ext = strcmp(name, "cpu") != 0 && strcmp(name, "memory") != 0 && strcmp(name, "ephemeral-storage") != 0 &&
              strncmp(name, "hugepages-", 10) != 0;
    if (id < sizeof(s->rclass))
        s->rclass[id] = ext ? 1 : 2;
    return ext;
}

void fitsort_set(struct fitsort *s, const struct cache *c, uint32_t cpu, uint32_t memory)
{
    if (s->c != c)
        memset(s->rclass, 0, sizeof(s->rclass)); /* another cache: other ids */
    s->c = c;
    s->cpu = cpu;
    s->memory = memory;
}

void fitsort_larger_first(struct fitsort *s, struct cache_pod **pods, size_t n, int stable)
{
    if (n < 2)
        return; /* nothing to sort (and no buffer for none) */
    struct fitsort_weighed *ws = util_scratch(&s->buf, &s->cap, n, sizeof(*ws), 1);
    for (size_t i = 0; i < n; i++) {
        const struct shape_rl *req = model_pod_fit_request(pods[i]);
        ws[i].pod = pods[i];
        ws[i].at = i;
        for (uint32_t k = 0; req != NULL && k < req->len; k++) {
            const struct shape_res *r = &req->items[k];
            if (r->id == s->cpu)
                ws[i].w[1] = r->value;
            else if (r->id == s->memory)
                ws[i].w[2] = r->value;
            else if (extended(s, r->id))
                ws[i].w[0] = util_sat_add(ws[i].w[0], r->value);
        }
    }
    if (stable || n > 32) {
        qsort(ws, n, sizeof(*ws), stable ? cmp_weighed_stable : cmp_weighed);
    } else {
        /* A gang's few unbound pods, mostly of one or two shapes: insertion sort beats qsort's overhead. */
        for (size_t i = 1; i < n; i++) {
            struct fitsort_weighed x = ws[i];
            size_t j = i;
            for (; j > 0 && cmp_weighed(&ws[j - 1], &x) > 0; j--)
                ws[j] = ws[j - 1];
            ws[j] = x;
        }
    }
    for (size_t i = 0; i < n; i++)
        pods[i] = ws[i].pod;
}

void fitsort_finish(struct fitsort *s)
{
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}
