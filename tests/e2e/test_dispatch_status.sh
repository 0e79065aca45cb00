#!/usr/bin/env bash
# What the manager shows.
# 1. No worker fits: the gang waits on the manager, undispatched, with the
#    reasons of each worker (annotation raygate.io/dispatch-reasons, JSON
#    {"worker": "message"}), and is dispatched as soon as a worker has room
#    (b's Queue grows).
# 2. A RayJob runs on a worker and its completion shows on the manager. The
#    manager's RayJob is copied to b (the only worker its Queue names); b's
#    KubeRay makes its RayCluster, b's gate admits it whole. kwok's pods run no
#    Ray, so Ray's answer is played on b: the copy's status is set to what
#    KubeRay writes for a job that succeeded (jobStatus SUCCEEDED,
#    jobDeploymentStatus Complete); the manager's RayJob must then show both.
. "$(dirname "$0")/multi.sh"
multi_setup
samp_start
U="$(e2e_uid)"

# 1. None fits.
mq "wait-$U" a=2 b=2
m_raycluster big "wait-$U" workers=2 # 3 CPUs: neither Queue holds them
reasons() { m_annotation rayclusters.ray.io big raygate.io/dispatch-reasons; }
# (jq 1.6 -e exits 0 on no input: the annotation's absence is checked first)
per_worker() {
	local r
	r="$(reasons)" && [[ -n "$r" ]] &&
		jq -e 'type == "object" and (.a | type == "string" and length > 0) and (.b | type == "string" and length > 0)' <<<"$r" >/dev/null
}
eventually 60 "big waits on the manager with a reason for a and one for b" per_worker
say "    reasons: $(reasons)"
r="$(reasons)"
[[ -n "$r" ]] && jq -e '[.a, .b] | all(test("cpu"))' <<<"$r" >/dev/null || fail "the reasons do not name cpu: $(reasons)"
pass "both reasons name the resource that is short (cpu)"
undispatched() { [[ -z "$(dispatched_to rayclusters.ray.io big)" ]] && no_copy a rayclusters.ray.io big && no_copy b rayclusters.ray.io big; }
stays 10 "big is not dispatched while no worker fits" undispatched

mq_cap b "wait-$U" 4
big_uid="$(m_uid rayclusters.ray.io big)"
eventually 60 "big is dispatched to b once b's Queue has room" is dispatched_to rayclusters.ray.io big b
eventually 30 "b has big's copy" has_copy b rayclusters.ray.io big "$big_uid"
eventually 90 "big's 3 pods all bound on b" w_all_bound b big 3
no_copy a rayclusters.ray.io big || fail "a has a copy of big"
pass "a has no copy of big"

# 2. A RayJob.
mq "job-$U" a=8 b=8 to=b
sed -e "s/name: rayjob-sample/name: job/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: job-$U/" \
	"$ROOT/samples/rayjob-sample.yaml" | on m apply -n "$NS" -f - >/dev/null || fail "cannot create RayJob job on the manager"
uid="$(m_uid rayjob job)"
eventually 60 "job is dispatched to b" is dispatched_to rayjob job b
eventually 30 "b has job's copy (origin uid $uid)" has_copy b rayjob job "$uid"
job_cluster() { on b get rayclusters.ray.io -n "$NS" -l ray.io/originated-from-cr-name=job,ray.io/originated-from-crd=RayJob -o jsonpath='{.items[0].metadata.name}'; }
has_job_cluster() { [[ -n "$(job_cluster 2>/dev/null)" ]]; }
eventually 60 "b's KubeRay made job's RayCluster" has_job_cluster
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
samp_stop
