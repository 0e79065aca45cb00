#!/usr/bin/env bash
# The demo: brings up the local cluster (real control plane, kwok nodes, the
# KubeRay operator, raygate) and walks through what raygate does.
#
#   hack/demo.sh [--keep]     (--keep: leave the cluster and the Ray clusters up)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
keep=0
[[ "${1:-}" == --keep ]] && keep=1

narrate() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
show() { printf '\033[36m$ %s\033[0m\n' "$*"; "$@"; }
kubectl() { "$KUBECTL" "$@"; }

narrate "Installing dependencies and building raygate"
bash "$here/deps.sh"
[[ -f "$BUILD/build.ninja" ]] || meson setup "$BUILD" "$ROOT" >/dev/null
meson compile -C "$BUILD" >/dev/null

narrate "Starting a real control plane on 127.0.0.1 (etcd, kube-apiserver, controller-manager, scheduler, kwok nodes, KubeRay)"
"$here/cluster.sh" up
show kubectl get nodes

NS=raygate-demo
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
cleanup() {
	if ((keep)); then
		printf '\nThe cluster is still up:\n'; "$here/cluster.sh" env
	else
		kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
		"$here/cluster.sh" down
	fi
}
trap cleanup EXIT

narrate "A RayCluster with a head and two workers; KubeRay creates its pods and kube-scheduler binds them to kwok nodes"
show kubectl apply -n "$NS" -f "$ROOT/samples/raycluster-plain.yaml"
for _ in $(seq 1 150); do
	n="$(kubectl get pods -n "$NS" -l ray.io/cluster=plain-cluster --field-selector status.phase=Running -o name | wc -l)"
	((n == 3)) && break
	sleep 0.2
done
show kubectl get pods -n "$NS" -o wide
((n == 3)) || { echo "expected 3 Running pods, saw $n" >&2; exit 1; }

narrate "A Volcano-style queue (4 CPUs, 6Gi) and test-cluster-0, labelled volcano.sh/queue-name: kuberay-test-queue"
show kubectl apply -f "$ROOT/samples/queue-kuberay-test-queue.yaml"
show kubectl apply -n "$NS" -f "$ROOT/samples/raycluster-test-cluster-0.yaml"

narrate "raygate's webhook wrote the gang's PodGroup metadata into the RayCluster"
printf '\033[36m$ %s\033[0m\n' "kubectl get raycluster test-cluster-0 -o json | jq '.metadata.annotations'"
kubectl get raycluster -n "$NS" test-cluster-0 -o json |
	jq '.metadata.annotations | with_entries(select(.key | startswith("raygate.io/") or startswith("scheduling.k8s.io/")))'

narrate "Every pod KubeRay creates for it is held at creation by the scheduling gate raygate.io/gang"
for _ in $(seq 1 150); do
	n="$(kubectl get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o name | wc -l)"
	((n == 3)) && break
	sleep 0.2
done
show kubectl get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o wide
show kubectl get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o jsonpath='{range .items[*]}{.metadata.name}{"  gates: "}{.spec.schedulingGates[*].name}{"\n"}{end}'
