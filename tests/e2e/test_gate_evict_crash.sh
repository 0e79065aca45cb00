#!/usr/bin/env bash
# "crash": the gate controller is killed in the middle of an
# eviction (fault point after-evict-record: after the eviction is recorded on
# the RayCluster and one of its pods deleted). The record was written first:
# the gang is no longer admitted, and while the controller is down its other
# pods are leftovers. Restarted, the controller finishes the eviction: the gang
# is whole and requeued (none of its pods bound, all gated, requeue-count 1,
# not admitted twice), and the invariant checker (evictions included, with a
# grace longer than the outage) finds nothing.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/evict.sh"
evict_setup evict-crash 40
gate_with --placement-timeout 15s --requeue-backoff-base 10m --requeue-backoff-max 1h --test-fault-exit-after-evict-deletes 1

pvc_cluster crash "$Q" missing 3
eventually 60 "crash admitted" admitted crash
eventually 30 "its head bound, its workers not (no claim)" is bound_count crash 1
gate_down() { ! gate_running; }
eventually 90 "the controller died mid-eviction (fault point)" gate_down
tail -n "+$E2E_GATE_FROM" "$STATE/logs/raygate-gate.log" |
	grep -q "test fault: exiting after recording an eviction and deleting 1 of its pods (fault point after-evict-record)" ||
	fail "the gate exited for another reason"
eventually 10 "the eviction was recorded first: admission withdrawn, requeue-count 1" evicted_not_admitted crash 1
requeue_at="$(rc_annotation crash raygate.io/requeue-at)"
left() { kc get pods -n "$NS" -l ray.io/cluster=crash -o json | jq '[.items[] | select(.metadata.deletionTimestamp == null) | select(.spec.nodeName != null or ([.spec.schedulingGates[]?.name] | index("raygate.io/gang") | not))] | length'; }
n="$(left)"
((n > 0)) || fail "no pod was left behind by the crash (nothing to finish)"
pass "$n pods left ungated or bound by the crash"
# A hold-check over time, not a wait: while the controller is down nothing
# else finishes its eviction (the leftovers stay), which is why it must.
left_stay() { ! gate_running && (($(left) == n)); }
stays 3 "the controller stays down and its $n leftovers stay" left_stay

from="$(gate_log_from)" # the restarted controller's lines (an earlier run's would match too)
gate_with --placement-timeout 15s --requeue-backoff-base 10m --requeue-backoff-max 1h
t0=$SECONDS
eventually 30 "the restarted controller finished the eviction: none bound, 4 pods gated" none_bound_all_gated crash 4
say "finished $((SECONDS - t0))s after the restart"
# The controller logs the batch once its deletions returned, which can be a
# moment after KubeRay's gated replacements already satisfy the check above.
finished_logged() { tail -n "+$from" "$STATE/logs/raygate-gate.log" | grep -q "finishing an earlier eviction"; }
eventually 10 "the log says the eviction was finished" finished_logged
assert_eq "requeue-count not counted twice" 1 "$(rc_annotation crash raygate.io/requeue-count)"
assert_eq "requeue-at kept" "$requeue_at" "$(rc_annotation crash raygate.io/requeue-at)"
stays 10 "crash stays requeued (its backoff runs)" evicted_not_admitted crash 1
inv_stop
