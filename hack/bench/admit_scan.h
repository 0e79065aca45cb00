/* admit_bench --scan (admit_scan.c): the gate's eviction scan over a cache of running gangs, and the cache's memory. */
#ifndef RAYGATE_ADMIT_SCAN_H
#define RAYGATE_ADMIT_SCAN_H

#include "admit_objects.h"

/* Prints its JSON on stdout; returns the exit status. */
int admit_scan_run(struct opts *o);

#endif
