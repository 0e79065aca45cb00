/*
 * why: what a gang waits for and what would have to change (see why.h). Pure.
 */
#include "why.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "dispatched.h"
#include "domains.h"
#include "names.h"
#include "nativegang.h"
#include "quantity.h"
#include "resources.h"
#include "topology.h"
#include "util.h"
#include "view.h"

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static int streq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* value formatted in name's unit with format fmt (a static buffer per slot). */
static const char *fmt_q(const char *name, int64_t value, enum quantity_format fmt, int slot)
{
    static char bufs[3][QUANTITY_FORMAT_MAX];
    struct quantity q = {value, fmt};
    quantity_format(&q, resources_unit(name), bufs[slot], sizeof(bufs[slot]));
    return bufs[slot];
}

/* "name (priority p)", namespace-qualified when it is not in ns. */
static void put_gang(struct util_buf *b, const json_t *row, const char *ns)
{
    const json_t *p = json_object_get(row, "priority");
    if (!streq(str(row, "namespace"), ns))
        util_buf_printf(b, "%s/", str(row, "namespace"));
    util_buf_puts(b, str(row, "name"));
    if (json_is_integer(p))
        util_buf_printf(b, " (priority %" JSON_INTEGER_FORMAT ")", json_integer_value(p));
}

/* Admitted gangs first to give way: lowest priority, then newest. */
static int by_release_order(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    json_int_t qa = json_integer_value(json_object_get(a, "priority")), qb = json_integer_value(json_object_get(b, "priority"));
    if (qa != qb)
        return qa < qb ? -1 : 1;
    long long ta = view_parse_time(str(a, "createdAt")), tb = view_parse_time(str(b, "createdAt"));
    if (ta != tb)
        return ta > tb ? -1 : 1;
    int c = strcmp(str(a, "namespace"), str(b, "namespace"));
    return c != 0 ? c : strcmp(str(a, "name"), str(b, "name"));
}

/* The admitted gangs of queue among rows, in release order: a new array of borrowed rows (free it). */
static const json_t **admitted_in(const json_t *rows, const char *queue, size_t *n)
{
    const json_t **out = util_calloc(json_array_size(rows) + 1, sizeof(*out));
    size_t i;
    const json_t *row;
    *n = 0;
    json_array_foreach(rows, i, row)
    {
        if (streq(str(row, "queue"), queue) && view_state_admitted(str(row, "state")))
            out[(*n)++] = row;
    }
    qsort(out, *n, sizeof(*out), by_release_order);
    return out;
}

/* " 2 more when a (priority 0) and b (priority 1) end", covering short of resource name. */
static void put_release(struct util_buf *b, const json_t *rows, const json_t *gang, const char *name, int64_t shortfall,
                        enum quantity_format fmt)
{
    size_t n, k, used = 0;
    const char *ns = str(gang, "namespace");
    const json_t **adm = admitted_in(rows, str(gang, "queue"), &n);
    int64_t freed = 0;
    for (k = 0; k < n && freed < shortfall; k++) {
        struct quantity q = view_quantity(json_object_get(adm[k], "minResources"), name);
        if (q.value <= 0)
            continue;
        adm[used++] = adm[k];
        freed = q.value > INT64_MAX - freed ? INT64_MAX : freed + q.value;
    }
    if (used == 0) {
        util_buf_printf(b, "; %s more must be freed (no admitted gang of the queue holds %s)", fmt_q(name, shortfall, fmt, 0),
                        name);
        free(adm);
        return;
    }
    if (freed >= shortfall)
        util_buf_printf(b, "; %s more when ", fmt_q(name, shortfall, fmt, 0));
    else
        util_buf_printf(b, "; %s more: %s when ", fmt_q(name, shortfall, fmt, 0), fmt_q(name, freed, fmt, 1));
    for (k = 0; k < used; k++) {
        util_buf_puts(b, k == 0 ? "" : k + 1 == used ? " and " : ", ");
        put_gang(b, adm[k], ns);
    }
    util_buf_puts(b, used == 1 ? " ends" : " end");
    if (freed < shortfall)
        util_buf_printf(b, ", %s held outside the queue's admitted gangs", fmt_q(name, shortfall - freed, fmt, 2));
    free(adm);
}

/* One line per resource of the gang's minResources its queue is short of. */
static void explain_capacity(json_t *lines, const json_t *rows, const json_t *gang, const json_t *queue)
{
    const json_t *need = json_object_get(gang, "minResources"), *v;
    const char *name, *qname = str(gang, "queue");
    size_t before = json_array_size(lines);
    json_object_foreach((json_t *)need, name, v)
    {
        struct quantity n, c;
        int64_t free_;
        if (!view_queue_short(queue, need, name, &n, &c, &free_))
            continue;
        struct util_buf b = {0};
        util_buf_printf(&b, "needs %s %s", name, fmt_q(name, n.value, n.format, 0));
        if (n.value > c.value) {
            util_buf_printf(&b, "; the capability of queue %s is %s: it must grow to at least %s", qname,
                            fmt_q(name, c.value, c.format, 1), fmt_q(name, n.value, n.format, 2));
        } else {
            util_buf_printf(&b, "; %s free in queue %s", fmt_q(name, free_, n.format, 1), qname);
            put_release(&b, rows, gang, name, n.value - free_, n.format);
        }
        json_array_append_new(lines, json_string(b.data));
        util_buf_finish(&b);
    }
    if (json_array_size(lines) == before)
        json_array_append_new(lines, json_string("the queue's status shows room now: the gate controller decides again on its "
                                                 "next pass (the message above is from its last one)"));
}

static void add_line(json_t *lines, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_line(json_t *lines, const char *fmt, ...)
{
    struct util_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    util_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    json_array_append_new(lines, json_string(b.data));
    util_buf_finish(&b);
}

static void explain_pods(json_t *lines, const json_t *gang)
{
    const json_t *created = json_object_get(gang, "podsCreated");
    const json_t *min = json_object_get(json_object_get(gang, "pods"), "min");
    if (streq(str(gang, "kind"), "legacy")) /* complete with its head: the workers come once it runs (admit.h) */
        add_line(lines, "the legacy operator has not created its head pod yet; the gang is weighed once the head exists");
    else if (json_is_integer(created) && json_is_integer(min))
        add_line(lines,
                 "its operator has created %" JSON_INTEGER_FORMAT " of its %" JSON_INTEGER_FORMAT
                 " pods; it is considered once all exist",
                 json_integer_value(created), json_integer_value(min));
    else
        add_line(lines, "%s", str(gang, "message"));
}

/* "a, b": the names of the Queues of the snapshot whose spec.parent is name (new string; "" when none). */
static char *children_of(const json_t *snapshot, const char *name)
{
    struct util_buf b = {0};
    size_t i;
    const json_t *q;
    util_buf_puts(&b, "");
    json_array_foreach(json_object_get(snapshot, "queues"), i, q)
    {
        if (!streq(str(json_object_get(q, "spec"), "parent"), name))
            continue;
        util_buf_printf(&b, "%s%s", b.len > 0 ? ", " : "", str(json_object_get(q, "metadata"), "name"));
    }
    return util_buf_take(&b);
}

/* The queue tree's waits (qtree.h): a queue with children, a bad tree, a level above the gang's queue. */
static void explain_tree(json_t *lines, const json_t *snapshot, const json_t *gang, enum admit_reason reason)
{
    const char *msg = str(gang, "message"), *q = str(gang, "queue");
    if (reason == ADMIT_REASON_QUEUE_NOT_LEAF) {
        char *kids = children_of(snapshot, q);
        add_line(lines,
                 "queue %s has child queues%s%s%s: only leaf queues hold gangs; name one of them in the RayCluster's "
                 "volcano.sh/queue-name (the queue's admitted gangs keep running)",
                 q, kids[0] != '\0' ? " (" : "", kids, kids[0] != '\0' ? ")" : "");
        free(kids);
        return;
    }
    if (reason == ADMIT_REASON_QUEUE_BAD_TREE)
        add_line(lines,
                 "queue %s is in a bad queue tree (a cycle, its own parent, or a parent that does not exist): it is "
                 "treated as Closed until the spec.parent links are fixed",
                 q);
    else
        add_line(lines,
                 "queue %s has room of its own; a queue above it is full, or the room left there is guaranteed to "
                 "another queue (the gate names which); room appears when gangs under that queue end",
                 q);
    add_line(lines, "%s", msg);
}

/* ---- topology ---- */

/* The owner (RayCluster or RayJob, borrowed) of gang row, or NULL when the snapshot lacks it. */
static const json_t *owner_of(const json_t *snapshot, const json_t *gang)
{
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(snapshot, "owners"), i, o)
    {
        const json_t *m = json_object_get(o, "metadata");
        if (streq(str(m, "namespace"), str(gang, "namespace")) && streq(str(m, "name"), str(gang, "name")))
            return o;
    }
    return NULL;
}

/* "one rack domain", "one HyperNode of tier <= 2", of an ask (domains_asks_of): the gate's words (topology_constraint_text). */
static void put_domain(struct util_buf *b, const json_t *ask)
{
    char text[256];
    struct topo_constraint c = {.mode = TOPO_MODE_HARD,
                                .by = str(ask, "key") != NULL ? TOPO_BY_LABEL : TOPO_BY_HYPERNODE,
                                .key = (char *)str(ask, "key"),
                                .max_tier = (int32_t)json_integer_value(json_object_get(ask, "tier"))};
    topology_constraint_text(&c, text, sizeof(text));
    util_buf_puts(b, text);
}

/* One line per ask of owner: which pods must lie in which kind of domain. */
static void explain_asks(json_t *lines, const json_t *owner, const json_t *asks)
{
    const char *head = str(json_object_get(json_object_get(owner, "metadata"), "annotations"), TOPOLOGY_INCLUDE_HEAD);
    size_t i;
    const json_t *a;
    json_array_foreach(asks, i, a)
    {
        struct util_buf b = {0};
        json_int_t hosts = json_integer_value(json_object_get(a, "hosts"));
        if (str(a, "group") == NULL)
            util_buf_printf(&b, "the whole gang%s must lie in ",
                            streq(head, "true") ? ", head included," : " but the head (" TOPOLOGY_INCLUDE_HEAD " is not \"true\")");
        else if (hosts > 1)
            util_buf_printf(&b, "each replica of group %s (numOfHosts %" JSON_INTEGER_FORMAT ") must lie in ", str(a, "group"),
                            hosts);
        else
            util_buf_printf(&b, "group %s must lie in ", str(a, "group"));
        put_domain(&b, a);
        util_buf_printf(&b, " (%s)", str(a, "mode"));
        json_array_append_new(lines, json_string(b.data));
        util_buf_finish(&b);
    }
}

/* The first resource of row's (borrowed) that need (minResources, borrowed) names: gpu first, as domains orders them. */
static const json_t *needed_resource(const json_t *row, const json_t *need)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(row, "resources"), i, r)
    {
        if (json_object_get(need, str(r, "name")) != NULL)
            return r;
    }
    return NULL;
}

/* The free room of resource name in a domain row (borrowed); -1 when it does not parse. */
static int64_t row_free(const json_t *row, const char *name)
{
    size_t i;
    const json_t *r;
    struct quantity q;
    struct error err = {{0}};
    json_array_foreach(json_object_get(row, "resources"), i, r)
    {
        if (streq(str(r, "name"), name))
            return quantity_parse(str(r, "free"), resources_unit(name), &q, &err) == 0 ? q.value : -1;
    }
    return -1;
}

/* With the nodes read: the domain of ask's kind with the most free of the first resource the gang needs, now. */
static void explain_room(json_t *lines, const json_t *snapshot, const json_t *gang, const json_t *ask)
{
    struct domains_query q = {.key = str(ask, "key"),
                              .hypernodes = str(ask, "key") == NULL,
                              .tier = (int32_t)json_integer_value(json_object_get(ask, "tier"))};
    json_t *rows = domains_view(snapshot, &q), *row, *best = NULL;
    const json_t *need = json_object_get(gang, "minResources"), *res = NULL;
    int64_t most = -1;
    size_t i;
    json_array_foreach(rows, i, row)
    {
        if (str(row, "error") != NULL || (res == NULL && (res = needed_resource(row, need)) == NULL))
            continue;
        int64_t f = row_free(row, str(res, "name"));
        if (f > most) {
            most = f;
            best = row;
        }
    }
    struct util_buf b = {0};
    put_domain(&b, ask);
    if (best == NULL) {
        add_line(lines, "now: no Ready, schedulable node lies in %s", b.data);
    } else {
        const char *name = str(res, "name");
        add_line(lines,
                 "now: the most %s free in %s is %s, in %s (%" JSON_INTEGER_FORMAT
                 " node%s); the gang asks %s %s in all (its minResources, the head included)",
                 name, b.data, str(needed_resource(best, need), "free"), str(best, "domain"),
                 json_integer_value(json_object_get(best, "nodes")),
                 json_integer_value(json_object_get(best, "nodes")) == 1 ? "" : "s", str(need, name), name);
    }
    util_buf_finish(&b);
    json_decref(rows);
}

/*
 * A gang that waits for a topology domain: what it asks, the gate's words (with
 * what it needs and the largest free domain), the room now when the nodes were
 * read, and what would have to change.
 */
static void explain_topology(json_t *lines, const json_t *snapshot, const json_t *gang)
{
    const json_t *owner = owner_of(snapshot, gang);
    json_t *asks = owner != NULL ? domains_asks_of(owner) : json_array();
    const json_t *first = json_array_get(asks, 0);
    explain_asks(lines, owner, asks);
    add_line(lines, "no single domain has room for it; the gate says: %s", str(gang, "message"));
    if (first != NULL && json_is_array(json_object_get(snapshot, "nodes")))
        explain_room(lines, snapshot, gang, first);
    struct util_buf b = {0};
    if (first != NULL)
        put_domain(&b, first);
    add_line(
        lines, "room must appear in %s: gangs or pods there end, nodes join it, or a gang of higher priority preempts within it%s",
        first != NULL ? b.data : "one domain",
        first != NULL && str(first, "key") != NULL ? "; " TOPOLOGY_PREFERRED " instead lets it spread when none has room" : "");
    json_int_t tier = json_integer_value(json_object_get(first, "tier"));
    if (first != NULL && str(first, "key") != NULL)
        add_line(lines, "kubectl raygate domains --key %s shows each domain's room", str(first, "key"));
    else if (first != NULL && tier > 0)
        add_line(lines, "kubectl raygate domains --hypernodes --tier %" JSON_INTEGER_FORMAT " shows each HyperNode's room", tier);
    else if (first != NULL)
        add_line(lines, "kubectl raygate domains --hypernodes shows each HyperNode's room");
    util_buf_finish(&b);
    json_decref(asks);
}

/*
 * What a gang that is not admitted waits for, by the gate's reason code
 * (view_wait_reason); its message is quoted, never searched.
 */
static void explain_wait(json_t *lines, const json_t *snapshot, const json_t *rows, const json_t *gang)
{
    const char *msg = str(gang, "message"), *q = str(gang, "queue");
    const json_t *blocker;
    if (msg == NULL) {
        add_line(lines, "the gate controller has not decided on it yet (is raygate-gate running?)");
        return;
    }
    switch (view_wait_reason(gang)) {
    case ADMIT_REASON_QUEUE_CAPACITY:
        explain_capacity(lines, rows, gang, view_find_queue(snapshot, q));
        break;
    case ADMIT_REASON_NODES:
        add_line(lines, "queue %s has room, the nodes do not; room appears when pods on the nodes end or nodes are added", q);
        add_line(lines, "%s", msg);
        break;
    case ADMIT_REASON_BLOCKED:
        if ((blocker = view_blocker(rows, gang)) != NULL) {
            struct util_buf b = {0};
            util_buf_printf(&b, "queue %s is fifo: ", q);
            put_gang(&b, blocker, str(gang, "namespace"));
            util_buf_puts(&b, " must be admitted (or deleted) first");
            json_array_append_new(lines, json_string(b.data));
            util_buf_finish(&b);
        } else {
            add_line(lines, "queue %s is fifo: a gang ahead of it must be admitted (or deleted) first", q);
            add_line(lines, "%s", msg);
        }
        break;
    case ADMIT_REASON_PODS:
        explain_pods(lines, gang);
        break;
    case ADMIT_REASON_QUEUE_MISSING:
        add_line(lines, "queue %s does not exist: create it (kubectl get queues.scheduling.volcano.sh)", q);
        break;
    case ADMIT_REASON_QUEUE_CLOSED:
        add_line(lines, "queue %s is closed: it must be opened", q);
        break;
    case ADMIT_REASON_INVALID:
        add_line(lines, "its spec must be fixed: %s", msg);
        break;
    case ADMIT_REASON_TOPOLOGY:
        explain_topology(lines, snapshot, gang);
        break;
    case ADMIT_REASON_NONE:
        add_line(lines,
                 "the gate controller has not written its reason code yet (annotation " NAMES_ANNOTATION_WAIT_REASON
                 "); its message: %s",
                 msg);
        break;
    case ADMIT_REASON_EVICTED:
    case ADMIT_REASON_DEACTIVATED:
        add_line(lines, "%s", msg);
        break;
    case ADMIT_REASON_DISPATCH_LEASE:
        add_line(lines, "a manager cluster dispatched it here with a lease (annotation " NAMES_ANNOTATION_DISPATCH_LEASE
                        "): while the lease is not renewed (the manager may run it elsewhere) or does not parse, it is not "
                        "admitted here");
        add_line(lines, "%s", msg);
        break;
    case ADMIT_REASON_DEVICES:
        add_line(lines, "its device claims (DRA) cannot be counted yet, so it is not admitted on a guess: create what is "
                        "missing (kubectl get resourceclaimtemplates,resourceclaims,deviceclasses)");
        add_line(lines, "%s", msg);
        break;
    case ADMIT_REASON_QUEUE_NOT_LEAF:
    case ADMIT_REASON_QUEUE_BAD_TREE:
    case ADMIT_REASON_QUEUE_TREE:
        explain_tree(lines, snapshot, gang, view_wait_reason(gang));
        break;
    }
}

static void explain_state(json_t *lines, const json_t *snapshot, const json_t *rows, const json_t *gang, long long now)
{
    const char *state = str(gang, "state"), *at = str(gang, "admittedAt");
    const json_t *pods = json_object_get(gang, "pods");
    json_int_t bound = json_integer_value(json_object_get(pods, "bound")), min = json_integer_value(json_object_get(pods, "min"));
    json_int_t requeues = json_integer_value(json_object_get(gang, "requeueCount"));
    char age[16];
    if (dispatched_explain(lines, gang))
        return;
    if (view_state_admitted(state)) {
        add_line(lines, "admitted by queue %s%s%s; %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT " pods %s%s",
                 str(gang, "queue"), at != NULL ? " at " : "", at != NULL ? at : "", bound, min, str(pods, "counted"),
                 streq(state, "Running") ? "; nothing has to change" : ": kube-scheduler places them");
        return;
    }
    if (streq(state, "Backoff")) {
        long long until = view_parse_time(str(gang, "requeueAt"));
        add_line(lines, "evicted %" JSON_INTEGER_FORMAT " %s; it may not be admitted again before %s (in %s)", requeues,
                 requeues == 1 ? "time" : "times", str(gang, "requeueAt"), view_age(until - now, age, sizeof(age)));
    } else if (streq(state, "Evicted")) {
        add_line(lines, "evicted %" JSON_INTEGER_FORMAT " %s and queued again", requeues, requeues == 1 ? "time" : "times");
    }
    explain_wait(lines, snapshot, rows, gang);
}

/*
 * With Kubernetes' own gang scheduling (docs/native-gang.md): what
 * kube-scheduler says of the gang's native PodGroup, named as its Volcano
 * PodGroup, e.g. "kube-scheduler: waiting for 3 of 8 pods". Nothing when the
 * snapshot has no such group.
 */
static void explain_native(json_t *lines, const json_t *snapshot, const json_t *gang)
{
    size_t i;
    const json_t *pg;
    json_array_foreach(json_object_get(snapshot, "nativePodGroups"), i, pg)
    {
        const json_t *meta = json_object_get(pg, "metadata");
        if (!streq(str(meta, "namespace"), str(gang, "namespace")) || !streq(str(meta, "name"), str(gang, "podGroup")))
            continue;
        struct nativegang_seen seen;
        nativegang_seen_parse(pg, &seen);
        char *text = nativegang_describe(&seen, json_integer_value(json_object_get(json_object_get(gang, "pods"), "bound")));
        add_line(lines, "%s", text);
        free(text);
        return;
    }
}

/* The gangs before gang in its queue's order (new array of new references). */
static json_t *ahead_of(const json_t *rows, const json_t *gang)
{
    json_t *out = json_array();
    json_int_t pos = json_integer_value(json_object_get(gang, "position"));
    for (json_int_t p = 1; p < pos; p++) {
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row)
        {
            if (streq(str(row, "queue"), str(gang, "queue")) && json_integer_value(json_object_get(row, "position")) == p)
                json_array_append(out, row);
        }
    }
    return out;
}

static long long event_time(const json_t *e)
{
    const char *keys[] = {"lastTimestamp", "eventTime", "firstTimestamp"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        long long t = view_parse_time(str(e, keys[i]));
        if (t >= 0)
            return t;
    }
    return view_parse_time(str(json_object_get(e, "metadata"), "creationTimestamp"));
}

static int by_event_time(const void *pa, const void *pb)
{
    long long a = event_time(*(json_t *const *)pa), b = event_time(*(json_t *const *)pb);
    return a < b ? -1 : a > b;
}

/* The snapshot's Events about the gang's owner, oldest first, the last 10 (new). */
static json_t *events_of(const json_t *snapshot, const json_t *gang, long long now)
{
    const json_t *events = json_object_get(snapshot, "events"), *e;
    const json_t **sel = util_calloc(json_array_size(events) + 1, sizeof(*sel));
    size_t i, n = 0;
    json_array_foreach(events, i, e)
    {
        const json_t *io = json_object_get(e, "involvedObject");
        if (streq(str(io, "name"), str(gang, "name")) && streq(str(io, "namespace"), str(gang, "namespace")))
            sel[n++] = e;
    }
    qsort(sel, n, sizeof(*sel), by_event_time);
    json_t *out = json_array();
    for (i = n > 10 ? n - 10 : 0; i < n; i++) {
        long long t = event_time(sel[i]);
        json_int_t count = json_integer_value(json_object_get(sel[i], "count"));
        json_array_append_new(out, json_pack("{s:s?,s:s?,s:s?,s:o,s:I}", "type", str(sel[i], "type"), "reason",
                                             str(sel[i], "reason"), "message", str(sel[i], "message"), "ageSeconds",
                                             t >= 0 ? json_integer(now - t) : json_null(), "count", count > 0 ? count : 1));
    }
    free(sel);
    return out;
}

json_t *why_explain(const json_t *snapshot, long long now, const char *ns, const char *name)
{
    json_t *rows = view_gangs(snapshot, now, NULL), *row, *gang = NULL;
    size_t i;
    json_array_foreach(rows, i, row)
    {
        if (streq(str(row, "namespace"), ns) && (streq(str(row, "name"), name) || streq(str(row, "podGroup"), name))) {
            gang = row;
            break;
        }
    }
    if (gang == NULL) {
        json_decref(rows);
        return NULL;
    }
    json_t *lines = json_array();
    explain_state(lines, snapshot, rows, gang, now);
    explain_native(lines, snapshot, gang);
    json_t *out = json_pack("{s:O,s:o,s:o,s:o}", "gang", gang, "explanation", lines, "ahead", ahead_of(rows, gang), "events",
                            events_of(snapshot, gang, now));
    json_decref(rows);
    return out;
}
