/*
 * config: raygate-dispatch's settings, from its command line (main.c), read
 * by every module of the program. Strings are borrowed from argv.
 */
#ifndef RAYGATE_DISPATCH_CONFIG_H
#define RAYGATE_DISPATCH_CONFIG_H

#include <stdint.h>

struct dispatch_options {
    const char *kubeconfig;   /* the manager's; NULL: $KUBECONFIG, else in-cluster */
    const char *context;      /* its context; NULL: current-context */
    const char *cluster_name; /* this manager's name: the raygate.io/dispatched-from label on copies */
    const char *namespace_;   /* where the workers' Secrets live */
    const char *metrics_addr; /* NULL: not served */
    int64_t timeout_ms;       /* --dispatch-timeout: a copy not admitted this long after dispatch is withdrawn */
    int64_t lease_ms;         /* --dispatch-lease: a worker's gate evicts a copy whose lease was not renewed this long */
    int64_t margin_ms;        /* --dispatch-lease-margin: added to the lease before re-dispatching off a lost worker */
    int64_t resync_ms;        /* --resync: one pass (workers, views, manager objects) this often */
    /* --test-fault-exit-at-nomination (test only; 0: off): exit(3) at the Nth nomination of this process, after
       writing raygate.io/dispatched-to on the manager object and before creating its copy, as a crash would. */
    int64_t fault_exit_at_nomination;
    int log_level;
};

#endif
