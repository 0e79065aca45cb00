/*
 * queuespec: the rules a Volcano Queue's own quantities keep, as Volcano's
 * webhook words them, so that the webhook (queuecheck.h) refuses a Queue that
 * breaks one and the gate controller (qtree.h) closes one already stored.
 *
 * Per resource, with capability, deserved and guarantee its spec.capability,
 * spec.deserved and spec.guarantee.resource:
 * - no quantity is negative;
 * - deserved <= capability (where both are listed);
 * - guarantee <= deserved, an unlisted deserved counting as 0 where the
 *   resource is guaranteed;
 * and across the tree (queuecheck.h, qtree.h): the children's guarantees
 * sum, per resource, to no more than their parent's guarantee (an unlisted
 * one counting as 0; the root's children are not summed).
 *
 * Pure: no I/O. Values are integers in resources_unit() (milli-cpu, bytes).
 */
#ifndef RAYGATE_QUEUESPEC_H
#define RAYGATE_QUEUESPEC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "resources.h"

/* A value the list does not name. */
#define QUEUESPEC_UNSET INT64_MIN

/* The rule a queue breaks; the order is the order of the checks. */
enum queuespec_rule {
    QUEUESPEC_OK = 0,
    QUEUESPEC_NEGATIVE_CAPABILITY,
    QUEUESPEC_NEGATIVE_DESERVED,
    QUEUESPEC_NEGATIVE_GUARANTEE,
    QUEUESPEC_DESERVED_ABOVE_CAPABILITY,
    QUEUESPEC_GUARANTEE_ABOVE_DESERVED,
    QUEUESPEC_CHILDREN_GUARANTEE, /* its children's guarantees sum above its own */
};

/* A broken rule, enough to word it. */
struct queuespec_problem {
    enum queuespec_rule rule;
    char resource[64]; /* the resource name ("cpu"), truncated */
    int64_t value;     /* the offending value: the negative one, deserved (QUEUESPEC_UNSET: unlisted), the children's sum */
    int64_t limit;     /* capability, guarantee, or the parent's guarantee */
};

/* The rule resource's three values break (each QUEUESPEC_UNSET when unlisted), or QUEUESPEC_OK; fills p (may be NULL). */
enum queuespec_rule queuespec_resource(const char *resource, int64_t capability, int64_t deserved, int64_t guarantee,
                                       struct queuespec_problem *p);

/*
 * The first rule the Queue (borrowed JSON object) breaks in its own spec, by
 * resource name: returns -1 with p filled and err worded (queuespec_text), or
 * 0. A list that does not parse is not judged here (the gate reports it).
 */
int queuespec_check(const json_t *queue, struct queuespec_problem *p, struct error *err);

/*
 * The three lists of a Queue (borrowed) into caller-initialised lists; one that
 * does not parse is left empty.
 */
void queuespec_lists(const json_t *queue, struct resources *capability, struct resources *deserved, struct resources *guarantee);

/*
 * Whether sum (the children's guarantees added) exceeds parent's guarantee in
 * some resource: returns 1 with p (QUEUESPEC_CHILDREN_GUARANTEE, the first such
 * resource by name), else 0.
 */
int queuespec_over_guarantee(const struct resources *sum, const struct resources *parent, struct queuespec_problem *p);

/*
 * p in Volcano's words, with the field first:
 *   spec.capability.cpu: -10 must be greater than or equal to 0
 *   spec.deserved.cpu: deserved[cpu]=2 must be <= capability[cpu]=1
 *   spec.deserved.cpu: deserved[cpu] must be >= guarantee[cpu]=1
 *   spec.guarantee.resource.cpu: sum of children's guarantee (cpu 9) exceeds parent's guarantee limit (cpu 8)
 */
void queuespec_text(const struct queuespec_problem *p, char *buf, size_t size);

#endif
