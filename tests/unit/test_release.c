/*
 * gate/apply/release.c against the fake API server of fakeapi.h, which keeps
 * two held RayClusters as the real one would for a merge PATCH (another uid:
 * 409) and knows no third: what release_note lists from a pass's decisions
 * and what release_send writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "declare.h"
#include "fakeapi.h"
#include "jsonpatch.h"
#include "names.h"
#include "release.h"

#define PATH "/apis/ray.io/v1/namespaces/ns/rayclusters/"

/* The fake's state (f->arg): {name: RayCluster} of the RayClusters it keeps. */
static int handler(struct fake *f, const struct fake_req *req)
{
    pthread_mutex_lock(&f->lock);
    json_t *rcs = f->arg;
    json_t *rc = starts_with(req->target, PATH) ? json_object_get(rcs, req->target + strlen(PATH)) : NULL;
    json_t *patch = json_loadb(req->body, req->body_len, 0, NULL);
    const char *uid = json_string_value(json_object_get(json_object_get(patch, "metadata"), "uid"));
    if (strcmp(req->method, "PATCH") != 0 || strstr(req->content_type, "merge-patch") == NULL || rc == NULL) {
        respond_status(req, 404, "NotFound", "not found", NULL);
    } else if (uid != NULL && strcmp(uid, json_string_value(json_object_get(json_object_get(rc, "metadata"), "uid"))) != 0) {
        respond_status(req, 409, "Conflict", "Precondition failed: UID in precondition", NULL);
    } else {
        json_t *next = jsonpatch_merge_apply(rc, patch);
        json_object_set(rcs, req->target + strlen(PATH), next);
        respond_json(req, 200, NULL, next);
    }
    json_decref(patch);
    pthread_mutex_unlock(&f->lock);
    return 0;
}

static json_t *held(const char *name, const char *uid, const char *release)
{
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s},s:{s:s,s:s,s:s}},s:{s:b,s:{s:{s:{s:[{s:s}]}}}}}", "apiVersion", "ray.io/v1",
                     "kind", "RayCluster", "metadata", "name", name, "namespace", "ns", "uid", uid, "labels", NAMES_LABEL_QUEUE,
                     "q", "annotations", NAMES_ANNOTATION_HELD, "true", NAMES_ANNOTATION_HELD_RELEASE, release,
                     NAMES_ANNOTATION_MIN_MEMBER, "1", "spec", "suspend", 1, "headGroupSpec", "template", "spec", "containers",
                     "name", "h");
}

static void test_release(void **state)
{
    (void)state;
    json_t *rcs = json_pack("{s:o,s:o}", "a", held("a", "ua", NAMES_HELD_RELEASE_ON_WAIT), "b", held("b", "ub", "on-wait"));
    struct cache *c = cache_create();
    struct error err = {{0}};
    const char *names[] = {"a", "b", "gone", "kept"};
    for (size_t i = 0; i < 4; i++) {
        json_t *rc = held(names[i], names[i], i == 3 ? "" : NAMES_HELD_RELEASE_ON_WAIT);
        json_object_set_new(json_object_get(rc, "metadata"), "resourceVersion", json_string("1"));
        assert_int_equal(cache_upsert_raycluster(c, rc, &err), 0);
        json_decref(rc);
    }
    struct admit_decision d[] = {
        {.action = ADMIT_ACTION_WAIT,
         .reason = ADMIT_REASON_QUEUE_CAPACITY,
         .namespace_ = "ns",
         .cluster = "a",
         .cluster_uid = "ua"},
        /* another uid than the API's: a new RayCluster of the name, never released for the old one's wait */
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_NODES, .namespace_ = "ns", .cluster = "b", .cluster_uid = "old"},
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_NODES, .namespace_ = "ns", .cluster = "gone", .cluster_uid = "ug"},
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_NODES, .namespace_ = "ns", .cluster = "kept", .cluster_uid = "uk"},
        {.action = ADMIT_ACTION_WAIT, .reason = ADMIT_REASON_EVICTED, .namespace_ = "ns", .cluster = "a", .cluster_uid = "ua"},
    };
    struct release_list l = {0};
    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        release_note(&l, c, &d[i]);
    assert_int_equal(l.n, 3); /* a, b, gone: kept is held until admitted, a's eviction is held through */

    struct fake *f = fake_start(handler, rcs);
    struct kube_client *k = client_for(f, NULL, NULL, NULL);
    assert_int_equal(release_send(k, &l), 1);
    assert_int_equal(l.n, 0);
    json_t *a = json_object_get(rcs, "a"), *b = json_object_get(rcs, "b");
    assert_true(json_is_false(json_object_get(json_object_get(a, "spec"), "suspend")));
    const json_t *aa = json_object_get(json_object_get(a, "metadata"), "annotations");
    assert_string_equal(json_string_value(json_object_get(aa, NAMES_ANNOTATION_HELD_RELEASE)), NAMES_HELD_RELEASE_DONE);
    assert_null(json_object_get(aa, NAMES_ANNOTATION_ADMITTED)); /* released, not admitted */
    assert_true(json_is_true(json_object_get(json_object_get(b, "spec"), "suspend")));
    assert_int_equal(release_send(k, &l), 0); /* empty */

    kube_client_destroy(k);
    fake_stop(f);
    json_decref(rcs);
    cache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
