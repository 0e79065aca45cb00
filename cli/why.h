/*
 * why: `kubectl raygate why NAME`, the full reason a gang is in its state and
 * what would have to change, as a pure function of a snapshot (view.h).
 */
#ifndef RAYGATE_CLI_WHY_H
#define RAYGATE_CLI_WHY_H

#include <jansson.h>

/*
 * Explains the gang named name in namespace ns (its owner's name, or its
 * PodGroup's name) from snapshot (borrowed). Returns a new object
 *   {"gang": <row as view_gangs>,
 *    "explanation": [line, ...],
 *    "ahead": [<row>, ...],            gangs before it in its queue's order
 *    "events": [{"type","reason","message","ageSeconds","count"}, ...]}
 * (events: the snapshot's Events about the gang's owner, newest last, at most
 * 10), or NULL when there is no such gang.
 *
 * For a gang that waits on its queue's capability, one line per resource it
 * is short of, e.g.
 *   "needs cpu 3; 1 free in queue q; 2 more when test-cluster-0 (priority 0) ends"
 * naming the admitted gangs of the queue whose end would cover the shortage,
 * lowest priority first, then newest first (by their minResources: what they
 * hold at least). When the gang needs more than the queue's capability:
 *   "needs cpu 6; the capability of queue q is 4: it must grow to at least 6".
 * The other reasons (nodes, fifo, pods, missing or closed queue, invalid spec,
 * eviction and backoff) get one line each saying what they wait for.
 */
json_t *why_explain(const json_t *snapshot, long long now, const char *ns, const char *name);

#endif
