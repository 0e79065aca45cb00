#!/usr/bin/env bash
# Without the PodGroup CRD the gate admits as before, writes no
# PodGroup, says so once in its log, and starts writing PodGroups when the CRD
# is installed (it looks again at every resync).
. "$(dirname "$0")/lib.sh"
e2e_setup
GATE_LOG="$STATE/logs/raygate-gate.log"
CRD_FILE="$ROOT/manifests/crds/scheduling.volcano.sh_podgroups.yaml"
crd_established() {
	[[ "$(kc get crd podgroups.scheduling.volcano.sh -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" == True ]]
}
restore() {
	kc apply --server-side --force-conflicts -f "$CRD_FILE" >/dev/null 2>&1 || true
	wait_until 30 "PodGroup CRD established" crd_established || true
	"$ROOT/hack/cluster.sh" stop raygate-gate >/dev/null 2>&1 || true
	"$ROOT/hack/cluster.sh" start-gate >/dev/null 2>&1 || true
}
e2e_on_exit restore

"$ROOT/hack/cluster.sh" stop raygate-gate
kc delete crd podgroups.scheduling.volcano.sh --wait=true >/dev/null
served() { kc get --raw "/apis/scheduling.volcano.sh/v1beta1" | jq -e '.resources[] | select(.name == "podgroups")' >/dev/null; }
not_served() { ! served; }
eventually 30 "podgroups no longer served" not_served
from=$(($(wc -l <"$GATE_LOG") + 1))
"$ROOT/hack/cluster.sh" start-gate --resync 2s
log() { tail -n "+$from" "$GATE_LOG"; }
synced() { log | grep -q '"caches synced: deciding"'; }
eventually 30 "the gate decides without the PodGroup CRD" synced

Q="nocrd-$(e2e_uid)"
make_queue "$Q" 4 6Gi
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" early "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch early 3 60 || fail "early was not admitted without the PodGroup CRD"
pass "admitted whole without the PodGroup CRD"
running() { [[ "$(kc get queue "$Q" -o jsonpath='{.status.running}')" == 1 ]]; }
eventually 30 "the Queue status is still written" running
# A few resyncs (every 2 s), each looking for the CRD again (a GET of the
# group's discovery: the only GETs the gate makes here).
gets() { gate_metric 'raygate_kube_requests_total{verb="get",code="200"}'; }
gets0="$(gets)"
looked_twice() { (($(gets) >= gets0 + 2)); }
eventually 60 "the gate looked for the PodGroup CRD twice more" looked_twice
assert_eq "times the log says the PodGroup CRD is missing" 1 \
	"$(log | grep -c 'PodGroup CRD (podgroups.scheduling.volcano.sh) is not installed' || true)"
assert_eq "PodGroup errors in the log" "" "$(log | grep -E 'PodGroup [^ ]+/[^ ]+ not written|watch podgroups' || true)"

kc apply --server-side --force-conflicts -f "$CRD_FILE" >/dev/null
eventually 30 "PodGroup CRD installed again" crd_established
found() { log | grep -q 'PodGroup CRD (podgroups.scheduling.volcano.sh) found: writing PodGroups'; }
eventually 30 "the gate found the CRD at a resync" found
phase() { [[ "$(kc get podgroups.scheduling.volcano.sh -n "$NS" ray-early-pg -o jsonpath='{.status.phase}' 2>/dev/null)" == Running ]]; }
eventually 30 "ray-early-pg written, phase Running" phase
assert_eq "ray-early-pg minMember" 3 "$(kc get podgroups.scheduling.volcano.sh -n "$NS" ray-early-pg -o jsonpath='{.spec.minMember}')"
