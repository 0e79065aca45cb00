/*
 * cachelease: the cache's dispatch leases (dispatchlease.h) whose sighting is
 * to be recorded on their RayCluster (NAMES_ANNOTATION_DISPATCH_LEASE_SEEN),
 * for the gate that writes them (gate/lead/leaseseen.h). cache_upsert_raycluster
 * marks the news when a lease's counter is seen change and the record does not
 * hold it; the writer takes the news, finds the gangs (cache_for_each_gang,
 * dispatchlease_record_wanted, dispatchlease_record_patch), and says what
 * became of each write. Pure.
 */
#ifndef RAYGATE_CACHELEASE_H
#define RAYGATE_CACHELEASE_H

#include <stdint.h>

#include "cache.h"

/* Whether a lease's sighting may be to record since the last call (or cachelease_keep_news); clears the mark. */
int cachelease_take_news(struct cache *c);

/* The news taken are to be taken again (a writer that did not lead when it came to write). */
void cachelease_keep_news(struct cache *c);

/*
 * The record of g's sighting of counter was written (ok: the API accepted it;
 * g wants no write until its counter changes, even before the watch brings
 * the record back), or failed (!ok: the news stay, to try again).
 */
void cachelease_written(struct cache *c, struct cache_gang *g, uint64_t counter, int ok);

#endif
