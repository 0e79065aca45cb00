#!/usr/bin/env bash
# Foundation: KubeRay turns a RayCluster into pods, kube-scheduler binds them to
# kwok nodes, they run, and the garbage collector removes them with the cluster.
. "$(dirname "$0")/lib.sh"
e2e_setup

v="$(kc version -o json | jq -r .serverVersion.gitVersion)"
assert_eq "apiserver version" "$K8S_VERSION" "$v"

kc apply -n "$NS" -f "$ROOT/samples/raycluster-plain.yaml" >/dev/null
eventually 60 "KubeRay created 3 pods" pods_are plain-cluster 3 Running

nodes="$(ray_pods plain-cluster | awk '{print $3}')"
for n in $nodes; do
	kind="$(kc get node "$n" -o jsonpath='{.metadata.annotations.kwok\.x-k8s\.io/node}')"
	assert_eq "pod bound to a kwok node ($n)" fake "$kind"
done
head="$(kc get pods -n "$NS" -l ray.io/cluster=plain-cluster,ray.io/node-type=head -o name | wc -l)"
assert_eq "head pods" 1 "$head"
workers="$(kc get pods -n "$NS" -l ray.io/cluster=plain-cluster,ray.io/node-type=worker -o name | wc -l)"
assert_eq "worker pods" 2 "$workers"

kc delete rayclusters.ray.io -n "$NS" plain-cluster --wait=true >/dev/null
no_pods() { [[ "$(count_pods plain-cluster)" == 0 ]]; }
eventually 60 "garbage collector removed the pods" no_pods
