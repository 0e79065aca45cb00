#!/usr/bin/env bash
# Issue 25: a RayJob runs on a worker and its completion shows on the manager.
# The manager's RayJob is copied to b (the only worker its Queue names); b's
# KubeRay makes its RayCluster, b's gate admits it whole. kwok's pods run no
# Ray, so Ray's answer is played on b: the copy's status is set to what KubeRay
# writes for a job that succeeded (jobStatus SUCCEEDED, jobDeploymentStatus
# Complete); the manager's RayJob must then show both.
. "$(dirname "$0")/multi.sh"
multi_setup
U="$(e2e_uid)"
mq "job-$U" a=8 b=8 to=b
sed -e "s/name: rayjob-sample/name: job/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: job-$U/" \
	"$ROOT/samples/rayjob-sample.yaml" | on m apply -n "$NS" -f - >/dev/null || fail "cannot create RayJob job on the manager"
uid="$(m_uid rayjob job)"
eventually 60 "job is dispatched to b" is dispatched_to rayjob job b
eventually 30 "b has job's copy (origin uid $uid)" has_copy b rayjob job "$uid"
job_cluster() { on b get rayclusters.ray.io -n "$NS" -l ray.io/originated-from-cr-name=job,ray.io/originated-from-crd=RayJob -o jsonpath='{.items[0].metadata.name}'; }
eventually 60 "b's KubeRay made job's RayCluster" job_cluster
rc="$(job_cluster)"
eventually 90 "job's cluster $rc: 3 pods all bound on b" w_all_bound b "$rc" 3
no_copy a rayjob job || fail "a has a copy of job"
pass "a has no copy of job"
m_status() { on m get rayjob -n "$NS" job -o json | jq -r '"\(.status.jobStatus // "") \(.status.jobDeploymentStatus // "")"'; }
eventually 60 "the manager's job shows b's deployment status (Initializing or Running)" \
	eval '[[ "$(m_status)" == *" Initializing" || "$(m_status)" == *" Running" ]]'

# Ray's success, as KubeRay records it on b.
now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
on b patch rayjob -n "$NS" job --subresource status --type merge \
	-p "{\"status\":{\"jobStatus\":\"SUCCEEDED\",\"jobDeploymentStatus\":\"Complete\",\"endTime\":\"$now\"}}" >/dev/null ||
	fail "cannot set the status of b's job"
eventually 60 "the manager's job is SUCCEEDED and Complete" is m_status "SUCCEEDED Complete"
