#!/usr/bin/env bash
# Two gate controllers with leader election (the
# default timing: 15 s lease, 10 s renew deadline, 2 s retry).
# 1. Only the leader writes.
# 2. The leader freezes (SIGSTOP: a long pause, a partition): the other takes
#    over once the lease expires; woken, the old leader writes nothing.
# 3. The leader is killed (SIGKILL, no release): the other takes over within
#    the lease time and finishes the work that arrived meanwhile.
# 4. The leader is stopped gracefully (SIGTERM): it releases the lease and the
#    other takes over at its next try.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/leader.sh"
e2e_setup
e2e_on_exit restore_gates
LEASE_S=15 RETRY_S=2
Q="leader-$(e2e_uid)"
Q2="leader2-$(e2e_uid)"
make_queue "$Q" 4 6Gi
make_queue "$Q2" 4 6Gi
Q3="leader3-$(e2e_uid)"
make_queue "$Q3" 4 6Gi

prepare_gates
A="$(start_candidate raygate-gate)"
eventually 20 "first candidate ($A) holds the lease" holder_is "$A"
B="$(start_candidate raygate-gate-2)"
[[ "$A" != "$B" ]] || fail "both instances run as $A"
eventually 20 "second candidate ($B) sees $A holding the lease" log_has raygate-gate-2 "held by $A"

# --- 1. only the leader writes
apply_cluster() { sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" "$1" "$2" | kc apply -n "$NS" -f - >/dev/null; }
apply_cluster test-cluster-0 "$Q"
eventually 60 "test-cluster-0 Running" pods_are test-cluster-0 3 Running
apply_cluster test-cluster-1 "$Q"
three() { [[ "$(count_pods "$1")" == 3 ]]; }
eventually 60 "test-cluster-1's 3 pods created" three test-cluster-1
head1="$(head_pod test-cluster-1)"
eventually 20 "test-cluster-1 waits on the queue" describe_has "$head1" "does not fit queue $Q"
# waiting_events CLUSTER QUEUE: GangWaiting Events "does not fit queue QUEUE" on the RayCluster
waiting_events() {
	kc get events -n "$NS" -o json |
		jq --arg c "$1" --arg q "does not fit queue $2" '[.items[] | select(.involvedObject.kind == "RayCluster" and
			.involvedObject.name == $c and .reason == "GangWaiting" and (.message | contains($q)))] |
			map(.count) | add // 0'
}
one_event() { [[ "$(waiting_events "$1" "$2")" == 1 ]]; }
# One Event for the reason, count 1 (a second writer would find the Event
# by its name and count it up again from its own state: the log check below
# is what tells a second writer apart).
eventually 20 "a 'does not fit' Event on test-cluster-1" one_event test-cluster-1 "$Q"
stays 3 "one 'does not fit' Event on test-cluster-1 (one writer)" one_event test-cluster-1 "$Q"
log_has raygate-gate "admit $NS/ray-test-cluster-0-pg" || fail "the leader's log does not show the admission"
if grep -F -- "$NS/" "$STATE/logs/raygate-gate-2.log"; then fail "the non-leader acted on $NS"; fi
pass "the non-leader wrote nothing for $NS"
assert_eq "lease holder" "$A" "$(lease_holder)"

# takeover_bounds WHAT T0 T1: a takeover T1 - T0 ms after the leader stopped
# renewing must wait out the lease (the old leader renewed at most one retry
# period before T0) and come within the lease time: the candidate's
# observation of the last renewal (<= one jittered retry late) + the lease
# duration + its next try (<= one jittered retry) + polling slack.
takeover_bounds() {
	local dt=$(($3 - $2)) limit=$(((LEASE_S * 1000) + 2 * RETRY_S * 2200 + 2000))
	((dt >= (LEASE_S - RETRY_S - 1) * 1000)) || fail "$1: takeover after ${dt} ms, before the lease could expire"
	((dt <= limit)) || fail "$1: takeover after ${dt} ms, over ${limit} ms"
	pass "$1: takeover after ${dt} ms (bound ${limit} ms)"
}
none_gated() { [[ "$(gated_count "$1")" == 0 ]]; }

# --- 2. the leader freezes; woken, it writes nothing
pid_a="$(cat "$STATE/pids/raygate-gate.pid")"
kill -STOP "$pid_a"
t_freeze="$(now_ms)"
apply_cluster test-cluster-2 "$Q2"
wait_until $((LEASE_S + 20)) "takeover" holder_is "$B" || { kill -CONT "$pid_a"; fail "$B did not take over from the frozen leader"; }
t_take="$(now_ms)"
takeover_bounds "frozen leader" "$t_freeze" "$t_take"
eventually 60 "$B admitted test-cluster-2 (arrived during the freeze)" pods_are test-cluster-2 3 Running
log_has raygate-gate-2 "admit $NS/ray-test-cluster-2-pg" || fail "$B's log does not show test-cluster-2's admission"
a_lines_before="$(grep -cF -- "$NS/" "$STATE/logs/raygate-gate.log")"
kill -CONT "$pid_a"
eventually 20 "the woken leader knows it lost" log_has raygate-gate "not leading: writing nothing"
apply_cluster test-cluster-3 "$Q2"
eventually 60 "test-cluster-3's 3 pods created" three test-cluster-3
head3="$(head_pod test-cluster-3)"
eventually 20 "test-cluster-3 waits on $Q2" describe_has "$head3" "does not fit queue $Q2"
eventually 20 "a 'does not fit' Event on test-cluster-3" one_event test-cluster-3 "$Q2"
a_silent() { [[ "$(grep -cF -- "$NS/" "$STATE/logs/raygate-gate.log")" == "$a_lines_before" ]]; }
stays 3 "one 'does not fit' Event on test-cluster-3 (one writer)" one_event test-cluster-3 "$Q2"
stays 1 "the woken leader logged nothing about $NS since it froze" a_silent
assert_eq "lease holder" "$B" "$(lease_holder)"

# --- 3. the leader is killed: no release, the other waits out the lease
"$ROOT/hack/cluster.sh" stop raygate-gate-2 KILL
t_kill="$(now_ms)"
# Work arriving while nobody leads: room in Q for test-cluster-1, in Q2 for test-cluster-3.
kc delete rayclusters.ray.io -n "$NS" test-cluster-0 test-cluster-2 --wait=false >/dev/null
deadline=$((SECONDS + LEASE_S + 20))
while :; do
	# Gates first, then the holder: the new leader writes the Lease before any gate.
	g1="$(gated_count test-cluster-1)" g3="$(gated_count test-cluster-3)"
	holder="$(lease_holder)"
	[[ "$holder" == "$A" ]] && break
	((g1 == 3 && g3 == 3)) || fail "gates removed ($g1 and $g3 of 3 left) while nobody leads (holder '$holder')"
	((SECONDS < deadline)) || fail "$A did not take over within $((LEASE_S + 20)) s"
	sleep 0.2 # polling interval (a hold-check: every gate stays until the takeover, checked at each poll)
done
takeover_bounds "killed leader" "$t_kill" "$(now_ms)"
eventually 30 "$A admitted test-cluster-1" none_gated test-cluster-1
eventually 30 "$A admitted test-cluster-3" none_gated test-cluster-3
eventually 60 "test-cluster-1 Running" pods_are test-cluster-1 3 Running
eventually 60 "test-cluster-3 Running" pods_are test-cluster-3 3 Running
log_has raygate-gate "admit $NS/ray-test-cluster-1-pg" || fail "$A's log does not show test-cluster-1's admission"
log_has raygate-gate "admit $NS/ray-test-cluster-3-pg" || fail "$A's log does not show test-cluster-3's admission"

# --- 4. graceful stop: the leader releases the lease, the candidate takes it at its next try
B2="$(start_candidate raygate-gate-2)"
eventually 20 "restarted instance ($B2) sees $A holding the lease" log_has raygate-gate-2 "held by $A"
"$ROOT/hack/cluster.sh" stop raygate-gate TERM
t_stop="$(now_ms)"
log_has raygate-gate "$A released lease" || fail "$A did not release the lease on SIGTERM"
eventually 15 "$B2 holds the lease" holder_is "$B2"
dt=$(($(now_ms) - t_stop))
# A candidate tries every retry period x [1, 2.2): no lease expiry to wait for.
((dt <= RETRY_S * 2200 + 2000)) || fail "takeover after release took ${dt} ms"
pass "takeover after a graceful stop: ${dt} ms"
apply_cluster test-cluster-4 "$Q3"
eventually 60 "test-cluster-4 Running" pods_are test-cluster-4 3 Running
log_has raygate-gate-2 "admit $NS/ray-test-cluster-4-pg" || fail "$B2's log does not show test-cluster-4's admission"
pass "$B2 admitted test-cluster-4"
