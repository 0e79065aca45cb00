#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "kubeconfig.h"

/* Reads a whole fixture file into an exactly-sized buffer (no NUL: the parser must not need one). */
static char *read_fixture(const char *rel, size_t *len)
{
    char *text = fixture_read(rel, len);
    char *exact = malloc(*len > 0 ? *len : 1);
    assert_non_null(exact);
    memcpy(exact, text, *len);
    free(text);
    return exact;
}

static void check_field(const char *file, const char *field, const char *got, size_t got_len, const json_t *want_json)
{
    const char *want = json_string_value(json_object_get(want_json, field));
    if (want == NULL && got != NULL)
        fail_msg("%s: %s is \"%s\", expected absent", file, field, got);
    if (want != NULL && got == NULL)
        fail_msg("%s: %s is absent, expected \"%s\"", file, field, want);
    if (want != NULL && (strcmp(want, got) != 0 || got_len != strlen(want)))
        fail_msg("%s: %s is \"%s\", expected \"%s\"", file, field, got, want);
}

static void check_config(const char *file, const struct kubeconfig *cfg, const json_t *want)
{
#define STR(field, member) check_field(file, field, cfg->member, cfg->member != NULL ? strlen(cfg->member) : 0, want)
#define DATA(field, member) check_field(file, field, cfg->member, cfg->member##_len, want)
    STR("context", context);
    STR("cluster", cluster);
    STR("user", user);
    STR("namespace", namespace);
    STR("server", server);
    STR("ca_file", ca_file);
    DATA("ca_data", ca_data);
    STR("token", token);
    STR("token_file", token_file);
    STR("client_cert_file", client_cert_file);
    DATA("client_cert_data", client_cert_data);
    STR("client_key_file", client_key_file);
    DATA("client_key_data", client_key_data);
#undef STR
#undef DATA
    int want_insecure = (int)json_integer_value(json_object_get(want, "insecure"));
    if (cfg->insecure_skip_tls_verify != want_insecure)
        fail_msg("%s: insecure_skip_tls_verify %d, expected %d", file, cfg->insecure_skip_tls_verify, want_insecure);
}

static void assert_empty(const char *file, const struct kubeconfig *cfg)
{
    struct kubeconfig empty;
    kubeconfig_init(&empty);
    if (memcmp(cfg, &empty, sizeof(empty)) != 0)
        fail_msg("%s: failed parse left fields set", file);
}

/*
 * Every kubeconfig/<name>.yaml with its <name>.json: the expected fields (all
 * others absent), or "error" (a substring of the message). "use-context"
 * selects a context instead of current-context. Relative paths resolve
 * against /etc/kube.
 */
static void test_fixtures(void **state)
{
    (void)state;
    size_t n, ok = 0, errors = 0;
    char **files = fixture_list("kubeconfig", &n);
    assert_true(n >= 30);
    for (size_t i = 0; i < n; i++) {
        json_t *want = fixture_json(files[i]);
        char yaml_rel[512];
        snprintf(yaml_rel, sizeof(yaml_rel), "%.*s.yaml", (int)(strlen(files[i]) - 5), files[i]);
        size_t len;
        char *buf = read_fixture(yaml_rel, &len);
        const char *want_error = json_string_value(json_object_get(want, "error"));
        const char *use_context = json_string_value(json_object_get(want, "use-context"));
        struct kubeconfig cfg;
        struct error err = {{0}};
        kubeconfig_init(&cfg);
        int rc = kubeconfig_parse(buf, len, "/etc/kube", use_context, &cfg, &err);
        if (want_error != NULL) {
            if (rc != -1)
                fail_msg("%s: parsed, expected error \"%s\"", yaml_rel, want_error);
            if (strstr(err.message, want_error) == NULL)
                fail_msg("%s: message \"%s\", expected \"%s\"", yaml_rel, err.message, want_error);
            if (strpbrk(err.message, "\r\n\t") != NULL)
                fail_msg("%s: message \"%s\" is not one line", yaml_rel, err.message);
            assert_empty(yaml_rel, &cfg);
            errors++;
        } else {
            if (rc != 0)
                fail_msg("%s: %s", yaml_rel, err.message);
            check_config(yaml_rel, &cfg, want);
            ok++;
        }
        kubeconfig_finish(&cfg);
        assert_empty(yaml_rel, &cfg);
        free(buf);
        json_decref(want);
    }
    assert_true(ok >= 10);
    assert_true(errors >= 15);
    fixture_list_free(files, n);
}

/* Without a base folder, relative paths stay as written. */
static void test_relative_without_base(void **state)
{
    (void)state;
    size_t len;
    char *buf = read_fixture("kubeconfig/client-cert-files.yaml", &len);
    struct kubeconfig cfg;
    struct error err;
    kubeconfig_init(&cfg);
    assert_int_equal(kubeconfig_parse(buf, len, NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg.client_cert_file, "./certs/admin.crt");
    assert_string_equal(cfg.client_key_file, "/abs/admin.key");
    assert_int_equal(kubeconfig_parse(buf, len, "/base/", NULL, &cfg, &err), 0);
    assert_string_equal(cfg.client_cert_file, "/base/./certs/admin.crt");
    kubeconfig_finish(&cfg);
    free(buf);
}

/* The file loader resolves against the file's folder and names the file in errors. */
static void test_load_file(void **state)
{
    (void)state;
    char *path = fixture_path("kubeconfig/token.yaml");
    char *dir = fixture_path("kubeconfig");
    struct kubeconfig cfg;
    struct error err;
    kubeconfig_init(&cfg);
    assert_int_equal(kubeconfig_load_file(path, NULL, &cfg, &err), 0);
    char want[1024];
    snprintf(want, sizeof(want), "%s/pki/ca.crt", dir);
    assert_string_equal(cfg.ca_file, want);
    assert_string_equal(cfg.token, "abc.def-123");

    char *bad = fixture_path("kubeconfig/error-exec.yaml");
    assert_int_equal(kubeconfig_load_file(bad, NULL, &cfg, &err), -1);
    assert_non_null(strstr(err.message, "error-exec.yaml: users[eks].user.exec"));
    assert_null(cfg.server);

    assert_int_equal(kubeconfig_load_file("/nonexistent/kubeconfig", NULL, &cfg, &err), -1);
    assert_non_null(strstr(err.message, "cannot read /nonexistent/kubeconfig: No such file"));
    kubeconfig_finish(&cfg);
    free(bad);
    free(dir);
    free(path);
}

/* kubeconfig_load: an explicit path, else the first entry of $KUBECONFIG, else in-cluster. */
static void test_load_rule(void **state)
{
    (void)state;
    char *a = fixture_path("kubeconfig/multi-current.yaml");
    char *b = fixture_path("kubeconfig/token.yaml");
    char list[2048];
    snprintf(list, sizeof(list), "%s:%s", a, b);
    struct kubeconfig cfg;
    struct error err;
    kubeconfig_init(&cfg);

    setenv("KUBECONFIG", list, 1);
    assert_int_equal(kubeconfig_load(NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://prod.example.com:443");
    assert_int_equal(kubeconfig_load(NULL, "test", &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://test.example.com:6443");
    assert_int_equal(kubeconfig_load(b, NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://127.0.0.1:6443");

    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kubeconfig_load(NULL, NULL, &cfg, &err), -1);
    assert_non_null(strstr(err.message, "KUBERNETES_SERVICE_HOST"));
    kubeconfig_finish(&cfg);
    free(a);
    free(b);
}

static void test_incluster(void **state)
{
    (void)state;
    char *dir = fixture_path("kubeconfig/incluster");
    struct kubeconfig cfg;
    struct error err;
    kubeconfig_init(&cfg);

    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(kubeconfig_load_incluster(dir, &cfg, &err), -1);
    assert_non_null(strstr(err.message, "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set"));

    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    assert_int_equal(kubeconfig_load_incluster(dir, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    char want[1024];
    snprintf(want, sizeof(want), "%s/token", dir);
    assert_string_equal(cfg.token_file, want);
    snprintf(want, sizeof(want), "%s/ca.crt", dir);
    assert_string_equal(cfg.ca_file, want);
    assert_string_equal(cfg.namespace, "raygate-system");
    assert_null(cfg.token);
    assert_null(cfg.context);

    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(kubeconfig_load_incluster(dir, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://[fd00::1]:443");

    setenv("KUBERNETES_SERVICE_PORT", "443/evil", 1);
    assert_int_equal(kubeconfig_load_incluster(dir, &cfg, &err), -1);
    assert_non_null(strstr(err.message, "invalid KUBERNETES_SERVICE_HOST/PORT"));
    assert_null(cfg.server);

    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(kubeconfig_load_incluster("/nonexistent/sa", &cfg, &err), -1);
    assert_non_null(strstr(err.message, "cannot read /nonexistent/sa/token"));
    assert_null(cfg.server);

    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    kubeconfig_finish(&cfg);
    free(dir);
}

/* kubeconfig_copy is deep: the copy outlives the original. */
static void test_copy(void **state)
{
    (void)state;
    size_t len;
    char *buf = read_fixture("kubeconfig/data-forms.yaml", &len);
    struct kubeconfig a, b;
    struct error err;
    kubeconfig_init(&a);
    kubeconfig_init(&b);
    assert_int_equal(kubeconfig_parse(buf, len, NULL, NULL, &a, &err), 0);
    kubeconfig_copy(&b, &a);
    size_t key_len = a.client_key_data_len;
    kubeconfig_finish(&a);
    assert_string_equal(b.server, "https://kube.example.com");
    assert_int_equal(b.client_key_data_len, key_len);
    assert_non_null(strstr(b.client_key_data, "BEGIN EC PRIVATE KEY"));
    assert_non_null(strstr(b.ca_data, "MIIBfakeCA"));
    kubeconfig_finish(&b);
    kubeconfig_finish(NULL);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),  cmocka_unit_test(test_relative_without_base),
        cmocka_unit_test(test_load_file), cmocka_unit_test(test_load_rule),
        cmocka_unit_test(test_incluster), cmocka_unit_test(test_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
