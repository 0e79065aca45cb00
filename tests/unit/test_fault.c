/*
 * gate/apply/fault.c: a point does nothing until armed, says its argument once
 * armed, and fault_exit ends the process with status 3 after logging why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault.h"

static void test_arm(void **state)
{
    (void)state;
    long arg = 12345;
    assert_false(fault_armed(FAULT_AFTER_RECORD, &arg));
    assert_int_equal(arg, 12345);
    fault_arm(FAULT_AFTER_RECORD, 0);
    assert_true(fault_armed(FAULT_AFTER_RECORD, &arg));
    assert_int_equal(arg, 0);
    fault_arm(FAULT_AFTER_RECORD, 7);
    assert_true(fault_armed(FAULT_AFTER_RECORD, &arg));
    assert_int_equal(arg, 7);
    fault_arm(FAULT_AFTER_RECORD, -1);
    assert_false(fault_armed(FAULT_AFTER_RECORD, &arg));
    assert_false(fault_armed(FAULT_COUNT, &arg));
    assert_string_equal(fault_point_name(FAULT_AFTER_RECORD), "after-record");
    assert_string_equal(fault_point_name(FAULT_AFTER_EVICT_RECORD), "after-evict-record");
    assert_false(fault_armed(FAULT_AFTER_EVICT_RECORD, &arg));
}

/* The drill looks for the log line and the exit status: the child's stderr and status. */
static void test_exit(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fault_exit(FAULT_AFTER_RECORD, "exiting after recording the admission of %s/%s", "ns", "rc");
    }
    close(fds[1]);
    char buf[4096];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof(buf) - 1 && (n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
    assert_non_null(strstr(buf, "test fault: exiting after recording the admission of ns/rc (fault point after-record)"));
    assert_non_null(strstr(buf, "\"level\":\"warn\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arm),
        cmocka_unit_test(test_exit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
