/*
 * httpd: the programs' plain-HTTP endpoint for Prometheus and kubelet probes
 * (raygate-gate, raygate-dispatch), on h2o's evloop in a thread of its own.
 * Not in the raygate library (which does not link h2o): a program that serves
 * it compiles lib_httpd_sources (lib/meson.build) with the h2o dependency.
 *
 *   GET /metrics   Prometheus text (lib/core/metrics.h)
 *   GET /healthz   200 while the process runs
 *   GET /readyz    200 once ready() says so (caches synced), else 503
 *
 * It never touches the program's state except through ready().
 */
#ifndef RAYGATE_HTTPD_H
#define RAYGATE_HTTPD_H

#include "metrics.h"

struct httpd;

/*
 * Returns non-zero when the program is ready; may write a one-line reason into
 * why (size bytes) when it is not. Called on the httpd thread.
 */
typedef int (*httpd_ready_fn)(void *arg, char *why, size_t size);

/*
 * Binds addr (lib/io/listen.h forms) and starts serving reg (borrowed; must
 * outlive the httpd). Returns the server, or NULL after logging why.
 */
struct httpd *httpd_start(const char *addr, struct metrics_registry *reg, httpd_ready_fn ready, void *ready_arg);

/* The port it listens on (the one the system chose when addr asked for port 0), or -1. */
int httpd_port(const struct httpd *h);

/* Stops serving, joins the thread and frees everything. Accepts NULL. */
void httpd_stop(struct httpd *h);

#endif
