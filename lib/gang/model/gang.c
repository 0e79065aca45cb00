#include "gang.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define PATH_MAX_LEN 192

void gang_spec_init(struct gang_spec *spec)
{
    spec->min_member = 0;
    spec->native_count = 0;
    resources_init(&spec->min_resources);
    spec->groups = NULL;
    spec->ngroups = 0;
}

void gang_spec_finish(struct gang_spec *spec)
{
    if (spec == NULL)
        return;
    resources_finish(&spec->min_resources);
    for (size_t i = 0; i < spec->ngroups; i++)
        free(spec->groups[i].name);
    free(spec->groups);
    spec->groups = NULL;
    spec->ngroups = 0;
    spec->min_member = 0;
    spec->native_count = 0;
}

/*
 * buf = path "." key, as util_format(buf, size, "%s.%s", path, key) writes it:
 * a field path for messages, built for every field read, without vsnprintf's
 * cost when it fits (always: the paths here are short).
 */
static void join(char *buf, size_t size, const char *path, const char *key)
{
    size_t a = strlen(path), b = strlen(key);
    if (a + 1 + b >= size) {
        util_format(buf, size, "%s.%s", path, key);
        return;
    }
    memcpy(buf, path, a);
    buf[a] = '.';
    memcpy(buf + a + 1, key, b + 1);
}

/* An optional member that, when present and not null, must be an object. */
static int optional_object(const json_t *parent, const char *key, const char *path, const json_t **out, struct error *err)
{
    const json_t *v = json_object_get(parent, key);
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_object(v)) {
        char p[PATH_MAX_LEN];
        join(p, sizeof(p), path, key);
        error_setf(err, "%s: must be an object", p);
        return -1;
    }
    *out = v;
    return 0;
}

/* What the apiserver defaults a container's requests to: requests, else limits, per resource. */
static int container_resources(const json_t *resources, const char *path, struct resources *out, struct error *err)
{
    struct resources limits;
    char p[PATH_MAX_LEN];
    int rc = -1;

    resources_init(&limits);
    resources_finish(out);
    if (resources == NULL || json_is_null(resources))
        return 0;
    if (!json_is_object(resources)) {
        error_setf(err, "%s: must be an object", path);
        return -1;
    }
    join(p, sizeof(p), path, "requests");
    if (resources_parse(out, json_object_get(resources, "requests"), p, RESOURCES_NONNEGATIVE, err) != 0)
        goto fail_parse;
    join(p, sizeof(p), path, "limits");
    if (resources_parse(&limits, json_object_get(resources, "limits"), p, RESOURCES_NONNEGATIVE, err) != 0)
        goto fail_parse;
    for (size_t i = 0; i < limits.len; i++) {
        if (resources_get(out, limits.items[i].name) == NULL)
            resources_set(out, limits.items[i].name, &limits.items[i].quantity);
    }
    rc = 0;
    goto out;

fail_parse:
    resources_finish(out);
out:
    resources_finish(&limits);
    return rc;
}

static int container_request(const json_t *container, const char *path, struct resources *out, struct error *err)
{
    char p[PATH_MAX_LEN];
    if (!json_is_object(container)) {
        error_setf(err, "%s: must be an object", path);
        return -1;
    }
    join(p, sizeof(p), path, "resources");
    return container_resources(json_object_get(container, "resources"), p, out, err);
}

static int optional_array(const json_t *parent, const char *key, const char *path, const json_t **out, struct error *err)
{
    const json_t *v = json_object_get(parent, key);
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_array(v)) {
        char p[PATH_MAX_LEN];
        join(p, sizeof(p), path, key);
        error_setf(err, "%s: must be an array", p);
        return -1;
    }
    *out = v;
    return 0;
}

/* kube-scheduler's computePodResourceRequest; extra (may be NULL) is one more regular container. */
static int pod_request(const json_t *spec, const char *path, const struct resources *extra, struct resources *out,
                       struct error *err)
{
    struct resources reqs, init_reqs, sidecars, c, tmp, overhead;
    struct error rerr;
    const json_t *containers, *init_containers, *v;
    char p[PATH_MAX_LEN];
    int rc = -1;

    resources_init(&reqs);
    resources_init(&init_reqs);
    resources_init(&sidecars);
    resources_init(&c);
    resources_init(&tmp);
    resources_init(&overhead);

    if (!json_is_object(spec)) {
        error_setf(err, "%s: must be an object", path);
        goto out;
    }
    if (optional_array(spec, "containers", path, &containers, err) != 0 ||
        optional_array(spec, "initContainers", path, &init_containers, err) != 0)
        goto out;

    for (size_t i = 0; i < json_array_size(containers); i++) {
        util_format(p, sizeof(p), "%s.containers[%zu]", path, i);
        if (container_request(json_array_get(containers, i), p, &c, err) != 0)
            goto out;
        if (resources_add_scaled(&reqs, &c, 1, &rerr) != 0)
            goto fail_sum;
    }
    if (extra != NULL && resources_add_scaled(&reqs, extra, 1, &rerr) != 0)
        goto fail_sum;

    for (size_t i = 0; i < json_array_size(init_containers); i++) {
        const json_t *ic = json_array_get(init_containers, i);
        util_format(p, sizeof(p), "%s.initContainers[%zu]", path, i);
        if (container_request(ic, p, &c, err) != 0)
            goto out;
        v = json_object_get(ic, "restartPolicy");
        if (json_is_string(v) && strcmp(json_string_value(v), "Always") == 0) {
            /* A sidecar runs beside everything after it, and beside the app containers. */
            if (resources_add_scaled(&reqs, &c, 1, &rerr) != 0 || resources_add_scaled(&sidecars, &c, 1, &rerr) != 0)
                goto fail_sum;
            resources_copy(&tmp, &sidecars);
        } else {
            resources_copy(&tmp, &c);
            if (resources_add_scaled(&tmp, &sidecars, 1, &rerr) != 0)
                goto fail_sum;
        }
        resources_max(&init_reqs, &tmp);
    }
    resources_max(&reqs, &init_reqs);

    join(p, sizeof(p), path, "overhead");
    if (resources_parse(&overhead, json_object_get(spec, "overhead"), p, RESOURCES_NONNEGATIVE, err) != 0)
        goto out;
    if (resources_add_scaled(&reqs, &overhead, 1, &rerr) != 0)
        goto fail_sum;

    resources_copy(out, &reqs);
    rc = 0;
    goto out;

fail_sum:
    error_setf(err, "%s: pod request of %s", path, rerr.message);
out:
    resources_finish(&overhead);
    resources_finish(&tmp);
    resources_finish(&c);
    resources_finish(&sidecars);
    resources_finish(&init_reqs);
    resources_finish(&reqs);
    return rc;
}

int gang_pod_request(const json_t *pod_spec, struct resources *out, struct error *err)
{
    return pod_request(pod_spec, "spec", NULL, out, err);
}

/* A non-negative int32 count: absent or null gives def. */
static int read_count(const json_t *obj, const char *key, const char *path, int64_t def, int64_t *out, struct error *err)
{
    const json_t *v = json_object_get(obj, key);
    char p[PATH_MAX_LEN];
    join(p, sizeof(p), path, key);
    if (v == NULL || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_integer(v)) {
        error_setf(err, "%s: must be an integer", p);
        return -1;
    }
    json_int_t n = json_integer_value(v);
    if (n < 0) {
        error_setf(err, "%s: must not be negative", p);
        return -1;
    }
    if (n > INT32_MAX) {
        error_setf(err, "%s: must be at most 2147483647", p);
        return -1;
    }
    *out = (int64_t)n;
    return 0;
}

/* A group's template.spec, with its path. */
static int template_spec(const json_t *group, const char *path, const json_t **spec, char *spec_path, size_t size,
                         struct error *err)
{
    const json_t *template;
    char p[PATH_MAX_LEN];
    join(p, sizeof(p), path, "template");
    template = json_object_get(group, "template");
    if (!json_is_object(template)) {
        error_setf(err, "%s: must be an object", p);
        return -1;
    }
    join(spec_path, size, p, "spec");
    *spec = json_object_get(template, "spec");
    return 0;
}

/* KubeRay's autoscaler sidecar's default requests and limits (also in gang_autoscaler_container). */
#define AUTOSCALER_CPU_MILLI 500
#define AUTOSCALER_MEMORY_MI 512

json_t *gang_autoscaler_container(const json_t *spec)
{
    if (!json_is_true(json_object_get(spec, "enableInTreeAutoscaling")))
        return NULL;
    const json_t *res = json_object_get(json_object_get(spec, "autoscalerOptions"), "resources");
    json_t *resources;
    if (json_is_object(res)) {
        resources = json_deep_copy(res);
    } else {
        char cpu[32], memory[32];
        util_format(cpu, sizeof(cpu), "%dm", AUTOSCALER_CPU_MILLI);
        util_format(memory, sizeof(memory), "%dMi", AUTOSCALER_MEMORY_MI);
        resources = json_pack("{s:{s:s,s:s},s:{s:s,s:s}}", "requests", "cpu", cpu, "memory", memory, "limits", "cpu", cpu, "memory",
                              memory);
    }
    return json_pack("{s:s,s:o}", "name", "autoscaler", "resources", resources);
}

json_t *gang_worker_init_container(void)
{
    return json_pack("{s:s,s:{s:{s:s,s:s},s:{s:s,s:s}}}", "name", "wait-gcs-ready", "resources", "requests", "cpu", "200m",
                     "memory", "256Mi", "limits", "cpu", "200m", "memory", "256Mi");
}

/* KubeRay's autoscaler sidecar in the head pod: the user's resources, else its defaults. */
static int autoscaler_resources(const json_t *spec, struct resources *out, struct error *err)
{
    const json_t *opts;
    if (optional_object(spec, "autoscalerOptions", "spec", &opts, err) != 0)
        return -1;
    const json_t *res = opts != NULL ? json_object_get(opts, "resources") : NULL;
    if (res != NULL && !json_is_null(res))
        return container_resources(res, "spec.autoscalerOptions.resources", out, err);
    struct quantity cpu = {AUTOSCALER_CPU_MILLI, QUANTITY_DECIMAL_SI},
                    memory = {(int64_t)AUTOSCALER_MEMORY_MI << 20, QUANTITY_BINARY_SI};
    resources_set(out, "cpu", &cpu);
    resources_set(out, "memory", &memory);
    return 0;
}

/* Adds pods times request to out->min_resources. */
static int add_min_resources(struct gang_spec *out, const struct resources *request, int64_t pods, struct error *err)
{
    struct error rerr;
    if (resources_add_scaled(&out->min_resources, request, pods, &rerr) == 0)
        return 0;
    error_setf(err, "minResources.%s", rerr.message);
    return -1;
}

/* The head group's pod, with KubeRay's autoscaler sidecar when autoscaling, into out->min_resources. */
static int add_head(const json_t *spec, int autoscaling, struct gang_spec *out, struct error *err)
{
    struct resources autoscaler, request;
    const json_t *head, *pod_spec;
    char spec_path[PATH_MAX_LEN];
    int rc = -1;

    resources_init(&autoscaler);
    resources_init(&request);
    head = json_object_get(spec, "headGroupSpec");
    if (!json_is_object(head)) {
        error_setf(err, "spec.headGroupSpec: must be an object");
        goto out;
    }
    if (template_spec(head, "spec.headGroupSpec", &pod_spec, spec_path, sizeof(spec_path), err) != 0)
        goto out;
    if (autoscaling && autoscaler_resources(spec, &autoscaler, err) != 0)
        goto out;
    if (pod_request(pod_spec, spec_path, autoscaling ? &autoscaler : NULL, &request, err) != 0)
        goto out;
    rc = add_min_resources(out, &request, 1, err);
out:
    resources_finish(&request);
    resources_finish(&autoscaler);
    return rc;
}

/* The replicas of a worker group as KubeRay runs it: minReplicas when autoscaling, else replicas within [min, max]. */
static int64_t effective_replicas(int autoscaling, int64_t min, int64_t max, int64_t replicas)
{
    if (autoscaling)
        return min;
    if (min > max)
        return max; /* what KubeRay does */
    if (replicas < min)
        return min;
    if (replicas > max)
        return max;
    return replicas;
}

/* Worker group i: checked (suspended or not), named in out->groups, its pods added unless suspended. */
static int add_worker_group(const json_t *group, size_t i, int autoscaling, struct gang_spec *out, int64_t *members,
                            struct error *err)
{
    struct resources request;
    const json_t *pod_spec;
    char path[PATH_MAX_LEN], spec_path[PATH_MAX_LEN];
    int64_t min, max, replicas, hosts;
    int rc = -1;

    resources_init(&request);
    util_format(path, sizeof(path), "spec.workerGroupSpecs[%zu]", i);
    if (!json_is_object(group)) {
        error_setf(err, "%s: must be an object", path);
        goto out;
    }
    /* Every group is checked, suspended or not: it can be resumed by an UPDATE we never see again. */
    if (read_count(group, "minReplicas", path, 0, &min, err) != 0 ||
        read_count(group, "maxReplicas", path, INT32_MAX, &max, err) != 0 ||
        read_count(group, "replicas", path, min, &replicas, err) != 0 || read_count(group, "numOfHosts", path, 1, &hosts, err) != 0)
        goto out;
    if (template_spec(group, path, &pod_spec, spec_path, sizeof(spec_path), err) != 0 ||
        pod_request(pod_spec, spec_path, NULL, &request, err) != 0)
        goto out;
    struct gang_group *gg = &out->groups[out->ngroups++];
    gg->name = util_strdup(json_string_value(json_object_get(group, "groupName")));
    rc = 0;
    if (json_is_true(json_object_get(group, "suspend")))
        goto out;
    int64_t pods = effective_replicas(autoscaling, min, max, replicas) * hosts; /* both <= 2^31-1: no overflow */
    gg->pods = pods;
    /* Under autoscaling KubeRay runs replicas in [min, max]: only min are counted, the rest is the tail. */
    gg->all_members = !autoscaling || max <= min;
    if (__builtin_add_overflow(*members, pods, members)) {
        error_setf(err, "%s: pod count overflows", path);
        rc = -1;
    } else {
        rc = add_min_resources(out, &request, pods, err);
    }
out:
    resources_finish(&request);
    return rc;
}

int gang_from_raycluster(const json_t *raycluster, struct gang_spec *out, struct error *err)
{
    const json_t *spec, *workers;
    int64_t members = 1;

    gang_spec_finish(out);
    spec = json_object_get(raycluster, "spec");
    if (!json_is_object(spec)) {
        error_setf(err, "spec: must be an object");
        goto fail;
    }
    int autoscaling = json_is_true(json_object_get(spec, "enableInTreeAutoscaling"));
    if (add_head(spec, autoscaling, out, err) != 0 || optional_array(spec, "workerGroupSpecs", "spec", &workers, err) != 0)
        goto fail;
    if (json_array_size(workers) > 0)
        out->groups = util_calloc(json_array_size(workers), sizeof(*out->groups));
    for (size_t i = 0; i < json_array_size(workers); i++)
        if (add_worker_group(json_array_get(workers, i), i, autoscaling, out, &members, err) != 0)
            goto fail;
    out->min_member = members;
    out->native_count = 1;
    for (size_t i = 0; i < out->ngroups; i++)
        if (out->groups[i].all_members)
            out->native_count += out->groups[i].pods; /* each <= min_member: no overflow */
    return 0;

fail:
    gang_spec_finish(out);
    return -1;
}
