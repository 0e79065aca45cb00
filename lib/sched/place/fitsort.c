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

/* The weights of a pod whose fit request is req (NULL: none) into w. */
static void weigh(struct fitsort *s, const struct shape_rl *req, int64_t w[3])
{
    w[0] = w[1] = w[2] = 0;
    for (uint32_t k = 0; req != NULL && k < req->len; k++) {
        const struct shape_res *r = &req->items[k];
        if (r->id == s->cpu)
            w[1] = r->value;
        else if (r->id == s->memory)
            w[2] = r->value;
        else if (extended(s, r->id))
            w[0] = util_sat_add(w[0], r->value);
    }
}

/* Up to this many distinct fit requests, and as many distinct weights, a stable sort deals pods into buckets. */
enum { FITSORT_BUCKETS = 16 };

struct fitsort_buckets {
    const struct shape_rl *req[FITSORT_BUCKETS]; /* the distinct fit requests met */
    size_t of_req[FITSORT_BUCKETS];              /* each one's bucket */
    int64_t w[FITSORT_BUCKETS][3];               /* each bucket's weights */
    size_t start[FITSORT_BUCKETS];               /* each bucket's pods: counted, then where the next goes */
    size_t nreq, n;
};

/* The bucket of a pod whose fit request is req; FITSORT_BUCKETS when there are too many. */
static size_t bucket_of(struct fitsort *s, struct fitsort_buckets *b, const struct shape_rl *req)
{
    for (size_t i = 0; i < b->nreq; i++) {
        if (b->req[i] == req) /* interned: one pointer per shape */
            return b->of_req[i];
    }
    if (b->nreq == FITSORT_BUCKETS)
        return FITSORT_BUCKETS;
    int64_t w[3];
    weigh(s, req, w);
    size_t at = 0;
    while (at < b->n && memcmp(b->w[at], w, sizeof(w)) != 0)
        at++;
    if (at == b->n) /* b->n <= b->nreq < FITSORT_BUCKETS */
        memcpy(b->w[b->n++], w, sizeof(w));
    b->req[b->nreq] = req;
    b->of_req[b->nreq++] = at;
    return at;
}

/*
 * The stable sort of a flood's reservations, many pods of few shapes: each
 * shape weighed once, the pods dealt into their weights' buckets, larger
 * first, each in the order given: what the stable qsort gives, in O(n). 0
 * when the pods have too many shapes (pods untouched).
 */
static int deal_stable(struct fitsort *s, struct fitsort_weighed *ws, struct cache_pod **pods, size_t n)
{
    struct fitsort_buckets b = {.nreq = 0, .n = 0};
    for (size_t i = 0; i < n; i++) {
        ws[i].pod = pods[i];
        ws[i].at = bucket_of(s, &b, model_pod_fit_request(pods[i]));
        if (ws[i].at == FITSORT_BUCKETS)
            return 0;
    }
    size_t order[FITSORT_BUCKETS], count[FITSORT_BUCKETS] = {0};
    for (size_t k = 0; k < b.n; k++) { /* the buckets larger first: insertion, by cmp_weights */
        struct fitsort_weighed x = {.w = {b.w[k][0], b.w[k][1], b.w[k][2]}};
        size_t j = k;
        for (; j > 0; j--) {
            struct fitsort_weighed y = {.w = {b.w[order[j - 1]][0], b.w[order[j - 1]][1], b.w[order[j - 1]][2]}};
            if (cmp_weights(&y, &x) <= 0)
                break;
            order[j] = order[j - 1];
        }
        order[j] = k;
    }
    for (size_t i = 0; i < n; i++)
        count[ws[i].at]++;
    for (size_t k = 0, at = 0; k < b.n; k++) {
        b.start[order[k]] = at;
        at += count[order[k]];
    }
    for (size_t i = 0; i < n; i++)
        pods[b.start[ws[i].at]++] = ws[i].pod;
    return 1;
}

void fitsort_larger_first(struct fitsort *s, struct cache_pod **pods, size_t n, int stable)
{
    if (n < 2)
        return; /* nothing to sort (and no buffer for none) */
    struct fitsort_weighed *ws = util_scratch(&s->buf, &s->cap, n, sizeof(*ws), 1);
    if (stable && n > 32 && deal_stable(s, ws, pods, n))
        return;
    for (size_t i = 0; i < n; i++) {
        ws[i].pod = pods[i];
        ws[i].at = i;
        weigh(s, model_pod_fit_request(pods[i]), ws[i].w);
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
