#!/usr/bin/env bash
# Fault drill (docs/contributing.md): churn. For RAYGATE_CHURN_SECONDS (default 60, to
# keep the e2e suite short; the full 5 minutes is RAYGATE_CHURN_SECONDS=300),
# RayClusters of random shapes (head, 0-2 worker groups of 0-3
# replicas, a third of them autoscaling, a third with priority 1000) are
# created and deleted against 3 leaf queues of random capability, dequeue
# strategy and preemption policy (raygate.io/preemption: the default
# LowerPriority, LowerOrNewerEqualPriority, or a random one of the three), two
# of them under a parent of random capability (the queue tree: one
# deserving by weight, the other with a guarantee; see below), the others deserving cpu
# 2 and memory 3Gi (spec.deserved); capabilities also grow now and then;
# autoscaling clusters are scaled up. The sequence is drawn from
# RAYGATE_CHURN_SEED (printed; set it to replay the same actions). The
# invariant checker runs throughout (no gang partly placed or partly evicted,
# no queue nor parent over capability, no guarantee lent) while gangs preempt
# within their queue and reclaim across queues; once the churn stops and the cluster is quiet, every gang
# that fits is admitted. The preemptions of each kind are counted (gate
# metric raygate_preemptions_total).
#
# Sizes: pods of at most 2 cpu, queues of 4 to 7 cpu. Ballast pods of no queue
# take cpu 6 of each of the 4 nodes of cpu 8, so that the queues together
# (12 to 21 cpu) borrow beyond the nodes' 8 free cpu and their deserved 6:
# gangs wait on the nodes too, and reclaim takes back what a queue borrows.
. "$(dirname "$0")/lib.sh"
e2e_setup
SEED="${RAYGATE_CHURN_SEED:-$((($(date +%s%N) / 1000) % 32768))}"
DURATION="${RAYGATE_CHURN_SECONDS:-60}"
say "churn: seed $SEED for ${DURATION}s (replay with RAYGATE_CHURN_SEED=$SEED RAYGATE_CHURN_SECONDS=$DURATION)"
RANDOM=$SEED
kc apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null

# pick VAR WORD...: sets VAR to one of the WORDs. Never in $(...) nor a pipeline: bash re-seeds RANDOM in a
# subshell, and the seed would not replay the churn.
pick() {
	local -n _pick_out="$1"
	shift
	local -a a=("$@")
	_pick_out="${a[RANDOM % ${#a[@]}]}"
}
# The tree: churn-SEED-p (capability cpu 8 to 10, memory 10 to 14Gi)
# -> {churn-SEED-0, churn-SEED-1}, and churn-SEED-2 at the root. 0 and 2
# deserve cpu 2 and memory 3Gi (spec.deserved), and 0 has a guarantee of cpu 1
# and memory 1Gi that 1 may not borrow; 1 has no deserved (derived by its
# weight, 1 to 3) and no capability (its parent's). As Volcano's webhook
# requires, a guarantee is within its queue's deserved and its
# parent's guarantee: p deserves cpu 4 and memory 6Gi and guarantees what 0
# does (at the root: room the others may not borrow while p is idle). The
# gangs go to the leaves 0, 1, 2; the capabilities that grow are 0's, 2's and
# p's (index 3).
QUEUES=() QCPU=() QMEM=()
P="churn-$SEED-p"
QCPU[3]=$((8 + RANDOM % 3))
QMEM[3]=$((10 + RANDOM % 5))
tree_queue "$P" cpu="${QCPU[3]}" memory="${QMEM[3]}Gi" weight=$((1 + RANDOM % 3))
GUARANTEE='"guarantee":{"resource":{"cpu":"1","memory":"1Gi"}}'
kc patch queue "$P" --type merge -p "{\"spec\":{\"deserved\":{\"cpu\":\"4\",\"memory\":\"6Gi\"},$GUARANTEE}}" >/dev/null
say "queue $P: $(kc get queue "$P" -o json | jq -c '.spec | del(.reclaimable)'), parent of churn-$SEED-0 and -1"
for i in 0 1 2; do
	q="churn-$SEED-$i"
	QCPU[i]=$((4 + RANDOM % 3))
	QMEM[i]=$((4 + RANDOM % 5))
	parent=""
	((i == 2)) || parent="$P"
	pick strategy fifo traverse ""
	if ((i == 1)); then
		tree_queue "$q" parent="$P" weight=$((1 + RANDOM % 3)) strategy="$strategy"
	else
		tree_queue "$q" ${parent:+parent=$parent} cpu="${QCPU[i]}" memory="${QMEM[i]}Gi" strategy="$strategy"
		spec='"deserved":{"cpu":"2","memory":"3Gi"}'
		((i != 0)) || spec+=",$GUARANTEE"
		# (eventually: the webhook judges 0's guarantee against p's once its watch has seen it)
		deserve() { kc patch queue "$1" --type merge -p "{\"spec\":{$2}}" >/dev/null; }
		eventually 20 "queue $q: $spec" deserve "$q" "$spec"
	fi
	pick third "" LowerOrNewerEqualPriority Never
	policy=("" LowerOrNewerEqualPriority "$third")
	[[ -z "${policy[i]}" ]] || kc annotate queue "$q" "raygate.io/preemption=${policy[i]}" >/dev/null
	QUEUES+=("$q")
	say "queue $q: $(kc get queue "$q" -o json | jq -c '.spec | del(.reclaimable)')," \
		"preemption '${policy[i]:-LowerPriority}'"
done
# Ballast: one pod of cpu 6 on each node (no queue: not raygate's), bound by kube-scheduler (two do not fit one node).
NODES="$(kc get nodes -o name | wc -l)"
for ((i = 0; i < NODES; i++)); do
	kc apply -n "$NS" -f - >/dev/null <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: ballast-$i}
		spec:
		  containers: [{name: c, image: busybox, resources: {requests: {cpu: "6", memory: 1Gi}}}]
		  tolerations: [{operator: Exists}]
	YAML
done
ballast_bound() { [[ "$(kc get pods -n "$NS" -o json | jq '[.items[] | select(.metadata.name | startswith("ballast-")) | select(.spec.nodeName != null) | .spec.nodeName] | unique | length')" == "$NODES" ]]; }
eventually 60 "the ballast takes cpu 6 of each of the $NODES nodes" ballast_bound
preemptions() { # KIND: the gate's raygate_preemptions_total of that kind over the churn queues
	curl -sf "http://127.0.0.1:$GATE_METRICS_PORT/metrics" | grep -F "raygate_preemptions_total{queue=\"churn-$SEED-" |
		grep -F "kind=\"$1\"}" | awk '{s += $2} END {print s + 0}'
}
inv_start --grace 15

# new_cluster NAME: a random RayCluster (YAML on stdout; redirect it, never pipe it: pick)
new_cluster() {
	local name="$1" args=() auto groups g r min queue cpu mem
	pick queue "${QUEUES[@]}"
	args+=(queue="$queue")
	auto=$((RANDOM % 3 == 0))
	((RANDOM % 3 == 0)) && args+=(priority=ray-high)
	((auto)) && args+=(autoscaling=1)
	pick cpu 250m 500m 1
	pick mem 256Mi 512Mi 1Gi
	args+=(head="cpu: $cpu, memory: $mem")
	groups=$((RANDOM % 3))
	for ((g = 0; g < groups; g++)); do
		r=$((RANDOM % 4))
		min=$((RANDOM % (r + 1)))
		pick cpu 250m 500m 1 2
		pick mem 256Mi 512Mi 1Gi 2Gi
		args+=(group="g$g:$r:$min:$((auto ? 3 : r)):cpu: $cpu, memory: $mem")
	done
	raycluster "$name" "${args[@]}"
}

LIVE=() n=0 created=0 deleted=0 grown=0 scaled=0
t_end=$((SECONDS + DURATION))
while ((SECONDS < t_end)); do
	action=$((RANDOM % 20))
	if ((action < 10 && ${#LIVE[@]} < 12)) || ((${#LIVE[@]} == 0)); then
		name="c$((n++))"
		new_cluster "$name" >"$E2E_TMP/churn.yaml"
		kc apply -n "$NS" -f "$E2E_TMP/churn.yaml" >/dev/null || fail "could not create $name"
		LIVE+=("$name"); created=$((created + 1))
	elif ((action < 16)); then
		i=$((RANDOM % ${#LIVE[@]}))
		kc delete rayclusters.ray.io -n "$NS" "${LIVE[i]}" --wait=false >/dev/null
		LIVE=("${LIVE[@]:0:i}" "${LIVE[@]:i+1}"); deleted=$((deleted + 1))
	elif ((action < 18)); then
		pick i 0 2 3
		if ((QCPU[i] < (i == 3 ? 12 : 7))); then QCPU[i]=$((QCPU[i] + 1)); fi
		if ((QMEM[i] < (i == 3 ? 16 : 10))); then QMEM[i]=$((QMEM[i] + 1)); fi
		kc patch queue "$( ((i == 3)) && echo "$P" || echo "${QUEUES[i]}")" --type merge \
			-p "{\"spec\":{\"capability\":{\"cpu\":\"${QCPU[i]}\",\"memory\":\"${QMEM[i]}Gi\"}}}" >/dev/null
		grown=$((grown + 1))
	else
		pick c "${LIVE[@]}"
		if [[ "$(kc get rayclusters.ray.io -n "$NS" "$c" -o json | jq -r '"\(.spec.enableInTreeAutoscaling)\(.spec.workerGroupSpecs[0].groupName // "")"')" == trueg0 ]]; then
			kc patch rayclusters.ray.io -n "$NS" "$c" --type json \
				-p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":3}]' >/dev/null && scaled=$((scaled + 1))
		fi
	fi
	sleep "0.$((3 + RANDOM % 7))" # pacing the churn (not a wait)
	((RANDOM % 10 == 0)) && inv_assert "invariants held so far ($created created, $deleted deleted)" 2>&1 | tail -1 >&2
done
pass "churn done: $created created, $deleted deleted, $grown queue changes, $scaled scale-ups; ${#LIVE[@]} clusters left;" \
	"$(preemptions preempt) preemptions and $(preemptions reclaim) reclaims"
inv_assert "invariants held throughout the churn"

# Quiet: every cluster's pods exist (KubeRay), nothing terminates, and nothing changed for 5 s.
expected_pods() { # total pods KubeRay is to create for the clusters left (none for a suspended one: --hold-gangs)
	kc get rayclusters.ray.io -n "$NS" -o json |
		jq '[.items[] | select(.spec.suspend != true) | 1 + ([.spec.workerGroupSpecs[]? | .replicas // 0] | add // 0)] | add // 0'
}
snapshot() { kc get pods -n "$NS" -l ray.io/cluster -o json | jq -c '[.items[] | [.metadata.name, (.metadata.deletionTimestamp != null),
	([.spec.schedulingGates[]?.name] | index("raygate.io/gang") != null)]] | sort'; }
quiet_since=-1 last=""
settled() {
	local s want have
	s="$(snapshot)"
	want="$(expected_pods)"
	have="$(jq '[.[] | select(.[1] == false)] | length' <<<"$s")"
	if [[ "$s" != "$last" || "$have" != "$want" || "$(jq '[.[] | select(.[1])] | length' <<<"$s")" != 0 ]]; then
		last="$s" quiet_since=$SECONDS
		return 1
	fi
	((SECONDS - quiet_since >= 5))
}
eventually 240 "the cluster is quiet (all pods created, none terminating, no change for 5 s)" settled
rc=0
python3 "$ROOT/tests/e2e/invariants.py" --server "https://127.0.0.1:$APISERVER_PORT" --token "$STATE/pki/admin.token" \
	--ca "$STATE/pki/ca.crt" --namespace "$NS" --settled || rc=$?
((rc != 3)) || fail "a gang that fits is not admitted (seed $SEED)"
((rc == 0)) || fail "the settled check itself failed (exit $rc)"
pass "every gang that fits is admitted"
inv_stop
