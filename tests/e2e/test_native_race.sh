#!/usr/bin/env bash
# Kubernetes' own gang scheduling as the last step
# (docs/native-gang.md), where raygate's simulation loses.
#
# 1. The race: gang G is admitted, then a pod outside raygate (another
#    namespace, no queue) takes a node's room before G's pods are bound. G's
#    pods carry a second scheduling gate of the test's own, so that the room
#    is taken after raygate's decision and before kube-scheduler sees them:
#    raygate removes only its own gate. With the native step, G binds none of
#    its pods and waits whole; once the room is back it binds whole. With the
#    step off (webhook and gate restarted with --native-gang off, last), the
#    same test leaves G partly placed: what the native step closes.
# 2. A gang that raygate admits but kube-scheduler cannot place whole, for a
#    reason raygate's model does not see (required pod anti-affinity, one
#    worker per node, more workers than nodes): it waits whole, none of its
#    pods bound, and raygate's placement timeout takes it back whole.
#
# On two nodes of the test's own (cpu 8 each, selected by label). Needs a
# cluster that serves the native API (hack/cluster.sh up --native-gang).
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
native_api || fail "this cluster does not serve scheduling.k8s.io/v1beta1 podgroups (hack/cluster.sh up --native-gang)"
native_step on
U="$(e2e_uid)"
SEL="e2e.raygate.io/native=$U"
for n in a b; do "$ROOT/hack/cluster.sh" add-node "native-$U-$n" --label e2e.raygate.io/added=true --label "$SEL"; done
_nodes_ready() { [[ "$(kc get nodes -l "$SEL" -o json | jq '[.items[] | select(any(.status.conditions[]; .type == "Ready" and .status == "True"))] | length')" == 2 ]]; }
eventually 60 "the test's 2 nodes Ready" _nodes_ready
Q="native-$U"
make_queue "$Q" 40 80Gi
NS2="$NS-other"
kc create namespace "$NS2" >/dev/null
kc label namespace "$NS2" e2e.raygate.io/test=native_race >/dev/null
e2e_on_exit "kc delete namespace $NS2 --wait=false >/dev/null 2>&1"

# gang NAME [HOLD]: head (cpu 1) and 2 workers (cpu 7) on the test's nodes; HOLD: a second gate on every pod.
gang() {
	local hold=""
	[[ -z "${2:-}" ]] || hold='schedulingGates: [{name: e2e.raygate.io/hold}]'
	kc apply -n "$NS" -f - >/dev/null <<-YAML
		apiVersion: ray.io/v1
		kind: RayCluster
		metadata: {name: $1, labels: {volcano.sh/queue-name: $Q}}
		spec:
		  rayVersion: "2.9.0"
		  headGroupSpec:
		    rayStartParams: {}
		    template:
		      spec:
		        nodeSelector: {e2e.raygate.io/native: "$U"}
		        $hold
		        containers: [{name: ray-head, image: "rayproject/ray:2.9.0", resources: {requests: {cpu: "1", memory: 1Gi}}}]
		  workerGroupSpecs:
		  - groupName: worker
		    replicas: 2
		    minReplicas: 2
		    maxReplicas: 2
		    rayStartParams: {}
		    template:
		      spec:
		        nodeSelector: {e2e.raygate.io/native: "$U"}
		        $hold
		        containers: [{name: ray-worker, image: "rayproject/ray:2.9.0", resources: {requests: {cpu: "7", memory: 1Gi}}}]
	YAML
}
# outsider: a pod of no queue, in another namespace, that takes cpu 7 of one of the test's nodes
outsider() {
	kc apply -n "$NS2" -f - >/dev/null <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: outsider}
		spec:
		  nodeSelector: {e2e.raygate.io/native: "$U"}
		  tolerations: [{operator: Exists}]
		  containers: [{name: c, image: x, resources: {requests: {cpu: "7"}}}]
	YAML
}
outsider_bound() { [[ -n "$(kc get pod -n "$NS2" outsider -o jsonpath='{.spec.nodeName}')" ]]; }
# release NAME: removes the test's own gate from every pod of the gang (raygate's is gone)
release() {
	local p
	for p in $(kc get pods -n "$NS" -l "ray.io/cluster=$1" -o name); do
		kc patch -n "$NS" "$p" --type json -p '[{"op": "replace", "path": "/spec/schedulingGates", "value": []}]' >/dev/null
	done
}
raygate_released() { admitted "$1" && [[ "$(count_pods "$1")" == 3 && "$(gated_count "$1")" == 0 ]]; }
native_minc() { kc get podgroups.scheduling.k8s.io -n "$NS" "ray-$1-pg" -o jsonpath='{.spec.schedulingPolicy.gang.minCount}' 2>/dev/null; }
native_says() { kc get podgroups.scheduling.k8s.io -n "$NS" "ray-$1-pg" -o json 2>/dev/null |
	jq -r '.status.conditions[]? | select(.type == "PodGroupInitiallyScheduled") | "\(.status) \(.message)"'; }

# ---- 1. the race, with the native step
gang g1 hold
eventually 60 "raygate admitted g1 and removed its own gates (the test's still hold the pods)" raygate_released g1
assert_eq "g1's native PodGroup minCount" 3 "$(native_minc g1)"
for p in $(kc get pods -n "$NS" -l ray.io/cluster=g1 -o jsonpath='{.items[*].spec.schedulingGroup.podGroupName}'); do
	assert_eq "a pod of g1 names its group" ray-g1-pg "$p"
done
outsider
eventually 30 "the outsider took cpu 7 of one node after g1's admission" outsider_bound
release g1
_unplaceable() { [[ "$(native_says g1)" == "False "* ]]; }
eventually 30 "kube-scheduler says g1's group cannot be placed whole" _unplaceable
stays 8 "g1 waits whole: none of its pods bound" is bound_count g1 0
say "    $(native_says g1)"
why="$("$BUILD/cli/kubectl-raygate" why -n "$NS" g1 2>&1)"
grep -F "kube-scheduler: cannot place the group whole" <<<"$why" >/dev/null || fail "kubectl raygate why does not say what kube-scheduler says: $why"
pass "kubectl raygate why: $(grep -F kube-scheduler <<<"$why")"
kc delete pod -n "$NS2" outsider --wait=false >/dev/null
all_bound() { [[ "$(bound_count "$1")" == "$2" ]]; }
eventually 60 "the room back: g1 binds whole" all_bound g1 3
kc delete rayclusters.ray.io -n "$NS" g1 >/dev/null
eventually 60 "g1's pods gone" has_pods g1 0

# ---- 2. a constraint raygate does not model: one worker per node, 3 workers, 2 nodes
kc annotate queue "$Q" raygate.io/placement-timeout=20s --overwrite >/dev/null
inv_start --grace 60
kc apply -n "$NS" -f - >/dev/null <<-YAML
	apiVersion: ray.io/v1
	kind: RayCluster
	metadata: {name: spread, labels: {volcano.sh/queue-name: $Q}}
	spec:
	  rayVersion: "2.9.0"
	  headGroupSpec:
	    rayStartParams: {}
	    template:
	      spec:
	        nodeSelector: {e2e.raygate.io/native: "$U"}
	        containers: [{name: ray-head, image: "rayproject/ray:2.9.0", resources: {requests: {cpu: "1", memory: 1Gi}}}]
	  workerGroupSpecs:
	  - groupName: worker
	    replicas: 3
	    minReplicas: 3
	    maxReplicas: 3
	    rayStartParams: {}
	    template:
	      metadata: {labels: {e2e.raygate.io/spread: "$U"}}
	      spec:
	        nodeSelector: {e2e.raygate.io/native: "$U"}
	        affinity:
	          podAntiAffinity:
	            requiredDuringSchedulingIgnoredDuringExecution:
	            - labelSelector: {matchLabels: {e2e.raygate.io/spread: "$U"}}
	              topologyKey: kubernetes.io/hostname
	        containers: [{name: ray-worker, image: "rayproject/ray:2.9.0", resources: {requests: {cpu: "1", memory: 1Gi}}}]
YAML
eventually 60 "raygate admitted spread (its model has room: cpu 4 of 16)" admitted spread
stays 8 "kube-scheduler cannot place spread whole: none of its pods bound" is bound_count spread 0
evicted() { [[ -n "$(rc_annotation spread raygate.io/evicted-at)" ]]; }
eventually 60 "raygate's placement timeout took spread back whole" evicted
say "    $(kc get rayclusters.ray.io -n "$NS" spread -o jsonpath='{.metadata.annotations.raygate\.io/evicted-reason}')"
assert_eq "none of spread's pods was ever bound" 0 "$(bound_count spread)"
inv_stop
kc delete rayclusters.ray.io -n "$NS" spread >/dev/null
eventually 60 "spread's pods gone" has_pods spread 0

# ---- 1b. the same race without the native step: partly placed
native_step off
gang g2 hold
eventually 60 "raygate admitted g2 (native step off)" raygate_released g2
[[ -z "$(kc get pods -n "$NS" -l ray.io/cluster=g2 -o jsonpath='{.items[*].spec.schedulingGroup.podGroupName}')" ]] ||
	fail "with --native-gang off the webhook still named a group"
outsider
eventually 30 "the outsider took cpu 7 of one node" outsider_bound
release g2
partly() { [[ "$(bound_count g2)" == 2 ]]; }
eventually 30 "without the native step g2 is partly placed (2 of 3 pods bound)" partly
stays 3 "and stays so (the third pod has no room)" partly
kc delete rayclusters.ray.io -n "$NS" g2 >/dev/null
kc delete pod -n "$NS2" outsider --wait=false >/dev/null
eventually 60 "g2's pods gone" has_pods g2 0
