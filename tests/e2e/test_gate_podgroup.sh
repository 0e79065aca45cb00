#!/usr/bin/env bash
# The walkthrough as Volcano users read it: `kubectl get podgroup
# ray-test-cluster-0-pg -o yaml` and `kubectl get queue -o yaml` before and
# after test-cluster-0 is deleted (the KubeRay + Volcano guide), the PodGroup
# garbage-collected with its RayCluster, minMember following a replica change,
# and status written only when it changes.
#
# The gate controller runs here with the ServiceAccount and ClusterRole of
# manifests/gate.yaml (not the admin credentials of the other tests): a verb
# missing from the RBAC fails this test. They are made in the test's
# namespace and under a ClusterRole name of the test's, and go when it ends.
. "$(dirname "$0")/lib.sh"
e2e_setup
GATE_LOG="$STATE/logs/raygate-gate.log"
SA_KUBECONFIG="$STATE/raygate-gate-sa.kubeconfig"
# (the last registered runs first: the gate restored, then its credentials go)
e2e_on_exit 'rm -f "$SA_KUBECONFIG"; kc delete clusterrolebinding,clusterrole "$ROLE" --ignore-not-found >/dev/null 2>&1'
e2e_on_exit restore_gate

# --- The gate as deployed: manifests/gate.yaml's RBAC, a token of its ServiceAccount.
ROLE="raygate-gate-$(e2e_uid)"
kc create --dry-run=client -o json -f "$ROOT/manifests/gate.yaml" |
	jq --arg ns "$NS" --arg role "$ROLE" 'select(.kind | IN("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"))
		| if .metadata.namespace then .metadata.namespace = $ns else . end
		| if (.kind | startswith("Cluster")) then .metadata.name = $role | .metadata.labels["e2e.raygate.io/added"] = "true" else . end
		| if .kind == "ClusterRoleBinding" then .roleRef.name = $role else . end
		| if .subjects then .subjects |= map(.namespace = $ns) else . end' |
	kc apply -f - >/dev/null
token="$(kc create token raygate-gate -n "$NS" --duration 1h)"
cat >"$SA_KUBECONFIG" <<-EOF
	apiVersion: v1
	kind: Config
	clusters: [{name: local, cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority: "$STATE/pki/ca.crt"}}]
	users: [{name: raygate-gate, user: {token: "$token"}}]
	contexts: [{name: local, context: {cluster: local, user: raygate-gate}}]
	current-context: local
EOF
"$ROOT/hack/cluster.sh" stop raygate-gate
from=$(($(wc -l <"$GATE_LOG") + 1))
"$ROOT/hack/cluster.sh" start-gate --kubeconfig "$SA_KUBECONFIG" --log-level debug
log() { tail -n "+$from" "$GATE_LOG"; }
synced() { log | grep -q '"caches synced: deciding"'; }
eventually 30 "the gate runs as system:serviceaccount:$NS:raygate-gate" synced
log | grep -q 'PodGroup CRD (podgroups.scheduling.volcano.sh) found' || fail "the gate did not find the PodGroup CRD"

Q="pg-$(e2e_uid)"
make_queue "$Q" 4 6Gi
pg() { kc get podgroups.scheduling.volcano.sh -n "$NS" "$1" -o json; }
queue() { kc get queue "$Q" -o json; }
# jqpg PODGROUP FILTER: the filter's value (raw) on the PodGroup, or "" when absent.
jqpg() { pg "$1" 2>/dev/null | jq -r "$2 // \"\""; }
jqq() { queue | jq -r "$1 // \"\""; }

# --- test-cluster-0 is admitted: its PodGroup as the guide shows it.
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "test-cluster-0's 3 pods Running" pods_are test-cluster-0 3 Running
PG0=ray-test-cluster-0-pg
eventually 15 "$PG0 phase Running" is jqpg "$PG0" .status.phase Running
say "$ kubectl get podgroups.scheduling.volcano.sh $PG0 -o yaml"
kc get podgroups.scheduling.volcano.sh -n "$NS" "$PG0" -o yaml | sed 's/^/    /' >&2
uid0="$(kc get rayclusters.ray.io -n "$NS" test-cluster-0 -o jsonpath='{.metadata.uid}')"
assert_eq "$PG0 minMember" 3 "$(jqpg "$PG0" .spec.minMember)"
assert_eq "$PG0 minResources" '{"cpu":"3","memory":"4Gi"}' "$(pg "$PG0" | jq -cS .spec.minResources)"
assert_eq "$PG0 queue" "$Q" "$(jqpg "$PG0" .spec.queue)"
assert_eq "$PG0 owner" "RayCluster test-cluster-0 $uid0 true" \
	"$(pg "$PG0" | jq -r '.metadata.ownerReferences[] | "\(.kind) \(.name) \(.uid) \(.controller)"')"
assert_eq "$PG0 last condition" "Scheduled True" "$(pg "$PG0" | jq -r '.status.conditions[-1] | "\(.type) \(.status)"')"
[[ "$(jqpg "$PG0" '.status.conditions[-1].lastTransitionTime')" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T ]] || fail "Scheduled has no lastTransitionTime"
pass "Scheduled has a lastTransitionTime"
assert_eq "$PG0 running" 3 "$(jqpg "$PG0" .status.running)"
eventually 10 "queue $Q: running 1" is jqq .status.running 1
assert_eq "queue allocated" '{"cpu":"3","memory":"4Gi"}' "$(queue | jq -cS .status.allocated)"
assert_eq "queue state" Open "$(jqq .status.state)"

# --- test-cluster-1 waits: Pending, Unschedulable / NotEnoughResources with the reason.
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-1 "$Q" | kc apply -n "$NS" -f - >/dev/null
PG1=ray-test-cluster-1-pg
want="gang $PG1 (3 pods; cpu 3, memory 4Gi) does not fit queue $Q: cpu needs 3, 1 of 4 free; memory needs 4Gi, 2Gi of 6Gi free"
eventually 60 "$PG1 says why it waits" is jqpg "$PG1" '.status.conditions[] | select(.type == "Unschedulable") | .message' "$want"
say "$ kubectl get podgroups.scheduling.volcano.sh $PG1 -o yaml"
kc get podgroups.scheduling.volcano.sh -n "$NS" "$PG1" -o yaml | sed 's/^/    /' >&2
assert_eq "$PG1 phase" Pending "$(jqpg "$PG1" .status.phase)"
assert_eq "$PG1 Unschedulable" "True NotEnoughResources" \
	"$(pg "$PG1" | jq -r '.status.conditions[] | select(.type == "Unschedulable") | "\(.status) \(.reason)"')"
assert_eq "$PG1 has no Scheduled condition" "" "$(pg "$PG1" | jq -r '.status.conditions[] | select(.type == "Scheduled") | .type')"
eventually 10 "queue $Q: pending 1" is jqq .status.pending 1
say "$ kubectl get queue $Q -o yaml"
kc get queue "$Q" -o yaml | sed 's/^/    /' >&2
assert_eq "queue running" 1 "$(jqq .status.running)"

# --- Passes that change nothing write nothing: the RayCluster's annotations change
# (each change is a pass over the queue), the PodGroups and the Queue do not.
ltt="$(jqpg "$PG1" '.status.conditions[] | select(.type == "Unschedulable") | .lastTransitionTime')"
mark=$(($(wc -l <"$GATE_LOG") + 1))
since_mark() { tail -n "+$mark" "$GATE_LOG"; }
compared() { since_mark | grep -c 'status: .* PodGroups and .* queues compared' || true; }
more_compared() { (($(compared) > $1)); }
for i in 1 2 3; do # each change, then the pass it causes
	n="$(compared)"
	kc annotate rayclusters.ray.io -n "$NS" test-cluster-1 --overwrite "e2e.raygate.io/poke=$i" >/dev/null
	eventually 30 "a status comparison after RayCluster change $i" more_compared "$n"
done
# Each pass says what it queued for the status writer.
assert_eq "writes queued by those passes" "" "$(since_mark | grep 'queues compared' | grep -v ', 0 writes queued' || true)"
assert_eq "$PG1 Unschedulable lastTransitionTime kept" "$ltt" \
	"$(jqpg "$PG1" '.status.conditions[] | select(.type == "Unschedulable") | .lastTransitionTime')"

# --- test-cluster-0 deleted: its PodGroup goes with it; test-cluster-1 is admitted and runs.
kc delete rayclusters.ray.io -n "$NS" test-cluster-0 >/dev/null
pg_gone() { ! kc get podgroups.scheduling.volcano.sh -n "$NS" "$PG0" >/dev/null 2>&1; }
eventually 60 "$PG0 garbage-collected with its RayCluster" pg_gone
eventually 60 "test-cluster-1's 3 pods Running" pods_are test-cluster-1 3 Running
eventually 15 "$PG1 phase Running" is jqpg "$PG1" .status.phase Running
say "$ kubectl get podgroups.scheduling.volcano.sh $PG1 -o yaml"
kc get podgroups.scheduling.volcano.sh -n "$NS" "$PG1" -o yaml | sed 's/^/    /' >&2
assert_eq "$PG1 conditions" "Unschedulable False GangAdmitted, Scheduled True tasks in the gang are ready to be scheduled" \
	"$(pg "$PG1" | jq -r '[.status.conditions[] | "\(.type) \(.status) \(.reason)"] | join(", ")')"
assert_eq "$PG1 running" 3 "$(jqpg "$PG1" .status.running)"
eventually 10 "queue $Q: running 1, none pending" is jqq '"\(.status.running) \(.status.pending)"' "1 null"
assert_eq "queue allocated" '{"cpu":"3","memory":"4Gi"}' "$(queue | jq -cS .status.allocated)"
say "$ kubectl get queue $Q -o yaml"
kc get queue "$Q" -o yaml | sed 's/^/    /' >&2

# --- A replica change: minMember and minResources follow the RayCluster.
kc patch rayclusters.ray.io -n "$NS" test-cluster-1 --type json -p '[
	{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 1},
	{"op": "replace", "path": "/spec/workerGroupSpecs/0/minReplicas", "value": 1}]' >/dev/null
eventually 15 "$PG1 minMember 2" is jqpg "$PG1" .spec.minMember 2
assert_eq "$PG1 minResources" '{"cpu":"2","memory":"3Gi"}' "$(pg "$PG1" | jq -cS .spec.minResources)"
eventually 60 "queue allocated follows the scale-down" is eval "queue | jq -cS .status.allocated" '{"cpu":"2","memory":"3Gi"}'

# --- A namespace being deleted: a PodGroup the namespace controller deletes is not
# created again (the apiserver would refuse: its RayCluster is going too). A
# finalizer holds the RayCluster so that the gate sees it while the namespace goes.
NS2="${NS:0:50}-gone"
kc create namespace "$NS2" >/dev/null
release() { kc patch rayclusters.ray.io -n "$NS2" test-cluster-2 --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true; }
e2e_on_exit 'release; kc delete namespace "$NS2" --wait=false >/dev/null 2>&1'
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-2 "$Q" |
	sed 's/^metadata:/metadata:\n  finalizers: [e2e.raygate.io\/hold]/' | kc apply -n "$NS2" -f - >/dev/null
pg2() { kc get podgroups.scheduling.volcano.sh -n "$NS2" ray-test-cluster-2-pg >/dev/null 2>&1; }
eventually 30 "ray-test-cluster-2-pg written" pg2
mark=$(($(wc -l <"$GATE_LOG") + 1))
kc delete namespace "$NS2" --wait=false >/dev/null
pg2_gone() { ! pg2; }
eventually 60 "the namespace controller deleted ray-test-cluster-2-pg" pg2_gone
told() { since_mark | grep -q 'ray-test-cluster-2-pg not written: its namespace is being deleted'; }
eventually 10 "the gate saw the namespace going and did not insist" told
release

# --- Nothing was refused: the RBAC of manifests/gate.yaml allows every request, and no write failed.
assert_eq "requests refused or failed" "" "$(log | grep -E '"level":"(warn|error)".*(not written|not recorded|cannot [a-z]+ resource)' || true)"
