#!/usr/bin/env bash
# An autoscaling Ray cluster (minReplicas 1, replicas 3). The
# gang is the head (with the autoscaler sidecar's resources) and 1 worker: cpu
# 500m + 500m + 1 = 2, admitted when the queue (cpu 2) holds it; the 2 other
# workers are its tail and follow one at a time as the queue grows. The worker group is named
# "cpu" on purpose: its pods' names sort before the head's, and KubeRay creates
# them all in the same second; the head must still be in the gang. The tail's
# wait is told once per reason, on the RayCluster and on the tail's first
# waiting pod (the next to go), not on every waiting pod. Scaling
# down gives the tail's share back to the queue.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="auto-$(e2e_uid)"
make_queue "$Q" 2 16Gi
inv_start

sed -e "s/name: autoscaling-cluster/name: auto/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $Q/" \
	-e "s/groupName: worker/groupName: cpu/" "$ROOT/samples/raycluster-autoscaling.yaml" | kc apply -n "$NS" -f - >/dev/null
assert_eq "minMember annotated by the webhook (head + minReplicas)" 2 \
	"$(kc get rayclusters.ray.io -n "$NS" auto -o jsonpath='{.metadata.annotations.raygate\.io/min-member}')"
eventually 60 "KubeRay created the head and 3 workers" has_pods auto 4
head="$(head_pod auto)"
sidecar="$(kc get pod -n "$NS" "$head" -o jsonpath='{.spec.containers[*].name}')"
[[ "$sidecar" == *autoscaler* ]] || fail "the head pod has no autoscaler sidecar: $sidecar"
pass "the head pod runs the autoscaler sidecar ($sidecar)"

two_ungated() { [[ "$(gated_count auto)" == 2 ]]; }
eventually 30 "the gang (2 pods) admitted" two_ungated
ungated="$(ungated_pods auto | sort | tr '\n' ' ')"
[[ "$ungated" == *"$head"* && "$ungated" == *auto-cpu-worker-* ]] || fail "the gang is not the head + 1 worker: $ungated"
pass "the gang is the head and 1 worker: $ungated"
admitted auto || fail "auto has no raygate.io/admitted-at"

# The tail: in creation order (then name), the first waits on the queue, the second behind it.
mapfile -t tail < <(kc get pods -n "$NS" -l ray.io/cluster=auto -o json |
	jq -r '[.items[] | select([.spec.schedulingGates[]?.name] | index("raygate.io/gang"))] |
		sort_by(.metadata.creationTimestamp, .metadata.name) | .[].metadata.name')
assert_eq "tail pods gated" 2 "${#tail[@]}"
first="${tail[0]}" second="${tail[1]}"
want1="pod $first (cpu 1, memory 1Gi) does not fit queue $Q: cpu needs 1, 0 of 2 free"
eventually 10 "$first is told: $want1" pod_told "$first" "$want1"
eventually 10 "the RayCluster is told: $want1" pod_told auto "$want1"
assert_eq "$second (behind $first) has no GangWaiting Event of its own" "" "$(pod_events "$second")"
stays 3 "the tail stays gated while the queue is full" two_ungated
eventually 10 "the gang's pods Running" pods_running_count auto 2

# Room for one: exactly the first tail pod follows.
kc patch queue "$Q" --type merge -p '{"spec":{"capability":{"cpu":"3"}}}' >/dev/null
one_gated() { [[ "$(gated_count auto)" == 1 ]]; }
eventually 30 "with cpu 3, one more worker admitted" one_gated
assert_eq "the worker admitted is the first in creation order" "" \
	"$(kc get pod -n "$NS" "$first" -o jsonpath='{.spec.schedulingGates[*].name}')"
want3="pod $second (cpu 1, memory 1Gi) does not fit queue $Q: cpu needs 1, 0 of 3 free"
eventually 10 "$second is told the new reason: $want3" pod_told "$second" "$want3"
stays 3 "the last worker stays gated" one_gated

# Room for the last one.
kc patch queue "$Q" --type merge -p '{"spec":{"capability":{"cpu":"4"}}}' >/dev/null
none_gated() { [[ "$(gated_count auto)" == 0 ]]; }
eventually 30 "with cpu 4, the last worker admitted" none_gated
eventually 60 "all 4 pods Running" pods_are auto 4 Running
pod_admitted_told() { kc get events -n "$NS" --field-selector "involvedObject.name=$1,reason=GangAdmitted" -o json |
	jq -r '.items[].message' | grep -F "pod $1 admitted by queue $Q beyond the gang's 2 pods" >/dev/null; }
eventually 10 "$second's GangAdmitted event says it came beyond the gang" pod_admitted_told "$second"

# Shrinking gives the tail's share back: another cluster (cpu 1) waits on the
# full queue until the autoscaler (here: us) scales auto down by one worker.
head_only_cluster next "$Q"
eventually 60 "KubeRay created next's pod" has_pods next 1
eventually 10 "next waits on the full queue" describe_has "$(head_pod next)" "does not fit queue $Q: cpu needs 1, 0 of 4 free"
next_gated() { [[ "$(gated_count next)" == 1 ]]; }
stays 2 "next stays gated" next_gated
kc patch rayclusters.ray.io -n "$NS" auto --type merge \
	-p "{\"spec\":{\"workerGroupSpecs\":[{\"groupName\":\"cpu\",\"replicas\":2,\"minReplicas\":1,\"maxReplicas\":5,\"scaleStrategy\":{\"workersToDelete\":[\"$second\"]},\"rayStartParams\":{},\"template\":$(kc get rayclusters.ray.io -n "$NS" auto -o json | jq -c '.spec.workerGroupSpecs[0].template')}]}}" >/dev/null
eventually 60 "KubeRay deleted $second" gone pod "$second"
all_or_none_watch next 1 30 || fail "next was not admitted after auto shrank"
pass "next admitted with the share auto's tail gave back"
assert_eq "auto keeps its 3 pods ungated" "0 3" "$(gated_count auto) $(count_pods auto)"
inv_stop
