/*
 * dispatchplan: what the dispatcher does next for one manager RayCluster or
 * RayJob, as a pure function of what it sees (docs/dispatch.md).
 *
 * Each call returns one action; the dispatcher does it and plans again at its
 * next look (every resync, or at next_ms). The order of precedence:
 * 1. Deleting (deletionTimestamp set) and our finalizer present: FINALIZE on
 *    each reachable worker holding a copy (delete it there), then FINALIZE with
 *    no worker (drop the finalizer). A copy on an unreachable worker is not
 *    waited for: nothing renews its lease any more, so its gate evicts it, and
 *    it is deleted once that worker is back (by the dispatcher's sweep of
 *    copies whose origin uid names no manager object: there is no object
 *    left to plan for). Without our finalizer:
 *    NONE.
 *    A copy being deleted already (going) is waited for: NONE until it is
 *    gone, then the next step.
 * 2. ADD_FINALIZER when ours is missing.
 * 3. DELETE_STALE on a reachable worker holding a copy (the origin uid is
 *    the manager object's) that is not the worker dispatched-to names: a
 *    withdrawn copy whose deletion failed, a copy on a lost worker that came
 *    back after a re-dispatch, an orphan of a dispatcher restart. Such a
 *    copy being deleted already: NONE (waiting for it to be gone; nothing is
 *    nominated meanwhile).
 * 4. Dispatched (dispatched-to set):
 *    - the worker is unreachable (or no longer registered): WAIT_LOST until
 *      the lease plus the margin has passed since the last successful renewal
 *      (renewed-at; dispatched-at if never renewed), measured on the
 *      manager's clock; then REDISPATCH (the dispatcher clears dispatched-to;
 *      the next plan nominates). By then the worker's gate, counting the
 *      lease on its own clock from the last change it saw, has evicted the
 *      gang;
 *    - the worker is reachable but holds no copy: NONE for a RayJob shown
 *      terminal or started on the manager (it ran, or runs: its copy was
 *      cleaned up or deleted there, and a job never runs twice); NOMINATE on
 *      that worker again (create the copy: the dispatcher's create after
 *      writing dispatched-to did not happen) within the timeout of
 *      dispatched-at; REDISPATCH after it;
 *    - a copy not admitted within --dispatch-timeout of dispatched-at:
 *      WITHDRAW (delete it there, clear dispatched-to; the next plan nominates
 *      again, that worker not excluded);
 *    - RENEW when lease/4 has passed since renewed-at (or it was never
 *      renewed); then MIRROR when the manager does not show the worker's
 *      status yet; else NONE.
 * 5. Not dispatched:
 *    - NONE for a RayJob shown terminal on the manager;
 *    - GIVE_UP once raygate.io/dispatch-give-up has passed since the gang
 *      began waiting (its creation, or its last nomination: dispatched-at):
 *      final, the gang is shown unschedulable with the reasons per worker
 *      and holds no manager quota;
 *    - WAIT_QUOTA when the manager Queue's capability has no room for it;
 *    - PICK when the caller has not run the simulation (pick_ran 0): run it
 *      (dispatchsim.h, dispatchpick.h) and plan again with the pick;
 *    - NOMINATE on the picked worker; WAIT_FIT when none fits (show why).
 *
 * Renewal order (RENEW): the dispatcher writes renewed-at on the manager
 * object before it sends the bump to the worker, and does not send it when
 * that write fails. renewed-at is thus never earlier than any bump the worker
 * may have applied, even one whose answer was lost in a partition: a lost
 * worker's deadline (renewed-at + lease + margin) counts from at least the
 * last bump its gate can have seen, plus the worker request's timeout, which
 * the margin covers (docs/dispatch.md). A bump that fails leaves renewed-at
 * later than the worker's last change: the re-dispatch then only comes later.
 *
 * Times are Unix ms on the manager's clock. Pure: no I/O, no threads, no
 * clock (now is passed in).
 */
#ifndef RAYGATE_DISPATCHPLAN_H
#define RAYGATE_DISPATCHPLAN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dispatchcopy.h"
#include "dispatchpick.h"
#include "error.h"
#include "names.h"

/* The manager object's dispatch state, from its JSON (dispatch_plan_state_parse). */
struct dispatch_state {
    enum dispatch_kind kind;
    char *uid;             /* owned metadata.uid */
    char *dispatched_to;   /* owned raygate.io/dispatched-to, or NULL: not dispatched */
    int64_t dispatched_at; /* raygate.io/dispatched-at, or 0 */
    int64_t renewed_at;    /* raygate.io/dispatch-renewed-at, or 0: never renewed */
    int64_t created;       /* metadata.creationTimestamp, or 0 */
    int64_t give_up_ms;    /* raygate.io/dispatch-give-up as a duration; 0: wait forever */
    int deleting;          /* metadata.deletionTimestamp is set */
    int finalizer;         /* metadata.finalizers holds raygate.io/dispatch */
    int terminal;          /* a RayJob whose status.jobDeploymentStatus is Complete or Failed */
    int started;           /* a RayJob whose status.jobDeploymentStatus shows it was submitted (dispatch_copy_remote_started);
                              suspended for a KubeRay on the manager: its raygate.io/dispatch-worker-state does */
};

/* The largest give-up accepted: 365 days. */
#define DISPATCH_GIVE_UP_MAX_MS (365LL * 24 * 3600 * 1000)

/* Initialises an empty state in caller-owned storage. */
void dispatch_plan_state_init(struct dispatch_state *st);

/* Releases st's strings; st may be NULL. */
void dispatch_plan_state_finish(struct dispatch_state *st);

/*
 * Reads the state of manager object obj (borrowed; a RayCluster or RayJob)
 * into st, which must be initialised and is overwritten. Times are RFC 3339
 * UTC; the give-up is a duration ("10m", "1h30m"; 1s..365d). Returns 0, or -1
 * with err naming the annotation when the kind is neither, metadata.uid is
 * missing, a time or the give-up does not parse, or dispatched-to is set
 * without a dispatched-at (the dispatcher writes both at once: without it no
 * lost worker's deadline can be known, and the object is left alone).
 */
int dispatch_plan_state_parse(const json_t *obj, struct dispatch_state *st, struct error *err);

/* One registered worker, as seen now. name borrowed. */
struct dispatch_worker_view {
    const char *name;
    int up; /* reachable, its lists current */
    /* up: it holds a copy of this object (dispatch_copy_origin() == the manager object's uid), a copy being
       deleted included. The dispatcher deletes copies with propagationPolicy Foreground, so that a copy stays
       until its pods are gone and nothing is nominated elsewhere meanwhile (a withdrawal racing the worker's
       admission must not leave pods bound on two workers). */
    int copy;
    int going;    /* copy: its deletionTimestamp is set (deleted already: waited for, not deleted again) */
    int admitted; /* copy: the worker's gate admitted it (dispatch_remote.admitted) */
    int shown;    /* copy: the manager shows its status already (dispatch_copy_remote_shown()) */
};

struct dispatch_config {
    int64_t timeout_ms; /* --dispatch-timeout: admitted within this of dispatched-at, else withdrawn */
    int64_t lease_ms;   /* --dispatch-lease: renewed every lease/4 */
    int64_t margin_ms;  /* --dispatch-lease-margin: a lost worker's gang is re-dispatched after lease + margin */
};

struct dispatch_plan_input {
    const struct dispatch_state *st;
    const struct dispatch_worker_view *workers; /* every registered worker */
    size_t nworkers;
    int quota_room; /* the manager Queue's capability (when set) has room for the gang besides those dispatched */
    int pick_ran;   /* pick is set: the simulation ran */
    size_t pick;    /* index into workers of the worker picked, or DISPATCH_NO_WORKER: none fits */
    int64_t now_ms;
    struct dispatch_config cfg;
};

enum dispatch_action {
    DISPATCH_ACTION_NONE = 0,
    DISPATCH_ACTION_ADD_FINALIZER,
    DISPATCH_ACTION_PICK,         /* run the simulation, then plan again with pick_ran set */
    DISPATCH_ACTION_NOMINATE,     /* write dispatched-to = worker, dispatched-at = now; create the copy there */
    DISPATCH_ACTION_WAIT_FIT,     /* no worker fits: show the reasons per worker */
    DISPATCH_ACTION_WAIT_QUOTA,   /* the manager Queue's capability is full */
    DISPATCH_ACTION_WITHDRAW,     /* delete the copy on worker (not admitted in time), clear dispatched-to */
    DISPATCH_ACTION_RENEW,        /* write renewed-at = now, THEN bump the lease on worker (see below) */
    DISPATCH_ACTION_MIRROR,       /* write the worker's status on the manager object */
    DISPATCH_ACTION_DELETE_STALE, /* delete the copy on worker: not where the object is dispatched */
    DISPATCH_ACTION_WAIT_LOST,    /* worker lost; its gang may still run there until the deadline */
    DISPATCH_ACTION_REDISPATCH,   /* clear dispatched-to (and renewed-at); the next plan nominates */
    DISPATCH_ACTION_GIVE_UP,      /* give-up passed: unschedulable, holding no manager quota */
    DISPATCH_ACTION_FINALIZE,     /* worker set: delete its copy; DISPATCH_NO_WORKER: drop the finalizer */
};

struct dispatch_plan {
    enum dispatch_action action;
    size_t worker;    /* index into the input's workers, or DISPATCH_NO_WORKER */
    char reason[200]; /* one line for logs and Events ("not admitted on gpu-east within 1m") */
    int64_t next_ms;  /* the earliest time the plan changes by itself (a renewal, timeout, deadline); 0: none */
};

/* Plans the next action for in (borrowed) into out. */
void dispatch_plan(const struct dispatch_plan_input *in, struct dispatch_plan *out);

/* "none", "add-finalizer", "pick", "nominate", "wait-fit", "wait-quota", "withdraw", "renew", "mirror", "delete-stale",
 * "wait-lost", "redispatch", "give-up", "finalize". */
const char *dispatch_plan_action_name(enum dispatch_action a);

#endif
