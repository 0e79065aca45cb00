/* queuespec: the rules of a Queue's own quantities (queuespec.h). */
#include "queuespec.h"

#include <string.h>

#include "util.h"

enum queuespec_rule queuespec_resource(const char *resource, int64_t capability, int64_t deserved, int64_t guarantee,
                                       struct queuespec_problem *p)
{
    enum queuespec_rule rule = QUEUESPEC_OK;
    int64_t value = 0, limit = 0;
    if (capability != QUEUESPEC_UNSET && capability < 0) {
        rule = QUEUESPEC_NEGATIVE_CAPABILITY;
        value = capability;
    } else if (deserved != QUEUESPEC_UNSET && deserved < 0) {
        rule = QUEUESPEC_NEGATIVE_DESERVED;
        value = deserved;
    } else if (guarantee != QUEUESPEC_UNSET && guarantee < 0) {
        rule = QUEUESPEC_NEGATIVE_GUARANTEE;
        value = guarantee;
    } else if (deserved != QUEUESPEC_UNSET && capability != QUEUESPEC_UNSET && deserved > capability) {
        rule = QUEUESPEC_DESERVED_ABOVE_CAPABILITY;
        value = deserved;
        limit = capability;
    } else if (guarantee != QUEUESPEC_UNSET && guarantee > 0 && (deserved == QUEUESPEC_UNSET || deserved < guarantee)) {
        rule = QUEUESPEC_GUARANTEE_ABOVE_DESERVED;
        value = deserved;
        limit = guarantee;
    }
    if (p != NULL) {
        p->rule = rule;
        util_format(p->resource, sizeof(p->resource), "%s", resource);
        p->value = value;
        p->limit = limit;
    }
    return rule;
}

static void parse_or_empty(struct resources *out, const json_t *list)
{
    if (resources_parse(out, list, "spec", 0, NULL) != 0)
        resources_finish(out);
}

void queuespec_lists(const json_t *queue, struct resources *capability, struct resources *deserved, struct resources *guarantee)
{
    const json_t *spec = json_object_get(queue, "spec");
    parse_or_empty(capability, json_object_get(spec, "capability"));
    parse_or_empty(deserved, json_object_get(spec, "deserved"));
    parse_or_empty(guarantee, json_object_get(json_object_get(spec, "guarantee"), "resource"));
}

static int64_t value_of(const struct resources *r, const char *name)
{
    const struct quantity *q = resources_get(r, name);
    return q != NULL ? q->value : QUEUESPEC_UNSET;
}

/* The first rule broken by a resource of names (the others' values looked up), into p. */
static int check_names(const struct resources *names, const struct resources *cap, const struct resources *des,
                       const struct resources *gua, struct queuespec_problem *p)
{
    for (size_t i = 0; i < names->len; i++) {
        const char *n = names->items[i].name;
        if (queuespec_resource(n, value_of(cap, n), value_of(des, n), value_of(gua, n), p) != QUEUESPEC_OK)
            return -1;
    }
    return 0;
}

int queuespec_check(const json_t *queue, struct queuespec_problem *p, struct error *err)
{
    struct resources cap, des, gua;
    resources_init(&cap);
    resources_init(&des);
    resources_init(&gua);
    queuespec_lists(queue, &cap, &des, &gua);
    /* Negative values first, in the order of the fields, then the comparisons: every resource of each list. */
    int rc = check_names(&cap, &cap, &des, &gua, p);
    if (rc == 0)
        rc = check_names(&des, &cap, &des, &gua, p);
    if (rc == 0)
        rc = check_names(&gua, &cap, &des, &gua, p);
    if (rc != 0) {
        char text[sizeof(err->message)];
        queuespec_text(p, text, sizeof(text));
        error_setf(err, "%s", text);
    }
    resources_finish(&cap);
    resources_finish(&des);
    resources_finish(&gua);
    return rc;
}

int queuespec_over_guarantee(const struct resources *sum, const struct resources *parent, struct queuespec_problem *p)
{
    for (size_t i = 0; i < sum->len; i++) {
        const struct resource *r = &sum->items[i];
        const struct quantity *limit = resources_get(parent, r->name);
        int64_t l = limit != NULL ? limit->value : 0;
        if (r->quantity.value > l) {
            p->rule = QUEUESPEC_CHILDREN_GUARANTEE;
            util_format(p->resource, sizeof(p->resource), "%s", r->name);
            p->value = r->quantity.value;
            p->limit = l;
            return 1;
        }
    }
    return 0;
}

static void put(const char *resource, int64_t v, char *buf, size_t size)
{
    int binary = strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0;
    struct quantity q = {v, binary ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI};
    quantity_format(&q, resources_unit(resource), buf, size);
}

void queuespec_text(const struct queuespec_problem *p, char *buf, size_t size)
{
    char v[QUANTITY_FORMAT_MAX], l[QUANTITY_FORMAT_MAX];
    const char *r = p->resource;
    put(r, p->value == QUEUESPEC_UNSET ? 0 : p->value, v, sizeof(v));
    put(r, p->limit, l, sizeof(l));
    switch (p->rule) {
    case QUEUESPEC_OK:
        util_format(buf, size, "ok");
        break;
    case QUEUESPEC_NEGATIVE_CAPABILITY:
        util_format(buf, size, "spec.capability.%s: %s must be greater than or equal to 0", r, v);
        break;
    case QUEUESPEC_NEGATIVE_DESERVED:
        util_format(buf, size, "spec.deserved.%s: %s must be greater than or equal to 0", r, v);
        break;
    case QUEUESPEC_NEGATIVE_GUARANTEE:
        util_format(buf, size, "spec.guarantee.resource.%s: %s must be greater than or equal to 0", r, v);
        break;
    case QUEUESPEC_DESERVED_ABOVE_CAPABILITY:
        util_format(buf, size, "spec.deserved.%s: deserved[%s]=%s must be <= capability[%s]=%s", r, r, v, r, l);
        break;
    case QUEUESPEC_GUARANTEE_ABOVE_DESERVED:
        if (p->value == QUEUESPEC_UNSET)
            util_format(buf, size, "spec.deserved.%s: deserved[%s] must be >= guarantee[%s]=%s", r, r, r, l);
        else
            util_format(buf, size, "spec.deserved.%s: deserved[%s]=%s must be >= guarantee[%s]=%s", r, r, v, r, l);
        break;
    case QUEUESPEC_CHILDREN_GUARANTEE:
        util_format(buf, size,
                    "spec.guarantee.resource.%s: sum of children's guarantee (%s %s) exceeds parent's guarantee limit (%s %s)", r,
                    r, v, r, l);
        break;
    }
}
