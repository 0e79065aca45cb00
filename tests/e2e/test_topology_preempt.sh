#!/usr/bin/env bash
# Preemption that frees one domain. 4 racks of 4 nodes with
# nvidia.com/gpu 8 each (racks_up), all full of priority-0 gangs whose
# workers (nvidia.com/gpu 8) are pinned to nodes: old1 and old2 hold rack r4
# (two nodes each) and were admitted first; n1..n6 hold racks r1..r3, each
# spread over two racks (every one of r1..r3 holds four of them). "high"
# (priority 1000, head + 4 workers of nvidia.com/gpu 8, raygate.io/
# topology-required: the rack label) needs one whole rack. The fewest gangs
# that free a rack are old1 and old2 (r4); the most recently admitted (n6,
# n5), which a preemption blind to topology takes, free four nodes in two
# racks, where high cannot go. high must be admitted into r4, all its workers
# there, with old1 and old2 evicted (Preempted, preempted-by high) and no other
# gang touched. The invariant checker runs throughout.
. "$(dirname "$0")/lib.sh"
e2e_setup
racks_up
Q="topopre-$(e2e_uid)"
tree_queue "$Q"
kc apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null
inv_start --evict-grace 30

# pinned NAME NODE...: a priority-0 gang in $Q: a head and, per NODE, a worker group of one worker
# (nvidia.com/gpu 8) with a nodeSelector on that node's hostname
pinned() {
	local name="$1" i=0 node gpu='cpu: "1", memory: 1Gi, nvidia.com/gpu: 8'
	local worker="{name: ray-worker, image: \"rayproject/ray:2.9.0\", resources: {requests: {$gpu}, limits: {$gpu}}}"
	shift
	{
		raycluster "$name" queue="$Q" tolerations="$RACK_TOLERATIONS" cpu=1 memory=1Gi | sed '/^  workerGroupSpecs: \[\]$/d'
		echo '  workerGroupSpecs:'
		for node; do
			i=$((i + 1))
			echo "  - {groupName: g$i, replicas: 1, minReplicas: 1, maxReplicas: 1, rayStartParams: {},"
			echo "     template: {spec: {nodeSelector: {kubernetes.io/hostname: $node}, tolerations: $RACK_TOLERATIONS, containers: [$worker]}}}"
		done
	} | kc apply -n "$NS" -f - >/dev/null
}
n() { echo "r$1-n$2-$RACK_UID"; } # n RACK NODE: a rack node's name
admitted_bound() { admitted "$1" && is bound_count "$1" "$2"; }

pinned old1 "$(n 4 1)" "$(n 4 2)"
pinned old2 "$(n 4 3)" "$(n 4 4)"
for c in old1 old2; do eventually 90 "$c admitted, its 3 pods bound (rack r4)" admitted_bound $c 3; done
created_before_now rayclusters.ray.io old1 old2 # the others are admitted strictly later
pinned n1 "$(n 1 1)" "$(n 2 1)"
pinned n2 "$(n 1 2)" "$(n 2 2)"
pinned n3 "$(n 1 3)" "$(n 3 1)"
pinned n4 "$(n 1 4)" "$(n 3 2)"
pinned n5 "$(n 2 3)" "$(n 3 3)"
pinned n6 "$(n 2 4)" "$(n 3 4)"
for c in n1 n2 n3 n4 n5 n6; do eventually 90 "$c admitted, its 3 pods bound" admitted_bound $c 3; done
declare -A was
for c in old1 old2 n1 n2 n3 n4 n5 n6; do was[$c]="$(rc_annotation $c raygate.io/admitted-at)"; done
pass "every GPU of the 16 rack nodes is held by a priority-0 gang"

t0=$SECONDS
raycluster high queue="$Q" priority=ray-high annotations="raygate.io/topology-required: $RACK_KEY" \
	tolerations="$RACK_TOLERATIONS" wlimits=1 cpu=1 memory=1Gi group='gpu:4:4:4:cpu: "1", memory: 1Gi, nvidia.com/gpu: 8' |
	kc apply -n "$NS" -f - >/dev/null
all_or_none_watch high 5 150 || fail "high was not admitted whole"
eventually 60 "high's 5 pods bound" is bound_count high 5
pass "high admitted and bound $((SECONDS - t0))s after it was created"
racks="$(pod_racks high ray.io/node-type=worker | awk '{print $3}' | sort -u | tr '\n' ' ')"
assert_eq "the racks of high's workers" "r4 " "$racks"
assert_eq "high's raygate.io/topology-placed" r4 "$(rc_annotation high raygate.io/topology-placed | jq -r '.gang // ""')"
for c in old1 old2; do
	assert_eq "$c evicted for preemption" Preempted "$(rc_annotation $c raygate.io/evicted-reason)"
	assert_eq "$c records its preemptor" "$NS/high" "$(rc_annotation $c raygate.io/preempted-by)"
done
for c in n1 n2 n3 n4 n5 n6; do
	[[ "$(rc_annotation $c raygate.io/admitted-at)" == "${was[$c]}" && -z "$(rc_annotation $c raygate.io/preempted-by)" ]] ||
		fail "$c, outside rack r4, was touched (admitted-at ${was[$c]} -> $(rc_annotation $c raygate.io/admitted-at), preempted-by '$(rc_annotation $c raygate.io/preempted-by)')"
done
pass "no gang outside rack r4 was evicted"
inv_stop
