/*
 * hypernode: Volcano's network topology (topology.volcano.sh/v1alpha1
 * HyperNode, cluster-scoped), read from list and watch, and resolved into the
 * node sets that topology-constrained gangs are placed in (topodomain.h).
 *
 * A HyperNode has spec.tier (an integer >= 0, as Volcano's CRD allows;
 * lower tiers are closer, e.g. 1 a rack's switch, 2 a spine) and
 * spec.members, each {type: Node | HyperNode, selector: one of exactMatch
 * {name}, regexMatch {pattern} (POSIX extended; a search, as Volcano's Go
 * regexp.MatchString: the pattern anchors itself with ^ and $), labelMatch
 * {matchLabels, matchExpressions} (Node members only; an empty one selects
 * nothing, as in Volcano)}. Members of type HyperNode name child HyperNodes
 * (exact or regex); a HyperNode covers its own Node members and every node
 * its children cover, recursively.
 *
 * An invalid HyperNode (no tier, no members, a bad regex or label
 * selector, an unknown member type, a member with no or several selectors)
 * is kept, marked invalid with the reason (the controller reports it in an
 * Event), and ignored: never fatal, and the others stand. A cycle through
 * children is the set's: the upsert that closes it says so, and every
 * HyperNode on it is left out of the domains until it is broken.
 *
 * Pure: no I/O, no threads, no clock.
 */
#ifndef RAYGATE_HYPERNODE_H
#define RAYGATE_HYPERNODE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cache.h"
#include "error.h"

struct hypernodes;

/* One resolved HyperNode: a domain of nodes. */
struct hypernode_domain {
    const char *name; /* the HyperNode's name; valid until the next change of the set */
    int32_t tier;
    struct cache_node **nodes; /* the Ready and not-Ready nodes of the cache it covers, sorted by name */
    size_t nn;
};

struct hypernodes *hypernode_create(void);
void hypernode_destroy(struct hypernodes *h);

/*
 * Adds or replaces the HyperNode obj (borrowed). Returns 0, or -1 with err
 * saying why it is invalid ("spec.members[2].selector.regexMatch.pattern:
 * ..."): it is then kept as invalid and ignored.
 */
int hypernode_upsert(struct hypernodes *h, const json_t *obj, struct error *err);

/* Removes HyperNode name (absent: nothing). */
void hypernode_delete(struct hypernodes *h, const char *name);

/* Bumped by every change of the set: resolved domains of an older generation are stale. */
uint64_t hypernode_generation(const struct hypernodes *h);

/* How many HyperNodes the set holds, valid or not. */
size_t hypernode_count(const struct hypernodes *h);

/*
 * The valid HyperNodes, resolved against the nodes of c: sets *out to a new
 * array (caller frees with hypernode_domains_free) of one domain per valid
 * HyperNode with at least one node, sorted by tier then name, and returns its
 * length. A HyperNode in a child cycle is left out.
 */
size_t hypernode_resolve(const struct hypernodes *h, const struct cache *c, struct hypernode_domain **out);
void hypernode_domains_free(struct hypernode_domain *d, size_t n);

#endif
