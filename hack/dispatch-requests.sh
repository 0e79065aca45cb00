#!/usr/bin/env bash
# How many requests raygate-dispatch sends to each worker's API server per
# minute (docs/dispatch.md, "Requests to the workers"), from its counter
# raygate_dispatch_worker_requests_total{worker}.
#
#   hack/dispatch-requests.sh [--minutes M] [--out FILE]
#
# Three local clusters (hack/multi.sh): workers a and b at RAYGATE_PORT_OFFSET N
# (a multiple of 50) and N + 20, the manager at N + 40 with raygate-dispatch at
# its defaults (--resync 2s), state in RAYGATE_STATE-req-a, -b, -m, raygate from
# RAYGATE_BUILD. Both workers registered, each with a Queue, the manager's
# Queue dispatching to "a,b". Two phases of M minutes each (default 2), the
# counter read from the dispatcher's /metrics at the start and the end of each:
#   idle  nothing dispatched;
#   busy  two RayClusters of 4 pods created on the manager, dispatched and all
#         their pods bound (not counted), then M minutes while they run (leases
#         renewed, status mirrored).
# Prints one line per phase and worker (requests, per minute), as JSON to
# --out FILE too; takes the three clusters down.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
. "$here/multi.sh"

minutes=2 out=""
while (($#)); do
	case "$1" in
	--minutes) minutes="${2:-}"; shift 2 ;;
	--out) out="${2:-}"; shift 2 ;;
	*) die "usage: hack/dispatch-requests.sh [--minutes M] [--out FILE]" ;;
	esac
done
[[ "$minutes" =~ ^[1-9][0-9]*$ ]] || die "--minutes: a whole number of minutes, not '$minutes'"
((_po % 50 == 0)) || die "a RAYGATE_PORT_OFFSET that is a multiple of 50, not $_po"
NS=req-bench Q=req-q
multi_init "$STATE-req-a" "$_po" "$STATE-req-b" $((_po + 20)) "$STATE-req-m" $((_po + 40))
WORK="$(mktemp -d)"
down() {
	local w
	for w in m a b; do multi_cluster "$w" down >/dev/null 2>&1 || true; done
	rm -rf "$WORK"
}
trap down EXIT

for w in a b m; do
	if multi_cluster "$w" status >/dev/null 2>&1; then die "a local cluster already runs in $(multi_state "$w")"; fi
done
say "starting workers a and b and the manager (raygate from $BUILD)"
multi_up_start a "$WORK/up-a.log"
multi_up_start b "$WORK/up-b.log"
multi_up_start m "$WORK/up-m.log" --manager
for w in a b m; do multi_up_wait "$w" || die "cluster $w did not come up"; done
for w in a b m; do on "$w" create namespace "$NS" >/dev/null; done
for w in a b; do
	on "$w" apply -f - >/dev/null <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $Q}
		spec: {weight: 1}
	YAML
	multi_register "$w" "$w" >/dev/null || die "add-worker $w failed"
done
on m apply -f - >/dev/null <<-YAML
	apiVersion: scheduling.volcano.sh/v1beta1
	kind: Queue
	metadata: {name: $Q, annotations: {raygate.io/dispatch-to: "a,b"}}
	spec: {weight: 1}
YAML
mport=$((29091 + _po + 40))

# counts: "a N\nb N" from the dispatcher's /metrics
counts() {
	curl -sf "http://127.0.0.1:$mport/metrics" |
		awk -F'[{}"= ]+' '/^raygate_dispatch_worker_requests_total\{/ {print $3, $NF}' | sort
}
worker_up() {
	[[ "$(on m get secret -n raygate-system "raygate-worker-$1" -o jsonpath='{.metadata.annotations.raygate\.io/worker-status}')" == up ]]
}
until_true() {
	local limit="$1" what="$2" deadline=$((SECONDS + $1))
	shift 2
	until "$@" 2>/dev/null; do
		((SECONDS < deadline)) || die "$what did not happen in ${limit}s"
		sleep 0.5
	done
}
for w in a b; do until_true 60 "worker $w up" worker_up "$w"; done

results=()
# phase NAME: M minutes, the counter before and after
phase() {
	local before after t0 t1 w n0 n1 per
	before="$(counts)" t0="$(date +%s.%N)"
	sleep $((minutes * 60))
	after="$(counts)" t1="$(date +%s.%N)"
	for w in a b; do
		n0="$(awk -v w="$w" '$1 == w {print $2}' <<<"$before")" n1="$(awk -v w="$w" '$1 == w {print $2}' <<<"$after")"
		per="$(echo "($n1 - ${n0:-0}) * 60 / ($t1 - $t0)" | bc -l)"
		printf '%s worker %s: %d requests in %.1f s, %.1f per minute\n' "$1" "$w" $((n1 - ${n0:-0})) \
			"$(echo "$t1 - $t0" | bc -l)" "$per"
		results+=("$(jq -nc --arg p "$1" --arg w "$w" --argjson n $((n1 - ${n0:-0})) --argjson s "$(echo "$t1 - $t0" | bc -l)" \
			--argjson per "$per" --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
			'{phase: $p, worker: $w, requests: $n, seconds: $s, per_minute: $per, load: $load}')")
	done
}

rc_yaml() {
	cat <<-YAML
		apiVersion: ray.io/v1
		kind: RayCluster
		metadata: {name: $1, labels: {volcano.sh/queue-name: $Q}}
		spec:
		  headGroupSpec:
		    rayStartParams: {}
		    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 100m, memory: 64Mi}}}]}}
		  workerGroupSpecs:
		  - groupName: w
		    replicas: 3
		    minReplicas: 3
		    maxReplicas: 3
		    rayStartParams: {}
		    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 100m, memory: 64Mi}}}]}}
	YAML
}
bound_4() {
	local w
	w="$(on m get rayclusters.ray.io -n "$NS" "$1" -o jsonpath='{.metadata.annotations.raygate\.io/dispatched-to}')"
	[[ -n "$w" ]] && [[ "$(on "$w" get pods -n "$NS" -l "ray.io/cluster=$1" --field-selector spec.nodeName!= -o name | wc -l)" == 4 ]]
}

say "idle: $minutes minutes, nothing dispatched"
phase idle
for r in req-one req-two; do rc_yaml "$r" | on m apply -n "$NS" -f - >/dev/null; done
for r in req-one req-two; do until_true 120 "$r dispatched and bound" bound_4 "$r"; done
say "busy: $minutes minutes, req-one and req-two dispatched ($(for r in req-one req-two; do
	on m get rayclusters.ray.io -n "$NS" "$r" -o jsonpath='{.metadata.annotations.raygate\.io/dispatched-to} '
done))"
phase busy
[[ -z "$out" ]] || printf '%s\n' "${results[@]}" | jq -s --arg rev "$(git -C "$ROOT" rev-parse --short HEAD)" \
	--argjson m "$minutes" '{commit: $rev, minutes: $m, phases: .}' >"$out"
