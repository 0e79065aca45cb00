/*
 * hold: what a gang holds of its queue's capability (admit.h): once any of its
 * admitted (ungated) pods has not finished, per resource the larger of its
 * minResources and its members' requests, plus its tail's requests. Pure.
 */
#ifndef RAYGATE_HOLD_H
#define RAYGATE_HOLD_H

#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "marks.h"
#include "resources.h"
#include "util.h"

/*
 * What g holds in its queue (dense, into out), counting extra as ungated and the
 * pods m marks MARKS_ADMITTED too (MARKS_TAIL: its tail), nres resources: the
 * larger of minResources and its members' requests (with its terminating pods'),
 * plus the requests of its ungated tail (tail: nres of scratch);
 * 0 once its ungated pods are gone. minResources stays held for a member being
 * replaced, so that its replacement needs no room the tail took meanwhile.
 */
void hold_gang(const struct marks *m, uint32_t nres, const struct cache_gang *g, const struct cache_pod *extra, int64_t *out,
               int64_t *tail);

/*
 * What the ungated, unfinished pods of a gang that is not admitted request (dense, into out). Its RayCluster
 * was deleted and created again under the same name while the old one's admitted pods still terminate, or
 * its pods were created before raygate: either way they use the queue's share until they are gone.
 */
void hold_ungated(const struct marks *m, uint32_t nres, const struct cache_gang *g, int64_t *out);

/* admit_gang_hold() (admit.h), which see. */
int hold_resources(const struct cache *c, const struct cache_gang *g, struct resources *out, struct error *err);

/* admit_gang_hold_ref() (admit.h), which see. */
const struct resources *hold_resources_ref(const struct cache *c, const struct cache_gang *g, struct resources *scratch,
                                           struct error *err);

/*
 * Checks need (dense, what the queue's holding would grow by) against q's
 * capability with held (dense) taken; returns 1 if it fits, else 0 with "cpu
 * needs 3, 1 of 4 free; ..." in *why (new). formats gives the format of each
 * needed amount (NULL: the capability's).
 */
int hold_fits(const struct cache *c, const struct cache_queue *q, const int64_t *held, const int64_t *need,
              const struct resources *formats, char **why);

#endif
