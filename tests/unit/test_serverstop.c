/*
 * webhook/serverstop.c (on lib/io/stop.c) with a stand-in server that
 * counts its stop requests and is poisoned by server_destroy: any request
 * after it is counted (a use after free in raygate-webhook). Signals are
 * real, raised on the test's threads as on the webhook's watch threads,
 * which do not block them: a handler there used to read the server main
 * was destroying.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "serverstop.h"

#define STOPSTANDIN_TYPE server
#define STOPSTANDIN_STOP server_request_stop
#define STOPSTANDIN_DESTROY server_destroy
#define STOPSTANDIN_REGISTER serverstop_register
#define STOPSTANDIN_FINISH serverstop_finish
#include "stopstandin.h"

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_signal),
        cmocka_unit_test(test_signal_on_watch_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
