/*
 * topoconfine: what keeps a topology-constrained gang's pods in the domains
 * chosen at admission (topoplace.h), once their gates are gone, and the record
 * of those domains on the RayCluster, read back for pods that come later (a
 * member replaced after admission goes to its set's domain). Pure.
 */
#ifndef RAYGATE_TOPOCONFINE_H
#define RAYGATE_TOPOCONFINE_H

#include <jansson.h>

#include "cache.h"
#include "fit.h"
#include "topoplace.h"

/*
 * What is merged into pod's spec when its gate is removed, to keep it in its
 * set's domain (new reference; NULL when the pod is in no set or its set
 * spread): {"nodeSelector": {KEY: VALUE}} for a label domain; for a HyperNode,
 * required node affinity on kubernetes.io/hostname In (the domain's nodes'
 * hostnames), added to every term the pod already has (Kubernetes allows
 * only additions on a gated pod).
 */
json_t *topoconfine_pod(const struct topoplace_set *s, const struct cache_pod *pod, const struct fit *f);

/*
 * The RayCluster annotation raygate.io/topology-placed recording out (new
 * string, JSON): {"gang": "rack-a", "group/gpu": "rack-b", "slice/<replica>": "rack-c",
 * "spread": true}; keys only for the sets out holds.
 */
char *topoconfine_record(const struct topoplace_out *out);

/*
 * For a pod that comes after admission (FINISH: a member replaced, or one
 * created late): its confinement from the gang's recorded domains (record: the
 * annotation's value, borrowed), the gang's request r and the pass's domains;
 * NULL when its set was spread, is not recorded, or its domain no longer
 * exists (the pod then goes anywhere, and the caller may say so).
 */
json_t *topoconfine_recorded(const char *record, const struct topo_request *r, const struct cache_pod *pod, struct topodomains *t,
                             const struct fit *f);

#endif
