#!/usr/bin/env bash
# Fault drill (docs/contributing.md): leader failover. Two gate controllers with leader election
# (default timing); the leader is killed (SIGKILL) in the middle of a burst of
# arriving RayClusters; the other takes over within the lease time and admits
# exactly what fits, while the invariant checker watches throughout: no pod
# bound unless its gang was admitted, no queue over capability, no gang partly
# ungated for more than a few seconds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/leader.sh"
e2e_setup
LEASE_S=15 RETRY_S=2
e2e_on_exit restore_gates
QA="drill-a-$(e2e_uid)" QB="drill-b-$(e2e_uid)"
make_queue "$QA" 12 16Gi # 4 gangs of cpu 3, memory 4Gi
make_queue "$QB" 9 12Gi  # 3 gangs

prepare_gates
A="$(start_candidate raygate-gate)"
eventually 20 "first candidate ($A) holds the lease" holder_is "$A"
B="$(start_candidate raygate-gate-2)"
eventually 20 "second candidate ($B) sees $A holding the lease" log_has raygate-gate-2 "held by $A"

# A gang whose ungating the killed leader left half done is finished by its
# successor: partly ungated is allowed for up to the takeover time plus 3 s.
inv_start --grace $((LEASE_S + 2 * RETRY_S * 3 + 3))
# The burst: 12 gangs, alternating queues, 0.3 s apart; the leader dies after the 5th.
for i in $(seq 0 11); do
	q="$QA"; ((i % 2 == 0)) || q="$QB"
	sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" "burst-$i" "$q" | kc apply -n "$NS" -f - >/dev/null
	if ((i == 4)); then
		"$ROOT/hack/cluster.sh" stop raygate-gate KILL
		t_kill="$(now_ms)"
		say "leader $A killed after 5 arrivals"
	fi
	sleep 0.3 # pacing the arrivals (not a wait)
done

wait_until $((LEASE_S + 20)) "takeover" holder_is "$B" || fail "$B did not take over within $((LEASE_S + 20)) s"
t_take="$(now_ms)"
dt=$((t_take - t_kill))
limit=$(((LEASE_S * 1000) + 2 * RETRY_S * 2200 + 2000))
((dt >= (LEASE_S - RETRY_S - 1) * 1000)) || fail "takeover after ${dt} ms: before the lease could expire"
((dt <= limit)) || fail "takeover after ${dt} ms, over ${limit} ms"
pass "$B took over ${dt} ms after the leader was killed (bound ${limit} ms)"

# admitted_in QUEUE: RayClusters of the queue carrying raygate.io/admitted-at
admitted_in() {
	kc get rayclusters.ray.io -n "$NS" -l "volcano.sh/queue-name=$1" -o json |
		jq '[.items[] | select(.metadata.annotations["raygate.io/admitted-at"] != null)] | length'
}
# settled QUEUE N: N gangs of the queue admitted and fully ungated, the others complete and fully gated (held by the
# webhook, with --hold-gangs: suspended, with no pod)
settled() {
	local q="$1" want="$2" c n g open=0 waiting=0
	[[ "$(admitted_in "$q")" == "$want" ]] || return 1
	for c in $(kc get rayclusters.ray.io -n "$NS" -l "volcano.sh/queue-name=$q" -o jsonpath='{.items[*].metadata.name}'); do
		n="$(count_pods "$c")" g="$(gated_count "$c")"
		if ((n == 0)) && held_waiting "$c"; then
			waiting=$((waiting + 1))
			continue
		fi
		((n == 3)) || return 1
		if ((g == 0)); then open=$((open + 1)); elif ((g == 3)); then waiting=$((waiting + 1)); else return 1; fi
	done
	((open == want))
}
eventually 90 "$QA: 4 gangs admitted, 2 waiting whole" settled "$QA" 4
eventually 30 "$QB: 3 gangs admitted, 3 waiting whole" settled "$QB" 3
running_admitted() {
	local c
	for c in $(kc get rayclusters.ray.io -n "$NS" -o json | jq -r '.items[] | select(.metadata.annotations["raygate.io/admitted-at"] != null) | .metadata.name'); do
		pods_are "$c" 3 Running || return 1
	done
}
eventually 90 "every admitted gang Running" running_admitted
grep -F -- "admit $NS/" "$STATE/logs/raygate-gate-2.log" >/dev/null || fail "the new leader admitted nothing"
pass "the new leader admitted $(grep -cF -- "admit $NS/" "$STATE/logs/raygate-gate-2.log") gangs, the old one $(grep -cF -- "admit $NS/" "$STATE/logs/raygate-gate.log")"

# Pending work after the failover: room in QA goes to one waiting gang.
victim="$(kc get rayclusters.ray.io -n "$NS" -l "volcano.sh/queue-name=$QA" -o json |
	jq -r '[.items[] | select(.metadata.annotations["raygate.io/admitted-at"] != null)][0].metadata.name')"
kc delete rayclusters.ray.io -n "$NS" "$victim" --wait=false >/dev/null
eventually 60 "$victim deleted" gone rayclusters.ray.io "$victim"
eventually 60 "$QA: a waiting gang admitted in $victim's place (4 admitted, 1 waiting)" settled "$QA" 4
polls="$(inv_polls)"
eventually 30 "the invariant checker looked at the settled state twice" inv_polled_since $((polls + 1))
inv_stop "invariants held through the failover"
