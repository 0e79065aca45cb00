#!/usr/bin/env bash
# Fault drill (docs/contributing.md): watch expiry. The gate controller is frozen
# (SIGSTOP) and its watch connections cut (the apiserver restarts); meanwhile
# a RayCluster and its pods are deleted, a queue and clusters are created, and
# etcd is compacted past what the controller has seen. When it resumes, its
# watches get 410 Gone ("The resourceVersion for the provided watch is too
# old"): it relists, learns what it missed (deletions included) and decides
# correctly.
#
# The apiserver runs with --watch-cache=false for this drill (restored after):
# with its watch cache, an old resourceVersion is answered from memory, or
# refused because the cache is new, whatever etcd kept; without it, a watch
# goes to etcd, so the 410 is etcd's compaction. The connections must be cut
# before the changes: a frozen process's sockets keep receiving, and it would
# read the changes from there on resuming. kube-controller-manager's garbage
# collector is slow after an apiserver restart, so pods of deleted clusters
# are deleted by hand. The KubeRay operator's informers are slow to come back
# too, and with an old view it creates a cluster's pods a second time (and
# never deletes an extra head) or pods of a cluster deleted meanwhile: before
# each step that needs KubeRay, the drill waits until it sees pods again
# (kuberay_caught_up).
. "$(dirname "$0")/lib.sh"
e2e_setup
gate_pid() { cat "$STATE/pids/raygate-gate.pid"; }
api_without_cache() { tr '\0' ' ' <"/proc/$(cat "$STATE/pids/kube-apiserver.pid")/cmdline" 2>/dev/null | grep -- '--watch-cache=false' >/dev/null; }
restore() { # on any exit: the gate running, the apiserver with its usual arguments
	kill -CONT "$(gate_pid)" 2>/dev/null || true
	if api_without_cache || ! api_up; then
		"$ROOT/hack/cluster.sh" restart kube-apiserver >/dev/null 2>&1 || true
		wait_until 120 "kube-apiserver /readyz" api_up || true
	fi
}
e2e_on_exit restore
etcd_revision() {
	ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$ETCD_PORT" endpoint status -w json | jq '.[0].Status.header.revision'
}
expired_relist() { # FROM-LINE WATCH...: each WATCH got 410 from etcd and relisted after FROM-LINE
	local from="$1" w; shift
	for w in "$@"; do
		tail -n "+$from" "$STATE/logs/raygate-gate.log" |
			grep "watch $w: ERROR event 410: The resourceVersion for the provided watch is too old.*relisting" >/dev/null || return 1
	done
}
restart_api --watch-cache=false
kuberay_caught_up "$NS"
Q="expiry-$(e2e_uid)"
Q2="expiry2-$(e2e_uid)"
make_queue "$Q" 4 16Gi
E2E_QUEUES+=("$Q2")
inv_start --grace 10

SPREAD=raygate_gang_ungate_spread_seconds
spread_before_a="$(gate_metric "${SPREAD}_count")"
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" a "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch a 3 120 || fail "a was not admitted"
# The controller observes a's spread once its batch returned, which can be
# after the test sees a's pods ungated: the baseline is taken after it, count
# and bucket from one scrape (an observation between two scrapes was counted
# as a gang over the bound).
# Held by the webhook (e2e_held, --hold-gangs), the gangs' pods are born without the gate: no gate is
# removed, and the spread is not measured.
HELD=0
! e2e_held || HELD=1
a_measured() { (($(gate_metric "${SPREAD}_count") > spread_before_a)); }
((HELD)) || eventually 30 "the controller measured a's gate-removal spread" a_measured
read -r spread_n0 spread_fast0 < <(gate_metrics "${SPREAD}_count" "${SPREAD}_bucket{le=\"1\"}")
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" b "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 120 "b waits whole (KubeRay made its 3 pods gated; held: none)" made_waiting b 3
eventually 10 "b waits on the queue" waits_saying b "does not fit queue $Q: cpu needs 3, 1 of 4 free"
kuberay_caught_up "$NS" # KubeRay has seen b's pods: after the restart it will not make them again

# The controller stops at this point, and its connections are cut.
from="$(gate_log_from)"
kill -STOP "$(gate_pid)"
pass "gate controller frozen (SIGSTOP)"
restart_api --watch-cache=false
kuberay_caught_up "$NS" # it will see a's deletion, and make c's and e's pods once
kc delete rayclusters.ray.io -n "$NS" a --wait=true >/dev/null
kc delete pods -n "$NS" -l ray.io/cluster=a --wait=false >/dev/null
a_gone() { [[ "$(count_pods a)" == 0 ]]; }
eventually 120 "a and its pods are gone" a_gone
make_queue "$Q2" 2 8Gi
head_only_cluster c "$Q2"
head_only_cluster e "$Q"
ce() { made_waiting c 1 && made_waiting e 1; }
eventually 120 "c (new queue $Q2) and e ($Q) created, gated (held: suspended, no pod)" ce
# Every pod of b, c and e still gated. (Counted as pods without the gate, not
# as exact gated counts: after the apiserver restart KubeRay, relisting under
# load, has been seen to create b's pods a second time before deleting them.)
ungated() { echo $(($(count_pods "$1") - $(gated_count "$1"))); }
assert_eq "nothing admitted while the controller is frozen (ungated pods of b, c, e)" "0 0 0" "$(ungated b) $(ungated c) $(ungated e)"
rev="$(etcd_revision)"
ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$ETCD_PORT" compact "$rev" >/dev/null
pass "etcd compacted at revision $rev"
kill -CONT "$(gate_pid)"
pass "gate controller resumed (SIGCONT)"

eventually 90 "every watch got 410 (compacted) and relisted" expired_relist "$from" pods nodes rayclusters queues
all_or_none_watch b 3 120 || fail "b was not admitted: the controller missed a's deletion"
pass "b admitted: the relist told the controller that a and its pods are gone"
all_or_none_watch e 1 60 || fail "e was not admitted"
all_or_none_watch c 1 60 || fail "c was not admitted in the queue created while the controller was frozen"
pass "e and c (queue $Q2, created meanwhile) admitted"
# The gates of each gang went within a second of each other (the controller's
# own measure: first gate removed to last, the threshold of its warning), b's
# included. One fresh-clone run (2317c23) counted one gang over 1 s here, its
# gate log lost; the count was then taken from two scrapes right after a's
# admission, and a's own observation landing between them (count read before
# it, bucket after) gives exactly that: one gang "over the bound" that no
# gang was. The baseline now waits for a's observation and reads one scrape.
# Runs here also found KubeRay's stale view after the restarts making pods
# twice (a second head, never deleted) or again for a deleted cluster (which
# the controller then finished); both are waited out (kuberay_caught_up) and
# the second is refused by the controller (ungate_owner_verdict). No spread
# over 1 s was seen in 13 runs here. A failed test prints the controller's
# log, with its warning for each gang over 1 s.
# The controller observes a gang's spread once its batch returns, a moment
# after the watches above saw the gates go: wait for b's, c's and e's, then
# judge count and bucket from that one scrape.
three_measured() {
	read -r spread_n spread_fast < <(gate_metrics "${SPREAD}_count" "${SPREAD}_bucket{le=\"1\"}")
	((spread_n - spread_n0 >= 3))
}
if ((!HELD)); then
	wait_until 10 "$SPREAD counts b, c and e" three_measured ||
		fail "$SPREAD counted $((spread_n - spread_n0)) gangs since a, not b, c and e"
	assert_eq "gangs since a whose gates were removed over more than 1 s ($SPREAD)" 0 \
		"$(((spread_n - spread_n0) - (spread_fast - spread_fast0)))"
fi
inv_assert "invariants held through the expiry"

restart_api
inv_stop
control_plane_settled
