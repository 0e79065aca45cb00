/*
 * fithold: the room admitted pods hold on the nodes in a pass, whether or not
 * it is there. Pure (the fit's state only).
 *
 * The pass places an admitted gang where its fit found room, but
 * kube-scheduler binds its pods where it scores best: the two plans can
 * differ, and a pod the gate admitted may then fit on no node (its room taken
 * by another gang's pods, or split across nodes). Such a pod still holds its
 * room: it waits for it, and a later admission that took it would leave the
 * nodes asked for more than they have, two gangs partly placed instead of one.
 * So its reservation goes to the node where it is least short, whose free room
 * goes below zero, and nothing admitted after it lands there until the room
 * comes back; when it may go to any node, what that node lacks is owed by the
 * others too (fit_take_on()).
 */
#ifndef RAYGATE_FITHOLD_H
#define RAYGATE_FITHOLD_H

#include "cache.h"
#include "fit.h"

/*
 * Places admitted pod for good: where it fits (first fit, as fit_place()),
 * else on the node it may go to (fit_node_matches()) that is least short of
 * its request (the smallest largest fraction of a requested resource, or of a
 * pod slot, it lacks; ties: the first by name); nothing when no node matches.
 * Returns 1 when it fits, 0 when held on a node short of room, -1 when
 * nowhere.
 */
int fithold_reserve(struct fit *f, struct cache_pod *pod);

/* Places pod for good when it fits somewhere (a held preemptor's member: its victims' room comes back); else nothing. Returns 1
 * when placed. */
int fithold_place(struct fit *f, struct cache_pod *pod);

/*
 * The reservations of a pass: every pod of c's reserving list (admitted, not
 * bound), larger first, fithold_reserve()d. scratch: c->nreserving pods' room.
 * Returns how many fit nowhere with room (held short, or nowhere).
 */
size_t fithold_admitted(const struct cache *c, struct fit *f, struct cache_pod **scratch);

#endif
