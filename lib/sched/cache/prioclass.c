/* prioclass: PriorityClasses by name, and the cache's use of them (prioclass.h). */
#include "prioclass.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct prioclass {
    char *name; /* owned */
    int32_t value;
    int global_default;
};

struct prioclasses {
    struct prioclass *v; /* owned; few: a cluster has a handful of classes */
    size_t n, cap;
};

struct prioclasses *prioclass_set_create(void)
{
    return util_calloc(1, sizeof(struct prioclasses));
}

void prioclass_set_destroy(struct prioclasses *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    free(s->v);
    free(s);
}

static struct prioclass *find(const struct prioclasses *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0)
            return &s->v[i];
    return NULL;
}

/* value clamped to int32 (the API's type), as model.c reads a pod's spec.priority. */
static int32_t clamp32(json_int_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

int prioclass_set_record(struct prioclasses *s, int deleted, const json_t *obj)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    if (name == NULL)
        return 0;
    struct prioclass *p = find(s, name);
    if (deleted) {
        if (p == NULL)
            return 0;
        free(p->name);
        *p = s->v[--s->n]; /* order does not matter */
        return 1;
    }
    int32_t value = clamp32(json_integer_value(json_object_get(obj, "value")));
    int global_default = json_is_true(json_object_get(obj, "globalDefault"));
    if (p != NULL && p->value == value && p->global_default == global_default)
        return 0;
    if (p == NULL) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 8;
            s->v = util_realloc(s->v, s->cap * sizeof(*s->v));
        }
        p = &s->v[s->n++];
        p->name = util_strdup(name);
    }
    p->value = value;
    p->global_default = global_default;
    return 1;
}

int32_t prioclass_set_value(const struct prioclasses *s, const char *name)
{
    if (s == NULL)
        return 0;
    if (name != NULL && name[0] != '\0') {
        const struct prioclass *p = find(s, name);
        return p != NULL ? p->value : 0;
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].global_default)
            return s->v[i].value;
    return 0;
}

void prioclass_use(struct cache *c, struct prioclasses *s)
{
    c->prio = s;
}

void prioclass_record(struct cache *c, int deleted, const json_t *obj)
{
    if (c->prio != NULL && prioclass_set_record(c->prio, deleted, obj)) {
        cache_mark_all_dirty(c);
        c->generation++;
    }
}

int32_t prioclass_value(const struct cache *c, const char *name)
{
    return prioclass_set_value(c->prio, name);
}
