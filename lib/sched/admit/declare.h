/*
 * declare: a gang's members made from its RayCluster's declaration (its
 * templates and counts) as pods in the cache, before KubeRay has made them.
 *
 * Two users:
 * - the dispatcher's simulation (dispatchsim.h) weighs a manager's object on
 *   a worker's cache with such members, removed afterwards;
 * - the gate controller weighs a held RayCluster (heldsuspend.h: suspended by
 *   the webhook until admitted, so KubeRay makes no pod for it) from them:
 *   declare_sync_cluster keeps them in its cache. Once the gang is admitted,
 *   its admission record clears spec.suspend, KubeRay makes the real pods,
 *   and each real pod takes the place of a declared one of its role
 *   (declare_sync_gang). Until then the declared pods, ungated with the
 *   admission (the gate PATCHes none of them: they are not in the API), hold
 *   the gang's room on the nodes as admitted pods the scheduler has not bound
 *   yet do, and eviction times them as such. After an admission no declared
 *   pod is added: a member lost later is held by early_reserve (early.h).
 *
 * A declared pod (from declare_member_pod): labels ray.io/cluster,
 * ray.io/node-type, ray.io/group and the queue label with the template's
 * labels, the template's spec (the head with KubeRay's autoscaler sidecar
 * when the cluster autoscales, a worker with KubeRay's wait-gcs-ready init
 * container: gang_worker_init_container), our gate unless told otherwise, Pending,
 * unbound; uid n->uid_prefix + "<ns>/<name>". The gate's are named
 * "<cluster>-head-declared" and "<cluster>-<group>-worker-declared-<i>", uid
 * DECLARE_UID_PREFIX...: declare_pod_is tells them from real pods (never
 * PATCHed, never DELETEd through the API).
 *
 * Pure: no I/O.
 */
#ifndef RAYGATE_DECLARE_H
#define RAYGATE_DECLARE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "admitresult.h"
#include "cache.h"
#include "error.h"
#include "gang.h"

#define DECLARE_UID_PREFIX "raygate-declared/"

/* How declared pods are named and made; strings borrowed. */
struct declare_names {
    const char *ns, *cluster, *queue;
    const char *created;        /* their creationTimestamp (RFC 3339) */
    const char *suffix;         /* after "-head" and "-worker" in their names */
    const char *uid_prefix;     /* before "<ns>/<name>" in their uid */
    const json_t *cluster_spec; /* the RayCluster's spec: the head's autoscaler sidecar */
    int gated;                  /* 1: with our gate */
};

/* Member i of role type ("head" or "worker") and group of template (borrowed), as a Pod. New reference. */
json_t *declare_member_pod(const struct declare_names *n, const json_t *template, const char *type, const char *group, size_t i);

/*
 * The live pods g holds of a gang shaped as spec, declared ones left out:
 * have[0] its heads, have[1 + i] the pods of spec's group i (by the
 * ray.io/group label). All zero when g is NULL.
 */
void declare_count_live(const struct cache_gang *g, const struct gang_spec *spec, int64_t *have);

/* Whether p is a declared pod of the gate's (its uid starts with DECLARE_UID_PREFIX). */
int declare_pod_is(const struct cache_pod *p);

/* Whether uid (NULL: no) is a declared pod's. */
int declare_uid_is(const char *uid);

/*
 * p's priority: a real pod's spec.priority; a declared pod's, which has none,
 * its gang's class's value (prioclass.h: the ray.io/priority-class-name label
 * the webhook writes into every template, or the global default class).
 */
int32_t declare_pod_priority(const struct cache *c, const struct cache_pod *p);

/*
 * After the RayCluster cluster (borrowed) was upserted into c: its declared
 * pods brought up to date. Held (raygate.io/held-suspended) and suspended,
 * not admitted: one gated declared pod per member (its real pods, which
 * KubeRay deletes while it is suspended, do not count; a declared pod an
 * eviction took back is made gated again); admitted: only declared pods that real ones replaced are removed;
 * otherwise (not held, or its suspend cleared by hand) none. Returns 0, or -1
 * with err (the gang arithmetic failed: no declared pod then).
 */
int declare_sync_cluster(struct cache *c, const json_t *cluster, struct error *err);

/* After a real pod of gang ns/cluster arrived: the declared pods its real ones replace, removed. */
void declare_sync_gang(struct cache *c, const char *ns, const char *cluster);

/* Before RayCluster ns/cluster leaves the cache: its declared pods removed. */
void declare_drop(struct cache *c, const char *ns, const char *cluster);

/*
 * Whether the gate releases the held gang of decision d (borrowed, a WAIT) now
 * (heldsuspend.h, the webhook's --hold-gangs decide): g (borrowed, may be
 * NULL) is still held to be released on a wait, and it waits for room (its
 * queue, the tree, the nodes, a domain, a FIFO head, a missing or closed
 * queue), so that its pods exist, gated, and say why. Not while its
 * eviction's backoff runs or it is deactivated: an evicted gang stays held
 * through its backoff with no pod, as Kueue requeues a workload, and is
 * released at its first decision after it if that is a wait. Nor when its gang
 * could not be computed (it could not be admitted either).
 */
int declare_release_wanted(const struct cache_gang *g, const struct admit_decision *d);

#endif
