#!/usr/bin/env bash
# "eviction reruns the job", with the real KubeRay RayJob controller:
# a RayJob whose workers mount a claim that does not exist is admitted, its
# head bound, its workers not. After the placement timeout (20 s) raygate
# evicts the gang and suspends the RayJob (label raygate.io/rerun, the
# eviction record in its annotations); KubeRay deletes its RayCluster; once
# KubeRay has made it Suspended, raygate resumes it; KubeRay makes a new
# RayCluster carrying the record (requeue-count 1, requeue-at), gated through
# the backoff. Once the claim exists the job's new cluster is admitted whole
# and runs: the RayJob is never Failed, its PodGroup is one object throughout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evict.sh"
e2e_setup
Q="rj-evict-$(e2e_uid)"
make_queue "$Q" 8 16Gi
gate_with --placement-timeout 20s --requeue-backoff-base 30s --requeue-backoff-max 1m --resync 5s
inv_start --grace 5 --evict-grace 15

# The sample RayJob, its workers mounting claim "data" (absent for now).
python3 - "$ROOT/samples/rayjob-sample.yaml" "$Q" <<-'PY' | kc apply -n "$NS" -f - >/dev/null
	import json, sys, yaml
	job = yaml.safe_load(open(sys.argv[1]))
	job["metadata"]["name"] = "job-e"
	job["metadata"]["labels"]["volcano.sh/queue-name"] = sys.argv[2]
	spec = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
	spec["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
	spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
	print(json.dumps(job))
PY
job_json() { kc get rayjob -n "$NS" job-e -o json; }
job_status() { job_json | jq -r '.status.jobDeploymentStatus // ""'; }
# Every version of the RayJob (a watch), to check the statuses it went through.
WATCH_JOB="$E2E_TMP/rayjob.json"
e2e_watch "$WATCH_JOB" rayjob job-e
statuses() { jq -r '.status.jobDeploymentStatus // empty' "$WATCH_JOB" 2>/dev/null | uniq; }

eventually 30 "KubeRay created job-e's RayCluster" has_cluster job-e
C1="$(cluster_of job-e)"
eventually 60 "$C1 admitted" admitted "$C1"
eventually 30 "its head bound, its workers not (no claim)" is bound_count "$C1" 1
eventually 20 "ray-job-e-pg exists" kc get podgroups.scheduling.volcano.sh -n "$NS" ray-job-e-pg
pg_uid="$(kc get podgroups.scheduling.volcano.sh -n "$NS" ray-job-e-pg -o jsonpath='{.metadata.uid}')"

# From the watch's versions: one suspended by raygate for a rerun; then resumed, only after one Suspended.
# (Over the whole stream at once: jq 1.6's -e judges only the last object
# read, so a per-object select saw the suspension only while it was the
# latest version; raygate resumes the job 0.1 s later, and a CI run missed it.)
suspended_for_rerun() {
	jq -se 'any(.[]; .spec.suspend == true and (.metadata.labels["raygate.io/rerun"] // "") != "")' "$WATCH_JOB" >/dev/null 2>&1
}
resumed_after_suspended() {
	jq -rs '[.[] | {s: .spec.suspend, st: (.status.jobDeploymentStatus // ""), l: (.metadata.labels["raygate.io/rerun"] // "")}] as $v
		| ([range(0; $v | length) | select($v[.].st == "Suspended" and $v[.].s == true)] | first) as $i
		| ([range(0; $v | length) | select(. > 0 and $v[. - 1].s == true and $v[.].s == false and $v[.].l == "")] | first) as $j
		| $i != null and $j != null and $i < $j' "$WATCH_JOB" 2>/dev/null | grep -qx true
}
eventually 90 "evicted after the placement timeout: job-e suspended for a rerun (label raygate.io/rerun)" suspended_for_rerun
# The claim now, so that the job's next cluster can be placed once its backoff (30 s) ends.
make_claim data
assert_eq "the eviction record on the RayJob: requeue-count" 1 \
	"$(job_json | jq -r '.metadata.annotations["raygate.io/requeue-count"] // ""')"
eventually 60 "KubeRay deleted $C1 (the suspension)" gone rayclusters.ray.io "$C1"
eventually 60 "raygate resumed job-e (label removed) only after KubeRay made it Suspended" resumed_after_suspended
new_cluster() { has_cluster job-e && [[ "$(cluster_of job-e)" != "$C1" ]]; }
eventually 60 "KubeRay made job-e a new RayCluster" new_cluster
C2="$(cluster_of job-e)"
pass "job-e's new cluster $C2 (was $C1)"
assert_eq "$C2 carries the eviction record (requeue-count)" 1 "$(rc_annotation "$C2" raygate.io/requeue-count)"
[[ -n "$(rc_annotation "$C2" raygate.io/requeue-at)" ]] || fail "$C2 has no raygate.io/requeue-at"
eventually 20 "$C2's 3 pods created, none bound, all gated (backoff)" none_bound_all_gated "$C2" 3
eventually 60 "the claim is bound to its PV" claim_bound data
eventually 120 "$C2 admitted after the backoff" admitted "$C2"
eventually 60 "all 3 of $C2's pods bound" all_bound "$C2" 3
eventually 60 "job-e Running again" is job_status Running
assert_eq "ray-job-e-pg is the same object throughout" "$pg_uid" "$(kc get podgroups.scheduling.volcano.sh -n "$NS" ray-job-e-pg -o jsonpath='{.metadata.uid}')"
kill "$E2E_WATCH_PID" 2>/dev/null || true # the statuses so far are all there are
if statuses | grep -qx Failed; then fail "job-e was Failed at some point: $(statuses | tr '\n' ' ')"; fi
pass "job-e never Failed (statuses: $(statuses | tr '\n' ' '))"
inv_stop
