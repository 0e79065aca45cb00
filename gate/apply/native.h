/*
 * native: Kubernetes' own gang scheduling as the gate's last step
 * (lib/gang/model/nativegang.h, docs/native-gang.md), its state and its writes.
 *
 * The state: the native PodGroups (scheduling.k8s.io/v1beta1) as the watch
 * delivers them (watches.h feeds native_record under the controller's lock
 * once discovery found the API, or at once with --native-gang on), so that
 * a gang whose PodGroup is already right costs no write, and what
 * kube-scheduler says of each group can be read back (native_seen).
 *
 * The writes (native_ensure, without the lock, before any gate of the gangs
 * is lifted, apply.h): for each gang whose pods name its group (the webhook
 * set spec.schedulingGroup.podGroupName at CREATE), its Workload and
 * PodGroup are created when the watch has not seen the PodGroup (an existing
 * one, 409, is then patched to the gang's minCount), or the PodGroup's
 * minCount patched when it differs. A gang whose write failed keeps its gates
 * until a later pass: no pod of it is released into a group kube-scheduler
 * does not know.
 *
 * Threads: native_record, native_seen and native_enabled under the
 * controller's lock; native_ensure on the controller's thread without it.
 */
#ifndef RAYGATE_GATE_NATIVE_H
#define RAYGATE_GATE_NATIVE_H

#include <stddef.h>

#include <jansson.h>

#include "admitresult.h"
#include "cache.h"
#include "kube.h"
#include "nativegang.h"

/* --native-gang: whether the step is used. */
enum native_mode {
    NATIVE_AUTO, /* where discovery finds the PodGroups of scheduling.k8s.io/v1beta1 */
    NATIVE_ON,   /* always (the API must be served) */
    NATIVE_OFF,  /* never */
};

/* The flag's words, in enum native_mode's order, NULL-terminated. */
extern const char *const native_mode_names[];

struct native;

struct native *native_create(enum native_mode mode);

/* Accepts NULL. */
void native_destroy(struct native *n);

enum native_mode native_mode(const struct native *n);

/* Whether the step is used now: the PodGroup watch was started (native_set_enabled). */
int native_enabled(const struct native *n);

/* watches.h, once the watch of native PodGroups is started. */
void native_set_enabled(struct native *n);

/* A watch event ADDED, MODIFIED or DELETED of a native PodGroup (object borrowed). */
void native_record(struct native *n, enum kube_watch_event ev, const json_t *object);

/* What the watch last saw of PodGroup ns/name into out (message valid until the next native_record); 0, or -1 if unseen. */
int native_seen(const struct native *n, const char *ns, const char *name, struct nativegang_seen *out);

/* What a decision's gang needs of the native step: its objects and what to do about them. */
struct native_want {
    struct nativegang_spec spec; /* strings owned (native_want_finish) */
    enum nativegang_op op;
};

/*
 * Caller holds the controller's lock. Whether the gang of d (ADMIT, FINISH,
 * TAIL_ADMIT) takes the native step: the step is enabled and a pod d releases
 * names the gang's PodGroup (cache_gang_group's "ray-<name>-pg") in
 * spec.schedulingGroup. A pod that names another group (KubeRay's own
 * kubernetes-was backend, a user) leaves that group to its owner: no want.
 * The PodGroup's minCount is the gang's native_count (gang.h): the members
 * that name it, as the webhook marked their templates. Returns 1 with out
 * filled, else 0.
 */
int native_want(const struct native *n, struct cache *cache, const struct admit_decision *d, struct native_want *out);

/*
 * Caller holds the controller's lock. The admitted gangs whose pods name
 * their group and whose native PodGroup the watch shows with another
 * minCount than their native_count (minReplicas moved: op PATCH), or does not
 * show at all (deleted, or never written: op CREATE, so that pods waiting for
 * it are placed): at most max wants into out, for native_ensure. Returns how many.
 */
size_t native_drift(const struct native *n, struct cache *cache, struct native_want *out, size_t max);

/*
 * Caller holds the controller's lock. What kube-scheduler says of admitted
 * gang g's native PodGroup group (nativegang_describe, with g's bound pods),
 * as a new string; NULL when the step is not used, g is not admitted, or the
 * watch has not seen the group.
 */
char *native_describe(const struct native *n, const struct cache_gang *g, const char *group);

/* Frees w's strings; accepts a zeroed w. */
void native_want_finish(struct native_want *w);

/*
 * Makes sure the PodGroup of each of the n specs (borrowed) exists with its
 * minCount (ops[i]: nativegang_op of what the watch saw; NATIVEGANG_NONE
 * costs nothing). Sets ok[i] to 1 when it does, 0 when a write failed (logged).
 * may_write is asked before writing (leader election; NULL: always).
 */
void native_ensure(struct kube_client *c, const struct nativegang_spec *specs, const enum nativegang_op *ops, size_t n, int *ok,
                   int (*may_write)(void *arg), void *arg);

#endif
