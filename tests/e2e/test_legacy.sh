#!/usr/bin/env bash
# The legacy Ray operator's clusters (seed 004, cluster.ray.io/v1).
#
# The operator itself (Python, and it needs Ray) cannot be installed here:
# tests/e2e/legacy/node_provider.py stands in for it and creates the pods
# against this real apiserver exactly as its node provider does (names,
# labels, controller ownerReference; the head first, the workers once the
# head runs). The CRD (rayclusters.cluster.ray.io, written from its schema)
# is installed by hack/cluster.sh.
#
# Two clusters shaped like seed 004's example_cluster (head + 2 workers,
# cpu 3) and example_cluster2 (head + 1 worker, cpu 2) in a queue of cpu 3:
# the first is admitted whole, the second waits whole (none of its pods bound)
# and is admitted when the first is deleted.
. "$(dirname "$0")/lib.sh"
e2e_setup
LEGACY="$ROOT/tests/e2e/legacy"
kc get crd rayclusters.cluster.ray.io >/dev/null || fail "rayclusters.cluster.ray.io is not installed (hack/cluster.sh installs it)"
Q="legacy-$(e2e_uid)"
make_queue "$Q" 3 2Gi
inv_start

# legacy_cluster FILE NAME: a legacy RayCluster renamed and put in the test's queue
legacy_cluster() {
	sed -e "s/^  name: example-cluster2\?$/  name: $2/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $Q/" "$1" |
		kc apply -n "$NS" -f - >/dev/null
}
# provider NAME: the stand-in for the operator, in the background (stopped
# when the test ends, if it has not finished); its output in $STATE/logs
provider() {
	python3 "$LEGACY/node_provider.py" --server "https://127.0.0.1:$APISERVER_PORT" --token "$STATE/pki/admin.token" \
		--ca "$STATE/pki/ca.crt" --namespace "$NS" --head-timeout 120 "$1" >"$STATE/logs/node-provider-$NS-$1.log" 2>&1 &
	e2e_on_exit "kill $! 2>/dev/null"
}
lpods() { # NAME [KIND]: pod name, phase, node and gate of a legacy cluster's pods
	kc get pods -n "$NS" -l "ray-cluster-name=$1${2:+,ray-node-type=$2}" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.status.phase} {.spec.nodeName} {.spec.schedulingGates[*].name}{"\n"}{end}'
}
lcount() { lpods "$@" | grep -c . || true; }
lrunning() { [[ "$(lpods "$1" | awk '$2 == "Running"' | wc -l)" == "$2" && "$(lcount "$1")" == "$2" ]]; }
lgated() { lpods "$1" | grep -c 'raygate.io/gang' || true; }
lbound() { lpods "$1" | awk 'NF >= 3 && $3 != "" && $3 != "raygate.io/gang"' | wc -l; }

legacy_cluster "$LEGACY/example-cluster.yaml" example-cluster
ann() { kc get rayclusters.cluster.ray.io -n "$NS" "$1" -o jsonpath="{.metadata.annotations.$2}"; }
assert_eq "example-cluster min-member (head + minWorkers 2)" 3 "$(ann example-cluster 'raygate\.io/min-member')"
assert_eq "example-cluster min-resources" '{"cpu":"3","memory":"1536Mi"}' "$(ann example-cluster 'raygate\.io/min-resources')"
assert_eq "every podConfig labelled with the queue" "$Q $Q" \
	"$(kc get rayclusters.cluster.ray.io -n "$NS" example-cluster -o jsonpath='{.spec.podTypes[*].podConfig.metadata.labels.volcano\.sh/queue-name}')"

provider example-cluster
eventually 60 "example-cluster: head, then 2 workers, all Running (admitted whole)" lrunning example-cluster 3
head="$(lpods example-cluster head | awk '{print $1}')"
[[ "$head" == example-cluster-ray-head-* ]] || fail "head pod name $head (want example-cluster-ray-head-*)"
pass "pod names as the node provider makes them: $head, $(lpods example-cluster worker | awk '{print $1}' | tr '\n' ' ')"
assert_eq "example-cluster's pods owned (controller) by the legacy RayCluster" "RayCluster/cluster.ray.io/v1 RayCluster/cluster.ray.io/v1 RayCluster/cluster.ray.io/v1" \
	"$(kc get pods -n "$NS" -l ray-cluster-name=example-cluster -o json |
		jq -r '[.items[].metadata.ownerReferences[] | select(.controller) | "\(.kind)/\(.apiVersion)"] | join(" ")')"
[[ -n "$(ann example-cluster 'raygate\.io/admitted-at')" ]] || fail "example-cluster has no raygate.io/admitted-at"
pass "admission recorded on rayclusters.cluster.ray.io/example-cluster"
pg_owner() { kc get podgroups.scheduling.volcano.sh -n "$NS" ray-example-cluster-pg -o jsonpath='{.metadata.ownerReferences[0].apiVersion}/{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}'; }
eventually 30 "PodGroup ray-example-cluster-pg owned by the legacy RayCluster" eval '[[ "$(pg_owner)" == cluster.ray.io/v1/RayCluster/example-cluster ]]'

legacy_cluster "$LEGACY/example-cluster2.yaml" example-cluster2
provider example-cluster2
one() { [[ "$(lcount example-cluster2)" == 1 ]]; }
eventually 30 "example-cluster2's head created" one
pg_msg() { kc get podgroups.scheduling.volcano.sh -n "$NS" ray-example-cluster2-pg -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}' 2>/dev/null; }
want="gang ray-example-cluster2-pg (2 pods; cpu 2, memory 1Gi) does not fit queue $Q: cpu needs 2, 0 of 3 free"
eventually 30 "example-cluster2 waits on the queue" eval '[[ "$(pg_msg)" == "$want"* ]]'
whole_wait() { [[ "$(lbound example-cluster2)" == 0 && "$(lgated example-cluster2)" == "$(lcount example-cluster2)" ]]; }
stays 5 "example-cluster2 waits whole: its head gated, nothing bound, no worker created" whole_wait
assert_eq "example-cluster2's pods" 1 "$(lcount example-cluster2)"
export PATH="$BUILD/cli:$PATH"
assert_eq "kubectl raygate gangs: kinds and states" "example-cluster legacy Running; example-cluster2 legacy Waiting" \
	"$(kc raygate gangs -n "$NS" -o json | jq -r '[.items[] | "\(.name) \(.kind) \(.state)"] | join("; ")')"

kc delete rayclusters.cluster.ray.io -n "$NS" example-cluster >/dev/null
eventually 60 "example-cluster's pods garbage-collected with it" is lcount example-cluster 0
eventually 90 "example-cluster2 admitted: head, then its worker, all Running" lrunning example-cluster2 2
[[ -n "$(ann example-cluster2 'raygate\.io/admitted-at')" ]] || fail "example-cluster2 has no raygate.io/admitted-at"
pass "example-cluster2 admitted after example-cluster was deleted"
inv_stop
