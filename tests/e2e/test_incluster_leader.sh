#!/usr/bin/env bash
# Two gate pods with leader election on the real node: deleting the
# pod holding the Lease (a graceful delete: SIGTERM releases the Lease) hands
# it on within seconds, to the standby or to the Deployment's replacement,
# whichever asks first, and the new leader admits a gang; two replicas again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/incluster.sh"
incluster_setup
Q="inleader-$(e2e_uid)"
make_queue "$Q" 8 12Gi
eventually 180 "raygate in-cluster and Ready" installed_ready

old="$(lease_holder_pod)"
other="$(kc get pods -n "$RG_NS" -l app.kubernetes.io/name=raygate-gate -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | grep -vx "$old")"
[[ -n "$old" && -n "$other" ]] || fail "want a holder and another replica, got '$old' and '$other'"
pass "leader $old, standby $other"
t0=$(date +%s%3N)
kc delete pod -n "$RG_NS" "$old" --wait=false >/dev/null
# The old leader releases the Lease on SIGTERM; the standby (which retries
# every 2 s) or the Deployment's replacement, if it starts first, takes it.
taken() {
	local h; h="$(lease_holder_pod)"
	[[ -n "$h" && "$h" != "$old" ]] && kc get pod -n "$RG_NS" "$h" -o jsonpath='{.status.phase}' | grep -qx Running
}
eventually 20 "another gate pod holds the Lease" taken
new="$(lease_holder_pod)"
say "MEASURE leader-handover-ms=$(($(date +%s%3N) - t0)) new-leader=$new ($([[ "$new" == "$other" ]] && echo standby || echo replacement))"

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" after-failover "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch after-failover 3 60 || fail "after-failover was not admitted by the new leader"
pass "the new leader admitted a gang whole"
eventually 120 "the Deployment's replacement joins: 2 gate pods Ready" ready_on_node raygate-gate 2
assert_eq "the Lease stays with $new" "$new" "$(lease_holder_pod)"
