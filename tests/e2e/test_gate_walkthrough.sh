#!/usr/bin/env bash
# The walkthrough of the KubeRay + Volcano guide: a queue of 4 CPUs and
# 6Gi admits test-cluster-0 (3 CPUs, 4Gi) whole; test-cluster-1 waits whole,
# and says why; deleting test-cluster-0 admits test-cluster-1 whole. As the
# webhook runs by default (--hold-gangs), test-cluster-1 waits held, with no
# pod, and says why on its RayCluster; with --hold-gangs=false (the oldest
# and in-cluster suites run it either way) its pods wait gated and
# `kubectl describe pod` says why. With --hold-gangs=decide (decide_*),
# test-cluster-1 is held until the gate's first decision, then released: its
# pods wait gated as with --hold-gangs=false, and its RayCluster says
# raygate.io/held-release: released.
. "$(dirname "$0")/lib.sh"
e2e_setup
Q="walk-$(e2e_uid)"
make_queue "$Q" 4 6Gi

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch test-cluster-0 3 60 || fail "test-cluster-0 was not admitted"
pass "test-cluster-0's 3 pods ungated together"
eventually 60 "test-cluster-0's 3 pods Running" pods_are test-cluster-0 3 Running
[[ -n "$(rc_annotation test-cluster-0 raygate.io/admitted-at)" ]] ||
	fail "test-cluster-0 has no raygate.io/admitted-at"
pass "admission recorded on the RayCluster"
describe_rc() { kc describe rayclusters.ray.io -n "$NS" "$1" | grep -F -- "$2" >/dev/null; }
# Admitted whole, or early (lib/sched/admit/early.h) once its head and a worker existed: "from 2 pods, and from 1 more as
# they are created".
admitted_told() { describe_rc test-cluster-0 "admitted by queue $Q; scheduling gates removed from 3 pods" ||
	describe_rc test-cluster-0 "admitted by queue $Q; scheduling gates removed from 2 pods, and from 1 more as they are created" ||
	describe_rc test-cluster-0 "admitted by queue $Q; RayCluster resumed: 3 pods to be created without the scheduling gate"; }
eventually 10 "GangAdmitted event on test-cluster-0" admitted_told

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-1 "$Q" | kc apply -n "$NS" -f - >/dev/null
want="gang ray-test-cluster-1-pg (3 pods; cpu 3, memory 4Gi) does not fit queue $Q: cpu needs 3, 1 of 4 free; memory needs 4Gi, 2Gi of 6Gi free"
if e2e_held; then
	told=(RayCluster test-cluster-1)
	eventually 10 "describe raycluster test-cluster-1 shows GangWaiting: $want" describe_rc test-cluster-1 "$want"
else
	three() { [[ "$(count_pods test-cluster-1)" == 3 ]]; }
	eventually 60 "KubeRay created test-cluster-1's 3 pods" three
	if [[ "$(hold_mode)" == decide ]]; then
		assert_eq "test-cluster-0, admitted at its first decision, held and not released" "true on-wait" \
			"$(rc_annotation test-cluster-0 raygate.io/held-suspended) $(rc_annotation test-cluster-0 raygate.io/held-release)"
		assert_eq "test-cluster-1, released at its first decision" "true released" \
			"$(rc_annotation test-cluster-1 raygate.io/held-suspended) $(rc_annotation test-cluster-1 raygate.io/held-release)"
	fi
	head="$(head_pod test-cluster-1)"
	told=(Pod "$head")
	eventually 10 "describe pod $head shows GangWaiting" describe_has "$head" "GangWaiting"
	describe_has "$head" "$want" || { kc describe pod -n "$NS" "$head" | tail -8 >&2; fail "describe pod does not show: $want"; }
	pass "describe pod shows: $want"
fi
waits_whole() {
	made_waiting test-cluster-1 3 && [[ -z "$(kc get pods -n "$NS" -l ray.io/cluster=test-cluster-1 -o jsonpath='{.items[*].spec.nodeName}')" ]]
}
stays 2 "test-cluster-1 waits whole: $(e2e_held && echo "held suspended, no pod" || echo "its pods gated"), none bound" waits_whole
# Passes go on (each change, each resync): the event for this reason is still sent once.
one_event() {
	[[ "$(kc get events -n "$NS" --field-selector "involvedObject.kind=${told[0]},involvedObject.name=${told[1]},reason=GangWaiting" -o json |
		jq --arg m "$want" '[.items[] | select(.message == $m) | .count] | add')" == 1 ]]
}
stays 3 "one GangWaiting event on the ${told[0]} for that reason (not one per pass)" one_event

kc delete rayclusters.ray.io -n "$NS" test-cluster-0 >/dev/null
all_or_none_watch test-cluster-1 3 60 || fail "test-cluster-1 was not admitted after test-cluster-0 was deleted"
pass "test-cluster-1's 3 pods ungated together"
eventually 60 "test-cluster-1's 3 pods Running" pods_are test-cluster-1 3 Running
