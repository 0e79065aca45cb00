#!/usr/bin/env bash
# Measures, on the running local cluster, the time from a gang becoming
# admissible to all of its gates removed: a RayCluster of N pods waits for a
# queue that does not exist; once all N pods exist, the queue is created (T0);
# the time is T0 to the moment no pod carries raygate.io/gang (polled every
# 50 ms, so it is an upper bound within 50 ms).
#   hack/bench/gang-ungate.sh N     (needs nodes with room for N small pods)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
N="${1:?pods in the gang}"
ns="bench-ungate-$RANDOM"; q="bench-q-$RANDOM"; rc="gang$N"
kc create namespace "$ns" >/dev/null
trap 'kc delete namespace "$ns" --wait=false >/dev/null 2>&1; kc delete queue "$q" --wait=false >/dev/null 2>&1 || true' EXIT
kc apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $rc, labels: {volcano.sh/queue-name: $q}}
spec:
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 10m, memory: 16Mi}}}]}}
  workerGroupSpecs:
  - groupName: w
    replicas: $((N - 1))
    minReplicas: $((N - 1))
    maxReplicas: $((N - 1))
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 10m, memory: 16Mi}}}]}}
YAML
count() { kc get pods -n "$ns" -l "ray.io/cluster=$rc" -o name | wc -l; }
gated() {
	kc get pods -n "$ns" -l "ray.io/cluster=$rc" -o jsonpath='{range .items[*]}{.spec.schedulingGates[*].name}{"\n"}{end}' |
		grep -c raygate.io/gang || true
}
deadline=$((SECONDS + 600))
until [[ "$(count)" == "$N" ]]; do ((SECONDS < deadline)) || die "KubeRay did not create $N pods"; sleep 0.5; done
[[ "$(gated)" == "$N" ]] || die "not all $N pods are gated"
t0=$(date +%s.%N)
kc apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $q}
spec: {capability: {cpu: 100000}}
YAML
until [[ "$(gated)" == 0 ]]; do sleep 0.05; done
t1=$(date +%s.%N)
printf 'gang of %d pods: admissible to all gates removed in %.3f s\n' "$N" "$(echo "$t1 - $t0" | bc -l)"
