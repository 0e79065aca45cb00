/*
 * topology: where a Ray cluster asks its pods to lie, read from the
 * RayCluster (or from a RayJob's spec.rayClusterSpec, or a RayService's
 * spec.rayClusterConfig, with that object's metadata). Pure; shared by the
 * webhook (denials) and the gate controller (placement, topoplace.h).
 *
 * Two ways to ask, both honoured:
 * - Volcano's: the labels (or annotations) volcano.sh/network-topology-mode
 *   "hard" | "soft" and volcano.sh/network-topology-highest-tier-allowed "N"
 *   on the RayCluster: the gang lies within one HyperNode of tier <= N
 *   (hypernode.h; no tier: any tier). Mode without a tier means any tier;
 *   a tier without a mode asks nothing (as KubeRay reads them), but must
 *   still be a tier. A label and an annotation giving different values is an
 *   error.
 * - By node label, as Kueue's podset-required-topology: the annotation
 *   raygate.io/topology-required: KEY (hard) or raygate.io/topology-preferred:
 *   KEY (soft) on the RayCluster (the whole gang) or on a worker group's
 *   template metadata (that group): its pods lie on nodes that share one value
 *   of label KEY.
 * Both on one object is an error (two answers to one question), and so are
 * required and preferred together on one object. Volcano's keys on a group's
 * template are not read.
 *
 * Ray-aware shapes:
 * - The head is left out of a gang-wide constraint unless the RayCluster's
 *   annotation raygate.io/topology-include-head is "true" ("false" or absent:
 *   left out; anything else is an error).
 * - A worker group with numOfHosts > 1 is a set of slices: each replica's
 *   hosts (pods sharing the label ray.io/worker-group-replica-name) lie in one
 *   domain of the group's constraint; different replicas may lie in different
 *   domains. A gang-wide constraint, when there is one as well, still holds
 *   the whole gang in one domain of its own.
 * - A group with its own constraint and numOfHosts 1: the group's pods lie in
 *   one domain of the group's key.
 *
 * Errors name the field, e.g. "metadata.labels[volcano.sh/network-topology-mode]:
 * unknown mode \"strict\" (hard or soft)", "metadata.annotations[volcano.sh/
 * network-topology-highest-tier-allowed]: \"two\" is not a tier (a positive
 * integer)", "spec.workerGroupSpecs[1].template.metadata.annotations[raygate.io/
 * topology-required]: empty label key" (a key must be a valid label key).
 */
#ifndef RAYGATE_TOPOLOGY_H
#define RAYGATE_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

#define TOPOLOGY_REQUIRED "raygate.io/topology-required"
#define TOPOLOGY_PREFERRED "raygate.io/topology-preferred"
#define TOPOLOGY_INCLUDE_HEAD "raygate.io/topology-include-head"
#define TOPOLOGY_VOLCANO_MODE "volcano.sh/network-topology-mode"
#define TOPOLOGY_VOLCANO_TIER "volcano.sh/network-topology-highest-tier-allowed"
/* The domains the gate controller chose at admission, recorded on the RayCluster (topoplace.h). */
#define TOPOLOGY_PLACED "raygate.io/topology-placed"
/* KubeRay's label on the pods of one replica of a multi-host worker group. */
#define TOPOLOGY_REPLICA_LABEL "ray.io/worker-group-replica-name"

enum topo_mode {
    TOPO_MODE_NONE = 0,
    TOPO_MODE_HARD, /* required: admitted only when one domain holds the set */
    TOPO_MODE_SOFT, /* preferred: one domain when one holds it, else the best spread; the PodGroup says which */
};

enum topo_by {
    TOPO_BY_LABEL = 0, /* domains are the values of node label key */
    TOPO_BY_HYPERNODE, /* domains are HyperNodes of tier <= max_tier */
};

/* One constraint: a set of pods lies in one domain. */
struct topo_constraint {
    uint8_t mode;     /* enum topo_mode; NONE: no constraint (the rest is zero) */
    uint8_t by;       /* enum topo_by */
    char *key;        /* owned: TOPO_BY_LABEL's node label key */
    int32_t max_tier; /* TOPO_BY_HYPERNODE: highest tier allowed; 0: any */
};

/* A worker group's own constraint or slice shape. */
struct topo_group {
    char *name;               /* owned groupName (the pods' ray.io/group label) */
    int64_t hosts;            /* numOfHosts (1 when absent) */
    struct topo_constraint c; /* the group's own annotation; NONE: the gang-wide constraint applies to its slices */
};

struct topo_request {
    struct topo_constraint gang; /* the whole gang's (RayCluster annotation or Volcano labels) */
    uint8_t include_head;        /* the head is in the gang-wide set */
    struct topo_group *groups;   /* owned: only groups with their own constraint or hosts > 1 (when any constraint exists) */
    size_t ngroups;
};

/* Initialises an empty request (no constraint) in caller-owned storage. */
void topology_request_init(struct topo_request *r);

/* Releases r's memory, leaving it empty; r may be NULL. */
void topology_request_finish(struct topo_request *r);

/*
 * Reads the request of obj (borrowed): a RayCluster, or a RayJob (its
 * metadata, and spec.rayClusterSpec for the groups; field paths then start
 * with spec.rayClusterSpec.), or a RayService (spec.rayClusterConfig). Which
 * one is told by the spec holding rayClusterSpec or rayClusterConfig, not by
 * kind (list items carry none). A numOfHosts that is not a positive integer
 * counts as 1 (the gang arithmetic, gang.h, reports it). out must be
 * initialised; it is overwritten.
 * Returns 0 (out may hold no constraint at all), or -1 with err naming the
 * field (out left empty).
 */
int topology_request_parse(const json_t *obj, struct topo_request *out, struct error *err);

/* Whether r constrains anything (the gang or a group). */
int topology_request_any(const struct topo_request *r);

/*
 * The one answer to "is this gang topology-constrained", for every form above
 * (raygate's annotations on the object or on a worker group's template,
 * Volcano's labels or annotations) on a RayCluster, a RayJob or a RayService
 * (borrowed): 1 when it asks for any constraint, 0 when it asks for none. A
 * request that does not parse answers 1: whatever decides by this answer
 * (the hold, which admits from a declaration without placing pods) must not
 * take a malformed request for no request; the webhook denies it anyway.
 */
int topology_constrained(const json_t *obj);

/*
 * The constraint that applies to the pods of group name (NULL: the head): the
 * group's own, else the gang's; for the head the gang's only when include_head
 * is set. Never NULL: a constraint of mode NONE when nothing applies.
 */
const struct topo_constraint *topology_request_for(const struct topo_request *r, const char *group);

/* "hard" / "soft" / "none". */
const char *topology_mode_name(enum topo_mode m);

/*
 * What a constraint asks, for messages: "one nvidia.com/gpu.clique domain",
 * "one HyperNode of tier <= 2", "one HyperNode" (any tier); NULL or mode NONE:
 * "no topology constraint". Cut to size (util_format).
 */
void topology_constraint_text(const struct topo_constraint *c, char *buf, size_t size);

#endif
