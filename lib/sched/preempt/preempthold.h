/*
 * preempthold: the room held for a preemptor (preempt.h) while the gangs it
 * preempted are evicted, so that no third gang takes it. Pure: no I/O, no
 * threads, no clock (the caller gives the time).
 *
 * A preemptor P is held while the eviction of some victim V for it is in
 * flight (preempthold_in_flight): V names it (raygate.io/preempted-by "ns/P",
 * from the watch or cache_gang_mark_preempted), is not admitted, was evicted
 * (evicted-at) less than PREEMPTHOLD_MAX_MS ago with reason Preempted or
 * Reclaimed, and still has pods that hold room (ungated or bound, not
 * finished, terminating ones included: preempthold_pods_remain).
 * Once no victim's pods remain, P stays held until a decision pass has weighed
 * it once more (admit.h): admitted, or, when it does not fit after all (a node
 * went away meanwhile), let go to wait in order like any gang. The hold ends
 * as well when P is deleted, is admitted, its spec becomes invalid, or
 * PREEMPTHOLD_MAX_MS after the eviction (the victims' pods never went: their
 * eviction gave up).
 *
 * What a held preemptor gets, in every pass (admit.c): it is weighed before
 * every other gang; when it does not fit yet (its victims' pods are still
 * there), its minResources are charged to its queue and its unbound members
 * are placed on the nodes where they fit (fithold_place, larger first) before
 * any other gang is weighed, so that neither a gang of its queue nor one of
 * another queue on the same nodes, whatever its priority, takes the room its
 * victims free. A topology-constrained preemptor's members go, instead, on
 * the nodes of the domain it lands in once its victims' pods are gone
 * (preemptdomain_hold), so that the room freed there is what is held. A gang
 * that itself preempts under the rules still may, once
 * this preemption is over (preemptscan starts none while one is in flight).
 * The holder state is rebuilt from the cache after a restart (the victims'
 * records), except the one look after the victims' pods are gone.
 */
#ifndef RAYGATE_PREEMPTHOLD_H
#define RAYGATE_PREEMPTHOLD_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"

#define PREEMPTHOLD_MAX_MS (10 * 60 * 1000) /* after the eviction: its victims' pods never went, the hold is given up */

/* A held preemptor. */
struct preempthold_item {
    struct cache_gang *g;             /* borrowed from the cache */
    int victims_remain;               /* some victim's pods are not gone yet */
    char *victims;                    /* owned: "ns/a, ns/b", the victims whose pods remain; "" when none */
    struct cache_gang **victim_gangs; /* owned array of those victims (borrowed from the cache), for preemptdomain_hold() */
    size_t nvictim_gangs;
};

struct preempthold;

struct preempthold *preempthold_create(void);

/* Frees h; h may be NULL. */
void preempthold_destroy(struct preempthold *h);

/*
 * The preemptors held in cache c at now_ms (see above), in no particular
 * order: sets *out to an array owned by h (valid until the next refresh or
 * preempthold_forget) and returns its length. Remembers them for the next
 * refresh.
 */
size_t preempthold_refresh(struct preempthold *h, const struct cache *c, int64_t now_ms, const struct preempthold_item **out);

/* The item of g from the last refresh (borrowed, as above), or NULL when g is not held. */
const struct preempthold_item *preempthold_get(const struct preempthold *h, const struct cache_gang *g);

/*
 * Lets g go: a pass admitted it, or weighed it with no victim's pods left and
 * it did not fit. Its item stays in the last refresh's array (but
 * preempthold_get no longer finds it); the next refresh holds g again only if
 * a victim's pods remain.
 */
void preempthold_forget(struct preempthold *h, const struct cache_gang *g);

/* Whether g has pods an eviction must see gone: ungated or bound, not finished (terminating ones included). */
int preempthold_pods_remain(const struct cache_gang *g);

/*
 * Whether v's eviction by preemption is in flight at now_ms: v names its
 * preemptor (preempted_by), is not admitted and its pods remain, and its
 * eviction (evicted-at, reason Preempted or Reclaimed) was less than
 * PREEMPTHOLD_MAX_MS ago; a victim whose record is unknown (no evicted-at)
 * counts while its pods remain. While one is, preemptscan starts no other
 * preemption.
 */
int preempthold_in_flight(const struct cache_gang *v, int64_t now_ms);

#endif
