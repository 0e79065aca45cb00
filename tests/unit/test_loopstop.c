/*
 * dispatch/loopstop.c (on lib/io/stop.c) with a stand-in loop that
 * counts its stop requests and is poisoned by dispatchloop_destroy: any
 * request after it is counted (a use after free in raygate-dispatch).
 * Signals are real, raised on the test's threads as on the workers' watch
 * threads, which do not block them. The loop used to stay registered once
 * destroyed: a second SIGTERM during teardown stopped the freed loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "loopstop.h"

#define STOPSTANDIN_TYPE dispatch_loop
#define STOPSTANDIN_STOP dispatchloop_stop
#define STOPSTANDIN_DESTROY dispatchloop_destroy
#define STOPSTANDIN_REGISTER loopstop_register
#define STOPSTANDIN_FINISH loopstop_finish
#include "stopstandin.h"

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_signal),
        cmocka_unit_test(test_signal_on_watch_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
