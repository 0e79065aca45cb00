/*
 * workers: the registry of worker clusters, from the manager's Secrets.
 *
 * A worker is a Secret in the dispatcher's namespace labelled
 * raygate.io/worker-cluster: NAME whose data key "kubeconfig" holds a whole
 * kubeconfig (credentials inline). Each worker has one Kubernetes client and
 * one view (view.h). A Secret is parsed again when its data.kubeconfig
 * changes; a worker whose Secret is gone is dropped.
 *
 * Nothing here is fatal: a Secret that does not parse, or a worker that does
 * not answer, is a worker that is down, with the reason. The reason is shown
 * where an operator looks: on the Secret (annotation raygate.io/worker-status,
 * "up", the error, or "up; no Queue q" for a reachable worker without a Queue
 * the manager dispatches to it; written when it changes), in an Event on the
 * Secret (WorkerDown, Warning; WorkerUp, Normal, Warning with a note), and in
 * the gauge raygate_worker_up{cluster} (1 or 0). The other workers go on.
 */
#ifndef RAYGATE_DISPATCH_WORKERS_H
#define RAYGATE_DISPATCH_WORKERS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "error.h"
#include "kube.h"
#include "kubeconfig.h"
#include "metrics.h"
#include "view.h"

/* The worker's state, on its Secret: "up", or why it is down. Only this module writes it. */
#define DISPATCHWORKERS_ANNOTATION_STATUS "raygate.io/worker-status"

/* The Events on a worker's Secret when its state changes. */
#define DISPATCHWORKERS_REASON_DOWN "WorkerDown"
#define DISPATCHWORKERS_REASON_UP "WorkerUp"

/* Longest status text kept, NUL included. */
#define DISPATCHWORKERS_STATUS_MAX 512

struct dispatch_worker {
    char *name;                 /* the label's value */
    char *secret_name;          /* its Secret */
    char *secret_uid;           /* for Events about it */
    uint64_t secret_hash;       /* of the Secret's data.kubeconfig last parsed (our own annotation changes its resourceVersion) */
    struct kube_client *client; /* NULL while its kubeconfig does not parse */
    struct dispatchview view;   /* what its watches saw (view.h) */
    int up;                     /* its view was whole at the last pass */
    char status[DISPATCHWORKERS_STATUS_MAX]; /* "up" or why it is down */
    char *reported;                          /* the status annotation the Secret carries (as last seen or written), or NULL */
    int seen;                                /* found in the last list of Secrets */
    int reached;                             /* its view was whole at the last pass (dispatchview_sync) */
};

struct dispatchworkers {
    struct dispatch_worker **items; /* in the order the Secrets were first seen */
    size_t len, cap;
    const struct dispatch_options *cfg; /* borrowed */
    struct kube_client *manager;        /* borrowed */
    struct metrics_family *up;          /* raygate_worker_up{cluster}, borrowed from the registry; NULL: none */
    struct metrics_family *requests;    /* raygate_dispatch_worker_requests_total{worker}, likewise */
};

/*
 * Whether s can name a worker or a manager: a label value (1 to 63 of a-z,
 * A-Z, 0-9, '-', '_', '.', alphanumeric at both ends).
 */
int dispatchworkers_name_ok(const char *s);

/*
 * Reads a worker Secret (borrowed): its name (the label's value, a new
 * string in *name, even when the kubeconfig is broken; NULL when the label is
 * missing or bad) and its kubeconfig into cfg (initialised; overwritten).
 * Returns 0, or -1 with err ("data.kubeconfig: missing", "data.kubeconfig:
 * not base64", "kubeconfig: ...": kubeconfig_parse's message). Pure.
 */
int dispatchworkers_parse_secret(const json_t *secret, char **name, struct kubeconfig *cfg, struct error *err);

/* Initialises an empty registry; reg may be NULL (no gauge). cfg and manager must outlive it. */
void dispatchworkers_init(struct dispatchworkers *ws, const struct dispatch_options *cfg, struct kube_client *manager,
                          struct metrics_registry *reg);

/* Drops every worker (their clients and views). */
void dispatchworkers_finish(struct dispatchworkers *ws);

/*
 * Lists the worker Secrets of the manager and brings the registry up to
 * date: new Secrets make workers, changed ones are parsed again (a new
 * client, an empty view), vanished ones are dropped. Returns 0, or -1 with
 * err when the list failed (the registry is then unchanged).
 */
int dispatchworkers_sync(struct dispatchworkers *ws, struct error *err);

/*
 * Adds or replaces the worker that Secret (borrowed) describes, as
 * dispatchworkers_sync does for each Secret it lists. Returns the worker, or
 * NULL when the Secret has no usable name (logged).
 */
struct dispatch_worker *dispatchworkers_apply_secret(struct dispatchworkers *ws, const json_t *secret);

/* The worker named name, or NULL. */
struct dispatch_worker *dispatchworkers_get(const struct dispatchworkers *ws, const char *name);

/*
 * Records w's state: up (why NULL: "up"; else a note on a reachable worker,
 * "up; no Queue q"), or down for why (copied); updates the gauge.
 */
void dispatchworkers_set_state(struct dispatchworkers *ws, struct dispatch_worker *w, int up, const char *why);

/*
 * Writes each worker's state where it changed: the Secret's annotation (a
 * merge patch) and an Event on the Secret. Failures are logged and retried at
 * the next call.
 */
void dispatchworkers_report(struct dispatchworkers *ws, const char *now);

#endif
