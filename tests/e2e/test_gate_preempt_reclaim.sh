#!/usr/bin/env bash
# Reclaim across queues on full nodes. The local cluster's 4
# kwok nodes have cpu 8 each. Queue qb (deserved cpu 16) fills all four with
# head-only clusters of cpu 8 (it borrows 16 above its deserved); queue qa
# (deserved cpu 16) then gets clusters of cpu 8 and priority 1000: the first
# two each reclaim one of qb's clusters (the most recently admitted first,
# whole), the third does not (qa would go above its deserved, and qb is at
# its deserved): it waits. The invariant checker runs throughout. The gate
# runs as hack/cluster.sh starts it (preemption and reclaim are on by
# default).
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
kc apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null
QA="reclaim-a-$RANDOM"
QB="reclaim-b-$RANDOM"
for q in "$QA" "$QB"; do
	make_queue "$q" 32 128Gi
	queue_deserved "$q" 16 64Gi
done
inv_start

# cluster NAME QUEUE [PRIORITY-CLASS]: one head pod of cpu 8
cluster() { raycluster "$1" queue="$2" priority="${3:-}" cpu=8 | kc apply -n "$NS" -f - >/dev/null; }
bound() { [[ "$(kc get pods -n "$NS" -l "ray.io/cluster=$1" -o jsonpath='{.items[*].spec.nodeName}')" == kwok-node-* ]]; }

for i in 0 1 2 3; do
	cluster "b$i" "$QB"
	all_or_none_watch "b$i" 1 60 || fail "b$i was not admitted"
	eventually 30 "b$i bound" bound "b$i"
	sleep 1 # admission times a second apart: the newest is unambiguous
done
pass "qb fills the 4 nodes (32 cpu, 16 above its deserved)"

cluster a0 "$QA" ray-high
all_or_none_watch a0 1 90 || fail "a0 was not admitted by reclaim"
eventually 30 "a0 bound" bound a0
assert_eq "the newest of qb's clusters was reclaimed" "$NS/a0" "$(rc_annotation b3 raygate.io/preempted-by)"
assert_eq "reclaimed" "Reclaimed" "$(rc_annotation b3 raygate.io/evicted-reason)"
for i in 0 1 2; do admitted "b$i" || fail "b$i lost its admission"; done
pass "b0..b2 kept theirs"

cluster a1 "$QA" ray-high
all_or_none_watch a1 1 90 || fail "a1 was not admitted by reclaim"
assert_eq "then b2" "$NS/a1" "$(rc_annotation b2 raygate.io/preempted-by)"

# qa at its deserved, qb at its deserved: a2 waits, nothing more is taken.
cluster a2 "$QA" ray-high
eventually 60 "KubeRay created a2's pod" has_pods a2 1
held() { [[ "$(gated_count a2)" == 1 ]] && admitted b0 && admitted b1; }
stays 10 "a2 waits; qb keeps its deserved (b0, b1 admitted)" held
# Counted once the evictor has carried each reclaim out: wait for it.
eventually 10 "raygate_preemptions_total{queue=qb,kind=reclaim} = 2" \
	is metric_value "raygate_preemptions_total{queue=\"$QB\",kind=\"reclaim\"}" 2
inv_stop
