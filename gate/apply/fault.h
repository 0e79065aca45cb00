/*
 * fault: test-only fault points, for the e2e drills that stop the controller
 * at a chosen moment, as a crash would (tests/e2e/test_gate_restart.sh).
 *
 * Compiled in always, so that the drills test the binary that ships; a point
 * does nothing unless armed, and only raygate-gate's
 * --test-fault-exit-after-ungates, --test-fault-exit-after-evict-deletes and
 * --test-fault-exit-after-native arm one (controller_create). Points are
 * armed before any thread starts and only read afterwards.
 */
#ifndef RAYGATE_GATE_FAULT_H
#define RAYGATE_GATE_FAULT_H

enum fault_point {
    /* An admission recorded on its RayCluster, before its gates are removed;
       the argument: how many of its gates to remove before exiting. */
    FAULT_AFTER_RECORD = 0,
    /* An eviction recorded on its RayCluster (admission withdrawn), before its
       pods are deleted; the argument: how many of them to delete before exiting. */
    FAULT_AFTER_EVICT_RECORD,
    /* A pass's native PodGroups written (native.h), before any of its gates is
       removed; the argument is not used. */
    FAULT_AFTER_NATIVE,
    FAULT_COUNT,
};

/* Arms point with arg (>= 0), or disarms it (arg < 0). */
void fault_arm(enum fault_point point, long arg);

/* Whether point is armed; if so, *arg is its argument. */
int fault_armed(enum fault_point point, long *arg);

/* "after-record", "after-evict-record", "after-native". */
const char *fault_point_name(enum fault_point point);

/*
 * Logs "test fault: MESSAGE (fault point NAME)" as a warning and ends the
 * process at once with status 3 (_exit: no cleanup, as a crash would).
 */
_Noreturn void fault_exit(enum fault_point point, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
