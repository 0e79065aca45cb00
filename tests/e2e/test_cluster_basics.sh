#!/usr/bin/env bash
# Foundation: KubeRay turns a RayCluster into pods, kube-scheduler binds them to
# kwok nodes, they run, and the garbage collector removes them with the cluster.
. "$(dirname "$0")/lib.sh"
e2e_setup

# Which code runs: the release the cluster was brought up with (hack/versions.sh's
# newest by default; the oldest-version suite checks it is the oldest), as the
# apiserver reports it and as the binaries were built (their Go build info
# names the k8s.io/kubernetes module's version: a stamp alone could be put on
# other code), and KubeRay's.
want="$K8S_VERSION" want_ray="$KUBERAY_VERSION"
if [[ "${RAYGATE_E2E_OLDEST:-0}" == 1 ]]; then
	assert_eq "the oldest-version suite's Kubernetes" "$K8S_OLDEST" "$want"
	assert_eq "the oldest-version suite's KubeRay" "$KUBERAY_OLDEST" "$want_ray"
fi
v="$(kc version -o json | jq -r .serverVersion.gitVersion)"
assert_eq "apiserver version" "$want" "$v"
for p in kube-apiserver kube-scheduler kube-controller-manager kubectl; do
	built="$(go version -m "$K8S_BIN/$p" | awk '($1 == "dep" || $1 == "mod") && $2 == "k8s.io/kubernetes" {print $3}')"
	assert_eq "$p built from k8s.io/kubernetes" "$want" "$built"
done
built="$(go version -m "$KUBERAY_BIN/ray-operator" | awk '($1 == "dep" || $1 == "mod") && $2 == "github.com/ray-project/kuberay/ray-operator" {print $3}')"
assert_eq "the KubeRay operator built from ray-operator" "$want_ray" "$built"

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
