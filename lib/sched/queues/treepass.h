/*
 * treepass: what an admission pass (admit.h) puts into the queue tree
 * (qtree.h) and reads back from it.
 *
 * A pass builds the tree over the cache, then adds what every queue's gangs
 * hold (alloc: hold.h's sums, the same a pass charges a queue it evaluates)
 * and ask for (demand: the minResources of its gangs not admitted), and
 * derives deserved. A gang's verdict then depends on its ancestors and their
 * other children: see admit.h. Pure: no I/O.
 */
#ifndef RAYGATE_TREEPASS_H
#define RAYGATE_TREEPASS_H

#include <stddef.h>
#include <stdint.h>

#include "admitresult.h"
#include "cache.h"
#include "marks.h"
#include "qtree.h"

/*
 * Whether one queue's verdicts depend on other queues' gangs beyond the nodes:
 * some queue of c has a parent or a guarantee (what qtree_build() calls
 * nested), or a Queue named "root" exists (its capability bounds every
 * queue). O(queues), without building the tree.
 */
int treepass_linked(const struct cache *c);

/* g's minResources, dense (nres of out; unlisted resources 0). */
void treepass_min_dense(const struct cache_gang *g, uint32_t nres, int64_t *out);

/*
 * Adds to t the alloc of every gang of the queues whose skip[i] is 0 (skip:
 * t->n, indexed like t->queues; NULL: none skipped): an admitted gang holds
 * hold_gang(), another hold_ungated() (m: the pass's marks); the demand of
 * every queue (skipped or not): what its gangs hold, plus the minResources of
 * its present gangs that are not admitted (as qtree_fill()); then derives deserved (qtree_derive). A queue
 * skipped has its alloc added by the caller. a, tail: t->nres of scratch each. A queue not skipped keeps its
 * sums in the cache (cache_queue's memo) while none of its gangs changes: a pass that evaluates a few queues
 * does not walk the others' gangs again.
 */
void treepass_load(struct qtree *t, const struct marks *m, const unsigned char *skip, int64_t *a, int64_t *tail);

/*
 * A queue the tree does not let hold gangs (not qtree_leaf_usable): returns
 * ADMIT_REASON_QUEUE_NOT_LEAF ("queue eng has children (train, infer): only
 * leaf queues hold gangs") or ADMIT_REASON_QUEUE_BAD_TREE ("queue a is in a
 * cycle: treated as Closed") with the message (new) in *why; else
 * ADMIT_REASON_NONE. i: q's tree index (QUEUETREE_ROOT: none).
 */
enum admit_reason treepass_unusable(const struct qtree *t, size_t i, const struct cache *c, char **why);

/*
 * Whether need (dense) fits leaf i and its ancestors (qtree_fits); if not,
 * appends why to b and returns the reason: ADMIT_REASON_QUEUE_TREE (a level's
 * capability, *guarantee set when it is room guaranteed to another queue),
 * QUEUE_NOT_LEAF or QUEUE_BAD_TREE. ADMIT_REASON_NONE when it fits (or i is
 * QUEUETREE_ROOT).
 */
enum admit_reason treepass_fits(const struct qtree *t, size_t i, const int64_t *need, const struct cache *c, struct util_buf *b,
                                int *guarantee);

#endif
