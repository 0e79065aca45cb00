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
 * hostnames: their kubernetes.io/hostname label, else their name), added at
 * the end of every term the pod already has, the terms otherwise exactly as
 * the apiserver gave them (Kubernetes allows only additions on a gated pod).
 * Also NULL for a label domain when the pod's own nodeSelector gives KEY
 * another value: it cannot be confined there, and the caller takes it as not
 * fitting the domain (fit honours the pod's nodeSelector, so a placement never
 * puts it there).
 */
json_t *topoconfine_pod(const struct topoplace_set *s, const struct cache_pod *pod, const struct fit *f);

/*
 * The RayCluster annotation raygate.io/topology-placed recording out (new
 * string, compact JSON, keys sorted): {"gang": "rack-a", "group/gpu": "rack-b",
 * "slice/<replica>": "rack-c", "spread": true}; the values are domain names;
 * keys only for the sets out holds that went to a domain, "spread" only when
 * out->spread.
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
