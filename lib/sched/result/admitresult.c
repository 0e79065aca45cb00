#include "admitresult.h"

#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "util.h"

/*
 * The result's strings come from chunks that never move: a pass names tens of
 * thousands of pods, and one malloc (and free) each would be a good part of it.
 */
struct admit_chunk {
    struct admit_chunk *next;
    size_t used, size;
    char data[];
};

void admit_result_init(struct admit_result *r)
{
    memset(r, 0, sizeof(*r));
}

void admit_result_finish(struct admit_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->len; i++) {
        struct admit_decision *d = &r->items[i];
        for (size_t j = 0; j < d->npods; j++) {
            json_decref(d->pods[j].keep_gates);
            free(d->pods[j].message);
            json_decref(d->pods[j].confine);
        }
        free(d->pods);
        free(d->message);
        free(d->topology);
    }
    free(r->items);
    free(r->queues);
    while (r->strings != NULL) {
        struct admit_chunk *next = r->strings->next;
        free(r->strings);
        r->strings = next;
    }
    admit_result_init(r);
}

char *admit_result_alloc(struct admit_result *r, size_t n)
{
    struct admit_chunk *ch = r->strings;
    if (ch == NULL || ch->size - ch->used < n) {
        size_t size = n > 65536 ? n : 65536;
        ch = util_malloc(sizeof(*ch) + size);
        ch->next = r->strings;
        ch->used = 0;
        ch->size = size;
        r->strings = ch;
    }
    char *p = ch->data + ch->used;
    ch->used += n;
    return p;
}

const char *admit_result_action_name(enum admit_action action)
{
    switch (action) {
    case ADMIT_ACTION_ADMIT:
        return "admit";
    case ADMIT_ACTION_FINISH:
        return "finish";
    case ADMIT_ACTION_WAIT:
        return "wait";
    case ADMIT_ACTION_TAIL_ADMIT:
        return "tail-admit";
    case ADMIT_ACTION_TAIL_WAIT:
        return "tail-wait";
    }
    return "";
}

const char *admit_result_reason_name(enum admit_reason reason)
{
    switch (reason) {
    case ADMIT_REASON_NONE:
        return "";
    case ADMIT_REASON_QUEUE_MISSING:
        return "queue-missing";
    case ADMIT_REASON_QUEUE_CLOSED:
        return "queue-closed";
    case ADMIT_REASON_INVALID:
        return "invalid";
    case ADMIT_REASON_PODS:
        return "pods";
    case ADMIT_REASON_BLOCKED:
        return "blocked";
    case ADMIT_REASON_QUEUE_CAPACITY:
        return "queue-capacity";
    case ADMIT_REASON_NODES:
        return "nodes";
    case ADMIT_REASON_EVICTED:
        return "evicted";
    case ADMIT_REASON_DEACTIVATED:
        return "deactivated";
    case ADMIT_REASON_QUEUE_NOT_LEAF:
        return "queue-not-leaf";
    case ADMIT_REASON_QUEUE_BAD_TREE:
        return "queue-bad-tree";
    case ADMIT_REASON_QUEUE_TREE:
        return "queue-tree";
    case ADMIT_REASON_TOPOLOGY:
        return "topology";
    case ADMIT_REASON_DISPATCH_LEASE:
        return "dispatch-lease";
    case ADMIT_REASON_DEVICES:
        return "devices";
    }
    return "";
}

json_t *admit_result_ungate_patch(const struct admit_pod *p)
{
    json_t *patch = json_pack("{s:{s:s},s:{s:o}}", "metadata", "resourceVersion", p->resource_version, "spec", "schedulingGates",
                              p->keep_gates != NULL ? json_incref(p->keep_gates) : json_array());
    if (p->confine != NULL)
        json_object_update_missing(json_object_get(patch, "spec"), p->confine);
    return patch;
}

struct admit_decision *admit_result_add(struct admit_result *r, enum admit_action action, enum admit_reason reason,
                                        const struct cache_gang *g, char *message)
{
    if (r->len == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->items = util_realloc(r->items, r->cap * sizeof(*r->items));
    }
    struct admit_decision *d = &r->items[r->len++];
    memset(d, 0, sizeof(*d));
    d->action = action;
    d->reason = reason;
    /* One allocation for the five names, owned by namespace_. */
    const char *uid = g->uid, *queue = g->queue != NULL ? g->queue->name : NULL;
    size_t lns = strlen(g->namespace_) + 1, lname = strlen(g->name) + 1;
    size_t luid = uid != NULL ? strlen(uid) + 1 : 0, lq = queue != NULL ? strlen(queue) + 1 : 0;
    const size_t lpre = strlen(NAMES_PODGROUP_PREFIX), lsuf = strlen(NAMES_PODGROUP_SUFFIX);
    const size_t lgang = lpre + lname + lsuf; /* names_podgroup(g->name) and its NUL */
    char *block = admit_result_alloc(r, lns + lname + luid + lgang + lq);
    d->namespace_ = memcpy(block, g->namespace_, lns);
    d->cluster = memcpy(block + lns, g->name, lname);
    d->cluster_uid = uid != NULL ? memcpy(block + lns + lname, uid, luid) : NULL;
    d->gang = block + lns + lname + luid;
    memcpy(d->gang, NAMES_PODGROUP_PREFIX, lpre);
    memcpy(d->gang + lpre, g->name, lname - 1);
    memcpy(d->gang + lpre + lname - 1, NAMES_PODGROUP_SUFFIX, lsuf + 1);
    d->queue = queue != NULL ? memcpy(d->gang + lgang, queue, lq) : NULL;
    d->legacy = g->legacy;
    d->message = message;
    return d;
}

void admit_result_add_pod(struct admit_result *r, struct admit_decision *d, const struct cache_pod *pod)
{
    if (d->npods == d->pods_cap) {
        d->pods_cap = d->pods_cap ? d->pods_cap * 2 : 8;
        d->pods = util_realloc(d->pods, d->pods_cap * sizeof(*d->pods));
    }
    struct admit_pod *ap = &d->pods[d->npods++];
    /* The pod's strings are one block, "name\0uid\0resourceVersion\0" (model.h): one copy. */
    size_t len = (size_t)(pod->resource_version - pod->name) + strlen(pod->resource_version) + 1;
    ap->name = memcpy(admit_result_alloc(r, len), pod->name, len);
    ap->uid = ap->name + (pod->uid - pod->name);
    ap->resource_version = ap->name + (pod->resource_version - pod->name);
    ap->keep_gates = pod->nforeign_gates > 0 ? json_array() : NULL;
    ap->head = pod->node_type != NULL && strcmp(pod->node_type, "head") == 0;
    ap->message = NULL;
    ap->confine = NULL;
    for (uint32_t i = 0; i < pod->nforeign_gates; i++)
        json_array_append_new(ap->keep_gates, json_pack("{s:s}", "name", pod->foreign_gates[i]));
}

void admit_result_add_queue(struct admit_result *r, const char *name)
{
    if (r->queues_evaluated == r->queues_cap) {
        r->queues_cap = r->queues_cap ? r->queues_cap * 2 : 16;
        r->queues = util_realloc(r->queues, r->queues_cap * sizeof(*r->queues));
    }
    size_t len = strlen(name) + 1;
    r->queues[r->queues_evaluated++] = memcpy(admit_result_alloc(r, len), name, len);
}
