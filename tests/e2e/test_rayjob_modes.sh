#!/usr/bin/env bash
# The submission modes with the real KubeRay RayJob controller:
# SidecarMode puts KubeRay's submitter container (500m, 200Mi) into the head
# pod, so the gang (cpu 3500m, 4296Mi) is the RayCluster's own; HTTPMode has no
# submitter pod (cpu 3, 4Gi). Both admitted whole, each under its PodGroup
# ray-<rayjob>-pg, and the queue holds exactly their sum.
. "$(dirname "$0")/lib.sh"
e2e_setup
Q="rjm-$(e2e_uid)"
make_queue "$Q" 20 40Gi
inv_start

for m in SidecarMode HTTPMode; do
	sed -e "s/name: rayjob-sample/name: job-${m,,}/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $Q/" \
		-e "s/^spec:/spec:\n  submissionMode: $m/" "$ROOT/samples/rayjob-sample.yaml" | kc apply -n "$NS" -f - >/dev/null
done
pg_size() { kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$1-pg" -o json 2>/dev/null | jq -cr '"\(.spec.minMember) \(.spec.minResources | tojson) \(.status.phase)"'; }

eventually 30 "KubeRay created job-sidecarmode's RayCluster" has_cluster job-sidecarmode
eventually 30 "KubeRay created job-httpmode's RayCluster" has_cluster job-httpmode
CS="$(cluster_of job-sidecarmode)"
CH="$(cluster_of job-httpmode)"
assert_eq "$CS's head containers (KubeRay's sidecar submitter)" "ray-head,ray-job-submitter" \
	"$(kc get rayclusters.ray.io -n "$NS" "$CS" -o json | jq -r '.spec.headGroupSpec.template.spec.containers | map(.name) | join(",")')"
all_or_none_watch "$CS" 3 90 || fail "$CS was not admitted whole"
all_or_none_watch "$CH" 3 90 || fail "$CH was not admitted whole"
pass "both clusters admitted whole"
eventually 30 "ray-job-sidecarmode-pg: 3 pods, the sidecar counted, Running" is pg_size job-sidecarmode '3 {"cpu":"3500m","memory":"4296Mi"} Running'
eventually 30 "ray-job-httpmode-pg: 3 pods, no submitter, Running" is pg_size job-httpmode '3 {"cpu":"3","memory":"4Gi"} Running'
assert_eq "no submitter Job in either mode" "" "$(kc get jobs -n "$NS" -o name)"
eventually 20 "queue $Q holds both" is allocated "$Q" '{"cpu":"6500m","memory":"8392Mi"}'
inv_stop
