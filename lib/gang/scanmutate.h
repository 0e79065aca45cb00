/*
 * scanmutate: mutate_raycluster()'s patch for a RayCluster, written from the
 * request body's scan (jsonscan.h) instead of a copy of a jansson tree and a
 * diff of the two.
 *
 * The webhook's RayCluster fast path (admission.h) calls it. The operations
 * are the few mutate_raycluster() can produce (the cluster's annotations; on
 * the head's and every worker's template the queue label, the group-name
 * annotation and the priority class), written in the order and with the text
 * jsonpatch_diff() and json_dumps(JSON_COMPACT) give them: the same bytes.
 * String values are copied from the scan only when they carry no escapes
 * (ASCII without quotes, backslashes or control characters: what jansson
 * writes as it is); anything else is declined.
 */
#ifndef RAYGATE_SCANMUTATE_H
#define RAYGATE_SCANMUTATE_H

#include <jansson.h>

#include "jsonscan.h"
#include "mutate.h"
#include "util.h"

/*
 * The patch of the RayCluster at token object of s. raycluster (borrowed) is
 * the same object as a jansson tree holding at least what the gang arithmetic
 * reads (submitter_cluster_gang()); it is read for the gang only.
 * Returns 1 when decided as mutate_raycluster() decides: patch holds the
 * operations as JSON text ("[...]"; nothing appended when there are none) and
 * out->warnings what mutate_raycluster() warns (out->patch is left NULL).
 * Returns 0 when declined: the object is denied (the jansson path words why),
 * is a legacy RayCluster, or holds a string it cannot copy as it is; patch may
 * then hold part of the text, and out may hold warnings: the caller drops both.
 */
int scanmutate_raycluster(const struct jsonscan *s, long object, const json_t *raycluster, struct util_buf *patch,
                          struct mutate_result *out);

#endif
