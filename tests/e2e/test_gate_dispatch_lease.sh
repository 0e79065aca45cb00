#!/usr/bin/env bash
# The worker side of "at most once" (lib/sched/record/dispatchlease.h): a
# RayCluster created as a manager's dispatcher creates it on a worker, with a
# lease (raygate.io/dispatch-lease, a counter; raygate.io/dispatch-lease-seconds
# 20). While this test bumps the counter every 5 s, as the dispatcher renews
# it, the gang is admitted and runs, for longer than the lease. Once the bumps
# stop, the gate evicts it whole no sooner than 20 s after the last bump (on
# its own clock) and says so in a DispatchLeaseExpired Event; KubeRay's new
# pods stay gated with wait reason dispatch-lease (PodGroup, kubectl raygate
# why). A bump admits it again.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/evict.sh"
evict_setup dispatch-lease 15
export PATH="$BUILD/cli:$PATH"
LEASE=20
C=leased

# The RayCluster as the dispatcher's copy carries the lease: annotated at creation (never admitted unleased).
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" "$C" "$Q" | kc create --dry-run=client -o json -f - |
	jq --arg s "$LEASE" --arg ns "$NS" '.metadata.namespace = $ns | .metadata.annotations += {"raygate.io/dispatch-lease": "1", "raygate.io/dispatch-lease-seconds": $s}' |
	kc create -n "$NS" -f - >/dev/null

# bump: one renewal (the counter + 1), its time (ms) kept in $E2E_TMP/bumped
COUNTER=1
bump() {
	COUNTER=$((COUNTER + 1))
	kc annotate --overwrite -n "$NS" "rayclusters.ray.io/$C" "raygate.io/dispatch-lease=$COUNTER" >/dev/null &&
		now_ms >"$E2E_TMP/bumped"
}
# renewer_start / renewer_stop: a renewal every 5 s in the background (lease/4, as the dispatcher's)
renewer_start() {
	(while :; do
		sleep 5
		bump || true
	done) &
	RENEWER=$!
}
renewer_stop() {
	kill "$RENEWER" 2>/dev/null || true
	wait "$RENEWER" 2>/dev/null || true
	RENEWER=""
}
e2e_on_exit '[[ -z "${RENEWER:-}" ]] || kill "$RENEWER" 2>/dev/null'
now_ms >"$E2E_TMP/bumped"
renewer_start

all_or_none_watch "$C" 3 60 || fail "$C was not admitted while its lease was renewed"
pass "$C admitted with a lease of ${LEASE}s"
eventually 90 "$C bound" all_bound "$C" 3
running() { admitted "$C" && pods_are "$C" 3 Running; }
eventually 60 "$C Running" running
stays $((LEASE + 15)) "renewed every 5s: $C stays admitted and Running for longer than its lease" running
assert_eq "$C has no eviction record" "" "$(rc_annotation "$C" raygate.io/evicted-at)"

# The dispatcher stops renewing (a lost manager, or a partition).
renewer_stop
last="$(cat "$E2E_TMP/bumped")"
lease_evicted() { ! admitted "$C" && [[ "$(rc_annotation "$C" raygate.io/evicted-reason)" == DispatchLeaseExpired ]]; }
eventually $((LEASE + 30)) "$C evicted when its lease ran out" lease_evicted
after=$(($(now_ms) - last))
say "evicted at most ${after} ms after the last renewal (lease ${LEASE}s)"
((after >= LEASE * 1000)) || fail "$C evicted ${after} ms after the last renewal: before its lease of ${LEASE}s ran out"
pass "not evicted before its lease ran out"
assert_eq "requeue-count (a lease eviction is not counted)" 0 "$(rc_annotation "$C" raygate.io/requeue-count)"
lease_events() {
	kc get events -n "$NS" --field-selector "involvedObject.name=$C,involvedObject.kind=RayCluster,reason=DispatchLeaseExpired" \
		-o json | jq -r '.items[].message'
}
lease_event_says() { lease_events | grep -qF -- "$1"; }
eventually 10 "a DispatchLeaseExpired Event on the RayCluster says the lease was not renewed" \
	lease_event_says "gang ray-$C-pg evicted: its dispatch lease (raygate.io/dispatch-lease) was not renewed for"
say "    $(lease_events | head -1)"

# KubeRay's new pods wait, gated, with the reason code and a message saying why.
eventually 60 "$C whole: none bound, all gated" none_bound_all_gated "$C" 3
wait_reason() { kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$C-pg" -o jsonpath='{.metadata.annotations.raygate\.io/wait-reason}'; }
eventually 30 "PodGroup ray-$C-pg: wait reason dispatch-lease" is wait_reason dispatch-lease
eventually 10 "the PodGroup and GangWaiting say the lease was not renewed" waits_saying "$C" \
	"gang ray-$C-pg waits: its dispatch lease (raygate.io/dispatch-lease) was not renewed for" "(lease ${LEASE}s)"
why="$(kc raygate why "$C" -n "$NS")"
[[ "$why" == *"a manager cluster dispatched it here with a lease"* && "$why" == *"was not renewed for"* ]] ||
	fail "kubectl raygate why does not explain the lease: $why"
pass "kubectl raygate why explains the lease"
stays 10 "unrenewed: $C stays gated, not admitted" none_bound_all_gated "$C" 3

# Renewed again: admitted as usual.
bump
renewer_start
all_or_none_watch "$C" 3 60 || fail "$C was not admitted again after its lease was renewed"
pass "renewed: $C admitted again"
eventually 90 "$C bound again" all_bound "$C" 3
stays 10 "$C stays admitted while renewed" admitted "$C"
renewer_stop
inv_stop
