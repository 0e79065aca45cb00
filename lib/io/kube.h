/*
 * kube: raygate's Kubernetes API client (libcurl + jansson).
 *
 * A client holds a resolved kubeconfig (kubeconfig.h): the server, TLS trust
 * (CA file or in-memory data, or insecure), client certificate and bearer
 * token. The token file is re-read at least every minute and after a 401
 * (bound service-account tokens expire); the token is never logged.
 *
 * Three ways to talk to the API server, each in its own file:
 * - synchronous helpers (kube_get, kube_list, kube_create, kube_patch,
 *   kube_update, kube_delete, kube_request; kubereq.h): one request, the
 *   caller blocks;
 * - a batch (kube_batch, kubereq.h): N requests run concurrently on one curl
 *   multi handle, at most `concurrency` in flight, multiplexed over HTTP/2
 *   when the server speaks it (the API server does, over TLS);
 * - a watcher (kube_watcher_create, kube_watch_start; kubewatch.h): list then
 *   watch any number of collections from ONE thread driven by one curl multi
 *   handle.
 * All three share the client (kubeclient.h): its configuration, token, pooled
 * connections and the one HTTP exchange they are built on. This header is
 * what callers include: it brings in all three.
 *
 * Retries: a 401 re-reads the token file and retries once if the token
 * changed; a 429, or a 5xx carrying Retry-After, is retried (up to
 * max_retries) after Retry-After seconds or an exponential backoff with
 * jitter. Transport errors are not retried by the request helpers (they are
 * by the watcher).
 *
 * THREADING CONTRACT
 * - A kube_client is thread-safe: any thread may call the synchronous helpers
 *   and kube_batch concurrently. Each call blocks its caller and runs on a
 *   multi handle taken from the client's pool (connections are reused).
 *   kube_client_destroy must not race any call.
 * - A kube_watcher owns one thread. kube_watch_start may be called from any
 *   thread, before or after watches are running; it hands the watch to the
 *   watcher thread and wakes it (curl_multi_wakeup: the multi handle's wakeup
 *   socketpair). All callbacks of all watches of one watcher run on that
 *   thread, one at a time, never concurrently: callbacks need no lock among
 *   themselves, only against the caller's other threads. A callback may call
 *   the synchronous helpers and kube_batch (they do not use the watcher's
 *   thread) but must not call kube_watcher_destroy, and should return quickly
 *   (every watch of the watcher waits for it).
 * - kube_watcher_destroy stops the thread (closing the streams) and returns
 *   once no callback is running and none will run again.
 */
#ifndef RAYGATE_KUBE_H
#define RAYGATE_KUBE_H

#include "kubeclient.h"
#include "kubereq.h"
#include "kubewatch.h"

#endif
