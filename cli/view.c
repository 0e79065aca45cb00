/*
 * view: the rows of `kubectl raygate`, derived from what the gate controller
 * wrote (see view.h). Pure.
 */
#include "view.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatched.h"
#include "names.h"
#include "quantity.h"
#include "queuetree.h"
#include "resources.h"
#include "util.h"

/* ---- small readers ---- */

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static const json_t *meta(const json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static const char *annotation(const json_t *obj, const char *key)
{
    return str(json_object_get(meta(obj), "annotations"), key);
}

static const json_t *array_of(const json_t *snapshot, const char *key)
{
    const json_t *a = json_object_get(snapshot, key);
    return json_is_array(a) ? a : NULL;
}

long long view_parse_time(const char *s)
{
    int64_t t;
    return util_parse_time(s, &t) == 0 ? (long long)t : -1;
}

char *view_age(long long seconds, char *buf, size_t size)
{
    long long s = seconds < 0 ? 0 : seconds, m = s / 60, h = s / 3600, d = s / 86400;
    if (s < 120)
        snprintf(buf, size, "%llds", s);
    else if (m < 10)
        snprintf(buf, size, "%lldm%llds", m, s % 60);
    else if (h < 3)
        snprintf(buf, size, "%lldm", m);
    else if (h < 8)
        snprintf(buf, size, "%lldh%lldm", h, m % 60);
    else if (h < 48)
        snprintf(buf, size, "%lldh", h);
    else if (d < 8)
        snprintf(buf, size, "%lldd%lldh", d, h % 24);
    else
        snprintf(buf, size, "%lldd", d);
    return buf;
}

/* The ownerReference with controller true (borrowed), or NULL. */
static const json_t *controller_ref(const json_t *obj)
{
    size_t i;
    const json_t *ref;
    json_array_foreach(json_object_get(meta(obj), "ownerReferences"), i, ref)
    {
        if (json_is_true(json_object_get(ref, "controller")))
            return ref;
    }
    return NULL;
}

/* "RayCluster", "RayJob", "legacy" for a gang's controller, or NULL when it is not a Ray object. */
static const char *kind_of(const json_t *ref)
{
    const char *api = str(ref, "apiVersion"), *kind = str(ref, "kind");
    if (api == NULL || kind == NULL)
        return NULL;
    if (strncmp(api, "cluster.ray.io/", 15) == 0 && strcmp(kind, "RayCluster") == 0)
        return "legacy";
    if (strncmp(api, "ray.io/", 7) == 0 && (strcmp(kind, "RayCluster") == 0 || strcmp(kind, "RayJob") == 0))
        return kind;
    return NULL;
}

/* The owner object (borrowed) with that uid, or NULL. */
static const json_t *find_owner(const json_t *snapshot, const char *uid)
{
    size_t i;
    const json_t *o;
    json_array_foreach(array_of(snapshot, "owners"), i, o)
    {
        const char *u = str(meta(o), "uid");
        if (uid != NULL && u != NULL && strcmp(u, uid) == 0)
            return o;
    }
    return NULL;
}

/* The status condition of that type (borrowed), or NULL. */
static const json_t *condition(const json_t *pg, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(pg, "status"), "conditions"), i, c)
    {
        const char *t = str(c, "type");
        if (t != NULL && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

static int condition_true(const json_t *pg, const char *type)
{
    const char *s = str(condition(pg, type), "status");
    return s != NULL && strcmp(s, "True") == 0;
}

static int pod_live(const json_t *pod)
{
    const char *phase = str(json_object_get(pod, "status"), "phase");
    if (json_object_get(meta(pod), "deletionTimestamp") != NULL)
        return 0;
    return phase == NULL || (strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0);
}

/* Whether a pod is one of a Ray cluster's (KubeRay's or the legacy operator's), not e.g. a RayJob's submitter. */
static int ray_node(const json_t *pod)
{
    const json_t *labels = json_object_get(meta(pod), "labels");
    return str(labels, "ray.io/cluster") != NULL || str(labels, "ray-cluster-name") != NULL;
}

/*
 * The Ray pods of gang ns with group name in groups (borrowed strings: the
 * PodGroup's, and a RayJob's clusters' "ray-<cluster>-pg"): bound (live, on a
 * node) and the highest spec.priority (*prio, *has_prio).
 */
static long long count_pods(const json_t *pods, const char *ns, const json_t *groups, long long *prio, int *has_prio)
{
    size_t i, k;
    const json_t *pod, *g;
    long long bound = 0;
    json_array_foreach(pods, i, pod)
    {
        const char *pns = str(meta(pod), "namespace"), *group = annotation(pod, NAMES_ANNOTATION_GROUP);
        int ours = 0;
        json_array_foreach(groups, k, g) ours |= group != NULL && strcmp(group, json_string_value(g)) == 0;
        if (pns == NULL || !ours || strcmp(pns, ns) != 0 || !pod_live(pod) || !ray_node(pod))
            continue;
        const json_t *spec = json_object_get(pod, "spec");
        const char *node = str(spec, "nodeName");
        if (node != NULL && *node != '\0')
            bound++;
        const json_t *p = json_object_get(spec, "priority");
        if (json_is_integer(p) && (!*has_prio || json_integer_value(p) > *prio)) {
            *prio = json_integer_value(p);
            *has_prio = 1;
        }
    }
    return bound;
}

/* The value of PriorityClass name (NULL: none), as admission resolves it; 0 with *known 0 when classes are unknown. */
static long long class_priority(const json_t *snapshot, const char *name, int *known)
{
    const json_t *classes = json_object_get(snapshot, "priorityClasses");
    size_t i;
    const json_t *pc;
    long long global = 0;
    *known = json_is_array(classes);
    json_array_foreach(classes, i, pc)
    {
        const char *n = str(meta(pc), "name");
        long long v = json_integer_value(json_object_get(pc, "value"));
        if (name != NULL && n != NULL && strcmp(n, name) == 0)
            return v;
        if (json_is_true(json_object_get(pc, "globalDefault")))
            global = v;
    }
    return global;
}

/* ---- the short reason ---- */

struct quantity view_quantity(const json_t *list, const char *name)
{
    struct quantity q = {0, QUANTITY_DECIMAL_SI};
    struct error err;
    const json_t *v = json_object_get(list, name);
    if (json_is_string(v)) {
        if (quantity_parse(json_string_value(v), resources_unit(name), &q, &err) != 0)
            q.value = 0;
    } else if (json_is_integer(v)) {
        q.value = json_integer_value(v);
        if (resources_unit(name) == QUANTITY_UNIT_MILLI)
            q.value = q.value > INT64_MAX / 1000 ? INT64_MAX : q.value * 1000;
    }
    return q;
}

const json_t *view_find_queue(const json_t *snapshot, const char *name)
{
    size_t i;
    const json_t *q;
    json_array_foreach(array_of(snapshot, "queues"), i, q)
    {
        const char *n = str(meta(q), "name");
        if (n != NULL && name != NULL && strcmp(n, name) == 0)
            return q;
    }
    return NULL;
}

int view_queue_short(const json_t *queue, const json_t *need, const char *name, struct quantity *n, struct quantity *cap,
                     int64_t *free_)
{
    const json_t *caps = json_object_get(json_object_get(queue, "spec"), "capability");
    const json_t *alloc = json_object_get(json_object_get(queue, "status"), "allocated");
    struct quantity a = view_quantity(alloc, name);
    *n = view_quantity(need, name);
    *cap = view_quantity(caps, name);
    *free_ = cap->value > a.value ? cap->value - a.value : 0;
    return json_object_get(caps, name) != NULL && n->value > 0 && n->value > *free_;
}

const json_t *view_blocker(const json_t *rows, const json_t *row)
{
    const json_t *best = NULL, *other;
    json_int_t pos = json_integer_value(json_object_get(row, "position")), best_pos = 0;
    const char *queue = str(row, "queue");
    size_t i;
    json_array_foreach(rows, i, other)
    {
        enum admit_reason r = view_wait_reason(other);
        json_int_t p = json_integer_value(json_object_get(other, "position"));
        const char *q = str(other, "queue");
        if (q == NULL || queue == NULL || strcmp(q, queue) != 0 || p <= 0 || p >= pos ||
            (r != ADMIT_REASON_QUEUE_CAPACITY && r != ADMIT_REASON_QUEUE_TREE && r != ADMIT_REASON_NODES))
            continue;
        if (best == NULL || p < best_pos) {
            best = other;
            best_pos = p;
        }
    }
    return best;
}

/* The resources of need short in queue (snapshot's; borrowed) into b, after sep: returns whether any. */
static int put_short(const json_t *queue, const json_t *need, struct util_buf *b, const char *sep)
{
    const char *name;
    const json_t *v;
    int any = 0;
    json_object_foreach((json_t *)need, name, v)
    {
        struct quantity n, cap;
        int64_t free_;
        if (!view_queue_short(queue, need, name, &n, &cap, &free_))
            continue;
        util_buf_printf(b, "%s%s", any ? ", " : sep, name);
        any = 1;
    }
    return any;
}

/* "queue q: cpu, memory short" by the queue's status now (snapshot borrowed), or "queue q: room now". */
static char *short_capacity(const json_t *snapshot, const json_t *row)
{
    const json_t *queue = view_find_queue(snapshot, str(row, "queue")), *need = json_object_get(row, "minResources");
    struct util_buf b = {0};
    util_buf_printf(&b, "queue %s", str(row, "queue"));
    util_buf_puts(&b, put_short(queue, need, &b, ": ") ? " short" : ": room now");
    return util_buf_take(&b);
}

/* queue-tree: "queue eng (above train): cpu short", the first ancestor short by its status now, or "room guaranteed elsewhere". */
static char *short_tree(const json_t *snapshot, const json_t *row)
{
    const char *leaf = str(row, "queue");
    const json_t *need = json_object_get(row, "minResources");
    const json_t *q = view_find_queue(snapshot, leaf);
    struct util_buf b = {0};
    for (int depth = 0; q != NULL && depth < 64; depth++) {
        const char *parent = str(json_object_get(q, "spec"), "parent");
        q = parent != NULL ? view_find_queue(snapshot, parent) : NULL;
        util_buf_printf(&b, "queue %s (above %s)", parent != NULL ? parent : "", leaf);
        if (q != NULL && put_short(q, need, &b, ": ")) {
            util_buf_puts(&b, " short");
            return util_buf_take(&b);
        }
        util_buf_finish(&b);
    }
    return util_strdupf("queue %s: room guaranteed elsewhere", leaf);
}

/* queue-bad-tree: "queue a: " and its status.treeError, or "bad queue tree". */
static char *short_bad_tree(const json_t *snapshot, const char *queue)
{
    const json_t *q = view_find_queue(snapshot, queue);
    const char *err = str(json_object_get(q, "status"), "treeError");
    return util_strdupf("queue %s: %s", queue, err != NULL ? err : "bad queue tree");
}

/* The shortened wait reason of a row that is not admitted, by its reason code (new string). */
static char *short_reason(const json_t *snapshot, const json_t *rows, const json_t *row)
{
    const char *message = str(row, "message"), *q = str(row, "queue");
    const json_t *blocker, *created = json_object_get(row, "podsCreated");
    if (message == NULL)
        return util_strdup(str(row, "reason") != NULL ? str(row, "reason") : "no decision yet");
    switch (view_wait_reason(row)) {
    case ADMIT_REASON_QUEUE_CAPACITY:
        return short_capacity(snapshot, row);
    case ADMIT_REASON_NODES:
        return util_strdup("nodes: no room");
    case ADMIT_REASON_TOPOLOGY:
        return util_strdup("topology: no domain has room");
    case ADMIT_REASON_BLOCKED:
        blocker = view_blocker(rows, row);
        return blocker != NULL ? util_strdupf("behind %s (fifo)", str(blocker, "name")) : util_strdup("behind a gang (fifo)");
    case ADMIT_REASON_PODS:
        if (!json_is_integer(created))
            break;
        return util_strdupf("pods: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT " created%s", json_integer_value(created),
                            json_integer_value(json_object_get(json_object_get(row, "pods"), "min")),
                            strcmp(str(row, "kind"), "legacy") == 0 ? " (the legacy operator creates the head first)" : "");
    case ADMIT_REASON_QUEUE_MISSING:
        return util_strdupf("queue %s does not exist", q);
    case ADMIT_REASON_QUEUE_CLOSED:
        return util_strdupf("queue %s is Closed", q);
    case ADMIT_REASON_INVALID:
        return util_strdup("invalid spec");
    case ADMIT_REASON_QUEUE_NOT_LEAF:
        return util_strdupf("queue %s has children", q);
    case ADMIT_REASON_QUEUE_BAD_TREE:
        return short_bad_tree(snapshot, q);
    case ADMIT_REASON_QUEUE_TREE:
        return short_tree(snapshot, row);
    case ADMIT_REASON_DISPATCH_LEASE:
        return util_strdup("dispatch lease not renewed (or malformed)");
    case ADMIT_REASON_DEVICES:
        return util_strdup("devices: a claim cannot be counted");
    case ADMIT_REASON_NONE:
    case ADMIT_REASON_EVICTED:
    case ADMIT_REASON_DEACTIVATED:
        break;
    }
    return util_strdup(message);
}

/* Sets "waitingFor" on every row of rows (positions set) that is not admitted. */
static void set_waiting_for(const json_t *snapshot, json_t *rows, long long now)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (view_state_admitted(str(row, "state")) || json_object_get(row, "dispatch") != NULL)
            continue; /* a dispatched gang's is dispatchview's */
        char *s = short_reason(snapshot, rows, row);
        if (strcmp(str(row, "state"), "Backoff") == 0) {
            char age[16], *b = util_strdupf("backoff, %s left; %s",
                                            view_age(view_parse_time(str(row, "requeueAt")) - now, age, sizeof(age)), s);
            free(s);
            s = b;
        }
        json_object_set_new(row, "waitingFor", json_string(s));
        free(s);
    }
}

/* ---- one row ---- */

static const char *state_of(const json_t *pg, const json_t *owner, long long now, long long *requeues, long long *requeue_at)
{
    const char *phase = str(json_object_get(pg, "status"), "phase");
    const char *count = annotation(owner, EVICT_ANNOTATION_REQUEUE_COUNT);
    *requeues = count != NULL ? strtoll(count, NULL, 10) : 0;
    *requeue_at = view_parse_time(annotation(owner, EVICT_ANNOTATION_REQUEUE_AT));
    if (phase != NULL && strcmp(phase, "Running") == 0)
        return "Running";
    if ((phase != NULL && strcmp(phase, "Inqueue") == 0) || condition_true(pg, "Scheduled"))
        return "Admitted";
    if (*requeue_at > now)
        return "Backoff";
    if (*requeues > 0)
        return "Evicted";
    return "Waiting";
}

int view_state_admitted(const char *state)
{
    return state != NULL && (strcmp(state, "Running") == 0 || strcmp(state, "Admitted") == 0);
}

static void set_str(json_t *row, const char *key, const char *value)
{
    json_object_set_new(row, key, value != NULL ? json_string(value) : json_null());
}

/* The priority of a gang into row: its pods' when known, else its class's. */
static void set_priority(json_t *row, const json_t *snapshot, const char *class_name, int has_prio, long long prio)
{
    int known;
    long long v = class_priority(snapshot, class_name, &known);
    if (has_prio)
        json_object_set_new(row, "priority", json_integer(prio));
    else if (known)
        json_object_set_new(row, "priority", json_integer(v));
    else
        json_object_set_new(row, "priority", json_null());
}

/* The RayClusters (borrowed) a RayJob with uid made, newest first, into a new array; their "ray-<name>-pg" into groups. */
static json_t *job_clusters(const json_t *snapshot, const char *ns, const char *uid, json_t *groups)
{
    json_t *out = json_array();
    size_t i;
    const json_t *o;
    json_array_foreach(array_of(snapshot, "owners"), i, o)
    {
        const json_t *ref = controller_ref(o);
        const char *kind = str(ref, "kind"), *ouid = str(ref, "uid"), *ons = str(meta(o), "namespace");
        if (kind == NULL || ouid == NULL || uid == NULL || ons == NULL || strcmp(kind, "RayJob") != 0 || strcmp(ouid, uid) != 0 ||
            strcmp(ons, ns) != 0)
            continue;
        json_array_insert(out, 0, (json_t *)o);
        char *group = names_podgroup(str(meta(o), "name"));
        json_array_append_new(groups, json_string(group));
        free(group);
    }
    return out;
}

static void set_pods(json_t *row, const json_t *snapshot, const json_t *pg, const char *ns, const json_t *groups)
{
    const json_t *pods = json_object_get(snapshot, "pods");
    const json_t *spec = json_object_get(pg, "spec"), *status = json_object_get(pg, "status");
    long long prio = 0;
    int has_prio = 0;
    long long bound;
    const char *counted = "bound";
    if (json_is_array(pods)) {
        bound = count_pods(pods, ns, groups, &prio, &has_prio);
    } else {
        bound = json_integer_value(json_object_get(status, "running"));
        counted = "running";
    }
    json_object_set_new(row, "pods",
                        json_pack("{s:I,s:I,s:s}", "bound", (json_int_t)bound, "min",
                                  (json_int_t)json_integer_value(json_object_get(spec, "minMember")), "counted", counted));
    set_priority(row, snapshot, str(spec, "priorityClassName"), has_prio, prio);
}

/* "waitReason" and "podsCreated" of a row from the annotations of pg (borrowed; NULL: it does not wait). */
static void set_wait_reason(json_t *row, const json_t *pg)
{
    const char *code = annotation(pg, NAMES_ANNOTATION_WAIT_REASON), *created = annotation(pg, NAMES_ANNOTATION_WAIT_PODS);
    char *end = NULL;
    long long n = created != NULL ? strtoll(created, &end, 10) : -1;
    set_str(row, "waitReason", code);
    if (created != NULL && created[0] != '\0' && *end == '\0' && n >= 0)
        json_object_set_new(row, "podsCreated", json_integer(n));
    else
        json_object_set_new(row, "podsCreated", json_null());
}

enum admit_reason view_wait_reason(const json_t *row)
{
    const char *code = str(row, "waitReason");
    if (code == NULL || code[0] == '\0')
        return ADMIT_REASON_NONE;
    /* admit_result_reason_name() gives "" past the last reason. */
    for (int r = ADMIT_REASON_NONE + 1; admit_result_reason_name((enum admit_reason)r)[0] != '\0'; r++) {
        if (strcmp(admit_result_reason_name((enum admit_reason)r), code) == 0)
            return (enum admit_reason)r;
    }
    return ADMIT_REASON_NONE;
}

/* The row of PodGroup pg (borrowed), or NULL when it is not a Ray gang. New. */
static json_t *gang_row(const json_t *snapshot, const json_t *pg, long long now)
{
    const json_t *ref = controller_ref(pg);
    const char *kind = kind_of(ref), *ns = str(meta(pg), "namespace"), *pgname = str(meta(pg), "name");
    if (kind == NULL || ns == NULL || pgname == NULL)
        return NULL;
    const json_t *owner = find_owner(snapshot, str(ref, "uid")), *spec = json_object_get(pg, "spec");
    const json_t *unsched = condition(pg, "Unschedulable");
    long long requeues, requeue_at;
    const char *state = state_of(pg, owner, now, &requeues, &requeue_at);
    const char *created = str(meta(owner != NULL ? owner : pg), "creationTimestamp");
    json_t *row = json_object();
    set_str(row, "namespace", ns);
    set_str(row, "name", str(ref, "name"));
    set_str(row, "kind", kind);
    set_str(row, "podGroup", pgname);
    set_str(row, "queue", str(spec, "queue"));
    set_str(row, "priorityClassName", str(spec, "priorityClassName"));
    set_str(row, "state", state);
    /* A RayJob's gang: its pods and its admission are its RayClusters'. */
    json_t *groups = json_pack("[s]", pgname), *clusters = job_clusters(snapshot, ns, str(ref, "uid"), groups);
    set_pods(row, snapshot, pg, ns, groups);
    json_object_set_new(row, "position", json_null());
    int waits = !view_state_admitted(state) && condition_true(pg, "Unschedulable");
    set_str(row, "reason", waits ? str(unsched, "reason") : NULL);
    set_str(row, "message", waits ? str(unsched, "message") : NULL);
    set_wait_reason(row, waits ? pg : NULL);
    json_object_set_new(row, "waitingFor", json_null()); /* set_waiting_for(), once positions are known */
    json_object_set_new(row, "minResources", json_deep_copy(json_object_get(spec, "minResources")));
    if (json_object_get(row, "minResources") == NULL)
        json_object_set_new(row, "minResources", json_object());
    set_str(row, "createdAt", created);
    long long t = view_parse_time(created);
    json_object_set_new(row, "ageSeconds", t >= 0 ? json_integer(now - t) : json_null());
    const char *at = annotation(owner, NAMES_ANNOTATION_ADMITTED);
    for (size_t k = 0; at == NULL && k < json_array_size(clusters); k++)
        at = annotation(json_array_get(clusters, k), NAMES_ANNOTATION_ADMITTED);
    set_str(row, "admittedAt", at);
    json_decref(groups);
    json_decref(clusters);
    json_object_set_new(row, "requeueCount", json_integer(requeues));
    set_str(row, "requeueAt", annotation(owner, EVICT_ANNOTATION_REQUEUE_AT));
    dispatched_row(row, owner, pg); /* on a manager: where it runs, or why no worker fits */
    return row;
}

/* ---- ordering ---- */

static const char *row_str(const json_t *row, const char *key)
{
    const char *s = str(row, key);
    return s != NULL ? s : "";
}

static int cmp_name(const json_t *a, const json_t *b)
{
    int c = strcmp(row_str(a, "namespace"), row_str(b, "namespace"));
    return c != 0 ? c : strcmp(row_str(a, "name"), row_str(b, "name"));
}

static int by_name(const void *pa, const void *pb)
{
    return cmp_name(*(json_t *const *)pa, *(json_t *const *)pb);
}

/* The gate's order: priority descending, older first, then namespace/name. */
static int by_queue_order(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    json_int_t qa = json_integer_value(json_object_get(a, "priority")), qb = json_integer_value(json_object_get(b, "priority"));
    if (qa != qb)
        return qa > qb ? -1 : 1;
    long long ta = view_parse_time(str(a, "createdAt")), tb = view_parse_time(str(b, "createdAt"));
    if (ta != tb)
        return ta < tb ? -1 : 1;
    return cmp_name(a, b);
}

static int same_queue(const json_t *row, const char *queue)
{
    const char *q = str(row, "queue");
    return q != NULL && strcmp(q, queue) == 0;
}

/*
 * Whether row waits in its queue's order: not admitted, and not one a
 * manager's dispatcher handles (dispatched, or waiting for a worker: the
 * dispatcher weighs each gang on its own, in no queue order).
 */
static int in_queue_order(const json_t *row)
{
    return !view_state_admitted(str(row, "state")) && json_object_get(row, "dispatch") == NULL;
}

/* Sets "position" on every row of rows in its queue's order (in_queue_order), per queue. */
static void set_positions(json_t *rows)
{
    size_t n = json_array_size(rows), i, j;
    json_t **order = util_calloc(n ? n : 1, sizeof(*order));
    for (i = 0; i < n; i++) {
        json_t *row = json_array_get(rows, i);
        const char *q = str(row, "queue");
        if (q == NULL || !in_queue_order(row) || json_is_integer(json_object_get(row, "position")))
            continue;
        size_t m = 0;
        for (j = i; j < n; j++) {
            json_t *other = json_array_get(rows, j);
            if (same_queue(other, q) && in_queue_order(other))
                order[m++] = other;
        }
        qsort(order, m, sizeof(*order), by_queue_order);
        for (j = 0; j < m; j++)
            json_object_set_new(order[j], "position", json_integer((json_int_t)j + 1));
    }
    free(order);
}

/* Every gang of the snapshot, positions set, sorted by namespace/name (new). */
static json_t *all_gangs(const json_t *snapshot, long long now)
{
    json_t *rows = json_array();
    size_t i;
    const json_t *pg;
    json_array_foreach(array_of(snapshot, "podGroups"), i, pg)
    {
        json_t *row = gang_row(snapshot, pg, now);
        if (row != NULL)
            json_array_append_new(rows, row);
    }
    set_positions(rows);
    set_waiting_for(snapshot, rows, now);
    size_t n = json_array_size(rows);
    json_t **sorted = util_calloc(n ? n : 1, sizeof(*sorted));
    for (i = 0; i < n; i++)
        sorted[i] = json_incref(json_array_get(rows, i));
    qsort(sorted, n, sizeof(*sorted), by_name);
    json_array_clear(rows);
    for (i = 0; i < n; i++)
        json_array_append_new(rows, sorted[i]);
    free(sorted);
    return rows;
}

json_t *view_gangs(const json_t *snapshot, long long now, const struct view_filter *f)
{
    json_t *all = all_gangs(snapshot, now), *out = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(all, i, row)
    {
        if (f != NULL && f->namespace_ != NULL && strcmp(row_str(row, "namespace"), f->namespace_) != 0)
            continue;
        if (f != NULL && f->queue != NULL && strcmp(row_str(row, "queue"), f->queue) != 0)
            continue;
        json_array_append(out, row);
    }
    json_decref(all);
    return out;
}

/* ---- queues ---- */

static json_t *copy_object(const json_t *obj)
{
    return json_is_object(obj) ? json_deep_copy(obj) : json_object();
}

static json_t *count(const json_t *status, const char *key)
{
    return json_integer(json_integer_value(json_object_get(status, key)));
}

/* One Queue's row (new), at depth in the tree: what its spec and the gate's status say, nothing computed. */
static json_t *queue_row(const json_t *q, size_t depth)
{
    const json_t *spec = json_object_get(q, "spec"), *status = json_object_get(q, "status");
    const char *state = str(status, "state"), *parent = str(spec, "parent");
    const json_t *deserved = json_object_get(status, "deserved");
    if (!json_is_object(deserved)) /* a gate that does not write it yet: the spec's */
        deserved = json_object_get(spec, "deserved");
    json_t *row = json_object();
    set_str(row, "name", str(meta(q), "name"));
    set_str(row, "parent", parent != NULL && parent[0] != '\0' ? parent : NULL);
    json_object_set_new(row, "depth", json_integer((json_int_t)depth));
    set_str(row, "state", state != NULL ? state : "Open");
    json_object_set_new(row, "capability", copy_object(json_object_get(spec, "capability")));
    json_object_set_new(row, "guarantee", copy_object(json_object_get(json_object_get(spec, "guarantee"), "resource")));
    json_object_set_new(row, "deserved", copy_object(deserved));
    json_object_set_new(row, "deservedDerived", json_boolean(json_is_true(json_object_get(status, "deservedDerived"))));
    json_object_set_new(row, "allocated", copy_object(json_object_get(status, "allocated")));
    set_str(row, "share", str(status, "share"));
    set_str(row, "treeError", str(status, "treeError"));
    json_object_set_new(row, "running", count(status, "running"));
    json_object_set_new(row, "pending", count(status, "pending"));
    json_object_set_new(row, "inqueue", count(status, "inqueue"));
    const json_t *w = json_object_get(spec, "weight");
    json_object_set_new(row, "weight", json_is_integer(w) ? json_integer(json_integer_value(w)) : json_null());
    return row;
}

/* The Queues of a snapshot, sorted by name, linked as a tree (queuetree.h). */
struct queue_forest {
    size_t n;
    const json_t **obj;      /* borrowed */
    struct queuetree_in *in; /* names borrowed from obj */
    struct queuetree_node *nodes;
    size_t root_first;
    unsigned char *shown; /* a row was made of it */
    int has_root;         /* a Queue named "root" is among them */
};

static int by_queue_name(const void *pa, const void *pb)
{
    return strcmp(str(meta(*(const json_t *const *)pa), "name"), str(meta(*(const json_t *const *)pb), "name"));
}

static void forest_init(struct queue_forest *f, const json_t *snapshot)
{
    const json_t *queues = array_of(snapshot, "queues"), *q;
    size_t i;
    memset(f, 0, sizeof(*f));
    f->obj = util_calloc(json_array_size(queues) + 1, sizeof(*f->obj));
    json_array_foreach(queues, i, q)
    {
        if (str(meta(q), "name") != NULL)
            f->obj[f->n++] = q;
    }
    qsort(f->obj, f->n, sizeof(*f->obj), by_queue_name); /* so that children link in name order */
    f->in = util_calloc(f->n + 1, sizeof(*f->in));
    f->nodes = util_calloc(f->n + 1, sizeof(*f->nodes));
    f->shown = util_calloc(f->n + 1, 1);
    for (i = 0; i < f->n; i++)
        f->in[i] = (struct queuetree_in){str(meta(f->obj[i]), "name"), str(json_object_get(f->obj[i], "spec"), "parent"), 1};
    queuetree_build(f->in, f->n, f->nodes, &f->root_first);
    for (i = 0; i < f->n; i++)
        f->has_root |= f->nodes[i].is_root;
}

static void forest_finish(struct queue_forest *f)
{
    free(f->obj);
    free(f->in);
    free(f->nodes);
    free(f->shown);
}

/* Rows of i and its subtree, depth first, into out; a queue is shown once, whatever cycle links it. */
static void subtree_rows(struct queue_forest *f, size_t i, size_t depth, json_t *out)
{
    for (; i != QUEUETREE_ROOT; i = f->nodes[i].next_sibling) {
        if (f->shown[i])
            continue;
        f->shown[i] = 1;
        json_array_append_new(out, queue_row(f->obj[i], depth));
        subtree_rows(f, f->nodes[i].first_child, depth + 1, out);
    }
}

json_t *view_queues(const json_t *snapshot, const char *queue)
{
    struct queue_forest f;
    forest_init(&f, snapshot);
    json_t *out = json_array();
    size_t i, base = f.has_root ? 1 : 0; /* the root's children one level under a Queue named root */
    if (queue != NULL) {
        i = queuetree_find(f.in, f.n, queue);
        if (i != QUEUETREE_ROOT) { /* the queue and its subtree */
            const struct queuetree_node *nd = &f.nodes[i];
            size_t d = nd->state == QUEUETREE_OK && !nd->is_root ? nd->depth - 1 + base : 0;
            f.shown[i] = 1;
            json_array_append_new(out, queue_row(f.obj[i], d));
            subtree_rows(&f, nd->is_root ? f.root_first : nd->first_child, d + 1, out);
        }
    } else {
        for (i = 0; i < f.n; i++) {
            if (f.nodes[i].is_root) {
                f.shown[i] = 1;
                json_array_append_new(out, queue_row(f.obj[i], 0));
            }
        }
        subtree_rows(&f, f.root_first, base, out);
        for (i = 0; i < f.n; i++) { /* the bad ones, outside the tree */
            if (!f.shown[i])
                json_array_append_new(out, queue_row(f.obj[i], 0));
        }
    }
    forest_finish(&f);
    return out;
}
