#!/usr/bin/env bash
# RayJobs with the real KubeRay RayJob controller (docs/rayjob.md): RayJobs (K8sJobMode, KubeRay's
# default submitter of 500m CPU, 200Mi) in a queue with room for one job, its
# cluster (cpu 3, 4Gi) plus its submitter.
# - The webhook sizes the RayJob: minMember 3 (no submitter), minResources
#   cpu 3500m, memory 4296Mi (the submitter counted).
# - The first job's cluster is admitted whole; its submitter is created by
#   KubeRay once the cluster is Ready (after the admission) and bound; the
#   Queue's status.allocated includes the submitter.
# - The second job waits whole (no pod bound, no submitter) and is admitted
#   once the first RayJob is deleted.
# - A queue with room for the cluster (cpu 3) but not its submitter: the job
#   waits and its PodGroup says why.
# - Each job has one PodGroup, ray-<rayjob>-pg, owned by the RayJob; none is
#   named after the RayCluster KubeRay made for it.
# - Where the native API is served and the step is on: the cluster's pods
#   name one native PodGroup whose minCount is their number; the submitter none.
. "$(dirname "$0")/lib.sh"
e2e_setup
Q="rj-$(e2e_uid)"
make_queue "$Q" 5 8Gi
inv_start

# submitter JOB: "name node creationTimestamp" of the submitter pod(s) of the RayJob
submitter() {
	kc get pods -n "$NS" -l "batch.kubernetes.io/job-name=$1" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.metadata.creationTimestamp}{"\n"}{end}'
}
no_submitter() { [[ -z "$(submitter "$1")" ]] && gone job "$1"; }
none_bound() { [[ "$(bound_count "$1")" == 0 ]] && no_submitter "$2"; }

# --- The first job: sized by the webhook, admitted whole, then its submitter.
sample_job job-a "$Q"
ann() { kc get rayjob -n "$NS" "$1" -o json | jq -r --arg k "$2" '.metadata.annotations[$k] // ""'; }
assert_eq "job-a raygate.io/min-member" 3 "$(ann job-a raygate.io/min-member)"
assert_eq "job-a raygate.io/min-resources" '{"cpu":"3500m","memory":"4296Mi"}' "$(ann job-a raygate.io/min-resources)"
assert_eq "job-a raygate.io/submitter-resources" '{"cpu":"500m","memory":"200Mi"}' "$(ann job-a raygate.io/submitter-resources)"
assert_eq "job-a's submitter template is labelled" "true $Q" \
	"$(kc get rayjob -n "$NS" job-a -o json | jq -r '.spec.submitterPodTemplate.metadata.labels | "\(.["raygate.io/rayjob-submitter"]) \(.["volcano.sh/queue-name"])"')"
eventually 30 "KubeRay created job-a's RayCluster" has_cluster job-a
CA="$(cluster_of job-a)"
all_or_none_watch "$CA" 3 90 || fail "$CA (job-a's cluster) was not admitted whole"
pass "job-a's cluster $CA admitted whole"
eventually 60 "$CA's 3 pods Running" pods_are "$CA" 3 Running
eventually 60 "job-a's submitter created and bound once $CA is Ready" submitter_bound job-a
admitted_at="$(rc_annotation "$CA" raygate.io/admitted-at)"
created="$(submitter job-a | awk 'NR == 1 {print $3}')"
[[ -n "$admitted_at" && ! "$created" < "$admitted_at" ]] ||
	fail "job-a's submitter was created at $created, before its cluster's admission at $admitted_at"
pass "job-a's submitter created ($created) after the admission ($admitted_at)"
eventually 20 "queue $Q's allocated includes the submitter" is allocated "$Q" '{"cpu":"3500m","memory":"4296Mi"}'
pg_owner() { kc get podgroups.scheduling.volcano.sh -n "$NS" "$1" -o json 2>/dev/null | jq -r '.metadata.ownerReferences[] | "\(.kind) \(.name) \(.uid) \(.controller)"'; }
eventually 20 "PodGroup ray-job-a-pg exists" kc get podgroups.scheduling.volcano.sh -n "$NS" ray-job-a-pg
assert_eq "ray-job-a-pg's owner" "RayJob job-a $(kc get rayjob -n "$NS" job-a -o jsonpath='{.metadata.uid}') true" "$(pg_owner ray-job-a-pg)"
assert_eq "ray-job-a-pg's minMember and minResources" '3 {"cpu":"3500m","memory":"4296Mi"}' \
	"$(kc get podgroups.scheduling.volcano.sh -n "$NS" ray-job-a-pg -o json | jq -cr '"\(.spec.minMember) \(.spec.minResources | tojson)"')"
eventually 20 "ray-job-a-pg phase Running" is kc get podgroups.scheduling.volcano.sh -n "$NS" ray-job-a-pg -o 'jsonpath={.status.phase}' Running
kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$CA-pg" >/dev/null 2>&1 && fail "a PodGroup ray-$CA-pg exists for job-a's RayCluster"
pass "no PodGroup named after job-a's RayCluster $CA"
if native_api && curl -sf --max-time 2 --cacert "$STATE/raygate-certs/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT/metrics" |
	grep -q '^raygate_webhook_native_gang 1$'; then
	# The native step (where served, when on: --native-gang): the cluster's pods name one group, whose minCount counts them;
	# the submitter, no member, names none.
	named="$(kc get pods -n "$NS" -l "ray.io/cluster=$CA" -o json |
		jq -r '[.items[].spec.schedulingGroup.podGroupName // "-"] | group_by(.) | map("\(.[0]) \(length)") | join(",")')"
	[[ "$named" != *,* && "$named" != "- "* ]] || fail "job-a's cluster's pods do not all name one group: $named"
	assert_eq "native PodGroup ${named% *}'s minCount: the pods that name it" "${named##* }" \
		"$(kc get podgroups.scheduling.k8s.io -n "$NS" "${named% *}" -o jsonpath='{.spec.schedulingPolicy.gang.minCount}')"
	assert_eq "job-a's submitter names no group" "" \
		"$(kc get pods -n "$NS" -l batch.kubernetes.io/job-name=job-a -o jsonpath='{.items[*].spec.schedulingGroup.podGroupName}')"
fi

# --- The second job waits whole: its cluster's pods gated, none bound, no submitter.
sample_job job-b "$Q"
eventually 30 "KubeRay created job-b's RayCluster" has_cluster job-b
CB="$(cluster_of job-b)"
eventually 30 "$CB's 3 pods created, all gated" is gated_count "$CB" 3
eventually 20 "ray-job-b-pg says it does not fit queue $Q" pg_says ray-job-b-pg "gang ray-job-b-pg (3 pods; cpu 3500m, memory 4296Mi) does not fit queue $Q: cpu needs 3500m, 1500m of 5 free"
stays 10 "job-b waits whole: none of its pods bound, no submitter" none_bound "$CB" job-b
inv_assert "while job-b waits"

# --- The first RayJob deleted: the second is admitted, then its submitter.
job_follows job-b "$CB" job-a
eventually 30 "queue $Q's allocated is job-b's, submitter included" is allocated "$Q" '{"cpu":"3500m","memory":"4296Mi"}'

# --- Room for the cluster, not for its submitter: the job waits and says why.
Q2="rj2-$(e2e_uid)"
make_queue "$Q2" 3 8Gi
sample_job job-c "$Q2"
eventually 30 "KubeRay created job-c's RayCluster" has_cluster job-c
CC="$(cluster_of job-c)"
eventually 30 "ray-job-c-pg says the submitter does not fit" pg_says ray-job-c-pg "does not fit queue $Q2: cpu needs 3500m, 3 of 3 free"
say "    $(pg_message ray-job-c-pg)"
stays 8 "job-c waits whole: none of its pods bound, no submitter" none_bound "$CC" job-c
for c in "$CB" "$CC"; do
	kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$c-pg" >/dev/null 2>&1 && fail "a PodGroup ray-$c-pg exists for a RayJob's RayCluster"
done
pass "no PodGroup named after $CB or $CC"
inv_stop
