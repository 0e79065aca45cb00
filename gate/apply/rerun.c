#include "rerun.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rayjob.h"
#include "util.h"

#define RAYJOBS_API "/apis/ray.io/v1"

enum rerun_outcome rerun_suspend(struct kube_client *k, const char *ns, const char *name, const char *uid, const json_t *record,
                                 const char *stamp, struct error *why)
{
    struct kube_response resp;
    kube_client_response_init(&resp);
    enum rerun_outcome out = RERUN_FAILED;
    json_t *patch = NULL;
    char *path = util_strdupf(RAYJOBS_API "/namespaces/%s/rayjobs/%s", ns, name);

    if (kube_get(k, path, &resp) != 0) {
        out = resp.status == 404 ? RERUN_NOT_POSSIBLE : RERUN_FAILED;
        error_setf(why, "get RayJob %s/%s: %s", ns, name, resp.message);
        goto done;
    }
    const char *seen = json_string_value(json_object_get(json_object_get(resp.body, "metadata"), "uid"));
    if (uid != NULL && (seen == NULL || strcmp(seen, uid) != 0)) {
        out = RERUN_NOT_POSSIBLE;
        error_setf(why, "RayJob %s/%s is another object than the one the RayCluster was made for", ns, name);
        goto done;
    }
    if (!rayjob_can_rerun(resp.body, why)) {
        out = RERUN_NOT_POSSIBLE;
        goto done;
    }
    patch = rayjob_rerun_patch(resp.body, stamp, record);
    kube_client_response_finish(&resp);
    if (kube_patch(k, path, KUBE_PATCH_MERGE, patch, &resp) != 0) {
        out = resp.status == 404 || resp.status == 409 ? RERUN_NOT_POSSIBLE : RERUN_FAILED;
        error_setf(why, "suspend RayJob %s/%s: %s", ns, name, resp.message);
        goto done;
    }
    out = RERUN_SUSPENDED;
done:
    json_decref(patch);
    kube_client_response_finish(&resp);
    free(path);
    return out;
}

long rerun_resume_all(struct kube_client *k, struct error *why)
{
    struct kube_list_options opts = {.label_selector = RAYJOB_LABEL_RERUN};
    struct kube_list_result list;
    struct kube_response resp;
    kube_client_response_init(&resp);
    long done = 0;
    size_t i;
    json_t *job;

    kube_list_result_init(&list);
    if (kube_list(k, RAYJOBS_API "/rayjobs", &opts, &list, &resp) != 0) {
        done = resp.status == 404 ? 0 : -1; /* no RayJob CRD: nothing to resume */
        if (done < 0)
            error_setf(why, "list RayJobs labelled %s: %s", RAYJOB_LABEL_RERUN, resp.message);
        goto out;
    }
    json_array_foreach(list.items, i, job)
    {
        json_t *patch = rayjob_resume_patch(job);
        if (patch == NULL)
            continue; /* KubeRay is still suspending it */
        const json_t *meta = json_object_get(job, "metadata");
        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        const char *name = json_string_value(json_object_get(meta, "name"));
        char *path = util_strdupf(RAYJOBS_API "/namespaces/%s/rayjobs/%s", ns != NULL ? ns : "", name != NULL ? name : "");
        struct kube_response pr;
        kube_client_response_init(&pr);
        if (kube_patch(k, path, KUBE_PATCH_JSON, patch, &pr) == 0) {
            log_infof("rerun: RayJob %s/%s resumed: KubeRay makes it a new RayCluster, queued like any other", ns, name);
            done++;
        } else if (pr.status != 404 && pr.status != 422) { /* 422: changed since (its test failed): the next list sees it */
            log_warnf("rerun: resume RayJob %s/%s: %s", ns, name, pr.message);
        }
        kube_client_response_finish(&pr);
        free(path);
        json_decref(patch);
    }
out:
    kube_client_response_finish(&resp);
    kube_list_result_finish(&list);
    return done;
}
