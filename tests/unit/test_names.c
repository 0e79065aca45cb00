/*
 * lib/core/names.c: the PodGroup name of a cluster and back, and the DNS
 * subdomain rule that names (a PodGroup's, a label key's prefix) must keep.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "names.h"

static void test_podgroup_round_trip(void **state)
{
    (void)state;
    char *group = names_podgroup("train-7");
    assert_string_equal(group, "ray-train-7-pg");
    char *cluster = names_podgroup_cluster(group);
    assert_string_equal(cluster, "train-7");
    free(cluster);
    free(group);
    assert_null(names_podgroup_cluster("ray--pg")); /* no cluster between prefix and suffix */
    assert_null(names_podgroup_cluster("train-7"));
    assert_null(names_podgroup_cluster(NULL));
}

static int subdomain(const char *s)
{
    return names_dns_subdomain(s, strlen(s));
}

static void test_dns_subdomain(void **state)
{
    (void)state;
    static const char *const valid[] = {"a", "ray-train-7-pg", "0", "a.b", "x-1.y-2.z", "ray-c.example.com-pg"};
    static const char *const invalid[] = {"", "-a", "a-", "a..b", ".a", "a.", "A", "ray-Train-pg", "a_b", "a/b", "a b", "ray-é-pg"};
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
        if (!subdomain(valid[i]))
            fail_msg("\"%s\" should be a DNS subdomain", valid[i]);
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
        if (subdomain(invalid[i]))
            fail_msg("\"%s\" should not be a DNS subdomain", invalid[i]);

    /* 253 bytes at most; the length given is what counts, not a NUL. */
    char name[300];
    memset(name, 'a', sizeof(name));
    assert_true(names_dns_subdomain(name, 253));
    assert_false(names_dns_subdomain(name, 254));
    assert_true(names_dns_subdomain("ab-", 2));
    assert_false(names_dns_subdomain("ab-", 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_podgroup_round_trip),
        cmocka_unit_test(test_dns_subdomain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
