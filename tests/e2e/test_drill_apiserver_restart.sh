#!/usr/bin/env bash
# Fault drill (docs/contributing.md): kube-apiserver restarted (twice: once at rest, once
# just as a gang's room appears). The gate controller reconnects, each watch
# relisting (410: its resourceVersion predates the new apiserver's watch
# cache, as with etcd 3.4) or resuming from a resourceVersion still current
# (Kubernetes 1.37 on etcd 3.6 mostly does), and carries on: nothing is admitted twice,
# nothing that waits is admitted by mistake, and what fits afterwards is
# admitted whole. The invariant checker runs throughout (it cannot poll while
# the apiserver is away: those polls count as failed, not as passed).
#
# kube-controller-manager's garbage collector takes about a minute to resume
# after an apiserver restart (its discovery failed during the outage), so the
# pods of a deleted RayCluster are deleted here by hand: the drill is about
# raygate, not about the garbage collector.
. "$(dirname "$0")/lib.sh"
e2e_setup
restore_api() { api_up || "$ROOT/hack/cluster.sh" restart kube-apiserver >/dev/null 2>&1 || true; }
e2e_on_exit restore_api
Q="apirestart-$(e2e_uid)"
make_queue "$Q" 4 16Gi
inv_start --grace 10
admitted_at() { rc_annotation "$1" raygate.io/admitted-at; }
reconnected() { # FROM-LINE WATCH...: every WATCH's stream cut after FROM-LINE, and then relisted or resumed
	local from="$1" w; shift
	for w in "$@"; do
		tail -n "+$from" "$STATE/logs/raygate-gate.log" | grep -E "watch $w: (stream failed|.*relisting)" >/dev/null || return 1
	done
}

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" a "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch a 3 60 || fail "a was not admitted"
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" b "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 120 "b waits whole (KubeRay made its 3 pods gated; held: none)" made_waiting b 3
eventually 10 "b waits on the queue" waits_saying b "does not fit queue $Q: cpu needs 3, 1 of 4 free"
a_at="$(admitted_at a)"

# 1. At rest.
from="$(gate_log_from)"
restart_api
eventually 60 "the gate's watches of pods, nodes, rayclusters and queues cut and taken up again" reconnected "$from" pods nodes rayclusters queues
b_waits() { made_waiting b 3 && [[ -z "$(admitted_at b)" ]]; }
stays 5 "after the restart b still waits whole" b_waits
assert_eq "a's admission not recorded again" "$a_at" "$(admitted_at a)"
assert_eq "a's pods still ungated" 0 "$(gated_count a)"
inv_assert "invariants held across the first restart"
# c and d are created next: KubeRay must see pods again first (a stale view
# makes it create their pods twice, kuberay_caught_up).
kuberay_caught_up "$NS"

delete_cluster() { # NAME: the RayCluster and (for the garbage collector) its pods
	kc delete rayclusters.ray.io -n "$NS" "$1" --wait=false >/dev/null
	kc delete pods -n "$NS" -l "ray.io/cluster=$1" --wait=false >/dev/null
}

# It carries on: room for b appears, then a small gang fills the rest.
delete_cluster a
all_or_none_watch b 3 120 || fail "b was not admitted after a was deleted"
pass "b admitted after the restart, once a is gone"
head_only_cluster c "$Q"
all_or_none_watch c 1 120 || fail "c was not admitted"
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" d "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 120 "d waits whole (KubeRay made its 3 pods gated; held: none)" made_waiting d 3
eventually 10 "d waits on the full queue" waits_saying d "does not fit queue $Q: cpu needs 3, 0 of 4 free"
b_at="$(admitted_at b)" c_at="$(admitted_at c)"

# 2. Just as room for d appears: b's deletion goes in, the apiserver goes down.
from="$(gate_log_from)"
kc delete rayclusters.ray.io -n "$NS" b --wait=false >/dev/null
restart_api
kc delete pods -n "$NS" -l ray.io/cluster=b --wait=false >/dev/null
# Each watch either relisted (410: its resourceVersion predates the new
# apiserver's watch cache) or resumed from a resourceVersion still current:
# both are correct, and which one happens depends on timing. What matters is
# that the streams were cut and that the gate acts on what happened meanwhile.
cut() { tail -n "+$from" "$STATE/logs/raygate-gate.log" | grep "watch pods: stream failed" >/dev/null; }
eventually 60 "the gate's watches were cut by the restart" cut
all_or_none_watch d 3 120 || fail "d was not admitted after b was deleted across the restart"
pass "d admitted whole across the restart"
d_bound() { [[ "$(kc get pods -n "$NS" -l ray.io/cluster=d -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" == 3 ]]; }
eventually 120 "the scheduler bound d's 3 pods" d_bound
assert_eq "c's admission not recorded again" "$c_at" "$(admitted_at c)"
[[ -n "$b_at" ]] || fail "b had no admitted-at"
inv_stop
control_plane_settled
