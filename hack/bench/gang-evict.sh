#!/usr/bin/env bash
# Measures, on the running local cluster, the time from a gang's placement
# timeout expiring to every one of its pods being off its node (deleted: gone
# from the API). A RayCluster of N pods (head, N-2 small workers, and one
# worker whose claim does not exist) is admitted; N-1 pods bind, one cannot.
# The gate runs with --placement-timeout T (default 30s); the deadline is the
# recorded admission time (raygate.io/admitted-at, whole seconds) + T. The
# script polls the gang's pods every 100 ms and prints, from the deadline:
# the gate's "evicted" log line (its own clock), and the moment none of the
# gang's old pods exists any more (the API, polled: an upper bound within the
# poll's period plus one list). Restarts the gate with the timeout, restores it after.
#   RAYGATE_PORT_OFFSET=... hack/bench/gang-evict.sh N [T]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
N="${1:?pods in the gang}"
T="${2:-30s}"
((N >= 3)) || die "N must be at least 3"
ns="bench-evict-$RANDOM"; q="bench-q-$RANDOM"; rc="evict$N"
restore() {
	kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
	kc delete queue "$q" --wait=false >/dev/null 2>&1 || true
	"$ROOT/hack/cluster.sh" stop raygate-gate >/dev/null 2>&1 || true
	"$ROOT/hack/cluster.sh" start-gate >/dev/null 2>&1 || true
}
trap restore EXIT
"$ROOT/hack/cluster.sh" stop raygate-gate >/dev/null 2>&1 || true
"$ROOT/hack/cluster.sh" start-gate --placement-timeout "$T" --requeue-backoff-base 1h --requeue-backoff-max 1h >/dev/null
kc create namespace "$ns" >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $q}
spec: {capability: {cpu: 100000}}
YAML
small='{name: w, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 10m, memory: 16Mi}}}'
kc apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $rc, labels: {volcano.sh/queue-name: $q}}
spec:
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [$small]}}
  workerGroupSpecs:
  - {groupName: w, replicas: $((N - 2)), minReplicas: $((N - 2)), maxReplicas: $((N - 2)), rayStartParams: {},
     template: {spec: {containers: [$small]}}}
  - groupName: stuck
    replicas: 1
    minReplicas: 1
    maxReplicas: 1
    rayStartParams: {}
    template:
      spec:
        containers: [{name: w, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 10m, memory: 16Mi}}, volumeMounts: [{name: d, mountPath: /d}]}]
        volumes: [{name: d, persistentVolumeClaim: {claimName: missing}}]
YAML
pods_json() { kc get pods -n "$ns" -l "ray.io/cluster=$rc" -o json; }
deadline=$((SECONDS + 600))
until [[ "$(pods_json | jq '[.items[] | select(.spec.nodeName != null)] | length')" == $((N - 1)) ]]; do
	((SECONDS < deadline)) || die "the gang was not admitted and bound ($((N - 1)) of $N pods)"
	sleep 0.5
done
admitted_at="$(kc get rayclusters.ray.io -n "$ns" "$rc" -o jsonpath='{.metadata.annotations.raygate\.io/admitted-at}')"
uids="$(pods_json | jq -c '[.items[].metadata.uid]')"
t_ms=$(($(date -d "$admitted_at" +%s) * 1000))
timeout_s="$(echo "$T" | sed -e 's/s$//')"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "give T in whole seconds (e.g. 30s)"
expiry_ms=$((t_ms + timeout_s * 1000))
echo "gang of $N pods admitted at $admitted_at, $((N - 1)) bound; placement timeout $T expires at $(date -u -d @$((expiry_ms / 1000)) +%H:%M:%S)"
while :; do
	left="$(pods_json | jq --argjson u "$uids" '[.items[] | select(.metadata.uid as $x | $u | index($x))] | length')"
	now_ms=$(($(date +%s%N) / 1000000))
	[[ "$left" == 0 ]] && break
	((now_ms < expiry_ms + 300000)) || die "$left old pods still exist 5 minutes after the timeout"
	sleep 0.1
done
log_ts="$(grep -F "evict: $ns: gang ray-$rc-pg evicted" "$STATE/logs/raygate-gate.log" | head -1 | jq -r .ts)"
log_ms=$(($(date -d "$log_ts" +%s%N) / 1000000))
printf 'gang of %d pods: eviction recorded (gate log %s) %.3f s after the timeout expired; every pod off its node (gone from the API) %.3f s after it\n' \
	"$N" "$log_ts" "$(echo "($log_ms - $expiry_ms) / 1000" | bc -l)" "$(echo "($now_ms - $expiry_ms) / 1000" | bc -l)"
