/*
 * gate/apply/rerun.c against the fake API server of fakeapi.h, which keeps one
 * RayJob as the real one would: a merge PATCH with a stale resourceVersion or
 * another uid gets 409, a JSON patch whose test fails gets 422, and a list
 * selects by the rerun label. The test plays KubeRay in between: it moves
 * the RayJob's status from Running to Suspended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "jsonpatch.h"
#include "rayjob.h"
#include "rerun.h"

#define JOB_PATH "/apis/ray.io/v1/namespaces/ns/rayjobs/job"

/* The fake's state (f->arg): {"job": the RayJob, "rv": int, "patches": int}. */
static json_t *state_new(int shutdown)
{
    json_t *job =
        json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s}},s:{s:s,s:b},s:{s:s}}", "apiVersion", "ray.io/v1", "kind", "RayJob", "metadata",
                  "name", "job", "namespace", "ns", "uid", "uid-job", "labels", "volcano.sh/queue-name", "q", "spec", "entrypoint",
                  "python x.py", "shutdownAfterJobFinishes", shutdown, "status", "jobDeploymentStatus", "Running");
    return json_pack("{s:o,s:i,s:i}", "job", job, "rv", 7, "patches", 0);
}

static json_t *job_view(json_t *st)
{
    json_t *job = json_deep_copy(json_object_get(st, "job"));
    char rv[32];
    snprintf(rv, sizeof(rv), "%lld", (long long)json_integer_value(json_object_get(st, "rv")));
    json_object_set_new(json_object_get(job, "metadata"), "resourceVersion", json_string(rv));
    return job;
}

static void bump(json_t *st, json_t *job)
{
    json_object_del(json_object_get(job, "metadata"), "resourceVersion");
    json_object_set_new(st, "job", job);
    json_object_set_new(st, "rv", json_integer(json_integer_value(json_object_get(st, "rv")) + 1));
    json_object_set_new(st, "patches", json_integer(json_integer_value(json_object_get(st, "patches")) + 1));
}

static int handler(struct fake *f, const struct fake_req *req)
{
    pthread_mutex_lock(&f->lock);
    json_t *st = f->arg;
    json_t *view = job_view(st);
    if (strcmp(req->method, "GET") == 0 && strcmp(req->target, JOB_PATH) == 0) {
        respond_json(req, 200, NULL, view);
    } else if (strcmp(req->method, "GET") == 0 && starts_with(req->target, "/apis/ray.io/v1/rayjobs?")) {
        char sel[128];
        query_param(req->target, "labelSelector", sel, sizeof(sel));
        json_t *labels = json_object_get(json_object_get(view, "metadata"), "labels");
        json_t *items = json_array();
        if (strcmp(sel, "raygate.io%2Frerun") == 0 && json_object_get(labels, RAYJOB_LABEL_RERUN) != NULL)
            json_array_append(items, view);
        json_decref(view);
        respond_json(req, 200, NULL,
                     json_pack("{s:s,s:{s:s},s:o}", "kind", "RayJobList", "metadata", "resourceVersion", "9", "items", items));
    } else if (strcmp(req->method, "PATCH") == 0 && strcmp(req->target, JOB_PATH) == 0) {
        json_t *patch = json_loadb(req->body, req->body_len, 0, NULL);
        struct error perr;
        json_t *next = NULL;
        if (strstr(req->content_type, "merge-patch") != NULL) {
            const json_t *m = json_object_get(patch, "metadata");
            const char *rv = json_string_value(json_object_get(m, "resourceVersion"));
            const char *uid = json_string_value(json_object_get(m, "uid"));
            if ((rv != NULL &&
                 strcmp(rv, json_string_value(json_object_get(json_object_get(view, "metadata"), "resourceVersion"))) != 0) ||
                (uid != NULL && strcmp(uid, "uid-job") != 0))
                respond_status(req, 409, "Conflict", "the object has been modified", NULL);
            else
                next = jsonpatch_merge_apply(view, patch);
        } else if ((next = jsonpatch_apply(view, patch, &perr)) == NULL) {
            respond_status(req, 422, "Invalid", perr.message, NULL);
        }
        if (next != NULL) {
            bump(st, next);
            respond_json(req, 200, NULL, job_view(st));
        }
        json_decref(patch);
        json_decref(view);
    } else {
        json_decref(view);
        respond_status(req, 404, "NotFound", "not found", NULL);
    }
    pthread_mutex_unlock(&f->lock);
    return 0;
}

static void set_status(struct fake *f, const char *status)
{
    pthread_mutex_lock(&f->lock);
    json_t *st = f->arg;
    json_object_set_new(json_object_get(json_object_get(st, "job"), "status"), "jobDeploymentStatus", json_string(status));
    json_object_set_new(st, "rv", json_integer(json_integer_value(json_object_get(st, "rv")) + 1));
    pthread_mutex_unlock(&f->lock);
}

static json_t *job_now(struct fake *f)
{
    pthread_mutex_lock(&f->lock);
    json_t *j = json_deep_copy(json_object_get(f->arg, "job"));
    pthread_mutex_unlock(&f->lock);
    return j;
}

static const char *label(json_t *job)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(job, "metadata"), "labels"), RAYJOB_LABEL_RERUN));
}

/* Evicted: suspended with the label and the record; KubeRay suspends it; the next list resumes it, once. */
static void test_suspend_then_resume(void **state)
{
    (void)state;
    json_t *st = state_new(1);
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client_for(f, NULL, NULL, NULL);
    struct error why = {{0}};
    json_t *record = json_pack("{s:s,s:s}", "raygate.io/requeue-count", "1", "raygate.io/requeue-at", "2024-05-01T10:01:00Z");

    assert_int_equal(rerun_suspend(k, "ns", "job", "uid-job", record, "2024-05-01T10:00:00Z", &why), RERUN_SUSPENDED);
    json_t *job = job_now(f);
    assert_true(json_is_true(json_object_get(json_object_get(job, "spec"), "suspend")));
    assert_string_equal(label(job), "2024-05-01T100000Z");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(job, "metadata"), "annotations"),
                                                          "raygate.io/requeue-at")),
                        "2024-05-01T10:01:00Z");
    json_decref(job);

    /* KubeRay has not suspended it yet: nothing is resumed. */
    assert_int_equal(rerun_resume_all(k, &why), 0);
    set_status(f, "Suspending");
    assert_int_equal(rerun_resume_all(k, &why), 0);
    set_status(f, "Suspended");
    assert_int_equal(rerun_resume_all(k, &why), 1);
    job = job_now(f);
    assert_true(json_is_false(json_object_get(json_object_get(job, "spec"), "suspend")));
    assert_null(label(job));
    json_decref(job);
    /* Done: the label is gone, nothing more to do. */
    assert_int_equal(rerun_resume_all(k, &why), 0);
    assert_int_equal(json_integer_value(json_object_get(st, "patches")), 2);

    json_decref(record);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(st);
}

/* A RayJob KubeRay would not suspend, or another object of the name: not touched. */
static void test_not_possible(void **state)
{
    (void)state;
    json_t *st = state_new(0);
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client_for(f, NULL, NULL, NULL);
    struct error why = {{0}};
    assert_int_equal(rerun_suspend(k, "ns", "job", "uid-job", NULL, "t", &why), RERUN_NOT_POSSIBLE);
    assert_string_equal(why.message, "spec.shutdownAfterJobFinishes is not true: KubeRay does not suspend such a RayJob");
    json_object_set_new(json_object_get(json_object_get(st, "job"), "spec"), "shutdownAfterJobFinishes", json_true());
    assert_int_equal(rerun_suspend(k, "ns", "job", "uid-other", NULL, "t", &why), RERUN_NOT_POSSIBLE);
    assert_non_null(strstr(why.message, "another object"));
    assert_int_equal(rerun_suspend(k, "ns", "gone", NULL, NULL, "t", &why), RERUN_NOT_POSSIBLE);
    assert_int_equal(json_integer_value(json_object_get(st, "patches")), 0);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(st);
}

/* The user resumed it before KubeRay finished: only the label goes; a re-suspension in between is left to the next list. */
static void test_user_resumed(void **state)
{
    (void)state;
    json_t *st = state_new(1);
    struct fake *f = fake_start(handler, st);
    struct kube_client *k = client_for(f, NULL, NULL, NULL);
    struct error why = {{0}};
    assert_int_equal(rerun_suspend(k, "ns", "job", NULL, NULL, "t1", &why), RERUN_SUSPENDED);
    pthread_mutex_lock(&f->lock);
    json_object_set_new(json_object_get(json_object_get(st, "job"), "spec"), "suspend", json_false());
    pthread_mutex_unlock(&f->lock);
    set_status(f, "New");
    assert_int_equal(rerun_resume_all(k, &why), 1);
    json_t *job = job_now(f);
    assert_null(label(job));
    assert_true(json_is_false(json_object_get(json_object_get(job, "spec"), "suspend")));
    json_decref(job);
    kube_client_destroy(k);
    fake_stop(f);
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suspend_then_resume),
        cmocka_unit_test(test_not_possible),
        cmocka_unit_test(test_user_resumed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
