#!/usr/bin/env bash
# Preemption and reclaim of gangs bound to devices of Dynamic
# Resource Allocation (as test_gate_preempt and test_gate_preempt_reclaim do
# with cpu). One kwok node publishes 4 devices of gpu.example.com, mapped to
# example.com/gpu.
# 1. Preemption within a queue (example.com/gpu 4): low (priority 0, a head and
#    4 one-device workers) runs on the 4 devices; high (PriorityClass
#    ray-high, the same shape) evicts low whole (raygate.io/preempted-by,
#    evicted-reason Preempted), is admitted whole and runs whole, its 4 claims
#    allocated; low's new pods wait whole, none bound.
# 2. Reclaim across queues (each example.com/gpu 4, deserved 2): b1 and b2 of
#    queue qb (2 workers each: qb holds 2 above its deserved) run on the 4
#    devices; a of queue qa (ray-high, 2 workers: within qa's deserved)
#    reclaims the newest, b2, whole (evicted-reason Reclaimed) and runs whole;
#    b1 keeps its admission (reclaim never takes qb below its deserved).
# The invariant checker runs throughout (no gang partly placed, partly
# evicted, or waiting on its claims while others of it run).
# Skipped where resource.k8s.io/v1 is not served.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
dra_or_skip
kc apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null
Q="dra-preempt-$(e2e_uid)"
dra_class extended
dra_nodes 1 4
dra_template one-gpu
dra_queue "$Q" 4
inv_start --evict-grace 30

# evicted_whole CLUSTER N UIDS: none of the pods UIDS is left, and the cluster's N new pods wait whole
uids_of() { kc get pods -n "$NS" -l "ray.io/cluster=$1" -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort; }
old_gone() { [[ -z "$(comm -12 <(echo "$2") <(uids_of "$1"))" ]]; }

# 1. Preemption within the queue.
dra_cluster low "$Q" 4 template:one-gpu
all_or_none_watch low 5 90 || fail "low was not admitted whole"
eventually 60 "low's 5 pods Running" pods_are low 5 Running
assert_eq "devices allocated to low (every device of the node)" 4 "$(devices_held)"
low_uids="$(uids_of low)"

dra_cluster high "$Q" 4 template:one-gpu ray-high
eventually 60 "KubeRay created high's 5 pods" has_pods high 5
all_or_none_watch high 5 120 || fail "high was not admitted whole"
if admitted low; then
	sleep 3 # what kube-scheduler makes of it
	fail "high admitted while low keeps its admission and its 4 devices: $(bound_count high) of high's 5 pods bound, the rest Pending"
fi
eventually 60 "every pod low had is gone" old_gone low "$low_uids"
assert_eq "low records its preemptor" "$NS/high" "$(rc_annotation low raygate.io/preempted-by)"
assert_eq "evicted for preemption" "Preempted" "$(rc_annotation low raygate.io/evicted-reason)"
eventually 60 "high's 5 pods bound and Running" pods_are high 5 Running
eventually 30 "high's 4 claims allocated (every device of the node)" is devices_held 4
eventually 60 "KubeRay's new low pods wait whole (5 gated, none bound)" waits_whole low 5
stays 5 "low waits whole while high holds the devices" waits_whole low 5
inv_assert "preemption: no gang partly placed or partly evicted"
kc delete rayclusters.ray.io -n "$NS" --all >/dev/null
eventually 60 "the preemption part's pods gone" is count_pods_all 0

# 2. Reclaim across queues.
QA="dra-reclaim-a-$(e2e_uid)"
QB="dra-reclaim-b-$(e2e_uid)"
for q in "$QA" "$QB"; do
	dra_queue "$q" 4
	kc patch queue "$q" --type merge -p "{\"spec\":{\"deserved\":{\"$DRA_RESOURCE\":\"2\",\"cpu\":\"16\",\"memory\":\"64Gi\"}}}" >/dev/null
done
for b in b1 b2; do
	dra_cluster "$b" "$QB" 2 template:one-gpu
	all_or_none_watch "$b" 3 90 || fail "$b was not admitted whole"
	eventually 60 "$b's 3 pods Running" pods_are "$b" 3 Running
	sleep 1 # admission times a second apart: the newest is unambiguous
done
b2_uids="$(uids_of b2)"
dra_cluster a "$QA" 2 template:one-gpu ray-high
all_or_none_watch a 3 120 || fail "a was not admitted whole by reclaim"
! admitted b2 || fail "a admitted while b2 keeps its admission and its 2 devices"
admitted b1 || fail "b1 lost its admission: qb would be below its deserved"
eventually 60 "every pod b2 had is gone" old_gone b2 "$b2_uids"
assert_eq "b2 records its reclaimer" "$NS/a" "$(rc_annotation b2 raygate.io/preempted-by)"
assert_eq "reclaimed" "Reclaimed" "$(rc_annotation b2 raygate.io/evicted-reason)"
eventually 60 "a's 3 pods bound and Running" pods_are a 3 Running
eventually 60 "KubeRay's new b2 pods wait whole (3 gated, none bound)" waits_whole b2 3
inv_stop
