/*
 * eventpost: the gate's one poster of Kubernetes Events (lib/wire/events.h
 * builds them). Events are gathered in a list while deciding, and posted
 * together, concurrently, once the decisions are carried out; the controller
 * (GangWaiting, GangAdmitted, Preempting) and the evictor (GangEvicted,
 * Preempted) both post through it.
 *
 * Ownership: a list owns its Events. eventpost_send always empties the list,
 * whether it posted (leading) or dropped them (not leading any more): a
 * caller never frees what it added.
 */
#ifndef RAYGATE_GATE_EVENTPOST_H
#define RAYGATE_GATE_EVENTPOST_H

#include <stddef.h>

#include <jansson.h>

#include "events.h"
#include "kube.h"

struct eventpost_item {
    char *ns;        /* the Event's namespace (owned) */
    json_t *event;   /* owned */
    char *name;      /* an aggregated Event's name (owned), or NULL: a new Event, its name generated */
    json_t *patch;   /* an aggregated Event's count patch (owned), or NULL */
    int patch_first; /* a repeat: PATCH name with patch, and POST event if it is gone (404) */
};

/* Events to post; zero-initialised storage is an empty list. */
struct eventpost_list {
    struct eventpost_item *items;
    size_t len, cap;
};

/* Asked once before posting: 0 drops the list (this replica does not lead). NULL: always post. */
typedef int (*eventpost_may_write_fn)(void *arg);

void eventpost_list_init(struct eventpost_list *l);

/* Frees every Event still in the list and its storage. */
void eventpost_list_finish(struct eventpost_list *l);

/* Adds the Event events_build makes of these (every string copied). */
void eventpost_add(struct eventpost_list *l, const struct events_object *obj, const char *type, const char *reason,
                   const char *message, const char *now, const char *instance);

/*
 * Adds an aggregated Event about obj named name (eventplan_event_name), the
 * count-th of its kind (events_build_named, events_count_patch): the first
 * (count 1) is created, and if it exists already (409: raygate restarted)
 * counted up instead; a repeat (count > 1) is counted up by a PATCH, and
 * created again if it is gone (404: the apiserver's Event TTL passed).
 * Strings copied.
 */
void eventpost_add_counted(struct eventpost_list *l, const struct events_object *obj, const char *name, const char *type,
                           const char *reason, const char *message, const char *now, const char *instance, long long count);

/* Adds event (stolen) to post in namespace ns (copied). */
void eventpost_add_new(struct eventpost_list *l, const char *ns, json_t *event);

/*
 * Posts every Event of l (32 at a time) unless may_write(arg) says no, and
 * empties l either way. A refusal because the namespace is being deleted is
 * no failure (nobody is left to tell). Failures are logged once, with what
 * (e.g. "GangEvicted Events"). Returns how many failed.
 */
size_t eventpost_send(struct kube_client *k, struct eventpost_list *l, eventpost_may_write_fn may_write, void *arg,
                      const char *what);

/* Whether a refusal (a Status, borrowed) is the namespace's deletion (a NamespaceTerminating cause). */
int eventpost_namespace_terminating(const json_t *status);

#endif
