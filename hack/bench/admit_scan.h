/* admit_bench --scan (admit_scan.c): the gate's eviction scan over a cache of running gangs, and the cache's memory. */
#ifndef RAYGATE_ADMIT_SCAN_H
#define RAYGATE_ADMIT_SCAN_H

#include "admit_bench.h"

/* Prints its JSON on stdout; returns the exit status. */
int admitbench_scan(struct opts *o);

#endif
