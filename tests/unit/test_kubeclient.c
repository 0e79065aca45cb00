/*
 * The Kubernetes client (kubeclient.c): its retry arithmetic and its bearer
 * token (re-read, never logged), against the fake API server of fakeapi.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi.h"
#include "fixtures.h"
#include "kube.h"
#include "log.h"

/* --- pure helpers ------------------------------------------------------------------ */

static void test_backoff_and_retry_after(void **state)
{
    (void)state;
    for (uint64_t r = 0; r < 1000; r += 37) {
        long d0 = kube_client_backoff_ms(0, 500, 30000, r);
        assert_true(d0 >= 250 && d0 <= 500);
        long d3 = kube_client_backoff_ms(3, 500, 30000, r);
        assert_true(d3 >= 2000 && d3 <= 4000);
        long dmax = kube_client_backoff_ms(40, 500, 30000, r);
        assert_true(dmax >= 15000 && dmax <= 30000);
    }
    assert_int_equal(kube_client_backoff_ms(1000, 1, 1, 12345), 1);
    assert_int_equal(kube_client_retry_after_ms(" 1"), 1000);
    assert_int_equal(kube_client_retry_after_ms("0\r\n"), 0);
    assert_int_equal(kube_client_retry_after_ms("120"), 120000);
    assert_int_equal(kube_client_retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
    assert_int_equal(kube_client_retry_after_ms("1.5"), -1);
    assert_int_equal(kube_client_retry_after_ms(""), -1);
    assert_int_equal(kube_client_retry_after_ms("9999999999"), -1);
    assert_int_equal(kube_client_retry_after_ms(NULL), -1);
    assert_string_equal(kube_patch_content_type(KUBE_PATCH_MERGE), "application/merge-patch+json");
    assert_string_equal(kube_patch_content_type(KUBE_PATCH_JSON), "application/json-patch+json");
    assert_string_equal(kube_patch_content_type(KUBE_PATCH_STRATEGIC), "application/strategic-merge-patch+json");
}

/* --- the token ----------------------------------------------------------------------- */

static int token_handler(struct fake *f, const struct fake_req *req)
{
    const char *want = f->arg;
    if (want != NULL && strcmp(req->auth, want) != 0)
        respond_status(req, 401, "Unauthorized", "Unauthorized", NULL);
    else
        respond(req, 200, NULL, "{}");
    return 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* A 401 re-reads the token file and retries once with the new token; an unchanged token is not retried. */
static void test_token_reread(void **state)
{
    (void)state;
    char dir[] = "/tmp/raygate-test-kube-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/token", dir);
    write_file(path, "old-token\n");
    struct fake *f = fake_start(token_handler, "Bearer new-token");
    struct kube_client *c = client_for(f, "kubeconfig-token", path, NULL);
    struct kube_response r;
    kube_client_response_init(&r);

    write_file(path, "new-token\n"); /* rotated after the client read it */
    assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), 0);
    json_t *log = fake_log(f);
    assert_int_equal(json_array_size(log), 2);
    assert_string_equal(log_field(log, 0, "auth"), "Bearer old-token");
    assert_string_equal(log_field(log, 1, "auth"), "Bearer new-token");
    json_decref(log);

    f->arg = "Bearer never";
    assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), -1);
    assert_int_equal(r.status, 401);
    log = fake_log(f);
    assert_int_equal(json_array_size(log), 3); /* the 401, one re-read, no retry */
    json_decref(log);
    kube_client_destroy(c);

    /* The file is also re-read periodically, without a 401 (token_reread_ms 1: on the next request once 1 ms passed). */
    f->arg = NULL;
    struct kube_client_options o = {.token_reread_ms = 1};
    c = client_for(f, NULL, path, &o);
    write_file(path, "third-token");
    int seen = 0;
    for (int i = 0; i < 10000 && !seen; i++) {
        assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), 0);
        log = fake_log(f);
        seen = strcmp(log_field(log, json_array_size(log) - 1, "auth"), "Bearer third-token") == 0;
        json_decref(log);
    }
    assert_true(seen);
    kube_client_destroy(c);

    /* A token file that cannot be read, with no token to fall back on, fails creation. */
    unlink(path);
    struct kubeconfig cfg;
    kubeconfig_init(&cfg);
    cfg.server = strdup("http://127.0.0.1:1");
    cfg.token_file = strdup(path);
    struct error err;
    assert_null(kube_client_create(&cfg, NULL, &err));
    assert_non_null(strstr(err.message, "cannot read token file"));
    kubeconfig_finish(&cfg);
    rmdir(dir);
    kube_client_response_finish(&r);
    fake_stop(f);
}

/*
 * No token reaches the log: everything the client logs at debug level while
 * tokens are refused, re-read, missing and retried is captured from stderr
 * and searched for the tokens' text.
 */
static void test_no_token_in_logs(void **state)
{
    (void)state;
    char dir[] = "/tmp/raygate-test-kube-XXXXXX", path[128], logpath[160];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/token", dir);
    snprintf(logpath, sizeof(logpath), "%s/stderr", dir);
    int saved = dup(STDERR_FILENO);
    FILE *capture = fopen(logpath, "w+");
    assert_non_null(capture);
    assert_true(dup2(fileno(capture), STDERR_FILENO) >= 0);
    log_set_level(LOG_LEVEL_DEBUG);

    struct fake *f = fake_start(token_handler, "Bearer s3cr3t-never-sent");
    /* The token file is missing: the client falls back on the kubeconfig's token, and says so. */
    struct kube_client *c = client_for(f, "s3cr3t-kubeconfig-token", path, NULL);
    struct kube_response r;
    kube_client_response_init(&r);
    assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), -1); /* 401; the re-read fails: logged */
    write_file(path, "s3cr3t-file-token\n");
    assert_int_equal(kube_get(c, "/api/v1/namespaces", &r), -1); /* 401 with the file's token */
    struct kube_batch_item items[3];
    for (size_t i = 0; i < 3; i++)
        items[i] = (struct kube_batch_item){
            .method = "PATCH", .path = "/api/v1/namespaces/ray/pods/x", .content_type = kube_patch_content_type(KUBE_PATCH_MERGE)};
    kube_batch(c, items, 3, 2);
    for (size_t i = 0; i < 3; i++)
        kube_client_response_finish(&items[i].resp);
    kube_client_destroy(c);
    fake_stop(f);
    kube_client_response_finish(&r);

    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    log_set_level(LOG_LEVEL_INFO);
    size_t len;
    char *text = util_read_file(logpath, 1 << 20, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "using the kubeconfig's token")); /* the capture captured */
    if (strstr(text, "s3cr3t") != NULL)
        fail_msg("a token reached the log:\n%s", text);
    free(text);
    fclose(capture);
    unlink(logpath);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_and_retry_after),
        cmocka_unit_test(test_token_reread),
        cmocka_unit_test(test_no_token_in_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
