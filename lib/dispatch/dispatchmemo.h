/*
 * dispatchmemo: what the dispatcher remembers across passes about manager
 * objects, and when it forgets it.
 *
 * Two memos, each a JSON object owned by the dispatcher's loop:
 * - told: uid -> the last once-only Event token shown for that object
 *   ("dispatched", "lost gpu-east", ...), so that it is not repeated every
 *   pass;
 * - warned: the object's memo key (dispatch_memo_key) -> the last warning
 *   logged about it, so that a broken object is not logged every pass.
 * An object deleted with the dispatcher's finalizer has its told entry
 * dropped when the finalizer goes; one deleted without it (or while the
 * dispatcher was down) is pruned: dispatch_memo_prune keeps only the entries
 * of objects the manager still lists.
 *
 * Pure: no I/O.
 */
#ifndef RAYGATE_DISPATCHMEMO_H
#define RAYGATE_DISPATCHMEMO_H

#include <stddef.h>

#include <jansson.h>

/* Longest memo key, NUL included (longer ones are cut: kind, namespace and name are at most 63, 63 and 253). */
#define DISPATCH_MEMO_KEY_MAX 400

/*
 * The memo key of obj (borrowed: a manager RayCluster or RayJob), "Kind
 * ns/name" (e.g. "RayCluster ray/train"), into out (size bytes); returns out.
 * It is the name the logs give the object too.
 */
char *dispatch_memo_key(const json_t *obj, char *out, size_t size);

/*
 * Drops from told (borrowed, modified) every uid and from warned (borrowed,
 * modified) every memo key that no object of objects (borrowed: the array
 * of manager objects of a list that succeeded) has. Either memo may be NULL.
 */
void dispatch_memo_prune(json_t *told, json_t *warned, const json_t *objects);

#endif
