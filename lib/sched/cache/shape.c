#include "shape.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void shape_pool_init(struct shape_pool *p)
{
    memset(p, 0, sizeof(*p));
    table_init(&p->strings);
    table_init(&p->rls);
    table_init(&p->scheds);
}

void shape_pool_finish(struct shape_pool *p)
{
    for (uint32_t i = 0; i < p->nresources; i++)
        shape_release(p, p->resource_names[i]);
    free(p->resource_names);
    table_finish(&p->strings);
    table_finish(&p->rls);
    table_finish(&p->scheds);
    memset(p, 0, sizeof(*p));
}

const char *shape_intern(struct shape_pool *p, const char *s)
{
    return table_intern(&p->strings, s);
}

void shape_release(struct shape_pool *p, const char *s)
{
    table_release(&p->strings, s);
}

const char *shape_member(struct shape_pool *p, const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL && s[0] != '\0' ? shape_intern(p, s) : NULL;
}

uint32_t shape_resource_id(struct shape_pool *p, const char *name)
{
    for (uint32_t i = 0; i < p->nresources; i++) {
        if (strcmp(p->resource_names[i], name) == 0)
            return i;
    }
    if (p->nresources == p->resource_cap) {
        p->resource_cap = p->resource_cap ? p->resource_cap * 2 : 8;
        p->resource_names = util_realloc(p->resource_names, p->resource_cap * sizeof(*p->resource_names));
    }
    p->resource_names[p->nresources] = shape_intern(p, name);
    return p->nresources++;
}

static uint64_t rl_hash(const struct shape_res *items, uint32_t len)
{
    uint64_t h = TABLE_HASH_SEED;
    for (uint32_t i = 0; i < len; i++) {
        h = table_hash_bytes(h, &items[i].id, sizeof(items[i].id));
        h = table_hash_bytes(h, &items[i].format, sizeof(items[i].format));
        h = table_hash_bytes(h, &items[i].value, sizeof(items[i].value));
    }
    return h;
}

static int rl_equal(const struct shape_rl *rl, const struct shape_res *items, uint32_t len)
{
    if (rl->len != len)
        return 0;
    for (uint32_t i = 0; i < len; i++) {
        if (rl->items[i].id != items[i].id || rl->items[i].format != items[i].format || rl->items[i].value != items[i].value)
            return 0;
    }
    return 1;
}

const struct shape_rl *shape_rl_intern(struct shape_pool *p, const struct resources *r, int keep_zero, const char *skip)
{
    struct shape_res *items = util_calloc(r->len, sizeof(*items));
    uint32_t len = 0;
    for (size_t i = 0; i < r->len; i++) {
        if ((r->items[i].quantity.value == 0 && !keep_zero) || util_streq(r->items[i].name, skip))
            continue;
        items[len].id = shape_resource_id(p, r->items[i].name);
        items[len].format = (uint8_t)r->items[i].quantity.format;
        items[len].value = r->items[i].quantity.value;
        len++;
    }
    const struct shape_rl *found = NULL;
    if (len == 0)
        goto out;
    uint64_t h = rl_hash(items, len);
    for (struct table_node *n = table_first(&p->rls, h); n != NULL; n = n->next) {
        struct shape_rl *rl = TABLE_CONTAINER_OF(n, struct shape_rl, node);
        if (n->hash == h && rl_equal(rl, items, len)) {
            rl->refs++;
            found = rl;
            goto out;
        }
    }
    struct shape_rl *rl = util_malloc(sizeof(*rl) + len * sizeof(rl->items[0]));
    rl->refs = 1;
    rl->len = len;
    memcpy(rl->items, items, len * sizeof(items[0]));
    rl->node.hash = h;
    table_insert(&p->rls, &rl->node);
    found = rl;
out:
    free(items);
    return found;
}

const struct shape_rl *shape_rl_ref(const struct shape_rl *crl)
{
    if (crl != NULL)
        ((struct shape_rl *)(uintptr_t)crl)->refs++; /* the pool owns it; const is for readers */
    return crl;
}

void shape_rl_release(struct shape_pool *p, const struct shape_rl *crl)
{
    if (crl == NULL)
        return;
    struct shape_rl *rl = (struct shape_rl *)(uintptr_t)crl; /* we own it; const is for readers */
    if (--rl->refs == 0) {
        table_remove(&p->rls, &rl->node);
        free(rl);
    }
}

static void sched_free(struct shape_pool *p, struct shape_sched *s)
{
    for (uint32_t i = 0; i < s->nselector; i++) {
        shape_release(p, s->selector[i].key);
        shape_release(p, s->selector[i].value);
    }
    free(s->selector);
    for (uint32_t t = 0; t < s->nterms; t++) {
        for (uint32_t e = 0; e < s->terms[t].len; e++) {
            struct shape_expr *x = &s->terms[t].exprs[e];
            shape_release(p, x->key);
            for (uint32_t v = 0; v < x->nvalues; v++)
                shape_release(p, x->values[v]);
            free(x->values);
        }
        free(s->terms[t].exprs);
    }
    free(s->terms);
    for (uint32_t i = 0; i < s->ntolerations; i++) {
        shape_release(p, s->tolerations[i].key);
        shape_release(p, s->tolerations[i].value);
    }
    free(s->tolerations);
    free(s->key);
    free(s);
}

void shape_sched_release(struct shape_pool *p, const struct shape_sched *cs)
{
    if (cs == NULL)
        return;
    struct shape_sched *s = (struct shape_sched *)(uintptr_t)cs;
    if (--s->refs == 0) {
        table_remove(&p->scheds, &s->node);
        sched_free(p, s);
    }
}

uint8_t shape_effect(const char *s)
{
    if (util_streq(s, "NoSchedule"))
        return SHAPE_EFFECT_NO_SCHEDULE;
    if (util_streq(s, "NoExecute"))
        return SHAPE_EFFECT_NO_EXECUTE;
    return SHAPE_EFFECT_ANY;
}

/* Appends the requirements of a matchExpressions or matchFields array to term. */
static void parse_exprs(struct shape_pool *p, const json_t *arr, int fields, struct shape_term *term)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    size_t i;
    const json_t *req;
    json_array_foreach(arr, i, req)
    {
        const char *key = json_string_value(json_object_get(req, "key"));
        const char *op = json_string_value(json_object_get(req, "operator"));
        if (key == NULL || op == NULL)
            continue;
        uint8_t code = 255;
        for (uint8_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
            if (strcmp(op, ops[k]) == 0)
                code = k;
        }
        if (code == 255)
            code = SHAPE_OP_IN; /* unknown operator: with no values it matches nothing, as the scheduler would not */
        term->exprs = util_realloc(term->exprs, (term->len + 1) * sizeof(*term->exprs));
        struct shape_expr *x = &term->exprs[term->len++];
        x->key = shape_intern(p, key);
        x->op = code;
        x->field_name = fields != 0;
        const json_t *values = json_object_get(req, "values");
        x->nvalues = 0;
        x->values = util_calloc(json_array_size(values), sizeof(*x->values));
        for (size_t v = 0; v < json_array_size(values); v++) {
            const char *s = json_string_value(json_array_get(values, v));
            if (s != NULL)
                x->values[x->nvalues++] = shape_intern(p, s);
        }
    }
}

/* Builds the class of a pod spec's constraints from its canonical key object. */
static struct shape_sched *sched_build(struct shape_pool *p, const json_t *selector, const json_t *terms, const json_t *tolerations)
{
    struct shape_sched *s = util_calloc(1, sizeof(*s));
    const char *k;
    const json_t *v;
    s->selector = util_calloc(json_object_size(selector), sizeof(*s->selector));
    json_object_foreach((json_t *)selector, k, v)
    {
        if (!json_is_string(v))
            continue;
        s->selector[s->nselector].key = shape_intern(p, k);
        s->selector[s->nselector].value = shape_intern(p, json_string_value(v));
        s->nselector++;
    }
    s->terms = util_calloc(json_array_size(terms), sizeof(*s->terms));
    for (size_t i = 0; i < json_array_size(terms); i++) {
        const json_t *t = json_array_get(terms, i);
        struct shape_term *term = &s->terms[s->nterms++];
        parse_exprs(p, json_object_get(t, "matchExpressions"), 0, term);
        parse_exprs(p, json_object_get(t, "matchFields"), 1, term);
    }
    s->tolerations = util_calloc(json_array_size(tolerations), sizeof(*s->tolerations));
    for (size_t i = 0; i < json_array_size(tolerations); i++) {
        const json_t *t = json_array_get(tolerations, i);
        struct shape_toleration *tol = &s->tolerations[s->ntolerations++];
        tol->key = shape_member(p, t, "key");
        tol->value = shape_member(p, t, "value");
        tol->exists = util_streq(json_string_value(json_object_get(t, "operator")), "Exists");
        tol->effect = shape_effect(json_string_value(json_object_get(t, "effect")));
        const char *effect = json_string_value(json_object_get(t, "effect"));
        if (effect != NULL && effect[0] != '\0' && tol->effect == SHAPE_EFFECT_ANY) {
            /* PreferNoSchedule: tolerates no taint we keep. */
            tol->effect = 255;
        }
    }
    return s;
}

const struct shape_sched *shape_sched_intern(struct shape_pool *p, const json_t *spec)
{
    const json_t *selector = json_object_get(spec, "nodeSelector");
    const json_t *terms = json_object_get(json_object_get(json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
                                                          "requiredDuringSchedulingIgnoredDuringExecution"),
                                          "nodeSelectorTerms");
    const json_t *tolerations = json_object_get(spec, "tolerations");
    if (!json_is_object(selector) || json_object_size(selector) == 0)
        selector = NULL;
    if (!json_is_array(terms) || json_array_size(terms) == 0)
        terms = NULL;
    if (!json_is_array(tolerations) || json_array_size(tolerations) == 0)
        tolerations = NULL;
    if (selector == NULL && terms == NULL && tolerations == NULL)
        return NULL;

    json_t *key = json_object();
    if (selector != NULL)
        json_object_set(key, "s", (json_t *)selector);
    if (terms != NULL)
        json_object_set(key, "a", (json_t *)terms);
    if (tolerations != NULL)
        json_object_set(key, "t", (json_t *)tolerations);
    char *text = json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(key);
    if (text == NULL)
        abort();
    uint64_t h = table_hash_str(TABLE_HASH_SEED, text);
    for (struct table_node *n = table_first(&p->scheds, h); n != NULL; n = n->next) {
        struct shape_sched *s = TABLE_CONTAINER_OF(n, struct shape_sched, node);
        if (n->hash == h && strcmp(s->key, text) == 0) {
            s->refs++;
            free(text);
            return s;
        }
    }
    struct shape_sched *s = sched_build(p, selector, terms, tolerations);
    s->key = text;
    s->refs = 1;
    s->node.hash = h;
    table_insert(&p->scheds, &s->node);
    return s;
}
