/*
 * webhook/nativegang.c against the fake API server of fakeapi.h: --native-gang
 * on and off never ask; auto asks discovery (GET /apis/scheduling.k8s.io/v1beta1)
 * once and is on only when it lists podgroups; a 404, a list without
 * podgroups, an error or no API at all leave the step off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeapi.h"
#include "log.h"
#include "nativeprobe.h"

/* An APIResourceList of scheduling.k8s.io/v1beta1 naming resources (NULL-terminated). */
static json_t *resource_list(const char *const *resources)
{
    json_t *list = json_array();
    for (; *resources != NULL; resources++)
        json_array_append_new(list, json_pack("{s:s, s:b, s:s}", "name", *resources, "namespaced", 1, "kind", "X"));
    return json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1", "groupVersion",
                     "scheduling.k8s.io/v1beta1", "resources", list);
}

/* How many requests f received for path. */
static size_t requests_for(struct fake *f, const char *path)
{
    json_t *log = fake_log(f);
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(log); i++)
        n += strcmp(log_field(log, i, "target"), path) == 0;
    size_t all = json_array_size(log);
    json_decref(log);
    assert_int_equal(n, all); /* nothing but discovery */
    return n;
}

/* mode against a fake API serving list at NATIVEGANG_API (NULL: 404); returns the decision, *asked the requests. */
static struct nativeprobe_decision decide_with(enum nativeprobe_mode mode, json_t *list, size_t *asked)
{
    json_t *st = fake_cluster_state_new();
    if (list != NULL)
        json_object_set_new(json_object_get(st, "get"), NATIVEGANG_API, list);
    struct kube_client *k;
    struct fake *f = fake_cluster_start(st, &k, NULL);
    struct nativeprobe_decision d;
    int on = nativeprobe_decide(mode, k, &d);
    assert_int_equal(on, d.on);
    *asked = requests_for(f, NATIVEGANG_API);
    fake_cluster_stop(f, k, st);
    return d;
}

static void test_auto_served(void **state)
{
    (void)state;
    static const char *const both[] = {"workloads", "podgroups", "podgroups/status", NULL};
    size_t asked;
    struct nativeprobe_decision d = decide_with(NATIVEPROBE_AUTO, resource_list(both), &asked);
    assert_true(d.on);
    assert_int_equal(d.reason, NATIVEPROBE_REASON_SERVED);
    assert_int_equal(asked, 1);
}

static void test_auto_without_podgroups(void **state)
{
    (void)state;
    static const char *const workloads[] = {"workloads", "podgroups/status", NULL};
    size_t asked;
    struct nativeprobe_decision d = decide_with(NATIVEPROBE_AUTO, resource_list(workloads), &asked);
    assert_false(d.on);
    assert_int_equal(d.reason, NATIVEPROBE_REASON_NO_PODGROUPS);
    assert_int_equal(asked, 1);
}

static void test_auto_not_served(void **state)
{
    (void)state;
    size_t asked;
    struct nativeprobe_decision d = decide_with(NATIVEPROBE_AUTO, NULL, &asked);
    assert_false(d.on);
    assert_int_equal(d.reason, NATIVEPROBE_REASON_NOT_SERVED);
    assert_int_equal(asked, 1);
}

/* on and off are what they say, and ask nothing, whatever the API serves. */
static void test_flag_wins(void **state)
{
    (void)state;
    static const char *const both[] = {"workloads", "podgroups", NULL};
    size_t asked;
    struct nativeprobe_decision d = decide_with(NATIVEPROBE_OFF, resource_list(both), &asked);
    assert_false(d.on);
    assert_int_equal(d.reason, NATIVEPROBE_REASON_FLAG);
    assert_int_equal(asked, 0);
    d = decide_with(NATIVEPROBE_ON, NULL, &asked);
    assert_true(d.on);
    assert_int_equal(d.reason, NATIVEPROBE_REASON_FLAG);
    assert_int_equal(asked, 0);
}

/* A 500 (no Retry-After: not retried): off, and why is kept for the log. */
static int failing(struct fake *f, const struct fake_req *req)
{
    (void)f;
    respond_status(req, 500, "InternalError", "etcd is down", NULL);
    return 0;
}

static void test_auto_error(void **state)
{
    (void)state;
    struct fake *f = fake_start(failing, NULL);
    struct kube_client *k = client_for(f, "t", NULL, NULL);
    struct nativeprobe_decision d;
    assert_int_equal(nativeprobe_decide(NATIVEPROBE_AUTO, k, &d), 0);
    assert_int_equal(d.reason, NATIVEPROBE_REASON_ERROR);
    assert_non_null(strstr(d.error.message, "500"));
    assert_int_equal(requests_for(f, NATIVEGANG_API), 1);
    kube_client_destroy(k);
    fake_stop(f);
}

/* No API connection at all (nothing listens): off, with the transport error. */
static void test_auto_unreachable(void **state)
{
    (void)state;
    struct fake *f = fake_start(failing, NULL);
    struct kube_client *k = client_for(f, "t", NULL, NULL);
    fake_stop(f); /* the port is closed now: connection refused */
    struct nativeprobe_decision d;
    assert_int_equal(nativeprobe_decide(NATIVEPROBE_AUTO, k, &d), 0);
    assert_int_equal(d.reason, NATIVEPROBE_REASON_ERROR);
    assert_true(d.error.message[0] != '\0');
    kube_client_destroy(k);
}

static void test_auto_no_api(void **state)
{
    (void)state;
    struct nativeprobe_decision d;
    assert_int_equal(nativeprobe_decide(NATIVEPROBE_AUTO, NULL, &d), 0);
    assert_int_equal(d.reason, NATIVEPROBE_REASON_NO_API);
    assert_int_equal(nativeprobe_decide(NATIVEPROBE_ON, NULL, &d), 1);
}

static void test_served(void **state)
{
    (void)state;
    static const char *const podgroups[] = {"podgroups", NULL}, *const status_only[] = {"podgroups/status", NULL};
    json_t *yes = resource_list(podgroups), *no = resource_list(status_only);
    assert_true(nativeprobe_served(yes));
    assert_false(nativeprobe_served(no));
    assert_false(nativeprobe_served(NULL));
    json_t *odd = json_pack("{s:[i, {s:i}, s]}", "resources", 1, "name", 2, "podgroups");
    assert_false(nativeprobe_served(odd)); /* only an object named podgroups counts */
    json_decref(odd);
    json_decref(no);
    json_decref(yes);
    assert_string_equal(nativeprobe_mode_names[NATIVEPROBE_AUTO], "auto");
    assert_string_equal(nativeprobe_mode_names[NATIVEPROBE_ON], "on");
    assert_string_equal(nativeprobe_mode_names[NATIVEPROBE_OFF], "off");
    assert_null(nativeprobe_mode_names[3]);
}

int main(void)
{
    log_set_level(LOG_LEVEL_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_served),     cmocka_unit_test(test_auto_without_podgroups),
        cmocka_unit_test(test_auto_not_served), cmocka_unit_test(test_flag_wins),
        cmocka_unit_test(test_auto_error),      cmocka_unit_test(test_auto_unreachable),
        cmocka_unit_test(test_auto_no_api),     cmocka_unit_test(test_served),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
