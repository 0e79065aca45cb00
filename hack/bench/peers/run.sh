#!/usr/bin/env bash
# The peers part of hack/bench.sh (docs/benchmarks.md): raygate, Kueue and scheduler-
# plugins' coscheduling, and no gang system, one at a time on the same local
# control plane (hack/cluster.sh up --gang SYSTEM, same nodes, same KubeRay),
# with the same Ray workloads (hack/bench/peers/workloads.py):
#   walkthrough  the guide's two test clusters in a queue of cpu 4, memory 6Gi (first run only)
#   autoscaling  the autoscaling sample in a queue of cpu 2, then 4 (first run only)
#   rayjob       two of KubeRay's sample RayJobs in a queue with room for one (first run only)
#   contention   --contention RayClusters of seeded random shapes asking twice what the nodes hold
#   flood        --flood RayClusters x 10 pods into a queue with room for all
#   gang         one gang of --gang pods: admissible -> all bound
# and what each cost (apiserver requests by verb, etcd writes, CPU seconds and
# RSS of the gang system's processes, kube-scheduler's attempts, the
# apiserver's CPU seconds, and every mutating request by component, verb and
# resource from the apiserver's audit log: RAYGATE_APISERVER_AUDIT=1).
#
#   hack/bench/peers/run.sh --out FILE [--quick] [--runs N] [--systems "raygate kueue coscheduling none"]
#     (raygate: --native-gang off, raygate alone, as in the earlier results,
#     although auto is the programs' default; raygate-native: --native-gang on,
#     Kubernetes' own gang scheduling as its last step; raygate-hold: the
#     webhook's --hold-gangs, pods born ungated (docs/design.md; the default,
#     so raygate is the same); raygate-gated: --hold-gangs=false, every queued
#     pod created gated; raygate-nonative:
#     raygate on a cluster that does not even serve that API, hack/cluster.sh
#     up --no-native-gang: the native step's cost)
#                           [--contention N] [--flood N] [--gang N] [--seed S]
#                           [--workloads "walkthrough autoscaling rayjob contention flood gang"]
#
# Nodes: cpu=8,memory=32Gi,pods=110 kwok nodes, as many as half the contention
# ask (and room for the flood and the gang). RAYGATE_BUILD: raygate's build.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../../lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }

RUNS=3 SYSTEMS="raygate kueue coscheduling none" CONTENTION=50 FLOOD=200 GANG_PODS=1000 SEED=16 OUT="" QUICK=0
LIMIT=240 QUIET=30 WORKLOADS="walkthrough autoscaling rayjob contention flood gang"
while (($#)); do
	case "$1" in
	--quick) QUICK=1; CONTENTION=20; FLOOD=20; GANG_PODS=100; LIMIT=120; QUIET=15; shift ;;
	--runs) RUNS="$2"; shift 2 ;;
	--systems) SYSTEMS="$2"; shift 2 ;;
	--contention) CONTENTION="$2"; shift 2 ;;
	--flood) FLOOD="$2"; shift 2 ;;
	--gang) GANG_PODS="$2"; shift 2 ;;
	--seed) SEED="$2"; shift 2 ;;
	--workloads) WORKLOADS="$2"; shift 2 ;;
	--out) OUT="$2"; shift 2 ;;
	*) usage ;;
	esac
done
[[ -n "$OUT" ]] || usage
for v in "$RUNS" "$CONTENTION" "$FLOOD" "$GANG_PODS" "$SEED"; do [[ "$v" =~ ^[0-9]+$ ]] || die "numbers expected, not '$v'"; done
for s in $SYSTEMS; do
	case "$s" in raygate | raygate-native | raygate-nonative | raygate-hold | raygate-gated | kueue | coscheduling | none) ;; *) die "--systems: unknown system '$s'" ;; esac
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/raygate-peers.XXXXXX")"
CLUSTER_UP=0
cleanup() {
	((CLUSTER_UP)) && bash "$ROOT/hack/cluster.sh" down >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT

if bash "$ROOT/hack/cluster.sh" status >/dev/null 2>&1; then
	die "a local cluster already runs in $STATE (RAYGATE_PORT_OFFSET=${RAYGATE_PORT_OFFSET:-0}): take it down first"
fi
peers_built=""
for s in $SYSTEMS; do
	[[ "$s" == kueue || "$s" == coscheduling ]] && peers_built+="${peers_built:+,}$s"
done
if [[ -n "$peers_built" ]]; then
	say "peers: building $peers_built (once, into $RAYGATE_CACHE)"
	bash "$ROOT/hack/build-upstream.sh" --peers "$peers_built" >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; die "building the peers failed"; }
fi

export RAYGATE_STATE="$STATE" RAYGATE_APISERVER_PORT="$APISERVER_PORT" RAYGATE_ETCD_PORT="$ETCD_PORT" RAYGATE_SCHED_PORT="$SCHED_PORT" KUBECTL
workload() { local g="${1%-nonative}"; g="${g%-hold}"; g="${g%-gated}"; RAYGATE_GANG="${g%-native}" python3 "$here/workloads.py" "${@:2}"; }

ask="$(RAYGATE_GANG=none workload none shapes --clusters "$CONTENTION" --seed "$SEED")"
ask_cpu="$(jq .cpu <<<"$ask")"
nodes=$(((ask_cpu + 8) / 16))
((nodes * 100 >= FLOOD * 10)) || nodes=$((FLOOD * 10 / 100 + 1))
((nodes * 100 >= GANG_PODS)) || nodes=$((GANG_PODS / 100 + 1))
CAPACITY="cpu=8,memory=32Gi,pods=110"
say "peers: $nodes nodes ($CAPACITY); contention $CONTENTION clusters (cpu $ask_cpu asked), flood $FLOOD x 10 pods, gang $GANG_PODS pods; $RUNS runs; systems: $SYSTEMS"

results="$WORK/results.jsonl"
: >"$results"
# record SYSTEM RUN WORKLOAD ARGS...: one workload's JSON (or its error) as a line of results
# (nothing when --workloads leaves it out).
record() {
	local sys="$1" run="$2" name="$3" out
	shift 3
	[[ " $WORKLOADS " == *" $name "* ]] || return 0
	say "peers: $sys run $run/$RUNS: $name"
	if out="$(workload "$sys" "$name" "$@" 2>>"$WORK/workloads.log")" && jq -e . <<<"$out" >/dev/null 2>&1; then
		:
	else
		out="$(jq -nc --arg e "$(tail -3 "$WORK/workloads.log")" '{error: $e}')"
		say "peers: $sys $name failed: $(jq -r .error <<<"$out")"
	fi
	jq -c --arg s "$sys" --argjson r "$run" --arg w "$name" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
		'{system: $s, run: $r, workload: $w, load: $load, result: .}' <<<"$out" >>"$results"
}

for sys in $SYSTEMS; do
	say "peers: cluster up --gang $sys"
	CLUSTER_UP=1
	native=() gang="${sys%-nonative}"
	gang="${gang%-native}"
	gang="${gang%-hold}"
	gang="${gang%-gated}"
	[[ "$sys" == *-nonative ]] && native=(--no-native-gang)
	RAYGATE_APISERVER_AUDIT=1 bash "$ROOT/hack/cluster.sh" up --gang "$gang" "${native[@]}" --nodes "$nodes" --node-capacity "$CAPACITY" >"$WORK/up-$sys.log" 2>&1 ||
		{ tail -30 "$WORK/up-$sys.log"; die "cluster up --gang $sys failed"; }
	mode=""
	[[ "$sys" == raygate ]] && mode=off # the programs default to auto: on where the API is served
	[[ "$sys" == *-native ]] && mode=on
	hold=()
	[[ "$sys" == raygate-hold ]] && mode=off hold=(--hold-gangs=true)
	[[ "$sys" == raygate-gated ]] && mode=off hold=(--hold-gangs=false)
	if [[ -n "$mode" ]]; then
		bash "$ROOT/hack/cluster.sh" restart raygate-webhook --native-gang "$mode" "${hold[@]}" >>"$WORK/up-$sys.log" 2>&1
		bash "$ROOT/hack/cluster.sh" stop raygate-gate >>"$WORK/up-$sys.log" 2>&1
		bash "$ROOT/hack/cluster.sh" start-gate --native-gang "$mode" >>"$WORK/up-$sys.log" 2>&1
		sleep 2
	fi
	for ((r = 1; r <= RUNS; r++)); do
		if ((r == 1)); then
			record "$sys" "$r" walkthrough
			record "$sys" "$r" autoscaling
			record "$sys" "$r" rayjob
		fi
		record "$sys" "$r" contention --clusters "$CONTENTION" --seed "$SEED" --limit "$LIMIT" --quiet "$QUIET"
		record "$sys" "$r" flood --clusters "$FLOOD" --pods 10
		record "$sys" "$r" gang --pods "$GANG_PODS"
	done
	bash "$ROOT/hack/cluster.sh" down >/dev/null 2>&1
	CLUSTER_UP=0
done

jq -s -c --argjson nodes "$nodes" --arg cap "$CAPACITY" --argjson runs "$RUNS" --argjson quick "$QUICK" \
	--argjson contention "$CONTENTION" --argjson flood "$FLOOD" --argjson gang "$GANG_PODS" --argjson seed "$SEED" \
	--arg kueue "$KUEUE_VERSION" --arg sp "$SCHEDPLUGINS_VERSION" --arg systems "$SYSTEMS" \
	-f "$here/summary.jq" "$results" >"$OUT"
