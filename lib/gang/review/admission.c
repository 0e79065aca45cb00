#include "admission.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "dispatchsuspend.h"
#include "jsonarena.h"
#include "jsonpatch.h"
#include "jsonscan.h"
#include "legacy.h"
#include "mutate.h"
#include "heldsuspend.h"
#include "names.h"
#include "hypercheck.h"
#include "queuecheck.h"
#include "rayjob.h"
#include "rayjobmutate.h"
#include "topology.h"
#include "util.h"

static const struct queuecheck_set unknown_queues; /* NULL queues: not synced */

/* The operation as one of our static strings (they outlive the request). */
static const char *operation_name(const char *op)
{
    static const char *const known[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
    for (size_t i = 0; op != NULL && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(op, known[i]) == 0)
            return known[i];
    return "unknown";
}

static int string_is(const json_t *obj, const char *key, const char *want)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL && strcmp(s, want) == 0;
}

/* Returns a new JSON string holding base64(patch as compact JSON), no newlines. */
static json_t *encode_patch(const json_t *patch)
{
    size_t len;
    char *text = jsonarena_dumps(patch, JSON_COMPACT, &len);
    if (text == NULL)
        abort();
    char *b64 = util_base64_encode(text, len);
    json_t *s = json_string(b64);
    free(b64);
    free(text);
    return s;
}

/*
 * An upper bound of the number of JSON values in body[0..len), without
 * parsing: every value but a container's first follows a ',', and each
 * container adds one. Stops counting past limit.
 */
static size_t count_values(const char *body, size_t len, size_t limit)
{
    size_t n = 1;
    int in_string = 0;
    for (size_t i = 0; i < len && n <= limit; i++) {
        char c = body[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == ',' || c == '{' || c == '[') {
            n++;
        }
    }
    return n;
}

/* What is wrong with the AdmissionReview envelope, or NULL when it is usable. */
static const char *envelope_problem(const json_t *review)
{
    if (!json_is_object(review))
        return "body is not a JSON object";
    if (!string_is(review, "apiVersion", "admission.k8s.io/v1"))
        return "apiVersion must be admission.k8s.io/v1";
    if (!string_is(review, "kind", "AdmissionReview"))
        return "kind must be AdmissionReview";
    const json_t *request = json_object_get(review, "request");
    if (!json_is_object(request))
        return "request must be an object";
    if (json_string_value(json_object_get(request, "uid")) == NULL)
        return "request.uid must be a string";
    return NULL;
}

/* The AdmissionReview in body[0..len) (new), its envelope checked, or NULL with err. */
static json_t *parse_review(const char *body, size_t len, struct error *err)
{
    json_error_t jerr;
    if (count_values(body, len, ADMISSION_MAX_JSON_VALUES) > ADMISSION_MAX_JSON_VALUES) {
        error_setf(err, "body holds more than %d JSON values", ADMISSION_MAX_JSON_VALUES);
        return NULL;
    }
    /* Duplicate keys are refused: we must not read a different object than the apiserver wrote. */
    json_t *review = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (review == NULL) {
        error_setf(err, "body is not JSON: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
        util_one_line(err->message); /* one line of valid UTF-8, whatever the parser quoted from the body */
        return NULL;
    }
    const char *problem = envelope_problem(review);
    if (problem != NULL) {
        error_setf(err, "%s", problem);
        json_decref(review);
        return NULL;
    }
    return review;
}

/* Which decision a request needs. */
enum target { TARGET_NONE, TARGET_RAYCLUSTER, TARGET_RAYJOB, TARGET_RAYSERVICE, TARGET_POD, TARGET_QUEUE, TARGET_HYPERNODE };

/* The decision request (borrowed) needs (TARGET_NONE: allowed as it is); sets info's kind and operation. */
static enum target classify(const json_t *request, struct admission_info *info)
{
    const json_t *kind = json_object_get(request, "kind");
    const char *op = json_string_value(json_object_get(request, "operation"));
    const char *sub = json_string_value(json_object_get(request, "subResource"));
    int whole = sub == NULL || sub[0] == '\0'; /* status and other subresources are not ours */
    int create = op != NULL && strcmp(op, "CREATE") == 0;
    int update = op != NULL && strcmp(op, "UPDATE") == 0;
    int is_kuberay =
        string_is(kind, "group", "ray.io") && (string_is(kind, "version", "v1") || string_is(kind, "version", "v1alpha1"));
    int is_legacy = string_is(kind, "group", LEGACY_GROUP) && string_is(kind, "version", "v1");
    int is_raycluster = (is_kuberay || is_legacy) && string_is(kind, "kind", "RayCluster");
    int is_rayjob = string_is(kind, "group", "ray.io") && string_is(kind, "kind", "RayJob") && string_is(kind, "version", "v1");
    int is_rayservice = is_kuberay && string_is(kind, "kind", "RayService");
    int is_pod = string_is(kind, "group", "") && string_is(kind, "version", "v1") && string_is(kind, "kind", "Pod");
    int is_queue = string_is(kind, "group", "scheduling.volcano.sh") && string_is(kind, "version", "v1beta1") &&
                   string_is(kind, "kind", "Queue");
    int is_hypernode = string_is(kind, "group", "topology.volcano.sh") && string_is(kind, "version", "v1alpha1") &&
                       string_is(kind, "kind", "HyperNode");
    info->operation = operation_name(op);
    info->kind = is_raycluster   ? "RayCluster"
                 : is_rayjob     ? "RayJob"
                 : is_rayservice ? "RayService"
                 : is_pod        ? "Pod"
                 : is_queue      ? "Queue"
                 : is_hypernode  ? "HyperNode"
                                 : "other";

    if (whole && (is_raycluster || is_rayjob || is_rayservice) && (create || update))
        return is_raycluster ? TARGET_RAYCLUSTER : is_rayjob ? TARGET_RAYJOB : TARGET_RAYSERVICE;
    if (whole && is_pod && create)
        return TARGET_POD;
    if (whole && is_queue)
        return TARGET_QUEUE;
    if (whole && is_hypernode && (create || update))
        return TARGET_HYPERNODE;
    return TARGET_NONE;
}

/* The AdmissionReview answering uid (new): denied with merr's message, or allowed with result's patch; sets info. */
static json_t *answer(const char *uid, int denied, const struct mutate_result *result, const struct error *merr,
                      struct admission_info *info)
{
    json_t *resp = json_pack("{s:s, s:b}", "uid", uid, "allowed", !denied);
    if (denied) {
        json_object_set_new(resp, "status", json_pack("{s:i, s:s}", "code", 400, "message", merr->message));
        info->result = "denied";
        info->denial = *merr;
    } else if (result->patch != NULL) {
        json_object_set_new(resp, "patchType", json_string("JSONPatch"));
        json_object_set_new(resp, "patch", encode_patch(result->patch));
        info->result = "patched";
    } else {
        info->result = "allowed";
    }
    if (result->warnings != NULL)
        json_object_set(resp, "warnings", result->warnings);
    json_t *review = json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "response", resp);
    if (review == NULL)
        abort();
    return review;
}

/*
 * The topology request of a queued Ray object (borrowed; unqueued ones are not
 * ours): 1 when it is invalid (merr names the field), else 0. An UPDATE of an
 * object whose old version was invalid already is allowed with a warning:
 * KubeRay's and the autoscaler's updates of a cluster created before this check
 * must go on.
 */
static int decide_topology(const json_t *request, const json_t *object, struct mutate_result *result, struct error *merr)
{
    const json_t *labels = json_object_get(json_object_get(object, "metadata"), "labels");
    const char *queue = json_string_value(json_object_get(labels, NAMES_LABEL_QUEUE));
    const json_t *old = string_is(request, "operation", "UPDATE") ? json_object_get(request, "oldObject") : NULL;
    struct topo_request r;
    struct error old_err;
    int rc = 0;

    if (queue == NULL || queue[0] == '\0')
        return 0;
    topology_request_init(&r);
    if (topology_request_parse(object, &r, merr) != 0) {
        rc = 1;
        if (json_is_object(old) && topology_request_parse(old, &r, &old_err) != 0) {
            if (result->warnings == NULL)
                result->warnings = json_array();
            char *text = util_strdupf("%s (allowed: the object was so before this update)", merr->message);
            json_array_append_new(result->warnings, json_string(text));
            free(text);
            rc = 0;
        }
    }
    topology_request_finish(&r);
    return rc;
}

/* heldsuspend_ops() on a RayCluster (request and object borrowed), appended to result's patch. */
static void hold(const json_t *request, const json_t *object, enum heldsuspend_mode mode, struct mutate_result *result)
{
    json_t *ops = result->patch != NULL ? result->patch : json_array();
    int n = heldsuspend_ops(object, string_is(request, "operation", "UPDATE"), mode, ops);
    if (result->patch == NULL && n > 0)
        result->patch = ops;
    else if (result->patch == NULL)
        json_decref(ops);
}

/*
 * The decision on a Ray object or Pod (borrowed request): the queue tree's
 * leaf check, the mutation, then the topology request. Returns 1 when denied
 * (merr says why), 0.
 */
static int decide_object(enum target target, const json_t *request, const json_t *object, const struct queuecheck_set *queues,
                         const struct mutate_options *opts, struct mutate_result *result, struct admission_info *info,
                         struct error *merr)
{
    if (target != TARGET_POD) {
        const json_t *old = string_is(request, "operation", "UPDATE") ? json_object_get(request, "oldObject") : NULL;
        enum queuecheck_verdict v = queuecheck_gang(queues, object, old, merr);
        info->tree_unknown = v == QUEUECHECK_UNKNOWN;
        if (v == QUEUECHECK_DENIED)
            return 1;
    }
    const char *ns = json_string_value(json_object_get(request, "namespace"));
    int decided = target == TARGET_RAYCLUSTER ? mutate_raycluster(object, opts, result, merr)
                  : target == TARGET_RAYJOB   ? rayjob_mutate(object, opts, result, merr)
                  : target == TARGET_POD      ? mutate_pod_ns(object, ns, opts, result, merr)
                                              : 0; /* a RayService: KubeRay copies its labels to its RayClusters, mutated then */
    if (decided != 0)
        return 1;
    if (target == TARGET_RAYCLUSTER && opts != NULL && opts->hold_gangs != HELDSUSPEND_OFF && !legacy_is_raycluster(object))
        hold(request, object, opts->hold_gangs, result);
    return target != TARGET_POD && decide_topology(request, object, result, merr);
}

/* A Queue (request borrowed): the tree's validation; returns 1 when denied (merr says why), else 0. */
static int decide_queue(const json_t *request, const struct queuecheck_set *queues, struct mutate_result *result,
                        struct admission_info *info, struct error *merr)
{
    const json_t *object = json_object_get(request, "object"), *old = json_object_get(request, "oldObject");
    enum queuecheck_verdict v =
        queuecheck_queue(queues, info->operation, json_string_value(json_object_get(request, "name")),
                         json_is_object(object) ? object : NULL, json_is_object(old) ? old : NULL, &result->warnings, merr);
    info->tree_unknown = v == QUEUECHECK_UNKNOWN;
    return v == QUEUECHECK_DENIED;
}

/* A manager's decision (dispatchsuspend.h) for a ray.io RayCluster or RayJob; others are allowed as they are. */
static int decide_dispatch(enum target target, const json_t *request, const json_t *object, const struct queuecheck_set *queues,
                           struct mutate_result *result, struct error *merr)
{
    if ((target != TARGET_RAYCLUSTER && target != TARGET_RAYJOB) || !string_is(json_object_get(request, "kind"), "group", "ray.io"))
        return 0;
    return dispatchsuspend_decide(request, object, target == TARGET_RAYJOB, queues, result, merr);
}

/* admission_handle(), or with dispatch set admission_respond_dispatch()'s decision. */
static int handle(const char *body, size_t len, const struct queuecheck_set *queues, const struct mutate_options *opts,
                  int dispatch, json_t **response, struct admission_info *info, struct error *err)
{
    struct mutate_result result;
    struct error merr;
    int denied = 0, rc = -1;

    *response = NULL;
    info->kind = "other";
    info->operation = "unknown";
    info->result = "error";
    info->tree_unknown = 0;
    json_t *review = parse_review(body, len, err);
    if (review == NULL)
        return -1;
    mutate_result_init(&result);
    json_t *request = json_object_get(review, "request");
    enum target target = classify(request, info);
    if (dispatch && target != TARGET_NONE) {
        json_t *object = json_object_get(request, "object");
        if (!json_is_object(object) && target != TARGET_QUEUE) {
            error_setf(err, "request.object must be an object");
            goto out;
        }
        denied = decide_dispatch(target, request, object, queues != NULL ? queues : &unknown_queues, &result, &merr);
    } else if (target == TARGET_QUEUE) {
        denied = decide_queue(request, queues != NULL ? queues : &unknown_queues, &result, info, &merr);
    } else if (target == TARGET_HYPERNODE) {
        denied = hypercheck_validate(json_object_get(request, "object"), &merr) != 0; /* the gate's parser's verdict, now */
    } else if (target != TARGET_NONE) {
        json_t *object = json_object_get(request, "object");
        if (!json_is_object(object)) {
            error_setf(err, "request.object must be an object");
            goto out;
        }
        denied = decide_object(target, request, object, queues != NULL ? queues : &unknown_queues, opts, &result, info, &merr);
    }
    *response = answer(json_string_value(json_object_get(request, "uid")), denied, &result, &merr, info);
    rc = 0;

out:
    mutate_result_finish(&result);
    json_decref(review);
    return rc;
}

/* response (steals) as compact text: *text new (caller frees), *text_len its length. */
static void dump_new(json_t *response, char **text, size_t *text_len)
{
    *text = jsonarena_dumps(response, JSON_COMPACT, text_len);
    json_decref(response);
    if (*text == NULL)
        abort();
}

int admission_handle(const char *body, size_t len, const struct queuecheck_set *queues, const struct mutate_options *opts,
                     json_t **response, struct admission_info *info, struct error *err)
{
    return handle(body, len, queues, opts, 0, response, info, err);
}

int admission_respond_dispatch(const char *body, size_t len, const struct queuecheck_set *queues, char **text, size_t *text_len,
                               struct admission_info *info, struct error *err)
{
    json_t *response = NULL;
    *text = NULL;
    if (handle(body, len, queues, NULL, 1, &response, info, err) != 0)
        return -1;
    dump_new(response, text, text_len);
    return 0;
}

/* ---- the Pod CREATE fast path: mutate_pod() on a scan, byte for byte as the jansson path answers ---- */

/* A string token usable as is in our output: no escapes (the scanner allows only ASCII without control characters). */
static int plain_string(const struct jsonscan *s, long i)
{
    return jsonscan_type(s, i) == JSONSCAN_STRING && !s->tokens[i].escaped;
}

static int nonempty(const struct jsonscan *s, long i)
{
    return jsonscan_type(s, i) == JSONSCAN_STRING && s->tokens[i].len > 0;
}

static void put_token(struct util_buf *b, const struct jsonscan *s, long i)
{
    util_buf_append(b, s->text + s->tokens[i].start, s->tokens[i].len);
}

/*
 * The text answer() would give, json_dumps()'d, for an allowed request of
 * plain uid token: patch (patch_len bytes of JSON text; none when 0) and
 * warnings (NULL: none), without building and dumping a tree.
 */
static void put_answer(struct util_buf *out, const struct jsonscan *s, long uid, const char *patch, size_t patch_len,
                       const json_t *warnings)
{
    util_buf_puts(out, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"");
    put_token(out, s, uid);
    util_buf_puts(out, "\",\"allowed\":true");
    if (patch_len > 0) {
        char *b64 = util_base64_encode(patch, patch_len);
        util_buf_puts(out, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
        util_buf_puts(out, b64);
        util_buf_puts(out, "\"");
        free(b64);
    }
    if (warnings != NULL) {
        char *w = jsonarena_dumps(warnings, JSON_COMPACT, NULL);
        util_buf_puts(out, ",\"warnings\":");
        util_buf_puts(out, w);
        free(w);
    }
    util_buf_puts(out, "}}");
}

/* Starts the next operation of a patch: "[" before the first (*sep "["), "," before the others. */
static void put_op(struct util_buf *patch, const char **sep)
{
    util_buf_puts(patch, *sep);
    *sep = ",";
}

/* patch_gate()'s operation on a scanned spec (an object): 1 when decided, 0 to decline. */
static int put_gate(const struct jsonscan *s, long spec, struct util_buf *patch, const char **sep)
{
    long gates = jsonscan_get(s, spec, "schedulingGates");
    int type = jsonscan_type(s, gates);
    if (type == 0 || type == JSONSCAN_NULL) {
        put_op(patch, sep);
        util_buf_puts(patch, "{\"op\":\"add\",\"path\":\"/spec/schedulingGates\",\"value\":[{\"name\":\"" NAMES_GATE "\"}]}");
        return 1;
    }
    if (type != JSONSCAN_ARRAY)
        return 0; /* denied: the jansson path words the message */
    int present = 0;
    long e = gates + 1;
    for (uint32_t k = 0; k < s->tokens[gates].count; k++) {
        long name = jsonscan_get(s, e, "name");
        if (jsonscan_type(s, name) == JSONSCAN_STRING && s->tokens[name].escaped)
            return 0; /* its decoded text might be our gate's name */
        present |= jsonscan_string_is(s, name, NAMES_GATE);
        e = (long)s->tokens[e].next;
    }
    if (!present) {
        put_op(patch, sep);
        util_buf_puts(patch, "{\"op\":\"add\",\"path\":\"/spec/schedulingGates/-\",\"value\":{\"name\":\"" NAMES_GATE "\"}}");
    }
    return 1;
}

/*
 * patch_group_annotation()'s operation on a scanned pod (meta: its metadata,
 * cluster: its plain cluster label). Returns the token of the group the pod
 * has (any type), or -1 when it gets ray-<cluster>-pg.
 */
static long put_group_annotation(const struct jsonscan *s, long meta, long cluster, struct util_buf *patch, const char **sep)
{
    long annotations = jsonscan_get(s, meta, "annotations");
    long have = jsonscan_get(s, annotations, NAMES_ANNOTATION_GROUP);
    if (have >= 0)
        return have;
    int whole = jsonscan_type(s, annotations) != JSONSCAN_OBJECT; /* absent or no map: added whole */
    put_op(patch, sep);
    util_buf_puts(patch, whole ? "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"" NAMES_ANNOTATION_GROUP
                                 "\":\"" NAMES_PODGROUP_PREFIX
                               : "{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                                 "scheduling.k8s.io~1group-name\",\"value\":\"" NAMES_PODGROUP_PREFIX);
    put_token(patch, s, cluster);
    util_buf_puts(patch, whole ? NAMES_PODGROUP_SUFFIX "\"}}" : NAMES_PODGROUP_SUFFIX "\"}");
    return -1;
}

/*
 * patch_scheduling_group()'s operation on a scanned spec, for the pod's group:
 * the token group (-1: ray-<cluster>-pg of the plain label cluster, at most
 * 300 bytes). 1 when decided, 0 to decline.
 */
static int put_scheduling_group(const struct jsonscan *s, long spec, long group, long cluster, struct util_buf *patch,
                                const char **sep)
{
    long have = jsonscan_get(s, spec, "schedulingGroup");
    if (have >= 0 && jsonscan_type(s, have) != JSONSCAN_NULL)
        return 1;
    char name[320];
    size_t len;
    if (group >= 0) {
        if (jsonscan_type(s, group) != JSONSCAN_STRING)
            return 1; /* no name */
        if (s->tokens[group].escaped)
            return 0; /* its decoded text is the name: jansson's */
        len = s->tokens[group].len;
        if (len >= sizeof(name))
            return 1; /* longer than a DNS subdomain */
        memcpy(name, s->text + s->tokens[group].start, len);
    } else {
        util_format(name, sizeof(name), NAMES_PODGROUP_PREFIX "%.*s" NAMES_PODGROUP_SUFFIX, (int)s->tokens[cluster].len,
                    s->text + s->tokens[cluster].start);
        len = strlen(name); /* the label is plain text of at most 300 bytes: the whole name fits */
    }
    if (!names_dns_subdomain(name, len))
        return 1;
    put_op(patch, sep);
    util_buf_puts(patch, "{\"op\":\"add\",\"path\":\"/spec/schedulingGroup\",\"value\":{\"podGroupName\":\"");
    util_buf_append(patch, name, len);
    util_buf_puts(patch, "\"}}");
    return 1;
}

/*
 * mutate_pod_ns()'s held check on a scan (request: the review's request,
 * cluster: the plain cluster label): 1 the pod's RayCluster is an admitted
 * held one (no gate), 0 not, -1 declined (a namespace to decode).
 */
static int scanned_held(const struct jsonscan *s, long request, long meta, long cluster, const struct mutate_options *opts)
{
    if (opts == NULL || opts->held == NULL)
        return 0;
    long ns = jsonscan_get(s, request, "namespace");
    if (jsonscan_type(s, ns) != JSONSCAN_STRING)
        ns = jsonscan_get(s, meta, "namespace");
    if (jsonscan_type(s, ns) == JSONSCAN_STRING && !plain_string(s, ns))
        return -1;
    const char *nstext = jsonscan_type(s, ns) == JSONSCAN_STRING ? s->text + s->tokens[ns].start : "";
    size_t nslen = jsonscan_type(s, ns) == JSONSCAN_STRING ? s->tokens[ns].len : 0;
    return heldset_admitted(opts->held, nstext, nslen, s->text + s->tokens[cluster].start, s->tokens[cluster].len);
}

/* 1: decided (*patch set to the operations' text, or left NULL for none); 0: declined. opts may be NULL. */
static int pod_patch(const struct jsonscan *s, long request, long object, const struct mutate_options *opts, struct util_buf *patch)
{
    long meta = jsonscan_get(s, object, "metadata");
    long labels = jsonscan_get(s, meta, "labels");
    long cluster = jsonscan_get(s, labels, NAMES_LABEL_CLUSTER);
    long queue = jsonscan_get(s, labels, NAMES_LABEL_QUEUE);
    long spec = jsonscan_get(s, object, "spec");
    if (!nonempty(s, cluster) && jsonscan_get(s, labels, LEGACY_LABEL_CLUSTER) >= 0)
        return 0; /* the legacy operator's pod: mutate_pod reads its label */
    if (!nonempty(s, cluster) || !nonempty(s, queue) || jsonscan_type(s, spec) != JSONSCAN_OBJECT)
        return 1;
    if (nonempty(s, jsonscan_get(s, spec, "nodeName")))
        return 1;
    long scheduler = jsonscan_get(s, spec, "schedulerName");
    if (jsonscan_type(s, scheduler) == JSONSCAN_STRING) {
        if (!plain_string(s, scheduler))
            return 0;
        if (s->tokens[scheduler].len > 0 && !jsonscan_string_is(s, scheduler, "default-scheduler"))
            return 1;
    }
    /* The group name is the cluster label's text: only plain text is copied (mutate_pod cuts at 319 bytes). */
    if (!plain_string(s, cluster) || s->tokens[cluster].len > 300)
        return 0;

    /* mutate_pod_is_member(): an escaped mark's decoded text is jansson's to compare. */
    long mark = jsonscan_get(s, jsonscan_get(s, meta, "annotations"), NAMES_ANNOTATION_GANG_MEMBER);
    int marked = opts != NULL && (opts->native_gang || opts->held != NULL);
    if (marked && jsonscan_type(s, mark) == JSONSCAN_STRING && s->tokens[mark].escaped)
        return 0;
    int member = jsonscan_string_is(s, mark, "true");
    int native = opts != NULL && opts->native_gang && member;

    /* Only a member is born ungated: an autoscaler's tail is weighed by the gate (heldset.h). */
    int held = member ? scanned_held(s, request, meta, cluster, opts) : 0;
    if (held < 0)
        return 0;
    const char *sep = "[";
    if (!held && !put_gate(s, spec, patch, &sep))
        return 0;
    long group = put_group_annotation(s, meta, cluster, patch, &sep);
    if (native && !put_scheduling_group(s, spec, group, cluster, patch, &sep))
        return 0;
    if (sep[0] == ',')
        util_buf_puts(patch, "]");
    return 1;
}

/* The request of a scanned AdmissionReview v1 whose uid is plain text (its index in s, *uid set), else -1. */
static long scanned_request(const struct jsonscan *s, long *uid)
{
    long request = jsonscan_get(s, 0, "request");
    *uid = jsonscan_get(s, request, "uid");
    if (!jsonscan_string_is(s, jsonscan_get(s, 0, "apiVersion"), "admission.k8s.io/v1") ||
        !jsonscan_string_is(s, jsonscan_get(s, 0, "kind"), "AdmissionReview") || !plain_string(s, *uid))
        return -1;
    return request;
}

/* Whether the scanned request asks about a whole object (no subresource) of kind group/one of versions/kind. */
static int scanned_kind_is(const struct jsonscan *s, long request, const char *group, const char *const *versions, const char *kind)
{
    long k = jsonscan_get(s, request, "kind");
    long sub = jsonscan_get(s, request, "subResource");
    if (jsonscan_type(s, sub) == JSONSCAN_STRING && s->tokens[sub].len > 0)
        return 0;
    if (!jsonscan_string_is(s, jsonscan_get(s, k, "group"), group) || !jsonscan_string_is(s, jsonscan_get(s, k, "kind"), kind))
        return 0;
    for (long v = jsonscan_get(s, k, "version"); *versions != NULL; versions++)
        if (jsonscan_string_is(s, v, *versions))
            return 1;
    return 0;
}

/* The Pod CREATE fast path on a scan: 1 when answered (*text set), 0 when declined. */
static int respond_pod_scanned(const struct jsonscan *s, const struct mutate_options *opts, char **text, size_t *text_len,
                               struct admission_info *info)
{
    static const char *const v1[] = {"v1", NULL};
    struct util_buf patch = {0}, out = {0};
    long uid, request = scanned_request(s, &uid);
    long object = jsonscan_get(s, request, "object");
    if (request < 0 || !scanned_kind_is(s, request, "", v1, "Pod") ||
        !jsonscan_string_is(s, jsonscan_get(s, request, "operation"), "CREATE") || jsonscan_type(s, object) != JSONSCAN_OBJECT)
        return 0;
    if (!pod_patch(s, request, object, opts, &patch)) {
        util_buf_finish(&patch);
        return 0;
    }

    put_answer(&out, s, uid, patch.data, patch.len, NULL);
    *text_len = out.len;
    *text = util_buf_take(&out);
    info->kind = "Pod";
    info->operation = "CREATE";
    info->tree_unknown = 0;
    info->result = patch.len > 0 ? "patched" : "allowed";
    util_buf_finish(&patch);
    return 1;
}

int admission_respond_pod_fast(const char *body, size_t len, const struct mutate_options *opts, char **text, size_t *text_len,
                               struct admission_info *info)
{
    struct jsonscan s;
    jsonscan_init(&s);
    int handled = jsonscan_parse(&s, body, len) == 0 && respond_pod_scanned(&s, opts, text, text_len, info);
    jsonscan_finish(&s);
    return handled;
}

/* ---- the RayCluster fast path: the jansson path's decision on a tree built from the scan, without what it never reads ---- */

enum shape {
    SHAPE_CLUSTER = 1,
    SHAPE_METADATA,
    SHAPE_SPEC,
    SHAPE_GROUPS,
    SHAPE_GROUP,
    SHAPE_TEMPLATE,
    SHAPE_POD_SPEC,
    SHAPE_CONTAINERS,
    SHAPE_CONTAINER
};

static int key_is(const struct jsonscan *s, long key, const char *a, const char *b)
{
    return jsonscan_string_is(s, key, a) || (b != NULL && jsonscan_string_is(s, key, b));
}

/*
 * What the RayCluster decision (queuecheck_gang, submitter_cluster_gang,
 * mutate_raycluster, topology_request_parse) reads of a RayCluster: everything but
 * status, metadata.managedFields, each group's rayStartParams and, in the
 * head's and workers' pod templates' specs, all but containers' and
 * initContainers' name, resources and restartPolicy, overhead,
 * priorityClassName and resourceClaims (the devices, mutate_options.dra). The pod specs' rest (env, volumes, probes, images...) is
 * most of a RayCluster's JSON. An object where an array is expected, or the
 * other way round, is built whole.
 */
static int cluster_shape(int shape, const struct jsonscan *s, long key)
{
    int element = key < 0;
    if (element != (shape == SHAPE_GROUPS || shape == SHAPE_CONTAINERS))
        return JSONSCAN_WHOLE;
    switch (shape) {
    case SHAPE_CLUSTER:
        return key_is(s, key, "metadata", NULL) ? SHAPE_METADATA
               : key_is(s, key, "spec", NULL)   ? SHAPE_SPEC
               : key_is(s, key, "status", NULL) ? JSONSCAN_DROP
                                                : JSONSCAN_WHOLE;
    case SHAPE_METADATA:
        return key_is(s, key, "managedFields", NULL) ? JSONSCAN_DROP : JSONSCAN_WHOLE;
    case SHAPE_SPEC:
        return key_is(s, key, "headGroupSpec", NULL)      ? SHAPE_GROUP
               : key_is(s, key, "workerGroupSpecs", NULL) ? SHAPE_GROUPS
                                                          : JSONSCAN_WHOLE;
    case SHAPE_GROUPS:
        return SHAPE_GROUP;
    case SHAPE_GROUP:
        return key_is(s, key, "template", NULL)         ? SHAPE_TEMPLATE
               : key_is(s, key, "rayStartParams", NULL) ? JSONSCAN_DROP
                                                        : JSONSCAN_WHOLE;
    case SHAPE_TEMPLATE:
        return key_is(s, key, "spec", NULL) ? SHAPE_POD_SPEC : JSONSCAN_WHOLE;
    case SHAPE_POD_SPEC:
        return key_is(s, key, "containers", "initContainers")                                              ? SHAPE_CONTAINERS
               : key_is(s, key, "overhead", "priorityClassName") || key_is(s, key, "resourceClaims", NULL) ? JSONSCAN_WHOLE
                                                                                                           : JSONSCAN_DROP;
    case SHAPE_CONTAINERS:
        return SHAPE_CONTAINER;
    default: /* SHAPE_CONTAINER */
        return key_is(s, key, "name", "resources") || key_is(s, key, "restartPolicy", NULL) ? JSONSCAN_WHOLE : JSONSCAN_DROP;
    }
}

/*
 * The RayCluster CREATE or UPDATE fast path on a scan: 1 when answered (*text
 * set), 0 when declined. It answers only what it allows: a denial is worded by
 * the jansson path.
 */
static int respond_raycluster_scanned(const struct jsonscan *s, const struct queuecheck_set *queues,
                                      const struct mutate_options *opts, char **text, size_t *text_len, struct admission_info *info)
{
    static const char *const versions[] = {"v1", "v1alpha1", NULL};
    long uid, request = scanned_request(s, &uid);
    long op = jsonscan_get(s, request, "operation"), object = jsonscan_get(s, request, "object");
    int update = jsonscan_string_is(s, op, "UPDATE");
    /* parse_review's bound: the scan's tokens bound the values, and each container adds at most one to count_values. */
    if (2 * s->len > ADMISSION_MAX_JSON_VALUES || request < 0 || !scanned_kind_is(s, request, "ray.io", versions, "RayCluster") ||
        !(update || jsonscan_string_is(s, op, "CREATE")) || jsonscan_type(s, object) != JSONSCAN_OBJECT)
        return 0;

    struct mutate_result result;
    struct error merr;
    json_t *req = json_pack("{s:s}", "operation", update ? "UPDATE" : "CREATE");
    long old = jsonscan_get(s, request, "oldObject");
    if (update && old >= 0)
        json_object_set_new(req, "oldObject", jsonscan_value(s, old, SHAPE_CLUSTER, cluster_shape));
    json_t *obj = jsonscan_value(s, object, SHAPE_CLUSTER, cluster_shape);
    mutate_result_init(&result);
    info->kind = "RayCluster";
    info->operation = update ? "UPDATE" : "CREATE";
    int handled =
        decide_object(TARGET_RAYCLUSTER, req, obj, queues != NULL ? queues : &unknown_queues, opts, &result, info, &merr) == 0;
    if (handled) {
        struct util_buf out = {0};
        size_t patch_len = 0;
        char *patch = result.patch != NULL ? jsonarena_dumps(result.patch, JSON_COMPACT, &patch_len) : NULL;
        put_answer(&out, s, uid, patch, patch_len, result.warnings);
        free(patch);
        *text_len = out.len;
        *text = util_buf_take(&out);
        info->result = result.patch != NULL ? "patched" : "allowed";
    }
    mutate_result_finish(&result);
    json_decref(obj);
    json_decref(req);
    return handled;
}

int admission_respond_raycluster_fast(const char *body, size_t len, const struct queuecheck_set *queues,
                                      const struct mutate_options *opts, char **text, size_t *text_len, struct admission_info *info)
{
    struct jsonscan s;
    jsonscan_init(&s);
    int handled = jsonscan_parse(&s, body, len) == 0 && respond_raycluster_scanned(&s, queues, opts, text, text_len, info);
    jsonscan_finish(&s);
    return handled;
}

int admission_respond(const char *body, size_t len, const struct queuecheck_set *queues, const struct mutate_options *opts,
                      char **text, size_t *text_len, struct admission_info *info, struct error *err)
{
    json_t *response = NULL;
    struct jsonscan s;
    *text = NULL;
    /* One scan for both fast paths; what they decline, jansson parses and decides. */
    jsonscan_init(&s);
    int handled = jsonscan_parse(&s, body, len) == 0 && (respond_pod_scanned(&s, opts, text, text_len, info) ||
                                                         respond_raycluster_scanned(&s, queues, opts, text, text_len, info));
    jsonscan_finish(&s);
    if (handled)
        return 0;
    if (admission_handle(body, len, queues, opts, &response, info, err) != 0)
        return -1;
    dump_new(response, text, text_len);
    return 0;
}
