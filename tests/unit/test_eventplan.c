/*
 * lib/sched/status/eventplan.c: a wait reason is told once it has lasted the settle
 * time, once per stretch; a stretch over before that is never told; a reason
 * that comes back counts its Event up; Event names are valid and distinct.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "eventplan.h"

#define SETTLE 1000

/* A reason is told at the settle time after the pass first reported it, not before, and once. */
static void test_told_once_settled(void **state)
{
    (void)state;
    struct eventplan p = {0};
    uint32_t count = 0;
    assert_int_equal(eventplan_note(&p, ADMIT_REASON_QUEUE_CAPACITY, 5000), 1);
    assert_int_equal(eventplan_due_at(&p, SETTLE), 6000);
    assert_int_equal(eventplan_due(&p, 5999, SETTLE, &count), EVENTPLAN_NONE);
    /* The same reason again (another pass) does not restart the clock. */
    assert_int_equal(eventplan_note(&p, ADMIT_REASON_QUEUE_CAPACITY, 5500), 0);
    assert_int_equal(eventplan_due(&p, 6000, SETTLE, &count), EVENTPLAN_POST);
    assert_int_equal(count, 1);
    assert_int_equal(eventplan_due(&p, 9000, SETTLE, &count), EVENTPLAN_NONE);
    assert_int_equal(eventplan_due_at(&p, SETTLE), -1);
    assert_int_equal(eventplan_count(&p), 1);
}

/* A wait over within the settle time (admitted, or another reason) is never told. */
static void test_passing_state_not_told(void **state)
{
    (void)state;
    struct eventplan p = {0};
    uint32_t count = 0;
    eventplan_note(&p, ADMIT_REASON_PODS, 0);
    eventplan_note(&p, ADMIT_REASON_NONE, 400); /* admitted */
    assert_int_equal(eventplan_due(&p, 5000, SETTLE, &count), EVENTPLAN_NONE);
    assert_int_equal(eventplan_due_at(&p, SETTLE), -1);
    eventplan_note(&p, ADMIT_REASON_PODS, 6000);
    eventplan_note(&p, ADMIT_REASON_QUEUE_CAPACITY, 6500); /* pods came: now the queue */
    assert_int_equal(eventplan_due(&p, 7200, SETTLE, &count), EVENTPLAN_NONE);
    assert_int_equal(eventplan_due(&p, 7500, SETTLE, &count), EVENTPLAN_POST);
    assert_int_equal(p.count[ADMIT_REASON_PODS], 0);
}

/* A reason told, another, and the first again: its Event counted up (2), not created again. */
static void test_repeat_counts_up(void **state)
{
    (void)state;
    struct eventplan p = {0};
    uint32_t count = 0;
    eventplan_note(&p, ADMIT_REASON_QUEUE_CAPACITY, 0);
    assert_int_equal(eventplan_due(&p, 1000, SETTLE, &count), EVENTPLAN_POST);
    eventplan_note(&p, ADMIT_REASON_NODES, 2000);
    assert_int_equal(eventplan_due(&p, 3000, SETTLE, &count), EVENTPLAN_POST);
    assert_int_equal(count, 1);
    eventplan_note(&p, ADMIT_REASON_QUEUE_CAPACITY, 4000);
    assert_int_equal(eventplan_due(&p, 5000, SETTLE, &count), EVENTPLAN_COUNT);
    assert_int_equal(count, 2);
    /* After an admission, the same reason once more: 3. */
    eventplan_note(&p, ADMIT_REASON_NONE, 6000);
    assert_int_equal(eventplan_count(&p), 0);
    eventplan_note(&p, ADMIT_REASON_QUEUE_CAPACITY, 7000);
    assert_int_equal(eventplan_due(&p, 8000, SETTLE, &count), EVENTPLAN_COUNT);
    assert_int_equal(count, 3);
}

/* A settle time of 0 tells at once. */
static void test_no_settle(void **state)
{
    (void)state;
    struct eventplan p = {0};
    uint32_t count = 0;
    eventplan_note(&p, ADMIT_REASON_QUEUE_CLOSED, 100);
    assert_int_equal(eventplan_due(&p, 100, 0, &count), EVENTPLAN_POST);
}

static int dns_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253 || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return 0;
        if (c == '.' && (s[i + 1] == '-' || (i > 0 && s[i - 1] == '-')))
            return 0;
    }
    return 1;
}

/* Names: per object, reason, tail and uid; a long name is cut to a valid subdomain. */
static void test_event_name(void **state)
{
    (void)state;
    char a[256], b[256];
    assert_string_equal(eventplan_event_name(a, sizeof(a), "rc", "0123456789ab", ADMIT_REASON_QUEUE_CAPACITY, 0),
                        "rc.gangwaiting-queue-capacity-01234567");
    assert_string_equal(eventplan_event_name(b, sizeof(b), "rc", NULL, ADMIT_REASON_PODS, 1), "rc.gangwaiting-pods-tail");
    eventplan_event_name(b, sizeof(b), "rc", "0123456789ab", ADMIT_REASON_NODES, 0);
    assert_string_not_equal(a, b);
    char longname[254];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    longname[239] = '-'; /* where the cut falls: dropped */
    eventplan_event_name(a, sizeof(a), longname, "fedcba98-7654", ADMIT_REASON_QUEUE_TREE, 1);
    assert_true(dns_subdomain(a));
    assert_true(strlen(a) <= 253);
    assert_non_null(strstr(a, ".gangwaiting-queue-tree-tail-fedcba98"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_told_once_settled), cmocka_unit_test(test_passing_state_not_told),
        cmocka_unit_test(test_repeat_counts_up),  cmocka_unit_test(test_no_settle),
        cmocka_unit_test(test_event_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
