#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "devsel.h"

#define STR(n, v)                                                                                                                  \
    {                                                                                                                              \
        n,                                                                                                                         \
        {                                                                                                                          \
            .kind = DEVSEL_STRING, .s = v                                                                                          \
        }                                                                                                                          \
    }
#define INT(n, v)                                                                                                                  \
    {                                                                                                                              \
        n,                                                                                                                         \
        {                                                                                                                          \
            .kind = DEVSEL_INT, .i = v                                                                                             \
        }                                                                                                                          \
    }
#define BOOL(n, v)                                                                                                                 \
    {                                                                                                                              \
        n,                                                                                                                         \
        {                                                                                                                          \
            .kind = DEVSEL_BOOL, .i = v                                                                                            \
        }                                                                                                                          \
    }
#define VER(n, v)                                                                                                                  \
    {                                                                                                                              \
        n,                                                                                                                         \
        {                                                                                                                          \
            .kind = DEVSEL_VERSION, .s = v                                                                                         \
        }                                                                                                                          \
    }
#define QTY(n, v)                                                                                                                  \
    {                                                                                                                              \
        n,                                                                                                                         \
        {                                                                                                                          \
            .kind = DEVSEL_QUANTITY, .i = v                                                                                        \
        }                                                                                                                          \
    }
#define GI(x) ((int64_t)(x) << 30)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* gpu.example.com's device: bare names for its own domain, x.io's qualified. */
static const struct devsel_attr a_attrs[] = {
    STR("model", "a100"), INT("index", 3),         VER("driverVersion", "1.10.0"),
    INT("x.io/index", 2), BOOL("x.io/healthy", 1), VER("x.io/driverVersion", "1.2.3-rc.1"),
};
static const struct devsel_attr a_cap[] = {QTY("memory", GI(80))};
static const struct devsel_device dev_a = {"gpu.example.com", a_attrs, N(a_attrs), a_cap, N(a_cap)};

/* NVIDIA's driver: a full GPU and a MIG device. */
static const struct devsel_attr b_attrs[] = {STR("type", "gpu"), STR("productName", "NVIDIA A100")};
static const struct devsel_device dev_b = {"gpu.nvidia.com", b_attrs, N(b_attrs), NULL, 0};
static const struct devsel_attr mig_attrs[] = {STR("type", "mig")};
static const struct devsel_device dev_mig = {"gpu.nvidia.com", mig_attrs, N(mig_attrs), NULL, 0};

/* Another driver publishing gpu.example.com's model qualified, and one whose bare "model" is its own. */
static const struct devsel_attr c_attrs[] = {STR("gpu.example.com/model", "a100"), BOOL("x.io/healthy", 0)};
static const struct devsel_device dev_c = {"x.io", c_attrs, N(c_attrs), NULL, 0};
static const struct devsel_attr d_attrs[] = {STR("model", "a100")};
static const struct devsel_device dev_d = {"other.io", d_attrs, N(d_attrs), NULL, 0};

/* gpu.example.com's device with another model, for the driver-only match of an inexact selector. */
static const struct devsel_attr h_attrs[] = {STR("model", "h100")};
static const struct devsel_device dev_h = {"gpu.example.com", h_attrs, N(h_attrs), NULL, 0};

/* Asserts s's exactness and its match of d, naming the expression when wrong. */
static void check(const char *expr, const struct devsel_device *d, int want_match, int want_exact)
{
    struct devsel *s = devsel_compile(expr);
    assert_non_null(s);
    if (devsel_exact(s) != want_exact)
        fail_msg("%s: exact %d, expected %d (unevaluated: %s)", expr, devsel_exact(s), want_exact,
                 devsel_unevaluated(s) ? devsel_unevaluated(s) : "none");
    if (want_exact && devsel_unevaluated(s) != NULL)
        fail_msg("%s: exact but unevaluated \"%s\"", expr, devsel_unevaluated(s));
    if (devsel_match(s, d) != want_match)
        fail_msg("%s on a device of %s: match %d, expected %d", expr, d->driver, devsel_match(s, d), want_match);
    devsel_free(s);
}

static void test_driver(void **state)
{
    (void)state;
    const char *e = "device.driver == \"gpu.example.com\"";
    check(e, &dev_a, 1, 1);
    check(e, &dev_b, 0, 1);
    check("\"gpu.example.com\" == device.driver", &dev_a, 1, 1);
    check("device.driver != 'gpu.example.com'", &dev_b, 1, 1);
    struct devsel *s = devsel_compile(e);
    assert_string_equal(devsel_driver(s), "gpu.example.com");
    devsel_free(s);
    s = devsel_compile("device.attributes['x.io'].index == 2");
    assert_null(devsel_driver(s));
    devsel_free(s);
}

static void test_nvidia_class(void **state)
{
    (void)state;
    const char *gpu = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";
    check(gpu, &dev_b, 1, 1);
    check(gpu, &dev_mig, 0, 1);
    check(gpu, &dev_a, 0, 1);
    check("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", &dev_mig, 1, 1);
    struct devsel *s = devsel_compile(gpu);
    assert_string_equal(devsel_driver(s), "gpu.nvidia.com");
    devsel_free(s);
}

static void test_attribute_names(void **state)
{
    (void)state;
    const char *e = "device.attributes[\"gpu.example.com\"].model == \"a100\"";
    check(e, &dev_a, 1, 1); /* bare "model" of the driver's own domain */
    check(e, &dev_c, 1, 1); /* "gpu.example.com/model" published by another driver */
    check(e, &dev_d, 0, 1); /* a bare "model" of other.io is other.io's */
    check("device.attributes[\"gpu.example.com\"][\"model\"] == \"a100\"", &dev_a, 1, 1);
    check("device.attributes[\"gpu.example.com\"].model == \"h100\"", &dev_a, 0, 1);
    check("device.attributes[\"gpu.example.com\"].model == \"a\\x31\\x300\"", &dev_a, 1, 1); /* escapes: "a100" */
}

static void test_int(void **state)
{
    (void)state;
    check("device.attributes[\"x.io\"].index >= 2", &dev_a, 1, 1);
    check("device.attributes[\"x.io\"].index > 2", &dev_a, 0, 1);
    check("device.attributes[\"x.io\"].index <= 1", &dev_a, 0, 1);
    check("device.attributes[\"x.io\"].index < 3", &dev_a, 1, 1);
    check("device.attributes[\"x.io\"].index == 2", &dev_a, 1, 1);
    check("device.attributes[\"x.io\"].index != 2", &dev_a, 0, 1);
    check("device.attributes[\"x.io\"].index == 0x2", &dev_a, 1, 1);
    check("device.attributes[\"x.io\"].index > -1", &dev_a, 1, 1);
    check("device.attributes[\"gpu.example.com\"].index == 3", &dev_a, 1, 1);
    check("-9223372036854775808 < device.attributes[\"x.io\"].index", &dev_a, 1, 1);
}

static void test_bool(void **state)
{
    (void)state;
    check("device.attributes[\"x.io\"].healthy", &dev_a, 1, 1);
    check("device.attributes[\"x.io\"].healthy", &dev_c, 0, 1);
    check("device.attributes[\"x.io\"].healthy == true", &dev_a, 1, 1);
    check("device.attributes[\"x.io\"].healthy == false", &dev_a, 0, 1);
    check("device.attributes[\"x.io\"].healthy == false", &dev_c, 1, 1);
    check("!device.attributes[\"x.io\"].healthy", &dev_c, 1, 1);
}

static void test_logic(void **state)
{
    (void)state;
    check(
        "device.driver == \"nope\" || (device.attributes[\"x.io\"].index == 2 && !(device.attributes[\"x.io\"].healthy == false))",
        &dev_a, 1, 1);
    check("true || false && false", &dev_a, 1, 1); /* && binds tighter */
    check("(true || false) && false", &dev_a, 0, 1);
    check("!!true", &dev_a, 1, 1);
    check("!(device.driver == 'gpu.example.com')", &dev_a, 0, 1);
    check("device.driver", &dev_a, 0, 1); /* not a bool: no match */
}

static void test_capacity(void **state)
{
    (void)state;
    check("device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0", &dev_a, 1, 1);
    check("device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"80Gi\")) == 0", &dev_a, 1, 1);
    check("device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"100Gi\")) >= 0", &dev_a, 0, 1);
    check("device.capacity[\"gpu.example.com\"].memory.isGreaterThan(quantity(\"40Gi\"))", &dev_a, 1, 1);
    check("device.capacity[\"gpu.example.com\"].memory.isLessThan(quantity(\"40Gi\"))", &dev_a, 0, 1);
    check("device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0", &dev_b, 0, 1); /* none */
    check("device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"4x\")) >= 0", &dev_h, 1, 0);
}

static void test_semver(void **state)
{
    (void)state;
    check("device.attributes[\"x.io\"].driverVersion.compareTo(semver(\"1.2.3\")) >= 0", &dev_a, 0, 1); /* 1.2.3-rc.1 */
    check("device.attributes[\"x.io\"].driverVersion.compareTo(semver(\"1.2.3-rc.0\")) > 0", &dev_a, 1, 1);
    check("device.attributes[\"gpu.example.com\"].driverVersion.compareTo(semver(\"1.9.0\")) > 0", &dev_a, 1, 1);
    check("device.attributes[\"gpu.example.com\"].driverVersion.isLessThan(semver(\"1.10.1\"))", &dev_a, 1, 1);
    check("device.attributes[\"gpu.example.com\"].driverVersion.compareTo(semver(\"01.0.0\")) > 0", &dev_a, 1, 0);
    /* semver.org's own example order */
    static const char *const order[] = {"1.0.0-alpha",  "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
                                        "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",       "1.0.0+build.5"};
    for (size_t k = 0; k + 1 < N(order); k++) {
        struct devsel_attr v[] = {VER("v", order[k])};
        struct devsel_device d = {"x.io", v, 1, NULL, 0};
        char e[160];
        snprintf(e, sizeof(e), "device.attributes[\"x.io\"].v.compareTo(semver(\"%s\")) < 0", order[k + 1]);
        check(e, &d, 1, 1);
        snprintf(e, sizeof(e), "device.attributes[\"x.io\"].v.compareTo(semver(\"%s\")) == 0", order[k]);
        check(e, &d, 1, 1);
    }
}

static void test_missing_and_kinds(void **state)
{
    (void)state;
    check("device.attributes[\"x.io\"].nope == 1", &dev_a, 0, 1);
    check("!(device.attributes[\"x.io\"].nope == 1)", &dev_a, 0, 1); /* an error stays one through ! */
    check("device.attributes[\"x.io\"].nope == 1 || device.driver == \"gpu.example.com\"", &dev_a, 1, 1);
    check("device.attributes[\"x.io\"].nope == 1 && false", &dev_a, 0, 1);
    check("device.attributes[\"gpu.example.com\"].model == 3", &dev_a, 0, 1);
    check("device.attributes[\"gpu.example.com\"].model > 3", &dev_a, 0, 1);
    check("!(device.attributes[\"gpu.example.com\"].model > 3)", &dev_a, 0, 1);
    check("device.attributes[\"gpu.example.com\"].model != 3", &dev_a, 1, 1); /* CEL's heterogeneous equality */
    check("device.attributes[\"x.io\"].index == \"2\"", &dev_a, 0, 1);
    check("device.capacity[\"gpu.example.com\"].memory > 5", &dev_a, 0, 1);
    check("device.attributes[\"x.io\"].driverVersion.compareTo(quantity(\"1\")) < 0", &dev_a, 0, 1);
}

/* Outside the subset: inexact, the part named, a device of the driver conjunct's driver matched. */
static void inexact(const char *expr, const char *driver, const char *part)
{
    struct devsel *s = devsel_compile(expr);
    assert_non_null(s);
    if (devsel_exact(s))
        fail_msg("%s: exact, expected not", expr);
    const char *u = devsel_unevaluated(s);
    if (u == NULL || strstr(u, part) == NULL)
        fail_msg("%s: unevaluated \"%s\", expected it to name \"%s\"", expr, u ? u : "(null)", part);
    if (driver != NULL) {
        assert_non_null(devsel_driver(s));
        assert_string_equal(devsel_driver(s), driver);
        assert_int_equal(devsel_match(s, &dev_h), strcmp(driver, dev_h.driver) == 0);
        assert_int_equal(devsel_match(s, &dev_b), strcmp(driver, dev_b.driver) == 0);
    } else {
        assert_null(devsel_driver(s));
        assert_int_equal(devsel_match(s, &dev_b), 1);
        assert_int_equal(devsel_match(s, &dev_h), 1);
    }
    devsel_free(s);
}

static void test_in(void **state)
{
    (void)state;
    const char *has = "'model' in device.attributes['gpu.example.com']";
    check(has, &dev_a, 1, 1); /* bare, of the driver's domain */
    check(has, &dev_c, 1, 1); /* qualified */
    check(has, &dev_d, 0, 1);
    check("'memory' in device.capacity['gpu.example.com']", &dev_a, 1, 1);
    check("'memory' in device.capacity['gpu.example.com']", &dev_h, 0, 1);
    check("device.attributes['gpu.example.com'].model in ['a100', 'h100']", &dev_a, 1, 1);
    check("device.attributes['gpu.example.com'].model in ['a100', 'h100']", &dev_h, 1, 1);
    check("device.attributes['gpu.example.com'].model in ['v100', 3]", &dev_a, 0, 1);
    check("device.attributes['x.io'].index in [1, 2]", &dev_a, 1, 1);
    check("!(device.attributes['x.io'].nope in ['a'])", &dev_a, 0, 1); /* missing: an error */
    check("device.attributes['gpu.example.com'].model in []", &dev_a, 0, 1);
    /* the guard before a comparison, as NVIDIA's generated selectors write it */
    const char *fit = "'type' in device.attributes['gpu.nvidia.com'] && 'productName' in device.attributes['gpu.nvidia.com'] && "
                      "device.attributes['gpu.nvidia.com'].type == 'gpu' && "
                      "device.attributes['gpu.nvidia.com'].productName in ['NVIDIA A100', 'NVIDIA H100 80GB HBM3']";
    check(fit, &dev_b, 1, 1);
    check(fit, &dev_mig, 0, 1);
    check(fit, &dev_a, 0, 1);
}

static void test_outside(void **state)
{
    (void)state;
    const char *m = "device.attributes[\"x\"].model.matches(\"^a1\")";
    inexact(m, NULL, "device.attributes[\"x\"].model.matches(\"^a1\"): a method call not evaluated");
    inexact("device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].model.matches(\"^a1\")",
            "gpu.example.com", "model.matches(\"^a1\")");
    /* the driver alone: h100 does not start with a1, and matches all the same */
    inexact("device.driver == 'gpu.example.com' && device.allowMultipleAllocations", "gpu.example.com",
            "device.allowMultipleAllocations: a field not evaluated");
    inexact("\"x\" in device.attributes", NULL, "\"x\" in device.attributes: the in operator not evaluated");
    inexact("device.attributes['gpu.example.com'].index + 1 > 2", NULL, "arithmetic not evaluated");
    inexact("device.driver == 'a' ? true : false", NULL, "a conditional not evaluated");
    inexact("device.attributes['gpu.example.com'].model in [device.driver]", NULL,
            "device.driver: not a literal: in evaluates lists of literals");
    inexact("size(device.attributes) > 1", NULL, "size(device.attributes): a function call not evaluated");
    /* a multi-line selector (YAML's |) is named on one line */
    inexact("device.driver == 'gpu.example.com' &&\n  device.attributes['gpu.example.com'].model\n    .matches('^a1')",
            "gpu.example.com", "device.attributes['gpu.example.com'].model     .matches('^a1'): a method call not evaluated");
    inexact("device.attributes['x.io'].index == 2u", NULL, "2u: not evaluated");
}

static void test_does_not_parse(void **state)
{
    (void)state;
    inexact("device.driver == \"gpu.example.com\" && device.attributes[", "gpu.example.com", "the expression does not parse");
    inexact("(device.attributes['x.io'].index > 1) && device.driver == 'gpu.nvidia.com' && {'a': 1}", "gpu.nvidia.com",
            "does not parse: unexpected token at offset");
    inexact("device.driver == \"gpu.example.com\" || device.attributes[", NULL, "does not parse"); /* no conjunct */
    inexact("device.driver == 'gpu.example.com", NULL, "unterminated string at offset 17");
    inexact("", NULL, "does not parse: unexpected end at offset 0");
    inexact("device.driver == 'a' 'b'", NULL, "unexpected token at offset 21");
    inexact("device.driver == r'a'", NULL, "does not parse");
    inexact("device.driver == '''a'''", NULL, "triple-quoted string");
    inexact("device.attributes[\"x.io\"].index < 9223372036854775808", NULL, "number out of range at offset 34");
    char deep[400];
    size_t n = 0;
    for (int k = 0; k < 100; k++)
        deep[n++] = '(';
    memcpy(deep + n, "true", 4);
    n += 4;
    for (int k = 0; k < 100; k++)
        deep[n++] = ')';
    deep[n] = '\0';
    inexact(deep, NULL, "nested deeper than 64");
    check("((((true))))", &dev_a, 1, 1);
    struct devsel *s = devsel_compile(NULL);
    assert_false(devsel_exact(s));
    devsel_free(s);
    devsel_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_driver),   cmocka_unit_test(test_nvidia_class), cmocka_unit_test(test_attribute_names),
        cmocka_unit_test(test_int),      cmocka_unit_test(test_bool),         cmocka_unit_test(test_logic),
        cmocka_unit_test(test_capacity), cmocka_unit_test(test_semver),       cmocka_unit_test(test_missing_and_kinds),
        cmocka_unit_test(test_in),       cmocka_unit_test(test_outside),      cmocka_unit_test(test_does_not_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
