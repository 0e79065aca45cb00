#!/usr/bin/env bash
# Deserved means deserved. Reclaim is bounded by deserved, not by
# priority (Volcano's capacity plugin). Queues qa and qb deserve cpu 4 each
# (capability cpu 8 each) on one node of cpu 8 (the local cluster's other
# kwok nodes cordoned). qb fills it with four head-only clusters of cpu 2;
# then qa's gang of cpu 4 (a head and a worker of cpu 2), of the same
# priority, is admitted by reclaiming qb's two newest clusters whole, and no
# more: qb keeps its deserved 4. After that nothing more is evicted for 30 s
# (the evicted clusters wait gated: qb cannot reclaim them back, its
# allocation plus one would pass its deserved). The invariant checker runs
# throughout. Fails without the rule: the default LowerPriority kept qa's
# gang waiting forever. With RECLAIM_BY=weight (test_gate_reclaim_weight.sh)
# neither queue sets deserved: both say raygate.io/reclaim-by-weight, and the
# deserved derived by their equal weights (cpu 4 each) does the same.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
KEEP=kwok-node-0
uncordon_all() { for n in $(kc get nodes -o name); do kc uncordon "${n#node/}" >/dev/null 2>&1 || true; done; }
e2e_on_exit uncordon_all
for n in $(kc get nodes -o name); do
	[[ "${n#node/}" == "$KEEP" ]] || kc cordon "${n#node/}" >/dev/null
done
# cpu (millicores) requested by pods bound to the node that are not finished
node_cpu_used() {
	kc get pods -A --field-selector "spec.nodeName=$KEEP" -o json | jq '[.items[]
		| select(.status.phase != "Succeeded" and .status.phase != "Failed")
		| .spec.containers[].resources.requests.cpu // "0"
		| if endswith("m") then (.[:-1] | tonumber) else (tonumber * 1000) end] | add // 0'
}
eventually 120 "$KEEP is empty (earlier tests' pods gone)" is node_cpu_used 0
assert_eq "$KEEP has cpu 8" 8 "$(kc get node "$KEEP" -o jsonpath='{.status.allocatable.cpu}')"

QA="deserved-a-$(e2e_uid)"
QB="deserved-b-$(e2e_uid)"
for q in "$QA" "$QB"; do
	make_queue "$q" 8 16Gi
	if [[ "${RECLAIM_BY:-deserved}" == weight ]]; then
		# Deserved derived by weight (equal weights: cpu 4 each of the 8 while both ask for more), by consent.
		kc annotate queue "$q" raygate.io/reclaim-by-weight=true >/dev/null
	else
		queue_deserved "$q" 4
	fi
done
inv_start

bound() { [[ "$(kc get pods -n "$NS" -l "ray.io/cluster=$1" -o jsonpath='{.items[*].spec.nodeName}')" == "$KEEP"* ]]; }
for i in 0 1 2 3; do
	raycluster "b$i" queue="$QB" cpu=2 | kc apply -n "$NS" -f - >/dev/null
	all_or_none_watch "b$i" 1 60 || fail "b$i was not admitted"
	eventually 30 "b$i bound" bound "b$i"
	sleep 1 # admission times a second apart: the newest are unambiguous
done
pass "qb fills $KEEP (cpu 8, 4 above its deserved)"

# The same priority as qb's clusters (no priority class on either).
raycluster a queue="$QA" cpu=2 'group=worker:1:1:1:cpu: "2", memory: 1Gi' | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch a 2 120 || fail "a was not admitted: qa did not reclaim its deserved"
both_bound() { [[ "$(kc get pods -n "$NS" -l ray.io/cluster=a -o jsonpath='{.items[*].spec.nodeName}')" == "$KEEP $KEEP" ]]; }
eventually 30 "a's two pods bound" both_bound
for i in 3 2; do
	assert_eq "b$i (of the newest) was reclaimed by a" "$NS/a" "$(rc_annotation "b$i" raygate.io/preempted-by)"
	assert_eq "b$i's eviction reason" Reclaimed "$(rc_annotation "b$i" raygate.io/evicted-reason)"
done
for i in 0 1; do
	admitted "b$i" || fail "b$i lost its admission: qb was taken below its deserved"
	assert_eq "b$i not reclaimed" "" "$(rc_annotation "b$i" raygate.io/preempted-by)"
done
pass "qa reclaimed two of qb's clusters whole; qb keeps its deserved"

qcpu() { allocated "$1" | jq -r '.cpu // "0"'; }
eventually 60 "qb's allocation is its deserved (cpu 4)" is qcpu "$QB" 4
eventually 30 "qa's allocation is its deserved (cpu 4)" is qcpu "$QA" 4
evicted_wait() { [[ "$(gated_count b2)" == 1 && "$(gated_count b3)" == 1 ]]; }
eventually 60 "KubeRay recreated b2's and b3's pods, gated" evicted_wait
RECLAIMED="raygate_preemptions_total{queue=\"$QB\",kind=\"reclaim\"}"
eventually 10 "$RECLAIMED = 2" is metric_value "$RECLAIMED" 2

settled() {
	admitted a && admitted b0 && admitted b1 && ! admitted b2 && ! admitted b3 &&
		[[ "$(gated_count a)" == 0 ]] && evicted_wait &&
		[[ "$(gate_metrics "$RECLAIMED" "raygate_preemptions_total{queue=\"$QA\",kind=\"reclaim\"}" \
			"raygate_preemptions_total{queue=\"$QB\",kind=\"preempt\"}")" == "2 0 0" ]]
}
stays 30 "no further evictions: a, b0, b1 admitted, b2 and b3 wait" settled
inv_stop
