#!/usr/bin/env bash
# The admission webhook on the real apiserver: a labelled RayCluster gets its
# PodGroup metadata, the pods KubeRay creates are gated at creation, foreign
# gates are kept, unlabelled clusters are untouched, and the manifests are
# accepted by the apiserver.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
[[ "$("$ROOT/hack/cluster.sh" status 2>/dev/null)" == *"raygate-webhook"*"running"* ]] || fail "raygate's webhook is not running (cluster started with --no-raygate?)"

jp() { kc get -n "$NS" "$1" "$2" -o "jsonpath=$3"; }

# The queue is never created, so the gate controller (when running) leaves
# these pods gated: this test is about the webhook alone.
Q="absent-$(e2e_uid)"

# --- RayCluster mutation
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null
assert_eq "min-member annotation" 3 "$(jp rayclusters.ray.io test-cluster-0 '{.metadata.annotations.raygate\.io/min-member}')"
assert_eq "min-resources annotation" '{"cpu":"3","memory":"4Gi"}' \
	"$(jp rayclusters.ray.io test-cluster-0 '{.metadata.annotations.raygate\.io/min-resources}')"
assert_eq "group-name annotation" ray-test-cluster-0-pg \
	"$(jp rayclusters.ray.io test-cluster-0 '{.metadata.annotations.scheduling\.k8s\.io/group-name}')"
assert_eq "head template queue label" "$Q" \
	"$(jp rayclusters.ray.io test-cluster-0 '{.spec.headGroupSpec.template.metadata.labels.volcano\.sh/queue-name}')"
assert_eq "worker template group annotation" ray-test-cluster-0-pg \
	"$(jp rayclusters.ray.io test-cluster-0 '{.spec.workerGroupSpecs[0].template.metadata.annotations.scheduling\.k8s\.io/group-name}')"

# --- Pod mutation: every pod KubeRay creates is gated, none is bound.
three_pods() { [[ "$(count_pods test-cluster-0)" == 3 ]]; }
eventually 60 "KubeRay created 3 pods for test-cluster-0" three_pods
for p in $(kc get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o name); do
	assert_eq "$p gates" raygate.io/gang "$(kc get -n "$NS" "$p" -o jsonpath='{.spec.schedulingGates[*].name}')"
	assert_eq "$p group annotation" ray-test-cluster-0-pg \
		"$(kc get -n "$NS" "$p" -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name}')"
done
none_bound() { [[ -z "$(kc get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o jsonpath='{.items[*].spec.nodeName}')" ]]; }
stays 2 "kube-scheduler binds none of them" none_bound # the chance it must not take
assert_eq "pods shown SchedulingGated" "3" \
	"$(kc get pods -n "$NS" -l ray.io/cluster=test-cluster-0 --no-headers | awk '$3 == "SchedulingGated"' | wc -l)"
assert_eq "pods bound to a node" "" "$(kc get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o jsonpath='{.items[*].spec.nodeName}')"

# --- UPDATE recomputes: scale the workers to 3.
kc patch rayclusters.ray.io -n "$NS" test-cluster-0 --type json \
	-p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":3},{"op":"replace","path":"/spec/workerGroupSpecs/0/maxReplicas","value":3}]' >/dev/null
assert_eq "min-member after scale-up" 4 "$(jp rayclusters.ray.io test-cluster-0 '{.metadata.annotations.raygate\.io/min-member}')"

# --- Our canonical quantities are the apiserver's: it normalises pod quantities.
raycluster odd-quantities queue="$Q" head='cpu: "0.5", memory: 1.5Gi, ephemeral-storage: 1e9' \
	group='w:3:3:3:cpu: 250m, memory: 1000Mi, ephemeral-storage: 500M' | kc apply -n "$NS" -f - >/dev/null
ours="$(jp rayclusters.ray.io odd-quantities '{.metadata.annotations.raygate\.io/min-resources}')"
[[ -n "$ours" ]] || fail "no min-resources on odd-quantities"
# Hand the apiserver a non-canonical spelling of each of our sums (the value
# in milli-units plus "m"); its canonical form must equal ours.
probe="$(jq -n --argjson q "$ours" '{apiVersion:"v1",kind:"Pod",metadata:{name:"probe"},spec:{containers:[{name:"c",image:"x",resources:{requests:$q}}]}}')"
theirs="$(echo "$probe" | kc create -n "$NS" --dry-run=server -f - -o json | jq -cS '.spec.containers[0].resources.requests')"
assert_eq "our quantities are canonical" "$(echo "$ours" | jq -cS .)" "$theirs"
assert_eq "odd-quantities sums" '{"cpu":"1250m","ephemeral-storage":"2500M","memory":"4536Mi"}' "$(echo "$ours" | jq -cS .)"

# --- A pod created by hand with a foreign gate keeps it beside ours.
sed "s/QUEUE/$Q/" <<'YAML' | kc create -n "$NS" -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  generateName: by-hand-
  labels: {ray.io/cluster: test-cluster-0, volcano.sh/queue-name: QUEUE}
spec:
  schedulingGates: [{name: example.com/other}]
  containers: [{name: c, image: rayproject/ray:2.9.0}]
YAML
gates="$(kc get pods -n "$NS" -o jsonpath='{range .items[?(@.metadata.generateName=="by-hand-")]}{.spec.schedulingGates[*].name}{end}')"
assert_eq "foreign gate kept beside ours" "example.com/other raygate.io/gang" "$gates"

# --- Priority class from the label lands in the templates and so in the pods.
# The samples' PriorityClass ray-high, under a name of this test's (deleted when it ends).
PC="ray-high-$(e2e_uid)"
e2e_on_exit 'kc delete priorityclass "$PC" --ignore-not-found >/dev/null 2>&1'
kc create --dry-run=client -o json -f "$ROOT/samples/priorityclass-ray-high.yaml" |
	jq --arg n "$PC" '.metadata.name = $n | .metadata.labels["e2e.raygate.io/added"] = "true"' | kc create -f - >/dev/null
sed -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $Q/" -e "s/priority-class-name: ray-high$/priority-class-name: $PC/" \
	"$ROOT/samples/raycluster-priority.yaml" | kc apply -n "$NS" -f - >/dev/null
assert_eq "template priorityClassName" "$PC" "$(jp rayclusters.ray.io urgent-cluster '{.spec.headGroupSpec.template.spec.priorityClassName}')"
two_pods() { [[ "$(count_pods urgent-cluster)" == 2 ]]; }
eventually 60 "KubeRay created 2 pods for urgent-cluster" two_pods
assert_eq "pod priority resolved" "1000 1000" "$(kc get pods -n "$NS" -l ray.io/cluster=urgent-cluster -o jsonpath='{.items[*].spec.priority}')"

# --- An invalid quantity is denied with the field named.
if out="$(raycluster broken queue=kuberay-test-queue memory=2Gi group=w:-1:0:2: | kc apply -n "$NS" -f - 2>&1)"; then
	fail "a RayCluster with replicas -1 was accepted"
fi
[[ "$out" == *"workerGroupSpecs[0].replicas"* ]] || fail "denial does not name the field: $out"
pass "negative replicas denied naming the field"

# --- An unlabelled RayCluster's pods are untouched and run.
kc apply -n "$NS" -f "$ROOT/samples/raycluster-plain.yaml" >/dev/null
eventually 60 "plain-cluster's 3 pods Running" pods_are plain-cluster 3 Running
assert_eq "plain-cluster gates" "" "$(kc get pods -n "$NS" -l ray.io/cluster=plain-cluster -o jsonpath='{.items[*].spec.schedulingGates}')"
assert_eq "plain-cluster annotations" "" "$(jp rayclusters.ray.io plain-cluster '{.metadata.annotations.raygate\.io/min-member}')"

# --- The manifests are valid for the apiserver.
kc create namespace raygate-system --dry-run=client -o yaml | kc apply -f - >/dev/null
out="$(kc apply -k "$ROOT/manifests/" --dry-run=server 2>&1)" || fail "kubectl apply -k manifests/ --dry-run=server was refused: $out"
pass "manifests accepted by the apiserver (dry run)"
