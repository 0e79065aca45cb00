/*
 * rayjobmutate: the webhook's decision on a RayJob, the gang that rayjob.h
 * reads from it written onto the object: PodGroup annotations on the RayJob,
 * the queue, group and member marks on the templates of its cluster and of its
 * submitter.
 */
#ifndef RAYGATE_RAYJOBMUTATE_H
#define RAYGATE_RAYJOBMUTATE_H

#include <jansson.h>

#include "error.h"
#include "mutate.h"
#include "rayjob.h"

/*
 * The webhook's decision on a RayJob (borrowed) on CREATE and UPDATE, when it
 * has a non-empty volcano.sh/queue-name label and no clusterSelector (that one
 * is allowed unchanged, with a warning): on the RayJob the annotations
 * raygate.io/min-member, raygate.io/min-resources (submitter included), in
 * K8sJobMode raygate.io/submitter-resources, and (name known)
 * scheduling.k8s.io/group-name ray-<rayjob>-pg; on every template of
 * spec.rayClusterSpec what mutate_pod_template() sets; in K8sJobMode the
 * submitter template (KubeRay's default written out when absent, so that the
 * submitter pod carries the queue) gets the same plus the label
 * raygate.io/rayjob-submitter=true. With opts->dra (mutate.h; opts may be
 * NULL), raygate.io/min-resources counts its cluster's device claims as a
 * RayCluster's do. out must be initialised and empty.
 * Returns 0 (allowed; patch and warnings set when any), or -1 with err.
 */
int rayjob_mutate(const json_t *rayjob, const struct mutate_options *opts, struct mutate_result *out, struct error *err);

#endif
