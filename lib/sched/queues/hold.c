#include "hold.h"

#include <string.h>

#include "quantity.h"
#include "util.h"

/* Whether pod counts in what its gang holds, given whether it is admitted (ungated): until it has finished. */
static int pod_holds(const struct cache_pod *pod, int ungated)
{
    return ungated && pod->phase != CACHE_PHASE_SUCCEEDED && pod->phase != CACHE_PHASE_FAILED;
}

static void sum_gang(const struct marks *m, uint32_t nres, const struct cache_gang *g, const struct cache_pod *extra, int64_t *out,
                     int64_t *tail);

void hold_gang(const struct marks *m, uint32_t nres, const struct cache_gang *g, const struct cache_pod *extra, int64_t *out,
               int64_t *tail)
{
    /* Marks (this pass's admissions) and extra are the pass's own: summed afresh. Else the memo, while g stands. */
    if (extra != NULL || marks_get(m, g) != 0 || g->memo == NULL) {
        sum_gang(m, nres, g, extra, out, tail);
        return;
    }
    int valid;
    int64_t *held = model_gang_memo(g, nres, MODEL_MEMO_HELD, &valid);
    if (!valid) {
        sum_gang(m, nres, g, NULL, held, tail);
        model_gang_memo_done(g, MODEL_MEMO_HELD);
    }
    memcpy(out, held, nres * sizeof(*out));
}

static void sum_gang(const struct marks *m, uint32_t nres, const struct cache_gang *g, const struct cache_pod *extra, int64_t *out,
                     int64_t *tail)
{
    memset(out, 0, nres * sizeof(*out));
    memset(tail, 0, nres * sizeof(*tail));
    size_t pods = 0, gated = 0;
    int marked = marks_get(m, g) != 0;
    for (const struct cache_pod *pod = g->pods; pod != NULL; pod = pod->gang_next) {
        unsigned marks = marked ? marks_get(m, pod) : 0;
        if (!pod_holds(pod, !cache_pod_gated(pod) || (marks & MARKS_ADMITTED) || pod == extra)) {
            gated += cache_pod_live(pod);
            continue;
        }
        pods++;
        int64_t *sum = cache_pod_live(pod) && (marks & MARKS_TAIL) ? tail : out;
        for (uint32_t k = 0; pod->request != NULL && k < pod->request->len; k++)
            sum[pod->request->items[k].id] += pod->request->items[k].value;
    }
    /* Admitted with its live pods all gated still (a gate removal the API refused, a restart mid-admission): FINISH
       ungates them with no check, so the gang holds its minResources now, not once they are ungated. */
    if (pods == 0 && (gated == 0 || !g->admitted))
        return;
    for (uint32_t k = 0; g->min_rl != NULL && k < g->min_rl->len; k++) {
        const struct shape_res *r = &g->min_rl->items[k];
        if (r->value > out[r->id])
            out[r->id] = r->value;
    }
    for (uint32_t k = 0; k < nres; k++)
        out[k] += tail[k];
}

static void sum_ungated(const struct marks *m, uint32_t nres, const struct cache_gang *g, int64_t *out);

void hold_ungated(const struct marks *m, uint32_t nres, const struct cache_gang *g, int64_t *out)
{
    if (marks_get(m, g) != 0 || g->memo == NULL) {
        sum_ungated(m, nres, g, out);
        return;
    }
    int valid;
    int64_t *ungated = model_gang_memo(g, nres, MODEL_MEMO_UNGATED, &valid);
    if (!valid) {
        sum_ungated(m, nres, g, ungated);
        model_gang_memo_done(g, MODEL_MEMO_UNGATED);
    }
    memcpy(out, ungated, nres * sizeof(*out));
}

static void sum_ungated(const struct marks *m, uint32_t nres, const struct cache_gang *g, int64_t *out)
{
    memset(out, 0, nres * sizeof(*out));
    int marked = (marks_get(m, g) & MARKS_ADMITTED) != 0;
    for (const struct cache_pod *pod = g->pods; pod != NULL; pod = pod->gang_next) {
        int ungated = !cache_pod_gated(pod) || (marked && (marks_get(m, pod) & MARKS_ADMITTED));
        if (pod->phase == CACHE_PHASE_SUCCEEDED || pod->phase == CACHE_PHASE_FAILED || !ungated)
            continue;
        for (uint32_t k = 0; pod->request != NULL && k < pod->request->len; k++)
            out[pod->request->items[k].id] += pod->request->items[k].value;
    }
}

static int sum_resources(const struct cache *c, const struct cache_gang *g, struct resources *out, struct error *err);

int hold_resources(const struct cache *c, const struct cache_gang *g, struct resources *out, struct error *err)
{
    const struct resources *r = hold_resources_ref(c, g, out, err);
    if (r == NULL)
        return -1;
    if (r != out) {
        resources_finish(out);
        resources_copy(out, r);
    }
    return 0;
}

const struct resources *hold_resources_ref(const struct cache *c, const struct cache_gang *g, struct resources *scratch,
                                           struct error *err)
{
    const struct resources *kept = g->memo != NULL ? model_gang_memo_resources(g) : NULL;
    if (kept != NULL)
        return kept;
    if (sum_resources(c, g, scratch, err) != 0)
        return NULL;
    if (g->memo == NULL)
        return scratch;
    model_gang_memo_set_resources(g, scratch);
    return model_gang_memo_resources(g);
}

static int sum_resources(const struct cache *c, const struct cache_gang *g, struct resources *out, struct error *err)
{
    resources_finish(out);
    size_t pods = 0;
    for (const struct cache_pod *pod = g->pods; pod != NULL; pod = pod->gang_next) {
        if (!pod_holds(pod, !cache_pod_gated(pod)))
            continue;
        pods++;
        for (uint32_t k = 0; pod->request != NULL && k < pod->request->len; k++) {
            const struct shape_res *r = &pod->request->items[k];
            const char *name = cache_resource_name(c, r->id);
            const struct quantity *cur = resources_get(out, name);
            struct quantity sum = cur != NULL ? *cur : (struct quantity){0, (enum quantity_format)r->format};
            struct quantity add = {r->value, (enum quantity_format)r->format};
            if (quantity_add(&sum, &add) != 0) {
                error_setf(err, "gang ray-%s-pg: %s: the requests of its pods overflow", cache_gang_group(g), name);
                return -1;
            }
            resources_set(out, name, &sum);
        }
    }
    if (pods == 0) {
        resources_finish(out);
        return 0;
    }
    for (uint32_t k = 0; g->min_rl != NULL && k < g->min_rl->len; k++) {
        const struct shape_res *r = &g->min_rl->items[k];
        const char *name = cache_resource_name(c, r->id);
        const struct quantity *cur = resources_get(out, name);
        if (cur == NULL || r->value > cur->value) {
            struct quantity q = {r->value, (enum quantity_format)r->format};
            resources_set(out, name, &q);
        }
    }
    return 0;
}

int hold_fits(const struct cache *c, const struct cache_queue *q, const int64_t *held, const int64_t *need,
              const struct resources *formats, char **why)
{
    struct util_buf b = {0};
    for (uint32_t k = 0; q->capability != NULL && k < q->capability->len; k++) {
        const struct shape_res *cap = &q->capability->items[k];
        int64_t n = need[cap->id];
        if (n <= 0 || held[cap->id] <= cap->value - n)
            continue;
        const char *name = cache_resource_name(c, cap->id);
        const struct quantity *fq = formats != NULL ? resources_get(formats, name) : NULL;
        util_buf_printf(&b, "%s%s needs ", b.len ? "; " : "", name);
        resources_put_quantity(&b, name, n, fq != NULL ? (uint8_t)fq->format : cap->format);
        util_buf_printf(&b, ", ");
        resources_put_quantity(&b, name, cap->value - held[cap->id], cap->format);
        util_buf_printf(&b, " of ");
        resources_put_quantity(&b, name, cap->value, cap->format);
        util_buf_printf(&b, " free");
    }
    if (b.len == 0) {
        util_buf_finish(&b);
        return 1;
    }
    *why = util_buf_take(&b);
    return 0;
}
