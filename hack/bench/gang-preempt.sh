#!/usr/bin/env bash
# Measures, on the running local cluster, the time from a high-priority gang's
# arrival to all its pods being bound, when it must preempt a victim of N
# pods. A queue with room for one gang (cpu N*100m + 50m) holds a RayCluster
# of N pods (head and N-1 workers, 100m and 64Mi each), admitted and Running;
# a RayCluster of the same shape with PriorityClass ray-high (1000) is then
# created. From its creation (the client's clock just before kubectl apply),
# the script polls every 100 ms and prints when the victim's old pods are all
# gone and when all N of the preemptor's pods are bound (an upper bound within
# the poll's period plus one list). The gate runs as hack/cluster.sh started
# it (preemption is on by default).
#   RAYGATE_PORT_OFFSET=... hack/bench/gang-preempt.sh N
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
N="${1:?pods in each gang}"
((N >= 2)) || die "N must be at least 2"
ns="bench-preempt-$RANDOM"; q="bench-q-$RANDOM"
restore() {
	kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
	kc delete queue "$q" --wait=false >/dev/null 2>&1 || true
}
trap restore EXIT
kc apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null
kc create namespace "$ns" >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $q}
spec: {capability: {cpu: "$((N * 100 + 50))m"}}
YAML
cluster() { # NAME [PRIORITY-CLASS]
	kc apply -n "$ns" -f - >/dev/null <<-YAML
		apiVersion: ray.io/v1
		kind: RayCluster
		metadata: {name: $1, labels: {volcano.sh/queue-name: $q${2:+, ray.io/priority-class-name: $2}}}
		spec:
		  rayVersion: "2.9.0"
		  headGroupSpec:
		    rayStartParams: {}
		    template: {spec: {containers: [{name: h, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 100m, memory: 64Mi}}}]}}
		  workerGroupSpecs:
		  - groupName: w
		    replicas: $((N - 1))
		    minReplicas: $((N - 1))
		    maxReplicas: $((N - 1))
		    rayStartParams: {}
		    template: {spec: {containers: [{name: w, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 100m, memory: 64Mi}}}]}}
	YAML
}
running() { # NAME: how many of its pods are Running
	kc get pods -n "$ns" -l "ray.io/cluster=$1" -o json | jq '[.items[] | select(.status.phase == "Running")] | length'
}
cluster victim
victim_up() { [[ "$(running victim)" == "$N" ]]; }
wait_until 300 "victim's $N pods Running" victim_up || die "the victim did not start"
old="$(kc get pods -n "$ns" -l ray.io/cluster=victim -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)"
ms() { date +%s%3N; }
t0="$(ms)"
cluster urgent ray-high
gone_ms=""; bound_ms=""
while [[ -z "$bound_ms" ]]; do
	now="$(ms)"
	((now - t0 < 600000)) || die "not done within 600 s"
	if [[ -z "$gone_ms" ]]; then
		cur="$(kc get pods -n "$ns" -l ray.io/cluster=victim -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)"
		[[ -z "$(comm -12 <(echo "$old") <(echo "$cur"))" ]] && gone_ms=$(($(ms) - t0))
	fi
	b="$(kc get pods -n "$ns" -l ray.io/cluster=urgent -o json | jq '[.items[] | select(.spec.nodeName != null)] | length')"
	[[ "$b" == "$N" ]] && bound_ms=$(($(ms) - t0))
	sleep 0.1
done
[[ -n "$gone_ms" ]] || gone_ms="(before the preemptor's pods were bound)"
echo "N=$N victim pods gone: ${gone_ms} ms; preemptor's $N pods all bound: ${bound_ms} ms (from its creation)"
