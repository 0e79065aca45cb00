#!/usr/bin/env bash
# Issue 5, walkthrough 5: two gate controllers with leader election (the
# default timing: 15 s lease, 10 s renew deadline, 2 s retry). Only the leader
# writes; killed (SIGKILL, no release), the other takes over once the lease
# expires and finishes the work that arrived meanwhile; stopped gracefully
# (SIGTERM), the leader releases the lease and the other takes over at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/leader.sh"
e2e_setup
trap 'restore_gates; e2e_teardown' EXIT
LEASE_S=15 RETRY_S=2
Q="leader-$RANDOM"
Q2="leader2-$RANDOM"
make_queue "$Q" 4 6Gi
make_queue "$Q2" 4 6Gi

prepare_gates
A="$(start_candidate raygate-gate)"
eventually 20 "first candidate ($A) holds the lease" holder_is "$A"
B="$(start_candidate raygate-gate-2)"
[[ "$A" != "$B" ]] || fail "both instances run as $A"
eventually 20 "second candidate ($B) sees $A holding the lease" log_has raygate-gate-2 "held by $A"

# --- only the leader writes
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "test-cluster-0 Running" pods_are test-cluster-0 3 Running
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-1 "$Q" | kc apply -n "$NS" -f - >/dev/null
three() { [[ "$(count_pods "$1")" == 3 ]]; }
eventually 60 "test-cluster-1's 3 pods created" three test-cluster-1
head1="$(kc get pods -n "$NS" -l ray.io/cluster=test-cluster-1,ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')"
eventually 20 "test-cluster-1 waits on the queue" describe_has "$head1" "does not fit queue $Q"
sleep 3 # a second writer would have spoken by now
waiting_events() {
	kc get events -n "$NS" -o json |
		jq --arg q "does not fit queue $Q" '[.items[] | select(.involvedObject.kind == "RayCluster" and
			.involvedObject.name == "test-cluster-1" and .reason == "GangWaiting" and (.message | contains($q)))] |
			map(.count) | add // 0'
}
# Each writer would post its own Event for the reason (count 1 each).
assert_eq "'does not fit' Events on test-cluster-1 (one writer)" 1 "$(waiting_events)"
log_has raygate-gate "admit $NS/ray-test-cluster-0-pg" || fail "the leader's log does not show the admission"
if grep -F -- "$NS/" "$STATE/logs/raygate-gate-2.log"; then fail "the non-leader acted on $NS"; fi
pass "the non-leader wrote nothing for $NS"
assert_eq "lease holder" "$A" "$(lease_holder)"

# --- the leader is killed: no release, the other waits out the lease
"$ROOT/hack/cluster.sh" stop raygate-gate KILL
t_kill="$(now_ms)"
# Work arriving while nobody leads: room in Q for test-cluster-1, a new gang in Q2.
kc delete raycluster -n "$NS" test-cluster-0 --wait=false >/dev/null
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-2 "$Q2" | kc apply -n "$NS" -f - >/dev/null
deadline=$((SECONDS + LEASE_S + 20))
while :; do
	# Gates first, then the holder: the new leader writes the Lease before any gate.
	g1="$(gated_count test-cluster-1)" g2="$(gated_count test-cluster-2)" n2="$(count_pods test-cluster-2)"
	holder="$(lease_holder)"
	[[ "$holder" == "$B" ]] && break
	((g1 == 3)) || fail "test-cluster-1 ungated ($g1 of 3 gated) while nobody leads (holder '$holder')"
	((g2 == n2)) || fail "test-cluster-2 ungated ($g2 of $n2 gated) while nobody leads (holder '$holder')"
	((SECONDS < deadline)) || fail "$B did not take over within $((LEASE_S + 20)) s"
	sleep 0.2
done
t_take="$(now_ms)"
dt=$((t_take - t_kill))
say "takeover after SIGKILL: ${dt} ms"
# Not before the lease expired: A renewed at most one retry period before the kill.
((dt >= (LEASE_S - RETRY_S - 1) * 1000)) || fail "takeover after ${dt} ms: before the lease could expire"
# Within the lease time: B's observation of the last renewal (<= one jittered retry late)
# + the lease duration + its next try (<= one jittered retry) + polling slack.
limit=$(((LEASE_S * 1000) + 2 * RETRY_S * 2200 + 2000))
((dt <= limit)) || fail "takeover after ${dt} ms, over ${limit} ms"
pass "$B took over ${dt} ms after the leader was killed (bound ${limit} ms)"
none_gated() { [[ "$(gated_count "$1")" == 0 ]]; }
eventually 30 "the new leader admitted test-cluster-1" none_gated test-cluster-1
eventually 60 "test-cluster-1 Running" pods_are test-cluster-1 3 Running
eventually 60 "test-cluster-2 Running" pods_are test-cluster-2 3 Running
log_has raygate-gate-2 "admit $NS/ray-test-cluster-1-pg" || fail "the new leader's log does not show test-cluster-1's admission"
log_has raygate-gate-2 "admit $NS/ray-test-cluster-2-pg" || fail "the new leader's log does not show test-cluster-2's admission"

# --- graceful stop: the leader releases the lease, the candidate takes it at its next try
A2="$(start_candidate raygate-gate)"
eventually 20 "restarted instance ($A2) sees $B holding the lease" log_has raygate-gate "held by $B"
"$ROOT/hack/cluster.sh" stop raygate-gate-2 TERM
t_stop="$(now_ms)"
log_has raygate-gate-2 "$B released lease" || fail "$B did not release the lease on SIGTERM"
eventually 15 "$A2 holds the lease" holder_is "$A2"
dt=$(($(now_ms) - t_stop))
# A candidate tries every retry period x [1, 2.2): no lease expiry to wait for.
((dt <= RETRY_S * 2200 + 2000)) || fail "takeover after release took ${dt} ms"
pass "takeover after a graceful stop: ${dt} ms"
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-3 "$Q2" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "test-cluster-3's 3 pods created" three test-cluster-3
head3="$(kc get pods -n "$NS" -l ray.io/cluster=test-cluster-3,ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')"
eventually 20 "test-cluster-3 waits on $Q2 (full)" describe_has "$head3" "does not fit queue $Q2"
assert_eq "test-cluster-3 pods gated" 3 "$(gated_count test-cluster-3)"
kc delete raycluster -n "$NS" test-cluster-2 --wait=false >/dev/null
eventually 60 "test-cluster-3 Running" pods_are test-cluster-3 3 Running
log_has raygate-gate "admit $NS/ray-test-cluster-3-pg" || fail "$A2's log does not show test-cluster-3's admission"
pass "$A2 admitted test-cluster-3"
