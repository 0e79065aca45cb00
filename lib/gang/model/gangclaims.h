/*
 * gangclaims: the device claims of a gang or a pod (DRA, draset.h), and what
 * they count as in its queue.
 *
 * A pod names its claims in spec.resourceClaims[]: resourceClaimTemplateName
 * (each pod gets a claim of its own, made from the template) or
 * resourceClaimName (a claim that every pod naming it shares). A RayCluster's
 * gang counts each template once per pod of the template's group (the head
 * 1, a worker group its pods in minMember, gang.h), and each shared claim
 * once for the whole gang. A pod counts its templates' claims only: a shared
 * claim is the gang's, counted in its minResources, on the nodes by the pod
 * that carries it until kube-scheduler allocates it (sharedcarry.h), then by
 * the ledger (ledger.h).
 *
 * Pure. The legacy operator's clusters are not read (they carry no claims).
 */
#ifndef RAYGATE_GANGCLAIMS_H
#define RAYGATE_GANGCLAIMS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "draset.h"
#include "error.h"
#include "gang.h"
#include "resources.h"

struct gangclaims_use {
    char *name;   /* owned: the template's or the claim's name */
    int shared;   /* a resourceClaimName (counted once), else a template */
    int64_t pods; /* pods that use it (templates: its demand counts this many times) */
};

struct gangclaims {
    struct gangclaims_use *uses; /* owned */
    size_t n;
};

/* Releases what gc owns; gc may be NULL. */
void gangclaims_finish(struct gangclaims *gc);

/*
 * The claims of a RayCluster (borrowed) whose gang is spec (gang_from_raycluster's
 * or submitter_cluster_gang's) into out (caller storage, overwritten): those of
 * its head and of each worker group that counts pods. Returns 0 (out->n 0: none),
 * or -1 with err naming the field ("spec.workerGroupSpecs[0].template.spec.
 * resourceClaims[1]: names neither resourceClaimName nor resourceClaimTemplateName").
 */
int gangclaims_from_raycluster(const json_t *raycluster, const struct gang_spec *spec, struct gangclaims *out, struct error *err);

/* The claims of one pod spec (borrowed), each for 1 pod, into out; as above, with path "spec". */
int gangclaims_from_pod_spec(const json_t *pod_spec, struct gangclaims *out, struct error *err);

/*
 * Adds into out what gc counts as in namespace ns, by s (with_shared: the
 * shared claims too, once each). Returns 0; 1 when one cannot be counted yet,
 * with why (draset_template_demand); -1 on overflow, with why.
 */
int gangclaims_price(const struct gangclaims *gc, const struct draset *s, const char *ns, int with_shared, struct resources *out,
                     struct error *why);

/*
 * gangclaims_price() with the shared claims, where each claim that cannot be
 * counted yet is left out instead of stopping the sum: the webhook's sizing
 * of a gang (mutate.h), which writes what it knows and lets the gate make
 * the gang wait. Each reason left out (draset_template_demand's why) is
 * appended to *skipped as a string: a new array (caller owns it: json_decref)
 * made when the first is, else *skipped is left as it was. Returns 0, or -1
 * on overflow, with err.
 */
int gangclaims_price_known(const struct gangclaims *gc, const struct draset *s, const char *ns, struct resources *out,
                           json_t **skipped, struct error *err);

/*
 * Adds into out what gc's templates count as on the nodes beyond
 * gangclaims_price(): their requests' variants (draset_template_fit), for a
 * pod's fit. Shared claims are left out (the gang's: sharedcarry.h places them).
 * Returns 0, or -1 on overflow, with why.
 */
int gangclaims_price_fit(const struct gangclaims *gc, const struct draset *s, const char *ns, struct resources *out,
                         struct error *why);

#endif
