#include "podgroup.h"
#include "legacy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "jsonpatch.h"
#include "names.h"
#include "quantity.h"
#include "table.h"
#include "util.h"

#define COND_UNSCHEDULABLE "Unschedulable"
#define COND_SCHEDULED "Scheduled"
#define COND_EVICTED "Evicted"
#define COND_PREEMPTING "Preempting"
#define NWANTS 4

/* ---- the gang ---- */

int podgroup_wanted(const struct cache_gang *g)
{
    return g->present && g->queue != NULL;
}

void podgroup_gang_from_cache(const struct cache_gang *g, struct podgroup_gang *out)
{
    memset(out, 0, sizeof(*out));
    out->namespace_ = g->namespace_;
    out->cluster = g->name;
    out->cluster_uid = g->uid;
    out->rayjob = g->owner_name;
    out->rayjob_uid = g->owner_uid;
    out->legacy = g->legacy;
    out->queue = g->queue != NULL ? g->queue->name : NULL;
    out->priority_class = g->priority_class;
    out->spec_ok = g->spec_ok;
    out->min_member = g->min_member;
    out->min_resources = &g->min_resources;
    out->admitted = g->admitted;
    out->admitted_at = g->admitted_at;
    out->record = &g->record;
    out->preempted_by = g->preempted_by;
    out->reason = (enum admit_reason)g->last_reason;
    out->message = g->last_message;
    if (!g->admitted && g->last_reason == ADMIT_REASON_PODS) {
        struct cache_pod **live = NULL;
        out->pods_created = (int64_t)admit_gang_members(g, &live);
        free(live);
    }
    for (const struct cache_pod *p = g->pods; p != NULL; p = p->gang_next) {
        if (p->phase == CACHE_PHASE_RUNNING && !(p->flags & CACHE_POD_DELETING))
            out->running++;
        else if (p->phase == CACHE_PHASE_SUCCEEDED)
            out->succeeded++;
        else if (p->phase == CACHE_PHASE_FAILED)
            out->failed++;
    }
}

/* A string (NULL apart from "") into a fingerprint. */
static uint64_t hash_str(uint64_t h, const char *s)
{
    static const char none = 1;
    return s != NULL ? table_hash_str(h, s) : table_hash_bytes(h, &none, 1);
}

uint64_t podgroup_gang_fingerprint(const struct podgroup_gang *g, const char *cluster_rv)
{
    const char *strings[] = {g->namespace_, g->cluster,        g->cluster_uid, g->rayjob,       g->rayjob_uid,
                             g->queue,      g->priority_class, g->admitted_at, g->preempted_by, g->preempting,
                             g->message,    cluster_rv,        g->native};
    int64_t numbers[] = {g->legacy,       g->spec_ok, g->min_member, g->admitted, g->reason,
                         g->pods_created, g->running, g->succeeded,  g->failed,   g->record != NULL};
    uint64_t h = TABLE_HASH_SEED;
    for (size_t i = 0; i < sizeof(strings) / sizeof(*strings); i++)
        h = hash_str(h, strings[i]);
    h = table_hash_bytes(h, numbers, sizeof(numbers));
    if (g->record != NULL) {
        int64_t r[] = {g->record->count, g->record->requeue_at_ms, g->record->evicted_at_ms, g->record->generation,
                       g->record->reason};
        h = table_hash_bytes(h, r, sizeof(r));
    }
    return h;
}

/* The PodGroup's owner: the RayJob the cluster was made for, else the cluster. */
static int by_rayjob(const struct podgroup_gang *g)
{
    return g->rayjob != NULL && g->rayjob_uid != NULL;
}

static const char *owner_uid(const struct podgroup_gang *g)
{
    return by_rayjob(g) ? g->rayjob_uid : g->cluster_uid;
}

enum podgroup_phase podgroup_phase_of(const struct podgroup_gang *g)
{
    if (!g->admitted)
        return PODGROUP_PHASE_PENDING;
    return g->running >= g->min_member ? PODGROUP_PHASE_RUNNING : PODGROUP_PHASE_INQUEUE;
}

const char *podgroup_phase_name(enum podgroup_phase phase)
{
    switch (phase) {
    case PODGROUP_PHASE_PENDING:
        return "Pending";
    case PODGROUP_PHASE_INQUEUE:
        return "Inqueue";
    case PODGROUP_PHASE_RUNNING:
        return "Running";
    }
    return "Pending";
}

/* ---- conditions ---- */

/*
 * A transition's ID: derived from what identifies the transition (the
 * RayCluster's uid, the condition, its new status and time) so that the same
 * transition computed twice gets the same ID. UUID-shaped (RFC 9562 version 8).
 */
static json_t *transition_id(const char *uid, const char *type, const char *status, const char *time)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    struct util_buf b = {0};
    util_buf_printf(&b, "%s/%s/%s/%s", uid != NULL ? uid : "", type, status, time);
    if (EVP_Digest(b.data, b.len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen < 16)
        abort();
    util_buf_finish(&b);
    md[6] = (unsigned char)((md[6] & 0x0f) | 0x80);
    md[8] = (unsigned char)((md[8] & 0x3f) | 0x80);
    char s[37];
    snprintf(s, sizeof(s), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", md[0], md[1], md[2], md[3],
             md[4], md[5], md[6], md[7], md[8], md[9], md[10], md[11], md[12], md[13], md[14], md[15]);
    return json_string(s);
}

enum want_kind {
    WANT_KEEP = 0,       /* leave the condition as it is, or absent */
    WANT_SET,            /* set it, adding it if absent */
    WANT_SET_IF_PRESENT, /* set it only if present */
};

struct want {
    enum want_kind kind;
    const char *type;
    const char *status;
    const char *reason;
    const char *message; /* NULL: none */
    const char *time;    /* when the status changes */
};

static json_t *new_condition(const struct podgroup_gang *g, const struct want *w)
{
    json_t *c = json_object();
    json_object_set_new(c, "lastTransitionTime", json_string(w->time));
    if (w->message != NULL && w->message[0] != '\0')
        json_object_set_new(c, "message", json_string(w->message));
    json_object_set_new(c, "reason", json_string(w->reason));
    json_object_set_new(c, "status", json_string(w->status));
    json_object_set_new(c, "transitionID", transition_id(owner_uid(g), w->type, w->status, w->time));
    json_object_set_new(c, "type", json_string(w->type));
    return c;
}

/* cond (borrowed) brought to w: its time and ID stay when the status does. New reference. */
static json_t *update_condition(const struct podgroup_gang *g, const json_t *cond, const struct want *w)
{
    if (!util_streq(json_string_value(json_object_get(cond, "status")), w->status))
        return new_condition(g, w);
    json_t *c = json_deep_copy(cond);
    json_object_set_new(c, "reason", json_string(w->reason));
    if (w->message != NULL && w->message[0] != '\0')
        json_object_set_new(c, "message", json_string(w->message));
    else
        json_object_del(c, "message");
    return c;
}

static const char *unschedulable_reason(enum admit_reason r)
{
    switch (r) {
    case ADMIT_REASON_PODS:
        return "NotEnoughTasks";
    case ADMIT_REASON_QUEUE_MISSING:
        return "QueueNotFound";
    case ADMIT_REASON_QUEUE_CLOSED:
        return "QueueClosed";
    case ADMIT_REASON_INVALID:
        return "InvalidSpec";
    case ADMIT_REASON_EVICTED:
        return "Evicted";
    case ADMIT_REASON_DEACTIVATED:
        return "Deactivated";
    case ADMIT_REASON_QUEUE_NOT_LEAF:
        return "QueueNotLeaf";
    case ADMIT_REASON_QUEUE_BAD_TREE:
        return "QueueClosed";
    case ADMIT_REASON_DISPATCH_LEASE:
        return "DispatchLease";
    case ADMIT_REASON_DEVICES:
        return "DevicesNotCounted";
    case ADMIT_REASON_NONE:
    case ADMIT_REASON_QUEUE_TREE:
    case ADMIT_REASON_TOPOLOGY:
    case ADMIT_REASON_BLOCKED:
    case ADMIT_REASON_QUEUE_CAPACITY:
    case ADMIT_REASON_NODES:
        break;
    }
    return "NotEnoughResources";
}

/*
 * The Evicted condition of a gang with an eviction record (evict.h): "True"
 * while it is not admitted again, reason the eviction's, message (written into
 * buf) when and how often; "False" (reason Readmitted) once admitted again.
 */
static struct want evicted_want(const struct podgroup_gang *g, const char *admitted_at, char *at, char *buf, size_t size)
{
    const struct evict_record *r = g->record;
    if (r == NULL || r->evicted_at_ms <= 0)
        return (struct want){WANT_KEEP, COND_EVICTED, NULL, NULL, NULL, NULL};
    evict_format_time(r->evicted_at_ms, at, 32);
    if (g->admitted)
        return (struct want){WANT_SET_IF_PRESENT, COND_EVICTED, "False", "Readmitted", NULL, admitted_at};
    const char *reason = evict_reason_name((enum evict_reason)r->reason);
    if (r->reason == EVICT_REASON_DISPATCH_LEASE) {
        util_format(buf, size, "evicted at %s: its dispatch lease (%s) was not renewed in time; it waits until it is", at,
                    NAMES_ANNOTATION_DISPATCH_LEASE);
        return (struct want){WANT_SET, COND_EVICTED, "True", reason, buf, at};
    }
    int by = g->preempted_by != NULL && (r->reason == EVICT_REASON_PREEMPTED || r->reason == EVICT_REASON_RECLAIMED);
    util_format(buf, size, "evicted at %s (eviction %" PRId64 " since the RayCluster's spec last changed)%s%s%s", at, r->count,
                by ? (r->reason == EVICT_REASON_RECLAIMED ? "; reclaimed by gang " : "; preempted by gang ") : "",
                by ? g->preempted_by : "", by ? ": it waits to be admitted again" : "");
    return (struct want){WANT_SET, COND_EVICTED, "True", reason[0] != '\0' ? reason : "Evicted", buf, at};
}

/*
 * The Preempting condition of a preemptor: "True" while the room its victims
 * free is held for it (message written into buf), "False" once it is not
 * (reason Admitted, or NotPreempting when it waits in order again).
 */
static struct want preempting_want(const struct podgroup_gang *g, const char *admitted_at, const char *now, char *buf, size_t size)
{
    if (g->admitted)
        return (struct want){WANT_SET_IF_PRESENT, COND_PREEMPTING, "False", "Admitted", NULL, admitted_at};
    if (g->preempting == NULL)
        return (struct want){WANT_SET_IF_PRESENT, COND_PREEMPTING, "False", "NotPreempting", NULL, now};
    util_format(buf, size, "evicting %s: the room freed is held for this gang until those pods are gone", g->preempting);
    return (struct want){WANT_SET, COND_PREEMPTING, "True", "Preempting", buf, now};
}

/* The conditions array (new) for g, from the observed one (borrowed, may be NULL). */
static json_t *conditions(const struct podgroup_gang *g, const json_t *observed, const char *now, char *scheduled_message)
{
    const char *admitted_at = g->admitted_at != NULL && g->admitted_at[0] != '\0' ? g->admitted_at : now;
    char evicted_at[32], evicted_msg[768], preempting_msg[1024];
    struct want wants[NWANTS] = {
        {WANT_KEEP, COND_UNSCHEDULABLE, NULL, NULL, NULL, now},
        {WANT_KEEP, COND_SCHEDULED, NULL, NULL, NULL, now},
        evicted_want(g, admitted_at, evicted_at, evicted_msg, sizeof(evicted_msg)),
        preempting_want(g, admitted_at, now, preempting_msg, sizeof(preempting_msg)),
    };
    if (g->admitted) {
        wants[0] = (struct want){WANT_SET_IF_PRESENT, COND_UNSCHEDULABLE, "False", "GangAdmitted", NULL, admitted_at};
        wants[1] = (struct want){WANT_SET, COND_SCHEDULED, "True", PODGROUP_REASON_SCHEDULED, scheduled_message, admitted_at};
    } else {
        if (g->reason != ADMIT_REASON_NONE)
            wants[0] = (struct want){WANT_SET, COND_UNSCHEDULABLE, "True", unschedulable_reason(g->reason), g->message, now};
        wants[1] = (struct want){WANT_SET_IF_PRESENT, COND_SCHEDULED, "False", "NotAdmitted", NULL, now};
    }
    json_t *out = json_array();
    int done[NWANTS] = {0};
    size_t i;
    const json_t *cond;
    json_array_foreach(observed, i, cond)
    {
        const char *type = json_string_value(json_object_get(cond, "type"));
        int k = -1;
        for (int j = 0; j < NWANTS && k < 0; j++)
            k = util_streq(type, wants[j].type) ? j : -1;
        if (k < 0 || wants[k].kind == WANT_KEEP) {
            json_array_append(out, (json_t *)cond);
            continue;
        }
        if (done[k])
            continue; /* a duplicate of a type we keep: one of each */
        done[k] = 1;
        json_array_append_new(out, update_condition(g, cond, &wants[k]));
    }
    for (int k = 0; k < NWANTS; k++) {
        if (wants[k].kind == WANT_SET && !done[k])
            json_array_append_new(out, new_condition(g, &wants[k]));
    }
    return out;
}

/* ---- the object ---- */

static json_t *desired_spec(const struct podgroup_gang *g)
{
    json_t *spec = json_object();
    if (g->spec_ok) {
        json_object_set_new(spec, "minMember", json_integer(g->min_member > INT32_MAX ? INT32_MAX : g->min_member));
        json_t *mr = json_object();
        for (size_t i = 0; g->min_resources != NULL && i < g->min_resources->len; i++) {
            const struct resource *r = &g->min_resources->items[i];
            if (r->quantity.value == 0)
                continue;
            char buf[QUANTITY_FORMAT_MAX];
            quantity_format(&r->quantity, resources_unit(r->name), buf, sizeof(buf));
            json_object_set_new(mr, r->name, json_string(buf));
        }
        if (json_object_size(mr) > 0)
            json_object_set_new(spec, "minResources", mr);
        else
            json_decref(mr);
    }
    if (g->queue != NULL)
        json_object_set_new(spec, "queue", json_string(g->queue));
    if (g->priority_class != NULL)
        json_object_set_new(spec, "priorityClassName", json_string(g->priority_class));
    return spec;
}

static void set_count(json_t *obj, const char *key, int64_t n)
{
    if (n > 0)
        json_object_set_new(obj, key, json_integer(n > INT32_MAX ? INT32_MAX : n));
}

static json_t *desired_status(const struct podgroup_gang *g, const json_t *observed_status, const char *now)
{
    json_t *st = json_object();
    char *scheduled = util_strdupf("admitted by queue %s%s%s", g->queue != NULL ? g->queue : "", g->native != NULL ? "; " : "",
                                   g->native != NULL ? g->native : "");
    json_t *conds = conditions(g, json_object_get(observed_status, "conditions"), now, scheduled);
    free(scheduled);
    if (json_array_size(conds) > 0)
        json_object_set_new(st, "conditions", conds);
    else
        json_decref(conds);
    set_count(st, "failed", g->failed);
    json_object_set_new(st, "phase", json_string(podgroup_phase_name(podgroup_phase_of(g))));
    set_count(st, "running", g->running);
    set_count(st, "succeeded", g->succeeded);
    return st;
}

/* The members of obj (borrowed) named in keys, as a new object. */
static json_t *pick(const json_t *obj, const char *const *keys, size_t n)
{
    json_t *out = json_object();
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_object_get(obj, keys[i]);
        if (v != NULL)
            json_object_set(out, keys[i], v);
    }
    return out;
}

static const char *const spec_keys[] = {"minMember", "minResources", "priorityClassName", "queue"};
static const char *const status_keys[] = {"conditions", "failed", "phase", "running", "succeeded"};
static const char *const annotation_keys[] = {NAMES_ANNOTATION_WAIT_PODS, NAMES_ANNOTATION_WAIT_REASON};
#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

/* Our annotations for g (new object; empty when none applies): the typed reason it waits. */
static json_t *desired_annotations(const struct podgroup_gang *g)
{
    json_t *a = json_object();
    if (g->admitted || g->reason == ADMIT_REASON_NONE)
        return a;
    json_object_set_new(a, NAMES_ANNOTATION_WAIT_REASON, json_string(admit_result_reason_name(g->reason)));
    if (g->reason == ADMIT_REASON_PODS) {
        char n[24];
        snprintf(n, sizeof(n), "%" PRId64, g->pods_created);
        json_object_set_new(a, NAMES_ANNOTATION_WAIT_PODS, json_string(n));
    }
    return a;
}

/* Our annotations of a PodGroup (borrowed) as a new object. */
static json_t *observed_annotations(const json_t *pg)
{
    return pick(json_object_get(json_object_get(pg, "metadata"), "annotations"), annotation_keys, NKEYS(annotation_keys));
}

static json_t *owner_ref(const struct podgroup_gang *g)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:b}", "apiVersion", g->legacy ? LEGACY_API_VERSION : "ray.io/v1", "kind",
                     by_rayjob(g) ? "RayJob" : "RayCluster", "name", by_rayjob(g) ? g->rayjob : g->cluster, "uid", owner_uid(g),
                     "controller", 1);
}

json_t *podgroup_trim(const json_t *pg)
{
    static const char *const meta_keys[] = {"name", "namespace", "ownerReferences", "resourceVersion", "uid"};
    static const char *const top_keys[] = {"spec", "status"};
    json_t *out = pick(pg, top_keys, NKEYS(top_keys));
    json_t *meta = pick(json_object_get(pg, "metadata"), meta_keys, NKEYS(meta_keys)), *ours = observed_annotations(pg);
    if (json_object_size(ours) > 0)
        json_object_set_new(meta, "annotations", ours);
    else
        json_decref(ours);
    json_object_set_new(out, "metadata", meta);
    /* A copy that shares nothing with pg: the controller keeps it on another thread than the watch's. */
    json_t *copy = json_deep_copy(out);
    json_decref(out);
    return copy;
}

enum podgroup_write podgroup_sync(const struct podgroup_gang *g, const json_t *observed, const char *now, json_t **body)
{
    *body = NULL;
    if (owner_uid(g) == NULL || owner_uid(g)[0] == '\0')
        return PODGROUP_WRITE_NONE; /* a PodGroup nobody owns would never be collected */
    const json_t *obs_status = json_object_get(observed, "status");
    json_t *spec = desired_spec(g);
    json_t *status = desired_status(g, obs_status, now);
    json_t *annotations = desired_annotations(g);

    if (observed == NULL) {
        char *name = names_podgroup(by_rayjob(g) ? g->rayjob : g->cluster);
        *body =
            json_pack("{s:s,s:s,s:{s:s,s:s,s:[o]},s:o,s:o}", "apiVersion", PODGROUP_GROUP_VERSION, "kind", "PodGroup", "metadata",
                      "name", name, "namespace", g->namespace_, "ownerReferences", owner_ref(g), "spec", spec, "status", status);
        if (json_object_size(annotations) > 0)
            json_object_set(json_object_get(*body, "metadata"), "annotations", annotations);
        json_decref(annotations);
        free(name);
        return PODGROUP_WRITE_CREATE;
    }

    /* Ours, someone else's, or nobody's (adopted). */
    const json_t *refs = json_object_get(json_object_get(observed, "metadata"), "ownerReferences");
    int ours = 0, foreign = 0;
    size_t i;
    const json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        if (util_streq(json_string_value(json_object_get(ref, "uid")), owner_uid(g)))
            ours = 1;
        else if (json_is_true(json_object_get(ref, "controller")))
            foreign = 1;
    }
    if (!ours && foreign) {
        json_decref(spec);
        json_decref(status);
        json_decref(annotations);
        return PODGROUP_WRITE_FOREIGN;
    }

    json_t *from = json_object(), *to = json_object();
    json_object_set_new(from, "metadata", json_pack("{s:o}", "annotations", observed_annotations(observed)));
    json_object_set_new(from, "spec", pick(json_object_get(observed, "spec"), spec_keys, NKEYS(spec_keys)));
    json_object_set_new(from, "status", pick(obs_status, status_keys, NKEYS(status_keys)));
    json_object_set_new(to, "metadata", json_pack("{s:o}", "annotations", annotations));
    json_object_set_new(to, "spec", spec);
    json_object_set_new(to, "status", status);
    json_t *patch = jsonpatch_merge_diff(from, to);
    json_decref(from);
    json_decref(to);
    if (!ours) {
        json_t *all = json_is_array(refs) ? json_deep_copy(refs) : json_array();
        json_array_append_new(all, owner_ref(g));
        if (json_object_get(patch, "metadata") == NULL)
            json_object_set_new(patch, "metadata", json_object());
        json_object_set_new(json_object_get(patch, "metadata"), "ownerReferences", all);
    }
    if (json_object_size(patch) == 0) {
        json_decref(patch);
        return PODGROUP_WRITE_NONE;
    }
    *body = patch;
    return PODGROUP_WRITE_PATCH;
}

/* ---- Queue status ---- */

void podgroup_queue_status_init(struct podgroup_queue_status *st)
{
    memset(st, 0, sizeof(*st));
    resources_init(&st->allocated);
    resources_init(&st->deserved);
    st->share = -1;
}

void podgroup_queue_status_finish(struct podgroup_queue_status *st)
{
    if (st == NULL)
        return;
    resources_finish(&st->allocated);
    resources_finish(&st->deserved);
    free(st->tree_error);
    podgroup_queue_status_init(st);
}

/* A gang's PodGroup counted by phase into st. */
static void count_phase(const struct cache_gang *g, struct podgroup_queue_status *st)
{
    int phase;
    if (!model_gang_memo_phase(g, &phase)) { /* kept while g stands: a queue's status walks all its gangs */
        struct podgroup_gang pg;
        podgroup_gang_from_cache(g, &pg);
        phase = (int)podgroup_phase_of(&pg);
        model_gang_memo_set_phase(g, phase);
    }
    switch ((enum podgroup_phase)phase) {
    case PODGROUP_PHASE_PENDING:
        st->pending++;
        break;
    case PODGROUP_PHASE_INQUEUE:
        st->inqueue++;
        break;
    case PODGROUP_PHASE_RUNNING:
        st->running++;
        break;
    }
}

int podgroup_queue_status(const struct cache *c, const struct cache_queue *q, struct podgroup_queue_status *st, struct error *err)
{
    resources_finish(&st->allocated);
    resources_init(&st->allocated);
    st->running = st->inqueue = st->pending = 0;
    st->fields |= PODGROUP_QUEUE_COUNTS | PODGROUP_QUEUE_ALLOCATED;
    struct resources held;
    resources_init(&held);
    int rc = 0;
    for (const struct cache_gang *g = q->gangs; g != NULL && rc == 0; g = g->queue_next) {
        if (podgroup_wanted(g))
            count_phase(g, st);
        /* A gang whose RayCluster is gone still holds its share until its pods are. */
        if (!g->admitted)
            continue;
        const struct resources *h = admit_gang_hold_ref(c, g, &held, err);
        if (h == NULL || resources_add_scaled(&st->allocated, h, 1, err) != 0)
            rc = -1;
    }
    resources_finish(&held);
    return rc;
}

/* ---- the queue's place in the tree ---- */

/* The format of resource id of a queue's status: its spec's where it lists the resource, else by the resource's kind. */
static enum quantity_format format_of(const struct cache_queue *q, uint32_t id, const char *name)
{
    const struct shape_rl *lists[] = {q->deserved, q->capability, q->guarantee};
    for (size_t l = 0; l < NKEYS(lists); l++) {
        for (uint32_t k = 0; lists[l] != NULL && k < lists[l]->len; k++) {
            if (lists[l]->items[k].id == id)
                return (enum quantity_format)lists[l]->items[k].format;
        }
    }
    int binary = strcmp(name, "memory") == 0 || strcmp(name, "ephemeral-storage") == 0 || strncmp(name, "hugepages-", 10) == 0;
    return binary ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI;
}

/* v (dense, nres) as a resource list into out: positive values only, formatted as q's. */
static void dense_resources(const struct cache *c, const struct cache_queue *q, const int64_t *v, uint32_t nres,
                            struct resources *out)
{
    resources_finish(out);
    resources_init(out);
    for (uint32_t k = 0; k < nres; k++) {
        if (v[k] <= 0)
            continue;
        const char *name = cache_resource_name(c, k);
        struct quantity qty = {v[k], format_of(q, k, name)};
        resources_set(out, name, &qty);
    }
}

/* "a -> b -> a": the cycle of parents from q back to it (bounded by the number of queues). */
static void cycle_text(const struct qtree *t, const struct cache *c, const struct cache_queue *q, struct util_buf *b)
{
    util_buf_puts(b, q->name);
    const struct cache_queue *at = q;
    for (size_t n = 0; n <= t->n && at != NULL && at->parent != NULL; n++) {
        util_buf_printf(b, " -> %s", at->parent);
        if (strcmp(at->parent, q->name) == 0)
            break;
        at = cache_queue_get(c, at->parent);
    }
}

/* Why queue i (bad for a reason of its own) is bad, as said of it (of_ancestor 0) or of an ancestor (1). */
static void bad_text(const struct qtree *t, const struct cache *c, size_t i, int of_ancestor, struct util_buf *b)
{
    const struct cache_queue *q = t->queues[i].q;
    switch (t->queues[i].state) {
    case QUEUETREE_SELF_PARENT:
        util_buf_puts(b, of_ancestor ? "which is its own parent" : "its own parent");
        break;
    case QUEUETREE_CYCLE:
        util_buf_puts(b, of_ancestor ? "which is in a cycle of parents (" : "in a cycle of parents (");
        cycle_text(t, c, q, b);
        util_buf_puts(b, ")");
        break;
    case QUEUETREE_MISSING_PARENT:
        util_buf_printf(b, "%sparent %s does not exist", of_ancestor ? "whose " : "", q->parent != NULL ? q->parent : "");
        break;
    case QUEUETREE_BAD_SPEC: {
        char text[320];
        queuespec_text(&t->queues[i].spec, text, sizeof(text));
        util_buf_printf(b, "%sagainst the rules of its spec: %s", of_ancestor ? "which is " : "", text);
        break;
    }
    default:
        util_buf_puts(b, of_ancestor ? "which is outside the tree" : "outside the tree");
        break;
    }
}

/* st->tree_error for a bad queue i (new string), or NULL. */
static char *tree_error(const struct qtree *t, const struct cache *c, size_t i)
{
    const struct qtree_queue *n = &t->queues[i];
    if (n->state == QUEUETREE_OK)
        return NULL;
    struct util_buf b = {0};
    if (n->state == QUEUETREE_BAD_ANCESTOR) {
        const struct cache_queue *a = n->bad != NULL ? cache_queue_get(c, n->bad) : NULL;
        size_t ai = a != NULL ? qtree_index(t, a) : QUEUETREE_ROOT;
        util_buf_printf(&b, "under queue %s, ", n->bad != NULL ? n->bad : "?");
        if (ai != QUEUETREE_ROOT && t->queues[ai].state != QUEUETREE_BAD_ANCESTOR)
            bad_text(t, c, ai, 1, &b);
        else
            util_buf_puts(&b, "which is outside the tree");
    } else {
        bad_text(t, c, i, 0, &b);
    }
    util_buf_puts(&b, ": treated as Closed");
    return util_buf_take(&b);
}

/* The root queue's allocation: its children's (new array, nres). */
static int64_t *root_alloc(const struct qtree *t)
{
    int64_t *sum = util_calloc((size_t)t->nres + 1, sizeof(*sum));
    for (size_t ch = t->root_first; ch != QUEUETREE_ROOT; ch = t->queues[ch].next_sibling) {
        for (uint32_t k = 0; k < t->nres; k++)
            if (__builtin_add_overflow(sum[k], t->queues[ch].alloc[k], &sum[k]))
                sum[k] = INT64_MAX;
    }
    return sum;
}

void podgroup_queue_tree(const struct qtree *t, size_t i, const struct cache *c, struct podgroup_queue_status *st)
{
    const struct qtree_queue *n = &t->queues[i];
    st->fields |= PODGROUP_QUEUE_TREE;
    free(st->tree_error);
    st->tree_error = tree_error(t, c, i);
    st->share = -1;
    st->share_text[0] = '\0';
    st->deserved_derived = 0;
    if (n->is_root) {
        int64_t *sum = root_alloc(t);
        dense_resources(c, n->q, sum, t->nres, &st->allocated);
        free(sum);
        resources_finish(&st->deserved);
        resources_init(&st->deserved);
        st->fields |= PODGROUP_QUEUE_ALLOCATED;
        return;
    }
    if (n->nchildren > 0) {
        dense_resources(c, n->q, n->alloc, t->nres, &st->allocated);
        st->fields |= PODGROUP_QUEUE_ALLOCATED;
    }
    dense_resources(c, n->q, n->deserved, t->nres, &st->deserved);
    st->deserved_derived = !n->explicit_deserved;
    st->share = qtree_share(t, i);
    if (st->share >= QTREE_SHARE_MAX)
        snprintf(st->share_text, sizeof(st->share_text), "inf");
    else
        snprintf(st->share_text, sizeof(st->share_text), "%.2f", st->share);
}

/* A resource list as a Queue status shows it (new object). */
static json_t *resource_list(const struct resources *r)
{
    json_t *out = json_object();
    for (size_t i = 0; i < r->len; i++) {
        const struct resource *e = &r->items[i];
        if (e->quantity.value == 0)
            continue;
        char buf[QUANTITY_FORMAT_MAX];
        quantity_format(&e->quantity, resources_unit(e->name), buf, sizeof(buf));
        json_object_set_new(out, e->name, json_string(buf));
    }
    return out;
}

/* Adds observed's keys (borrowed) among keys to into. */
static void pick_into(json_t *into, const json_t *observed, const char *const *keys, size_t n)
{
    json_t *p = pick(observed, keys, n);
    json_object_update(into, p);
    json_decref(p);
}

/* What st says of the fields it has (new), and the observed status's keys of those fields (new, into *from). */
static json_t *queue_wanted(const json_t *observed_status, const struct podgroup_queue_status *st, json_t **from)
{
    static const char *const counts[] = {"inqueue", "pending", "running"}, *const alloc[] = {"allocated"},
                             *const tree[] = {"deserved", "deservedDerived", "share", "treeError"};
    json_t *to = json_object();
    *from = json_object();
    if (st->fields & PODGROUP_QUEUE_COUNTS) {
        pick_into(*from, observed_status, counts, NKEYS(counts));
        set_count(to, "inqueue", st->inqueue);
        set_count(to, "pending", st->pending);
        set_count(to, "running", st->running);
    }
    if (st->fields & PODGROUP_QUEUE_ALLOCATED) {
        pick_into(*from, observed_status, alloc, NKEYS(alloc));
        json_object_set_new(to, "allocated", resource_list(&st->allocated));
    }
    if (st->fields & PODGROUP_QUEUE_TREE) {
        pick_into(*from, observed_status, tree, NKEYS(tree));
        json_object_set_new(to, "deserved", resource_list(&st->deserved));
        json_object_set_new(to, "deservedDerived", json_boolean(st->deserved_derived));
        if (st->share_text[0] != '\0')
            json_object_set_new(to, "share", json_string(st->share_text));
        if (st->tree_error != NULL)
            json_object_set_new(to, "treeError", json_string(st->tree_error));
    }
    return to;
}

json_t *podgroup_queue_patch(const json_t *observed_status, const struct podgroup_queue_status *st)
{
    json_t *from, *to = queue_wanted(observed_status, st, &from);
    const char *state = json_string_value(json_object_get(observed_status, "state"));
    if (state == NULL || state[0] == '\0')
        json_object_set_new(to, "state", json_string("Open"));
    json_t *patch = jsonpatch_merge_diff(from, to);
    json_decref(from);
    json_decref(to);
    if (json_object_size(patch) == 0) {
        json_decref(patch);
        return NULL;
    }
    return json_pack("{s:o}", "status", patch);
}

/* ---- discovery ---- */

unsigned podgroup_discovery(const json_t *resource_list)
{
    static const struct {
        const char *name;
        unsigned flag;
    } known[] = {
        {"podgroups", PODGROUP_CRD_PODGROUPS},
        {"podgroups/status", PODGROUP_CRD_PODGROUPS_STATUS},
        {"queues", PODGROUP_CRD_QUEUES},
        {"queues/status", PODGROUP_CRD_QUEUES_STATUS},
    };
    unsigned flags = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(resource_list, "resources"), i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        for (size_t k = 0; k < NKEYS(known); k++) {
            if (util_streq(name, known[k].name))
                flags |= known[k].flag;
        }
    }
    return flags;
}

/* ---- metrics ---- */

static const char *const reason_tokens[] = {
    [ADMIT_REASON_NONE] = "unknown",
    [ADMIT_REASON_QUEUE_MISSING] = "queue_missing",
    [ADMIT_REASON_QUEUE_CLOSED] = "queue_closed",
    [ADMIT_REASON_INVALID] = "invalid",
    [ADMIT_REASON_PODS] = "incomplete",
    [ADMIT_REASON_BLOCKED] = "fifo_blocked",
    [ADMIT_REASON_QUEUE_CAPACITY] = "queue_capability",
    [ADMIT_REASON_NODES] = "node_fit",
    [ADMIT_REASON_EVICTED] = "evicted",
    [ADMIT_REASON_DEACTIVATED] = "deactivated",
    [ADMIT_REASON_QUEUE_NOT_LEAF] = "queue_not_leaf",
    [ADMIT_REASON_QUEUE_BAD_TREE] = "queue_bad_tree",
    [ADMIT_REASON_QUEUE_TREE] = "queue_tree",
    [ADMIT_REASON_TOPOLOGY] = "topology",
    [ADMIT_REASON_DISPATCH_LEASE] = "dispatch_lease",
    [ADMIT_REASON_DEVICES] = "devices",
};
_Static_assert(NKEYS(reason_tokens) == PODGROUP_REASON_TOKENS, "a token for every admit_reason");

const char *podgroup_reason_token(enum admit_reason reason)
{
    return (size_t)reason < PODGROUP_REASON_TOKENS ? reason_tokens[reason] : "unknown";
}
