/*
 * dracache: the cache and a DRA set (draset.h). The gate's watches feed the
 * set; the cache borrows it (dracache_use) to price claims as its pods and
 * RayClusters come (devices.h), and before each pass dracache_prepare()
 * brings the nodes' ledger up to date and prices every claim again when
 * what claims count as has changed. Pure.
 */
#ifndef RAYGATE_DRACACHE_H
#define RAYGATE_DRACACHE_H

#include "cache.h"
#include "draset.h"

/* The cache counts devices by s (borrowed, NULL: none; it must outlive its use); prices again at the next prepare. */
void dracache_use(struct cache *c, struct draset *s);

/*
 * A watch event of a DRA object (obj borrowed; deleted 1 for DELETED) into the
 * set: draset_record(), and room may have changed when the nodes' devices did.
 * Returns its DRASET_CHANGED_* bits, with err as draset_record() sets it.
 */
unsigned dracache_record(struct cache *c, enum draset_kind kind, int deleted, const json_t *obj, struct error *err);

/*
 * Before a pass: the ledger (ledger_prepare) and, when draset_demand_generation
 * moved, every pod's and gang's price; then the carriers of the shared claims
 * not allocated yet (sharedcarry.h: their gangs' queues dirty). Returns 1 when
 * a price changed (every queue is then dirty and room may have changed), else 0.
 */
int dracache_prepare(struct cache *c);

#endif
