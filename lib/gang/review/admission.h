/*
 * admission: AdmissionReview (admission.k8s.io/v1) in, AdmissionReview out.
 *
 * A pure function of the request body and the Queues the webhook knows
 * (queuecheck.h): no I/O, no API call, no global state. The webhook's HTTP
 * layer calls admission_respond() once per POST /mutate or /validate and maps
 * its result to an HTTP response.
 *
 * Decisions: RayCluster, RayJob and legacy RayCluster CREATE and UPDATE are
 * mutated (mutate.h, rayjob.h, legacy.h) and Pod CREATE gated; a RayCluster,
 * RayJob, RayService or legacy RayCluster whose queue label names a queue with
 * children is denied, and so is a queued one whose topology request is invalid
 * (topology.h; an UPDATE of one that was invalid already is allowed with a
 * warning); Queue CREATE, UPDATE and DELETE are validated (queuecheck.h),
 * and HyperNode CREATE and UPDATE (hypercheck.h).
 */
#ifndef RAYGATE_ADMISSION_H
#define RAYGATE_ADMISSION_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "mutate.h"
#include "queuecheck.h"

/* The HTTP status of an answer to a body that is not a usable AdmissionReview (err->message says why). */
#define ADMISSION_ERROR_STATUS 400

/*
 * Most JSON values a body may hold, counted before parsing as the ',', '{'
 * and '[' outside strings (one per value, two for a non-empty container).
 * Memory follows the number of values, not the bytes: a 3 MB RayCluster of
 * empty objects ({},{},...) is 786,000 values and took the webhook to 358 MiB
 * RSS; at this limit it stays under 50 MiB. A real AdmissionReview holds a
 * few thousand (a KubeRay RayCluster CREATE: under 100); 5,000 worker groups
 * are 65,000. A body with more is refused with HTTP 400.
 */
#define ADMISSION_MAX_JSON_VALUES 100000

/* What was decided, for metrics and logs. Strings are static. */
struct admission_info {
    const char *kind;      /* "RayCluster", "RayJob", "RayService", "Pod", "Queue", "HyperNode" or "other" */
    const char *operation; /* "CREATE", "UPDATE", ... or "unknown" */
    const char *result;    /* "patched", "allowed", "denied" or "error" */
    struct error denial;   /* result "denied": why (the answer's status.message) */
    int tree_unknown;      /* a queue tree check was skipped: the Queues are not known yet (allowed on that ground) */
};

/*
 * Decodes the AdmissionReview in body[0..len), decides, and encodes the answer.
 * queues: the Queues the webhook knows (borrowed; NULL: unknown, as unsynced).
 * opts: what the webhook's flags add to the mutation (mutate.h; borrowed;
 * NULL: nothing).
 * Returns 0 and sets *response to a new reference (caller owns it: json_decref)
 * holding the whole AdmissionReview response (apiVersion, kind, response.uid,
 * allowed, and patchType/patch or status or warnings as decided); info is filled.
 * Returns -1 when the body is not an AdmissionReview v1 request, or holds more
 * than ADMISSION_MAX_JSON_VALUES values: *response is NULL and err says why
 * (info->result is "error").
 */
int admission_handle(const char *body, size_t len, const struct queuecheck_set *queues, const struct mutate_options *opts,
                     json_t **response, struct admission_info *info, struct error *err);

/*
 * admission_handle() followed by json_dumps(JSON_COMPACT): the answer as text,
 * a new string (caller frees) of *text_len bytes. The same bytes either way,
 * but a Pod CREATE (nearly every request: one per Ray pod) is answered from a
 * scan of the body (lib/wire/jsonscan.h) instead of a jansson tree, which costs
 * several times less; bodies the scan declines go through admission_handle().
 * A RayCluster CREATE or UPDATE that is allowed is decided from the same scan
 * too: admission_handle()'s functions run on a jansson tree built from the
 * tokens of only what they read (no pod spec's env, volumes, probes...), which
 * spares the parse of the whole body; a denial goes through admission_handle().
 * Returns 0, or -1 with err as admission_handle() (*text is then NULL).
 */
int admission_respond(const char *body, size_t len, const struct queuecheck_set *queues, const struct mutate_options *opts,
                      char **text, size_t *text_len, struct admission_info *info, struct error *err);

/*
 * A manager's webhook (path /dispatch-suspend): as admission_respond(), but a
 * ray.io RayCluster or RayJob CREATE or UPDATE gets dispatchsuspend.h's
 * decision only (no gang sizing: its worker's webhook does that), and every
 * other request (a Pod too) is allowed as it is: it takes no mutate_options.
 */
int admission_respond_dispatch(const char *body, size_t len, const struct queuecheck_set *queues, char **text, size_t *text_len,
                               struct admission_info *info, struct error *err);

/*
 * Each fast path alone, for tests: returns 1 and the answer when it handled the
 * body, 0 when it declined (admission_handle() must decide).
 */
int admission_respond_pod_fast(const char *body, size_t len, const struct mutate_options *opts, char **text, size_t *text_len,
                               struct admission_info *info);
int admission_respond_raycluster_fast(const char *body, size_t len, const struct queuecheck_set *queues,
                                      const struct mutate_options *opts, char **text, size_t *text_len,
                                      struct admission_info *info);

#endif
