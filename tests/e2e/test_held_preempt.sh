#!/usr/bin/env bash
# Pods born ungated, and preemption: with the webhook's
# --hold-gangs, a RayCluster of priority class ray-high (1000) is held
# suspended with no pod, so the gate weighs its gang from its declaration,
# whose pods have no spec.priority (the apiserver resolves it when a pod is
# created): the gang's priority is its class's value, from the gate's watch
# of PriorityClasses. On the guide's queue (cpu 4, memory 6Gi), low
# (priority 0, cpu 3) is admitted and running; high of the same shape
# arrives and preempts it whole: low's eviction record suspends it (KubeRay
# deletes its pods and makes none), high is admitted and its pods are born
# ungated. low waits held, with no pod, and is admitted again once high is
# deleted. The invariant checker runs throughout.
. "$(dirname "$0")/lib.sh"
e2e_setup
hold_gangs
Q="held-preempt-$(e2e_uid)"
make_queue "$Q" 4 6Gi
kc apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null
inv_start

sample_high() { # NAME: test-cluster-0's shape in $Q, priority class ray-high
	sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" "$1" "$Q" |
		sed -e "s/^\(    volcano.sh\/queue-name: .*\)$/\1\n    ray.io\/priority-class-name: ray-high/"
}
low_held() { [[ "$(count_pods low)" == 0 ]] && held_waiting low; }
patched_by_gate() { # CLUSTER: how many of its pods had a gate removed (metadata.generation over 1)
	kc get pods -n "$NS" -l "ray.io/cluster=$1" -o json | jq '[.items[] | select((.metadata.generation // 1) > 1)] | length'
}

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" low "$Q" | kc apply -n "$NS" -f - >/dev/null
assert_eq "low is held" true "$(rc_annotation low raygate.io/held-suspended)"
all_or_none_watch low 3 90 || fail "low was not admitted"
eventually 60 "low's pods Running" pods_are low 3 Running

sample_high high | kc apply -n "$NS" -f - >/dev/null
assert_eq "high is held" true "$(rc_annotation high raygate.io/held-suspended)"
preempted() { [[ -n "$(rc_annotation low raygate.io/preempted-by)" ]]; }
eventually 60 "low preempted by high (raygate.io/preempted-by)" preempted
assert_eq "low records its preemptor" "$NS/high" "$(rc_annotation low raygate.io/preempted-by)"
assert_eq "evicted for preemption" Preempted "$(rc_annotation low raygate.io/evicted-reason)"
all_or_none_watch high 3 120 || fail "high was not admitted whole"
eventually 60 "high's 3 pods Running" pods_are high 3 Running
assert_eq "high's pods the gate PATCHed (born ungated)" 0 "$(patched_by_gate high)"
eventually 60 "low held again: suspended, no pod, not admitted" low_held
events_of_low() { kc get events -n "$NS" --field-selector involvedObject.kind=RayCluster,involvedObject.name=low,reason=Preempted -o json | jq -r '.items[].message'; }
events_of_low | grep -F "preempted by gang $NS/high (priority 1000) in queue $Q" >/dev/null ||
	fail "no Preempted Event on low naming high's priority 1000 (have: $(events_of_low))"
pass "Preempted Event on low: high's priority is its class's value"
stays 5 "low waits whole, with no pod, while high holds the queue" low_held

kc delete rayclusters.ray.io -n "$NS" high >/dev/null
all_or_none_watch low 3 90 || fail "low was not admitted again after high was deleted"
eventually 60 "low's pods Running again" pods_are low 3 Running
assert_eq "low's new pods the gate PATCHed" 0 "$(patched_by_gate low)"
inv_stop
