/*
 * shape: what the cache's objects share, interned in one pool and compared by
 * pointer: strings (label values, namespaces, node and resource names),
 * resource names numbered densely (resource ids), resource lists, and pods'
 * scheduling constraints (nodeSelector, required node affinity,
 * tolerations), so that the pods of one worker group share one copy of each.
 *
 * Everything interned is reference counted: each shape_*intern() is matched by
 * a shape_*release() (NULL is fine for both). Resource names stay for the
 * pool's life: their ids index dense arrays (fit.h, admit.h). Pure.
 */
#ifndef RAYGATE_SHAPE_H
#define RAYGATE_SHAPE_H

#include <stdint.h>

#include <jansson.h>

#include "resources.h"
#include "table.h"

/* One resource of an interned list: id indexes shape_pool.resource_names. */
struct shape_res {
    uint32_t id;
    uint8_t format; /* enum quantity_format */
    int64_t value;  /* milli-units for cpu, base units otherwise */
};

/* An interned, immutable resource list, items sorted by resource name. */
struct shape_rl {
    struct table_node node;
    uint32_t refs;
    uint32_t len;
    struct shape_res items[];
};

enum shape_op {
    SHAPE_OP_IN,
    SHAPE_OP_NOT_IN,
    SHAPE_OP_EXISTS,
    SHAPE_OP_DOES_NOT_EXIST,
    SHAPE_OP_GT,
    SHAPE_OP_LT,
};

/* One node selector requirement; strings interned. */
struct shape_expr {
    const char *key;
    uint8_t op;         /* enum shape_op */
    uint8_t field_name; /* a matchFields requirement on metadata.name, not a label */
    uint32_t nvalues;
    const char **values;
};

/* A node selector term: its requirements all hold (matchExpressions and matchFields). */
struct shape_term {
    uint32_t len;
    struct shape_expr *exprs;
};

enum shape_effect {
    SHAPE_EFFECT_ANY = 0, /* a toleration with no effect */
    SHAPE_EFFECT_NO_SCHEDULE,
    SHAPE_EFFECT_NO_EXECUTE,
};

struct shape_toleration {
    const char *key;   /* NULL: empty key (with Exists: every taint) */
    const char *value; /* NULL: empty */
    uint8_t exists;    /* operator Exists, else Equal */
    uint8_t effect;    /* enum shape_effect */
};

struct shape_taint {
    const char *key;
    const char *value; /* NULL: empty */
    uint8_t effect;    /* enum shape_effect: only NoSchedule and NoExecute are kept */
};

struct shape_label {
    const char *key;
    const char *value;
};

/*
 * A pod's scheduling constraints, interned by content: nodeSelector, required
 * node affinity (any term), tolerations. Pods without any share NULL.
 */
struct shape_sched {
    struct table_node node;
    uint32_t refs;
    char *key; /* canonical JSON the class is interned by */
    uint32_t nselector;
    struct shape_label *selector;
    uint32_t nterms; /* 0: no required node affinity */
    struct shape_term *terms;
    uint32_t ntolerations;
    struct shape_toleration *tolerations;
};

/* The pool (caller-owned storage; shape_pool_init, shape_pool_finish). Read its fields; change it through the functions. */
struct shape_pool {
    struct table strings;
    struct table rls;
    struct table scheds;
    const char **resource_names; /* interned, by id */
    uint32_t nresources;
    uint32_t resource_cap;
};

void shape_pool_init(struct shape_pool *p);

/* Frees the resource names; everything else must have been released. */
void shape_pool_finish(struct shape_pool *p);

/* table_intern()/table_release() in the pool's strings. */
const char *shape_intern(struct shape_pool *p, const char *s);
void shape_release(struct shape_pool *p, const char *s);

/* An interned copy of obj's (borrowed) member key when it is a non-empty string, else NULL. */
const char *shape_member(struct shape_pool *p, const json_t *obj, const char *key);

/* The id of resource name, numbered on first sight. */
uint32_t shape_resource_id(struct shape_pool *p, const char *name);

/*
 * Interns r (names sorted, as struct resources keeps them). Zero quantities are
 * dropped unless keep_zero (a queue's capability of 0 still limits). skip names
 * one resource to leave out (NULL: none). Returns NULL for an empty list.
 */
const struct shape_rl *shape_rl_intern(struct shape_pool *p, const struct resources *r, int keep_zero, const char *skip);

/* One more reference to rl (NULL: none); returns rl. */
const struct shape_rl *shape_rl_ref(const struct shape_rl *rl);
void shape_rl_release(struct shape_pool *p, const struct shape_rl *rl);

/* A taint's or toleration's effect: NoSchedule, NoExecute, else ANY (also for NULL). */
uint8_t shape_effect(const char *s);

/* The interned constraints of a pod spec (borrowed), or NULL when it has none. */
const struct shape_sched *shape_sched_intern(struct shape_pool *p, const json_t *spec);
void shape_sched_release(struct shape_pool *p, const struct shape_sched *s);

#endif
