/* queuecheck: the webhook's decisions on the Queue tree (queuecheck.h). */
#include "queuecheck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "queuespec.h"
#include "queuetree.h"
#include "util.h"

/* Room for "parent queue <name>" in a message. */
#define WHO_MAX 300

/* ---- the set ---- */

void queuecheck_set_init(struct queuecheck_set *s)
{
    memset(s, 0, sizeof(*s));
}

static void queue_finish(struct queuecheck_queue *q)
{
    free(q->name);
    free(q->parent);
    resources_finish(&q->capability);
    resources_finish(&q->guarantee);
}

void queuecheck_set_clear(struct queuecheck_set *s)
{
    for (size_t i = 0; i < s->len; i++)
        queue_finish(&s->items[i]);
    s->len = 0;
}

void queuecheck_set_finish(struct queuecheck_set *s)
{
    if (s == NULL)
        return;
    queuecheck_set_clear(s);
    free(s->items);
    queuecheck_set_init(s);
}

/* The index of name, or where it would go. */
static size_t lower_bound(const struct queuecheck_set *s, const char *name)
{
    size_t lo = 0, hi = s->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->items[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct queuecheck_queue *queuecheck_set_get(const struct queuecheck_set *s, const char *name)
{
    size_t i = lower_bound(s, name);
    return i < s->len && strcmp(s->items[i].name, name) == 0 ? &s->items[i] : NULL;
}

static const char *meta_name(const json_t *obj)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    return name != NULL && name[0] != '\0' ? name : NULL;
}

/* spec.parent (borrowed from queue), or NULL. */
static const char *spec_parent(const json_t *queue)
{
    return json_string_value(json_object_get(json_object_get(queue, "spec"), "parent"));
}

/* spec.capability into out (initialised); one that does not parse is left empty (the gate reports it). */
static void spec_capability(const json_t *queue, struct resources *out)
{
    if (resources_parse(out, json_object_get(json_object_get(queue, "spec"), "capability"), "spec.capability", 0, NULL) != 0)
        resources_finish(out);
}

/* spec.guarantee.resource into out (initialised); one that does not parse is left empty. */
static void spec_guarantee(const json_t *queue, struct resources *out)
{
    const json_t *g = json_object_get(json_object_get(json_object_get(queue, "spec"), "guarantee"), "resource");
    if (resources_parse(out, g, "spec.guarantee.resource", 0, NULL) != 0)
        resources_finish(out);
}

/* Whether queue names workers in raygate.io/dispatch-to (its syntax is the dispatcher's to check: dispatchpick.h). */
static int has_dispatch_to(const json_t *queue)
{
    const char *to = json_string_value(
        json_object_get(json_object_get(json_object_get(queue, "metadata"), "annotations"), NAMES_ANNOTATION_DISPATCH_TO));
    for (; to != NULL && *to != '\0'; to++)
        if (*to != ' ' && *to != ',')
            return 1;
    return 0;
}

/*
 * Whether the Queue's own status (borrowed) says it holds gangs: the first of
 * status.running, status.inqueue and a non-zero status.allocated, as the gate
 * controller writes them, worded into buf ("status.running 2"); else "".
 */
static int held_text(const json_t *queue, char *buf, size_t size)
{
    const json_t *status = json_object_get(queue, "status");
    static const char *const counts[] = {"running", "inqueue"};
    buf[0] = '\0';
    for (size_t i = 0; i < 2; i++) {
        json_int_t n = json_integer_value(json_object_get(status, counts[i]));
        if (n > 0) {
            util_format(buf, size, "status.%s %" JSON_INTEGER_FORMAT, counts[i], n);
            return 1;
        }
    }
    struct resources alloc;
    resources_init(&alloc);
    if (resources_parse(&alloc, json_object_get(status, "allocated"), "status.allocated", 0, NULL) == 0) {
        for (size_t r = 0; r < alloc.len && buf[0] == '\0'; r++) {
            char q[QUANTITY_FORMAT_MAX];
            quantity_format(&alloc.items[r].quantity, resources_unit(alloc.items[r].name), q, sizeof(q));
            if (alloc.items[r].quantity.value != 0)
                util_format(buf, size, "status.allocated.%s %s", alloc.items[r].name, q);
        }
    }
    resources_finish(&alloc);
    return buf[0] != '\0';
}

int queuecheck_set_put(struct queuecheck_set *s, const json_t *queue)
{
    const char *name = meta_name(queue);
    if (name == NULL)
        return -1;
    size_t i = lower_bound(s, name);
    if (i < s->len && strcmp(s->items[i].name, name) == 0) {
        queue_finish(&s->items[i]);
    } else {
        if (s->len == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 16;
            s->items = util_realloc(s->items, s->cap * sizeof(*s->items));
        }
        memmove(&s->items[i + 1], &s->items[i], (s->len - i) * sizeof(*s->items));
        s->len++;
    }
    struct queuecheck_queue *q = &s->items[i];
    const char *parent = spec_parent(queue);
    q->name = util_strdup(name);
    q->parent = parent != NULL ? util_strdup(parent) : NULL;
    resources_init(&q->capability);
    spec_capability(queue, &q->capability);
    resources_init(&q->guarantee);
    spec_guarantee(queue, &q->guarantee);
    held_text(queue, q->held, sizeof(q->held));
    q->dispatching = has_dispatch_to(queue);
    return 0;
}

int queuecheck_set_remove(struct queuecheck_set *s, const char *name)
{
    size_t i = lower_bound(s, name);
    if (i >= s->len || strcmp(s->items[i].name, name) != 0)
        return 0;
    queue_finish(&s->items[i]);
    memmove(&s->items[i], &s->items[i + 1], (s->len - i - 1) * sizeof(*s->items));
    s->len--;
    return 1;
}

/* ---- the tree of a set, with one queue as an admission would leave it ---- */

struct view {
    struct queuetree_in *in;
    struct queuetree_node *out;
    const struct resources **cap; /* each queue's capability (borrowed) */
    const struct resources **gua; /* each queue's guarantee (borrowed) */
    const char **held;            /* each queue's held text (borrowed; "" for the queue admitted) */
    size_t n, root_first;
};

/*
 * The tree of s with the queue name (when not NULL) given parent and cap
 * (borrowed): replaced when present, else added last. view_finish releases it.
 */
static void view_build(struct view *v, const struct queuecheck_set *s, const char *name, const char *parent,
                       const struct resources *cap, const struct resources *gua)
{
    v->in = util_calloc(s->len + 1, sizeof(*v->in));
    v->out = util_calloc(s->len + 1, sizeof(*v->out));
    v->cap = util_calloc(s->len + 1, sizeof(*v->cap));
    v->gua = util_calloc(s->len + 1, sizeof(*v->gua));
    v->held = util_calloc(s->len + 1, sizeof(*v->held));
    v->n = 0;
    for (size_t i = 0; i < s->len; i++) {
        const struct queuecheck_queue *q = &s->items[i];
        int mine = name != NULL && strcmp(q->name, name) == 0;
        v->in[v->n] = (struct queuetree_in){q->name, mine ? parent : q->parent, 1};
        v->gua[v->n] = mine ? gua : &q->guarantee;
        v->held[v->n] = q->held;
        v->cap[v->n++] = mine ? cap : &q->capability;
    }
    if (name != NULL && queuecheck_set_get(s, name) == NULL) {
        v->in[v->n] = (struct queuetree_in){name, parent, 1};
        v->gua[v->n] = gua;
        v->held[v->n] = "";
        v->cap[v->n++] = cap;
    }
    queuetree_build(v->in, v->n, v->out, &v->root_first);
}

static void view_finish(struct view *v)
{
    free(v->in);
    free(v->out);
    free(v->cap);
    free(v->gua);
    free(v->held);
}

/* The first child of the queue named name (QUEUETREE_ROOT: none, or no such queue); "root" is the root. */
static size_t first_child(const struct view *v, const char *name)
{
    if (strcmp(name, QUEUETREE_ROOT_NAME) == 0)
        return v->root_first;
    size_t i = queuetree_find(v->in, v->n, name);
    return i == QUEUETREE_ROOT ? QUEUETREE_ROOT : v->out[i].first_child;
}

/* The children from first on, sorted by name as the set is: "infer, train", "a, b, ... and 12 more". */
static void children_text(const struct view *v, size_t first, char *buf, size_t size)
{
    size_t len = 0, shown = 0, total = 0;
    buf[0] = '\0';
    for (size_t c = first; c != QUEUETREE_ROOT; c = v->out[c].next_sibling) {
        total++;
        if (len < 120) {
            util_format(buf + len, size - len, "%s%s", shown > 0 ? ", " : "", v->in[c].name);
            len = strlen(buf);
            shown++;
        }
    }
    if (total > shown)
        util_format(buf + len, size - len, " and %zu more", total - shown);
}

/* ---- a Ray object's queue ---- */

static const char *queue_label(const json_t *obj)
{
    const char *q =
        json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), NAMES_LABEL_QUEUE));
    return q != NULL && q[0] != '\0' ? q : NULL;
}

enum queuecheck_verdict queuecheck_gang(const struct queuecheck_set *s, const json_t *object, const json_t *old, struct error *err)
{
    const char *queue = queue_label(object);
    if (queue == NULL)
        return QUEUECHECK_ALLOWED;
    const char *was = old != NULL ? queue_label(old) : NULL;
    if (was != NULL && strcmp(was, queue) == 0)
        return QUEUECHECK_ALLOWED; /* its queue gained children while it held the gang: it keeps it */
    if (!s->synced)
        return QUEUECHECK_UNKNOWN;
    struct view v;
    view_build(&v, s, NULL, NULL, NULL, NULL);
    size_t first = first_child(&v, queue);
    enum queuecheck_verdict verdict = QUEUECHECK_ALLOWED;
    if (first != QUEUETREE_ROOT) {
        char children[200];
        children_text(&v, first, children, sizeof(children));
        error_setf(err, "metadata.labels[%s]: queue %s has children (%s): only leaf queues hold gangs", NAMES_LABEL_QUEUE, queue,
                   children);
        verdict = QUEUECHECK_DENIED;
    }
    view_finish(&v);
    return verdict;
}

/* ---- a Queue ---- */

static void warn(json_t **warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(json_t **warnings, const char *fmt, ...)
{
    struct error text;
    va_list ap;
    va_start(ap, fmt);
    error_vsetf(&text, fmt, ap);
    va_end(ap);
    if (*warnings == NULL)
        *warnings = json_array();
    json_array_append_new(*warnings, json_string(text.message));
}

static void format_quantity(const char *resource, const struct quantity *q, char *buf, size_t size)
{
    quantity_format(q, resources_unit(resource), buf, size);
}

/*
 * Warns for every resource of queue i's capability above the nearest
 * ancestor's that sets it (the effective capability is the ancestor's), and
 * below a child's.
 */
static void capability_warnings(const struct view *v, size_t i, json_t **warnings)
{
    const struct resources *cap = v->cap[i];
    for (size_t r = 0; cap != NULL && r < cap->len; r++) {
        const char *res = cap->items[r].name;
        const struct quantity *mine = &cap->items[r].quantity, *theirs = NULL;
        size_t a = v->out[i].parent;
        for (size_t hops = 0; a != QUEUETREE_ROOT && hops < v->n; a = v->out[a].parent, hops++) {
            if (v->cap[a] != NULL && (theirs = resources_get(v->cap[a], res)) != NULL)
                break;
        }
        char q1[QUANTITY_FORMAT_MAX], q2[QUANTITY_FORMAT_MAX];
        format_quantity(res, mine, q1, sizeof(q1));
        if (theirs != NULL && mine->value > theirs->value) {
            format_quantity(res, theirs, q2, sizeof(q2));
            warn(warnings, "spec.capability.%s: %s is above %s, the capability of %s %s: the %s applies", res, q1, q2,
                 a == v->out[i].parent ? "its parent" : "its ancestor", v->in[a].name,
                 a == v->out[i].parent ? "parent's" : "ancestor's");
        }
        for (size_t c = v->out[i].first_child; c != QUEUETREE_ROOT; c = v->out[c].next_sibling) {
            const struct quantity *child = v->cap[c] != NULL ? resources_get(v->cap[c], res) : NULL;
            if (child != NULL && child->value > mine->value) {
                format_quantity(res, child, q2, sizeof(q2));
                warn(warnings, "spec.capability.%s: %s is below %s, the capability of its child %s: this queue's applies", res, q1,
                     q2, v->in[c].name);
            }
        }
    }
}

/* "a -> b -> a": the cycle through queue i. */
static void cycle_text(const struct view *v, size_t i, char *buf, size_t size)
{
    size_t len = 0;
    util_format(buf, size, "%s", v->in[i].name);
    for (size_t a = v->out[i].parent, hops = 0; a != QUEUETREE_ROOT && hops < v->n; a = v->out[a].parent, hops++) {
        len = strlen(buf);
        util_format(buf + len, size - len, " -> %s", v->in[a].name);
        if (a == i)
            break;
    }
}

/* Whether two spec.parent values name the same parent (every spelling of the root is one). */
static int same_parent(const char *a, const char *b)
{
    if (queuetree_parent_is_root(a) || queuetree_parent_is_root(b))
        return queuetree_parent_is_root(a) && queuetree_parent_is_root(b);
    return strcmp(a, b) == 0;
}

/* The sum of the guarantees of the children from first on, into sum (initialised); -1 on overflow. */
static int children_guarantee(const struct view *v, size_t first, struct resources *sum)
{
    for (size_t c = first; c != QUEUETREE_ROOT; c = v->out[c].next_sibling) {
        if (v->gua[c] != NULL && resources_add_scaled(sum, v->gua[c], 1, NULL) != 0)
            return -1;
    }
    return 0;
}

/* Whether the children of p (first on) guarantee more than p: err says so, prefixed by who. */
static int over_guarantee(const struct view *v, size_t p, const char *who, struct error *err)
{
    struct resources sum;
    resources_init(&sum);
    struct queuespec_problem prob = {.rule = QUEUESPEC_CHILDREN_GUARANTEE};
    static const struct resources none = {0};
    int over = 0;
    if (children_guarantee(v, v->out[p].first_child, &sum) != 0) {
        error_setf(err, "spec.guarantee.resource: %s validation failed: the children's guarantees overflow", who);
        over = 1;
    } else if (queuespec_over_guarantee(&sum, v->gua[p] != NULL ? v->gua[p] : &none, &prob)) {
        char text[sizeof(err->message)];
        queuespec_text(&prob, text, sizeof(text));
        error_setf(err, "%s validation failed: %s", who, text);
        over = 1;
    }
    resources_finish(&sum);
    return over;
}

/*
 * The rules of queue i's place in the tree v (queuespec.h), for a write whose
 * parent or guarantee changed (changed) or whose parent changed (new_parent):
 * a new parent that holds gangs and has no other child, the siblings'
 * guarantees above the parent's, its own guarantee below its children's.
 */
static int tree_rules(const struct view *v, size_t i, int new_parent, int changed, struct error *err)
{
    size_t p = v->out[i].parent;
    char who[WHO_MAX];
    if (new_parent && p != QUEUETREE_ROOT && v->out[p].nchildren == 1 && v->held[p][0] != '\0') {
        error_setf(err,
                   "spec.parent: queue %s cannot be the parent queue of queue %s because it has allocated Pods (%s): "
                   "only leaf queues hold gangs",
                   v->in[p].name, v->in[i].name, v->held[p]);
        return 1;
    }
    if (!changed)
        return 0;
    if (p != QUEUETREE_ROOT) {
        util_format(who, sizeof(who), "parent queue %s", v->in[p].name);
        if (over_guarantee(v, p, who, err))
            return 1;
    }
    util_format(who, sizeof(who), "queue %s", v->in[i].name);
    return v->out[i].first_child != QUEUETREE_ROOT && over_guarantee(v, i, who, err);
}

/* Whether the two Queues' spec.guarantee differ (either may be NULL). */
static int guarantee_changed(const json_t *object, const json_t *old)
{
    if (old == NULL)
        return 1;
    const json_t *a = json_object_get(json_object_get(object, "spec"), "guarantee");
    const json_t *b = json_object_get(json_object_get(old, "spec"), "guarantee");
    return a == NULL || b == NULL ? a != b : !json_equal(a, b);
}

/* The tree's checks of a CREATE or UPDATE of the Queue name (object and old borrowed) against the synced set. */
static enum queuecheck_verdict check_tree(const struct queuecheck_set *s, const char *name, const json_t *object, const json_t *old,
                                          int check_parent, json_t **warnings, struct error *err)
{
    const char *parent = spec_parent(object);
    int is_root = strcmp(name, QUEUETREE_ROOT_NAME) == 0;
    struct resources cap, gua;
    resources_init(&cap);
    resources_init(&gua);
    spec_capability(object, &cap);
    spec_guarantee(object, &gua);
    struct view v;
    view_build(&v, s, name, is_root ? NULL : parent, &cap, &gua);
    size_t i = queuetree_find(v.in, v.n, name);
    int new_parent = old == NULL || !same_parent(parent, spec_parent(old));
    enum queuecheck_verdict verdict = QUEUECHECK_ALLOWED;
    if (check_parent && v.out[i].state == QUEUETREE_MISSING_PARENT) {
        error_setf(err, "spec.parent: parent queue %s does not exist", parent);
        verdict = QUEUECHECK_DENIED;
    } else if (check_parent && v.out[i].state == QUEUETREE_CYCLE) {
        char cycle[240];
        cycle_text(&v, i, cycle, sizeof(cycle));
        error_setf(err, "spec.parent: parent %s makes a cycle: %s", parent, cycle);
        verdict = QUEUECHECK_DENIED;
    } else if (!is_root && v.out[i].state == QUEUETREE_OK &&
               tree_rules(&v, i, new_parent, new_parent || guarantee_changed(object, old), err)) {
        verdict = QUEUECHECK_DENIED;
    } else {
        capability_warnings(&v, i, warnings);
    }
    view_finish(&v);
    resources_finish(&cap);
    resources_finish(&gua);
    return verdict;
}

/* A CREATE or UPDATE of the Queue object (old: its previous version, or NULL). */
static enum queuecheck_verdict check_write(const struct queuecheck_set *s, const char *name, const json_t *object,
                                           const json_t *old, json_t **warnings, struct error *err)
{
    const char *parent = spec_parent(object);
    int is_root = strcmp(name, QUEUETREE_ROOT_NAME) == 0;
    int check_parent = !is_root && !queuetree_parent_is_root(parent) && (old == NULL || !same_parent(parent, spec_parent(old)));
    if (check_parent && strcmp(parent, name) == 0) {
        error_setf(err, "spec.parent: queue %s cannot be its own parent", name);
        return QUEUECHECK_DENIED;
    }
    struct queuespec_problem prob;
    if (queuespec_check(object, &prob, err) != 0)
        return QUEUECHECK_DENIED;
    if (!s->synced)
        return check_parent || (old != NULL && guarantee_changed(object, old)) ? QUEUECHECK_UNKNOWN : QUEUECHECK_ALLOWED;
    return check_tree(s, name, object, old, check_parent, warnings, err);
}

/* The Queue's own status (borrowed object) says it holds gangs: err names the field. */
static int holds_gangs(const json_t *queue, const char *name, struct error *err)
{
    const json_t *status = json_object_get(queue, "status");
    json_int_t running = json_integer_value(json_object_get(status, "running"));
    json_int_t inqueue = json_integer_value(json_object_get(status, "inqueue"));
    if (running > 0) {
        error_setf(err, "status.running: queue %s has %" JSON_INTEGER_FORMAT " running gangs: delete it once they end", name,
                   running);
        return 1;
    }
    if (inqueue > 0) {
        error_setf(err, "status.inqueue: queue %s has %" JSON_INTEGER_FORMAT " admitted gangs: delete it once they end", name,
                   inqueue);
        return 1;
    }
    struct resources alloc;
    resources_init(&alloc);
    int held = 0;
    if (resources_parse(&alloc, json_object_get(status, "allocated"), "status.allocated", 0, NULL) == 0) {
        for (size_t r = 0; r < alloc.len && !held; r++)
            held = alloc.items[r].quantity.value != 0;
    }
    if (held) {
        char *text = resources_to_string(&alloc);
        error_setf(err, "status.allocated: queue %s holds %s for its gangs: delete it once they end", name, text);
        free(text);
    }
    resources_finish(&alloc);
    return held;
}

static enum queuecheck_verdict check_delete(const struct queuecheck_set *s, const char *name, const json_t *old, struct error *err)
{
    if (!s->synced)
        return old != NULL && holds_gangs(old, name, err) ? QUEUECHECK_DENIED : QUEUECHECK_UNKNOWN;
    struct view v;
    view_build(&v, s, NULL, NULL, NULL, NULL);
    size_t first = strcmp(name, QUEUETREE_ROOT_NAME) == 0 ? QUEUETREE_ROOT : first_child(&v, name);
    enum queuecheck_verdict verdict = QUEUECHECK_ALLOWED;
    if (first != QUEUETREE_ROOT) {
        char children[200];
        children_text(&v, first, children, sizeof(children));
        error_setf(err, "queue %s has children (%s): delete them or change their spec.parent first", name, children);
        verdict = QUEUECHECK_DENIED;
    } else if (old != NULL && holds_gangs(old, name, err)) {
        verdict = QUEUECHECK_DENIED;
    }
    view_finish(&v);
    return verdict;
}

enum queuecheck_verdict queuecheck_queue(const struct queuecheck_set *s, const char *operation, const char *name,
                                         const json_t *object, const json_t *old, json_t **warnings, struct error *err)
{
    int del = strcmp(operation, "DELETE") == 0;
    if (!del && strcmp(operation, "CREATE") != 0 && strcmp(operation, "UPDATE") != 0)
        return QUEUECHECK_ALLOWED;
    const char *own = meta_name(del ? old : object);
    if (own != NULL)
        name = own;
    if (name == NULL || name[0] == '\0')
        return QUEUECHECK_ALLOWED; /* nothing can name it yet */
    if (del)
        return check_delete(s, name, old, err);
    if (!json_is_object(object))
        return QUEUECHECK_ALLOWED;
    return check_write(s, name, object, old, warnings, err);
}
