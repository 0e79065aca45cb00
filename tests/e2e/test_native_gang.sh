#!/usr/bin/env bash
# Kubernetes' own gang scheduling as the last step
# (docs/native-gang.md), on a cluster that serves it (hack/cluster.sh up
# --native-gang):
# 1. every pod of an admitted gang names its group in spec.schedulingGroup,
#    and its Workload and PodGroup (minCount = minMember, owned by the
#    RayCluster) existed before the first gate was lifted: a watch of both,
#    from one resourceVersion, shows the PodGroup's creation before any pod
#    without raygate's gate;
# 2. autoscaling: the PodGroup's minCount follows minReplicas up (before the
#    new member's gate goes) and down;
# 3. the gate controller killed between the PodGroup write and the ungating
#    (--test-fault-exit-after-native) finishes the gang after its restart;
# 4. pods that already name a group of their own (as KubeRay's own
#    kubernetes-was backend makes them; here the legacy operator's stand-in
#    makes them so): raygate gates and admits the gang, and writes no
#    PodGroup for it.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
native_api || fail "this cluster does not serve scheduling.k8s.io/v1beta1 podgroups (hack/cluster.sh up --native-gang)"
native_step on
Q="native-$(e2e_uid)"
make_queue "$Q" 12 24Gi
inv_start --grace 30

# api PATH: GET PATH of the apiserver (a watch streams until killed)
api() { curl -sN --cacert "$STATE/pki/ca.crt" -H "Authorization: Bearer $(cat "$STATE/pki/admin.token")" "https://127.0.0.1:$APISERVER_PORT$1"; }
# watch_into PATH FILE: a watch of PATH into FILE, in the background until the test ends (curl itself: $! is its pid,
# and it holds none of the test's output open)
watch_into() {
	curl -sN --cacert "$STATE/pki/ca.crt" -H "Authorization: Bearer $(cat "$STATE/pki/admin.token")" \
		"https://127.0.0.1:$APISERVER_PORT$1" >"$2" 2>/dev/null </dev/null &
	e2e_on_exit "kill $! 2>/dev/null"
}
native_minc() { kc get podgroups.scheduling.k8s.io -n "$NS" "ray-$1-pg" -o jsonpath='{.spec.schedulingPolicy.gang.minCount}' 2>/dev/null; }

# ---- 1. the group named, and written before the first gate went
rv="$(api "/api/v1/namespaces/$NS/pods?limit=1" | jq -r .metadata.resourceVersion)"
watch_into "/api/v1/namespaces/$NS/pods?watch=1&resourceVersion=$rv" "$E2E_TMP/pods.json"
watch_into "/apis/scheduling.k8s.io/v1beta1/namespaces/$NS/podgroups?watch=1&resourceVersion=$rv" "$E2E_TMP/pgs.json"
raycluster one queue="$Q" group=worker:2:2:2 | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch one 3 60 || fail "one was not admitted whole"
eventually 30 "one's 3 pods bound" is bound_count one 3
groups="$(kc get pods -n "$NS" -l ray.io/cluster=one -o jsonpath='{.items[*].spec.schedulingGroup.podGroupName}')"
assert_eq "every pod of one names its group" "ray-one-pg ray-one-pg ray-one-pg" "$groups"
assert_eq "one's PodGroup minCount (head + 2 workers)" 3 "$(native_minc one)"
assert_eq "one's Workload template minCount" 3 \
	"$(kc get workloads.scheduling.k8s.io -n "$NS" ray-one-pg -o jsonpath='{.spec.podGroupTemplates[0].schedulingPolicy.gang.minCount}')"
assert_eq "one's PodGroup owned by its RayCluster" "RayCluster/one/true" \
	"$(kc get podgroups.scheduling.k8s.io -n "$NS" ray-one-pg -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')"
assert_eq "one's PodGroup placed whole by kube-scheduler" True \
	"$(kc get podgroups.scheduling.k8s.io -n "$NS" ray-one-pg -o jsonpath='{.status.conditions[?(@.type=="PodGroupInitiallyScheduled")].status}')"
# The order, by resourceVersion (one etcd revision order): the PodGroup's ADDED before the first pod event without our gate.
pg_rv="$(jq -r 'select(.type == "ADDED" and .object.metadata.name == "ray-one-pg") | .object.metadata.resourceVersion' "$E2E_TMP/pgs.json" | head -1)"
first_ungated="$(jq -r 'select(.object.metadata.labels["ray.io/cluster"] == "one" and
	([.object.spec.schedulingGates[]?.name] | index("raygate.io/gang") | not)) | .object.metadata.resourceVersion' "$E2E_TMP/pods.json" | head -1)"
[[ -n "$pg_rv" && -n "$first_ungated" ]] || fail "the watches saw no PodGroup ($pg_rv) or no ungated pod ($first_ungated)"
((pg_rv < first_ungated)) || fail "a pod of one was ungated (resourceVersion $first_ungated) before its PodGroup existed ($pg_rv)"
pass "one's PodGroup created at resourceVersion $pg_rv, its first pod ungated at $first_ungated"

# ---- 2. autoscaling: minCount follows minReplicas
kc patch rayclusters.ray.io -n "$NS" one --type json \
	-p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/minReplicas", "value": 3}, {"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 3}, {"op": "replace", "path": "/spec/workerGroupSpecs/0/maxReplicas", "value": 3}]' >/dev/null
eventually 60 "minReplicas 3: the PodGroup's minCount 4" is native_minc one 4
eventually 60 "the fourth pod bound" is bound_count one 4
kc patch rayclusters.ray.io -n "$NS" one --type json \
	-p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/minReplicas", "value": 1}, {"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 1}, {"op": "replace", "path": "/spec/workerGroupSpecs/0/maxReplicas", "value": 1}]' >/dev/null
eventually 90 "minReplicas 1: the PodGroup's minCount 2 (within a full pass)" is native_minc one 2
kc delete rayclusters.ray.io -n "$NS" one >/dev/null
_pg_gone() { ! kc get podgroups.scheduling.k8s.io -n "$NS" ray-one-pg >/dev/null 2>&1; }
eventually 60 "one's PodGroup deleted with its RayCluster (garbage collector)" _pg_gone

# ---- 3. the gate dies between the PodGroup write and the ungating
"$ROOT/hack/cluster.sh" stop raygate-gate
"$ROOT/hack/cluster.sh" start-gate --native-gang on --test-fault-exit-after-native
raycluster two queue="$Q" workers=2 | kc apply -n "$NS" -f - >/dev/null
gate_down() { ! gate_running; }
eventually 60 "the gate died after writing two's PodGroup (fault switch)" gate_down
grep -q "test fault: exiting after writing" "$STATE/logs/raygate-gate.log" || fail "the gate exited for another reason"
assert_eq "two's PodGroup written before the crash" 3 "$(native_minc two)"
assert_eq "two's pods all still gated" 3 "$(gated_count two)"
"$ROOT/hack/cluster.sh" start-gate --native-gang on >/dev/null
all_or_none_watch two 3 60 || fail "the restarted gate did not finish two whole"
eventually 30 "two's 3 pods bound" is bound_count two 3
kc delete rayclusters.ray.io -n "$NS" two >/dev/null

# ---- 4. pods that already name a group of their own
LEGACY="$ROOT/tests/e2e/legacy"
kc apply -n "$NS" -f - >/dev/null <<-YAML
	apiVersion: scheduling.k8s.io/v1beta1
	kind: PodGroup
	metadata: {name: users-own}
	spec: {schedulingPolicy: {gang: {minCount: 1}}}
YAML
sed -e "s/^  name: example-cluster2$/  name: own/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $Q/" \
	-e 's/^      spec:$/      spec:\n        schedulingGroup: {podGroupName: users-own}/' "$LEGACY/example-cluster2.yaml" | kc apply -n "$NS" -f - >/dev/null
python3 "$LEGACY/node_provider.py" --server "https://127.0.0.1:$APISERVER_PORT" --token "$STATE/pki/admin.token" \
	--ca "$STATE/pki/ca.crt" --namespace "$NS" --head-timeout 120 own >"$STATE/logs/node-provider-$NS-own.log" 2>&1 </dev/null &
e2e_on_exit "kill $! 2>/dev/null"
own_bound() { [[ "$(kc get pods -n "$NS" -l ray-cluster-name=own -o json | jq '[.items[] | select(.spec.nodeName != null)] | length')" == 2 ]]; }
eventually 90 "own's head and worker admitted by raygate and bound" own_bound
[[ -n "$(kc get rayclusters.cluster.ray.io -n "$NS" own -o jsonpath='{.metadata.annotations.raygate\.io/admitted-at}')" ]] ||
	fail "own was not admitted through raygate's queue"
assert_eq "own's pods keep their own group" "users-own users-own" \
	"$(kc get pods -n "$NS" -l ray-cluster-name=own -o jsonpath='{.items[*].spec.schedulingGroup.podGroupName}')"
kc get podgroups.scheduling.k8s.io -n "$NS" ray-own-pg >/dev/null 2>&1 && fail "raygate wrote a PodGroup for a gang whose pods name another"
pass "raygate wrote no PodGroup of its own for own"
inv_stop
