/*
 * submitter: the RayJob submitter pod a RayCluster's gang counts.
 *
 * KubeRay copies a RayJob's annotations onto the RayCluster it makes for it,
 * among them raygate.io/submitter-resources, the submitter pod's request the
 * webhook wrote on the RayJob (rayjob.h). That pod joins the cluster once it
 * is Ready; the webhook's annotations on the cluster (mutate.h) and the gate
 * controller's queue share (cache.h) count it from the start. Pure.
 */
#ifndef RAYGATE_SUBMITTER_H
#define RAYGATE_SUBMITTER_H

#include <jansson.h>

#include "error.h"
#include "gang.h"
#include "resources.h"

/*
 * The submitter's request a RayCluster (borrowed) made for a RayJob carries
 * (its raygate.io/submitter-resources annotation, copied from the RayJob), into
 * out, which must be initialised and is overwritten (left empty for any other
 * RayCluster). Returns 0, or -1 with err when the annotation does not parse.
 */
int submitter_of_cluster(const json_t *raycluster, struct resources *out, struct error *err);

/*
 * gang_from_raycluster() (same contract), plus, for a RayCluster made for a
 * RayJob, submitter_of_cluster()'s request in out->min_resources: the
 * webhook's annotations and the gate controller's queue share of such a
 * cluster count the submitter pod that will join it once it is Ready.
 */
int submitter_cluster_gang(const json_t *raycluster, struct gang_spec *out, struct error *err);

#endif
