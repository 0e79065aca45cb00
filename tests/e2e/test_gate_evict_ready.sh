#!/usr/bin/env bash
# Readiness and "no false eviction": two gangs are admitted and
# bound. fine stays Ready; slow's pods are made not Ready (their Ready
# condition set False through the status subresource, as a kubelet reports a
# container that does not start: kwok's fake nodes have no containers to fail).
# With the default flags (readiness timeout off) slow is bound and never
# evicted. With --pods-ready-timeout 15s it is evicted whole (PodsReadyTimeout,
# its members not Ready named), while fine, bound and Ready, is never evicted.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/evict.sh"
evict_setup evict-ready 15
gate_with --placement-timeout 5m
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" slow "$Q" | kc apply -n "$NS" -f - >/dev/null
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" fine "$Q" | kc apply -n "$NS" -f - >/dev/null
ready_count() { kc get pods -n "$NS" -l "ray.io/cluster=$1" -o json | jq '[.items[] | select(.status.conditions[]? | .type == "Ready" and .status == "True")] | length'; }
all_ready() { all_bound "$1" 3 && [[ "$(ready_count "$1")" == 3 ]]; }
eventually 90 "slow bound and Ready" all_ready slow
eventually 90 "fine bound and Ready" all_ready fine

not_ready() {
	local p now
	now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	for p in $(kc get pods -n "$NS" -l ray.io/cluster=slow -o name); do
		kc patch -n "$NS" "$p" --subresource status --type strategic \
			-p '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady","lastTransitionTime":"'"$now"'"},{"type":"ContainersReady","status":"False","reason":"ContainersNotReady","lastTransitionTime":"'"$now"'"}]}}' >/dev/null
	done
}
not_ready
none_ready() { [[ "$(ready_count slow)" == 0 ]]; }
eventually 10 "slow's pods not Ready" none_ready
admitted_not_ready() { admitted slow && none_ready; }
stays 25 "default flags: slow, bound but not Ready, stays admitted (and its pods stay not Ready)" admitted_not_ready

gate_with --placement-timeout 5m --pods-ready-timeout 15s --requeue-backoff-base 10m
t0=$SECONDS
eventually 60 "slow evicted by the readiness timeout" evicted_not_admitted slow 1
say "evicted $((SECONDS - t0))s after the gate restarted with --pods-ready-timeout 15s"
assert_eq "evicted-reason" PodsReadyTimeout "$(rc_annotation slow raygate.io/evicted-reason)"
eventually 10 "the GangEvicted Event names the readiness timeout" \
	evicted_event_says slow "3 of 3 members not Ready within the readiness timeout (15s)"
assert_eq "raygate_gangs_evicted_total (PodsReadyTimeout)" 1 "$(metric_value "raygate_gangs_evicted_total{queue=\"$Q\",reason=\"PodsReadyTimeout\"}")"
eventually 30 "slow whole: none bound, all gated" none_bound_all_gated slow 3
stays 20 "fine, bound and Ready, is never evicted" admitted fine
assert_eq "fine has no eviction record" "" "$(rc_annotation fine raygate.io/requeue-count)"
inv_stop
