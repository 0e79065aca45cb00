#!/usr/bin/env bash
# A fault drill (docs/contributing.md): the controller dies after
# recording an admission but before all gates are removed (test-only fault
# switch). Restarted, it finishes that gang first and over-admits nothing. The
# invariant checker runs throughout; the gang is partly ungated while the
# controller is down, so it gets a grace longer than the outage.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
e2e_on_exit restore_gate
Q="restart-$(e2e_uid)"
make_queue "$Q" 4 6Gi
inv_start --grace 60

"$ROOT/hack/cluster.sh" stop raygate-gate
"$ROOT/hack/cluster.sh" start-gate --test-fault-exit-after-ungates 1
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null
gate_down() { ! gate_running; }
eventually 60 "the controller died mid-admission (fault switch)" gate_down
grep -q "test fault: exiting after recording the admission" "$STATE/logs/raygate-gate.log" || fail "the gate exited for another reason"
admitted_at="$(rc_annotation test-cluster-0 raygate.io/admitted-at)"
[[ -n "$admitted_at" ]] || fail "the admission was not recorded before the gates were touched"
pass "admission recorded before the crash"
assert_eq "pods still gated after the crash" 2 "$(gated_count test-cluster-0)"

# While the controller is down, a second gang of the same shape arrives: the
# queue can hold only one of them.
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-1 "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "test-cluster-1's 3 pods created" has_pods test-cluster-1 3

"$ROOT/hack/cluster.sh" start-gate
none_gated() { [[ "$(gated_count test-cluster-0)" == 0 ]]; }
eventually 30 "restarted controller finished test-cluster-0" none_gated
eventually 60 "test-cluster-0 Running" pods_are test-cluster-0 3 Running
head="$(head_pod test-cluster-1)"
eventually 10 "test-cluster-1 waits on the queue" describe_has "$head" "does not fit queue $Q"
stays 2 "test-cluster-1 not over-admitted (3 pods gated)" is gated_count test-cluster-1 3
assert_eq "test-cluster-0's admission not recorded again" "$admitted_at" \
	"$(rc_annotation test-cluster-0 raygate.io/admitted-at)"
kc delete rayclusters.ray.io -n "$NS" test-cluster-0 >/dev/null
all_or_none_watch test-cluster-1 3 60 || fail "test-cluster-1 was not admitted after test-cluster-0 was deleted"
pass "test-cluster-1 admitted whole once test-cluster-0 is gone"
inv_stop
