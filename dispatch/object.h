/*
 * object: one manager RayCluster or RayJob at one pass: what its plan sees
 * (dispatchplan.h's input, from the workers' views and the manager Queue),
 * the simulation and pick when the plan asks, and the action carried out
 * (act.h) with its Events and the manager-side PodGroup.
 */
#ifndef RAYGATE_DISPATCH_OBJECT_H
#define RAYGATE_DISPATCH_OBJECT_H

#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "kube.h"
#include "manager.h"
#include "metrics.h"
#include "workers.h"

/* What a pass shares with each object's run. Borrowed. */
struct dispatchobject_env {
    const struct dispatch_options *opt;
    struct kube_client *manager;
    struct dispatchworkers *workers;
    struct dispatchmanager *mgr;
    json_t *told;                   /* uid -> the last once-only Event token shown (dispatchmemo.h; kept across passes) */
    json_t *nominated;              /* workers whose copy's create failed in this pass: not nominated to again in it */
    json_t *warned;                 /* memo key -> the last warning logged about the object (dispatchmemo.h) */
    struct metrics_family *actions; /* raygate_dispatch_actions_total{action}, or NULL */
    int64_t *nominations;           /* how many nominations this process wrote (the test fault counts them) */
    int64_t now_ms;
    const char *now; /* RFC 3339 */
};

/* The Events on a manager object. */
#define DISPATCHOBJECT_REASON_DISPATCHED "Dispatched"
#define DISPATCHOBJECT_REASON_WITHDRAWN "DispatchWithdrawn"
#define DISPATCHOBJECT_REASON_WORKER_LOST "WorkerLost"
#define DISPATCHOBJECT_REASON_GAVE_UP "DispatchGaveUp"

/* Whether obj (borrowed) is the dispatcher's: its Queue dispatches, or it carries our finalizer or a dispatched-to. */
int dispatchobject_involved(const struct dispatchobject_env *env, const json_t *obj);

/* Plans and acts for manager object obj (borrowed), at most a few plans in a row (a finalizer added, a pick run). */
void dispatchobject_run(struct dispatchobject_env *env, const json_t *obj);

#endif
