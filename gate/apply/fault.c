#include "fault.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"

static long armed[FAULT_COUNT]; /* the argument + 1; 0: not armed */

void fault_arm(enum fault_point point, long arg)
{
    if (point < FAULT_COUNT)
        armed[point] = arg < 0 || arg == LONG_MAX ? 0 : arg + 1;
}

int fault_armed(enum fault_point point, long *arg)
{
    if (point >= FAULT_COUNT || armed[point] == 0)
        return 0;
    *arg = armed[point] - 1;
    return 1;
}

const char *fault_point_name(enum fault_point point)
{
    switch (point) {
    case FAULT_AFTER_RECORD:
        return "after-record";
    case FAULT_AFTER_EVICT_RECORD:
        return "after-evict-record";
    case FAULT_AFTER_NATIVE:
        return "after-native";
    case FAULT_COUNT:
        break;
    }
    return "";
}

void fault_exit(enum fault_point point, const char *format, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(msg, sizeof(msg), format, ap);
    va_end(ap);
    log_warnf("test fault: %s (fault point %s)", msg, fault_point_name(point));
    _exit(3);
}
