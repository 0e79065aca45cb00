/*
 * hypercheck: what the webhook decides about a Volcano HyperNode
 * (topology.volcano.sh/v1alpha1), a pure function of the object.
 *
 * A HyperNode CREATE or UPDATE is denied, naming the field, when the gate's
 * parser (lib/sched/place/hypernode.h) would mark it invalid later: no
 * spec.tier or one that is not an integer >= 0, no members, a member type
 * other than Node or HyperNode, a selector with none or several of
 * exactMatch, regexMatch and labelMatch, an empty name or pattern, a
 * regexMatch.pattern that regcomp (POSIX extended, as the parser compiles
 * it) refuses, a labelMatch on a HyperNode member, or a labelMatch
 * requirement with a bad operator or values. The gate's parser calls it first
 * (hypernode_upsert), so both judge by these rules in these words;
 * test_hypercheck holds both to the same fixtures. A cycle of children is the
 * set's, not the object's, and is not judged here.
 *
 * Pure: no I/O.
 */
#ifndef RAYGATE_HYPERCHECK_H
#define RAYGATE_HYPERCHECK_H

#include <jansson.h>

#include "error.h"

/* Returns 0 when the HyperNode obj (borrowed) is valid, else -1 with err naming the field. */
int hypercheck_validate(const json_t *obj, struct error *err);

#endif
