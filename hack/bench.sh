#!/usr/bin/env bash
# raygate's benchmarks (docs/benchmarks.md); not part of the tests.
#
#   hack/bench.sh [--quick] [--parts webhook,admit,topology,dra,e2e,peers,dispatch,soak] [--runs N] [--duration S]
#                 [--admit-sizes "1000 10000 100000"] [--scan-gangs N] [--topo-nodes N] [--topo-domains N]
#                 [--topo-gangs N] [--dra-nodes N] [--dra-gangs N] [--e2e-nodes N] [--e2e-clusters N] [--e2e-gang N]
#                 [--dispatch-gang N] [--dispatch-pods N] [--soak-minutes N] [--out DIR]
#
# 1. webhook: wrk over TLS with keep-alive (16 connections) POSTs fixed
#    AdmissionReviews (tests/fixtures/bench: a KubeRay worker pod, a RayCluster)
#    to raygate-webhook, to the limit (hack/bench/limit.c: the same h2o and TLS
#    setup answering a constant AdmissionReview without parsing) and, for the
#    pod, to the peer (hack/bench/peer: controller-runtime's webhook doing the
#    same mutation). All three are pinned to the last CPU, wrk to the others,
#    on adjacent ports; runs alternate between them. Peak RSS is VmHWM.
# 2. admit: hack/bench/admit_bench.c, lib/sched/cache + lib/sched/admit in process, at
#    each size of --admit-sizes gangs (10 pods each, 100 queues, nodes = gangs/2).
#    Then admit_bench --scan: --scan-gangs admitted gangs (10000; --quick 2000)
#    of 10 running pods made from tests/fixtures/bench/pod-review.json's KubeRay
#    worker: the eviction scan's process CPU time (the gate scans about once a
#    second: target <= 5 ms per second), and the heap and RSS the cache holds
#    per 1,000 pods against the pods' JSON (target: at most 2x).
#    topology (docs/topology.md): admit_bench on GPU gangs (a head and 4 workers of 4
#    or 8 nvidia.com/gpu; nodes of 8) with --topo-nodes nodes (5000) labelled
#    into --topo-domains racks (500), --topo-gangs gangs (10000) pending, once
#    with every RayCluster asking raygate.io/topology-required: the rack label
#    and once without: the same passes, and constrained / unconstrained (target:
#    within 2x; shown, never failing the script). --quick: 1000, 100, 2000.
#    dra (docs/dra.md): the same GPU gangs (no racks) with --dra-nodes nodes
#    (5000) of 8 GPUs and --dra-gangs gangs (10000) pending, once with
#    nvidia.com/gpu in the nodes' allocatable and the containers' requests
#    and once as DRA devices (admit_bench --dra: a ResourceSlice of 8 devices
#    per node, a DeviceClass mapping them to nvidia.com/gpu, workers asking
#    through ResourceClaimTemplates, bound workers' claims allocated; each
#    pass preceded by dracache_prepare): the passes, with devices / without
#    (target: within 1.5x; shown, never failing the script), and the ledger's
#    rebuild (dracache_prepare after a slice, and after the DeviceClass,
#    changed). --quick: 1000, 2000.
# 3. e2e: a local control plane with --e2e-nodes nodes (hack/cluster.sh at
#    RAYGATE_PORT_OFFSET): --e2e-clusters RayClusters x 10 pods created at once
#    into a queue with room for all, time to all pods bound, with raygate and
#    without it (webhook unregistered, gate stopped: what --no-raygate runs),
#    alternating; a gang of --e2e-gang pods, time from admissible to all gates
#    removed; the apiserver's admission webhook latency for raygate's webhooks.
# 4. peers (only when named in --parts): raygate, Kueue,
#    scheduler-plugins' coscheduling and no gang system, one at a time on the
#    same local control plane, with the same Ray workloads: the guide's
#    walkthrough, contention, flood, one big gang, autoscaling, and their cost
#    (hack/bench/peers/run.sh; sizes --peers-contention 50, --peers-flood 200,
#    --peers-gang 1000; --quick: 20, 20, 100; 3 runs unless --runs says more;
#    --peers-workloads "contention rayjob" runs only those, --peers-systems
#    "raygate none" only those systems; the apiserver's audit log counts every
#    mutating request by component).
# 5. dispatch (only when named in --parts; docs/dispatch.md): three local control
#    planes, workers a and b and a manager (hack/multi.sh: RAYGATE_PORT_OFFSET
#    N, N + 20, N + 40; N a multiple of 50, N + 50 free). Dispatch latency:
#    a RayCluster of --dispatch-gang pods (10) created on the manager, until all
#    its pods are bound on the worker, against the same RayCluster created
#    directly on the worker; raygate-dispatch's VmRSS with 0, 1 and 2 workers,
#    and before and after --dispatch-pods pods (1000; --quick 200) of
#    RayClusters created on a worker (hack/bench/dispatch.sh).
# 6. soak (only when named in --parts): hack/bench/soak.sh for
#    --soak-minutes (60) on two workers and a manager (RAYGATE_PORT_OFFSET N,
#    N + 20, N + 40, as dispatch; all three taken down at the end): a queue
#    tree, topology gangs, autoscaling, RayJobs, preemption and reclaim, gates
#    and the dispatcher killed, worker a cut off, with the invariant checkers
#    throughout. Its report (counts, violations) is the part "soak"; the
#    script exits 1 when it has a violation.
#
# Every figure is the median of --runs runs (default 5) with min and max.
# Results: DIR/<date>.md and .json (default bench/results; --quick runs are
# named <date>-quick). --quick: short runs and small sizes, to try the script.
# docs/benchmarks.md shows the latest: paste the report between its bench
# markers (the peers part's between its peers markers).
# Environment: BENCH_RUNS, BENCH_DURATION, RAYGATE_PORT_OFFSET, RAYGATE_CACHE;
# BENCH_NOTE, a line printed in bold under the machine (e.g. that it was loaded).
# Needs what hack/deps.sh installs (wrk among it) and Go (the peer and the
# upstream programs, built once into RAYGATE_CACHE).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
ARGS="$*"

RUNS="${BENCH_RUNS:-5}"
DURATION="${BENCH_DURATION:-10}"
CONNECTIONS=16
PARTS="webhook,admit,topology,dra,e2e"
ADMIT_SIZES="1000 10000 100000"
SCAN_GANGS=10000
TOPO_NODES=5000
TOPO_DOMAINS=500
TOPO_GANGS=10000
DRA_NODES=5000
DRA_GANGS=10000
E2E_NODES=500
E2E_CLUSTERS=200
E2E_GANG=1000
SOAK_MINUTES=60
SOAK_RC=0
OUT="$ROOT/bench/results"
QUICK=0
PEERS_ARGS=()
RUNS_GIVEN=0
while (($#)); do
	case "$1" in
	--quick) QUICK=1; RUNS=3; DURATION=2; ADMIT_SIZES="1000 10000"; SCAN_GANGS=2000; E2E_NODES=20; E2E_CLUSTERS=10; E2E_GANG=50
		TOPO_NODES=1000; TOPO_DOMAINS=100; TOPO_GANGS=2000; DRA_NODES=1000; DRA_GANGS=2000; DISPATCH_PODS=200; shift ;;
	--parts) PARTS="$2"; shift 2 ;;
	--runs) RUNS="$2"; RUNS_GIVEN=1; shift 2 ;;
	--duration) DURATION="$2"; shift 2 ;;
	--admit-sizes) ADMIT_SIZES="$2"; shift 2 ;;
	--scan-gangs) SCAN_GANGS="$2"; shift 2 ;;
	--topo-nodes) TOPO_NODES="$2"; shift 2 ;;
	--topo-domains) TOPO_DOMAINS="$2"; shift 2 ;;
	--topo-gangs) TOPO_GANGS="$2"; shift 2 ;;
	--dra-nodes) DRA_NODES="$2"; shift 2 ;;
	--dra-gangs) DRA_GANGS="$2"; shift 2 ;;
	--e2e-nodes) E2E_NODES="$2"; shift 2 ;;
	--e2e-clusters) E2E_CLUSTERS="$2"; shift 2 ;;
	--e2e-gang) E2E_GANG="$2"; shift 2 ;;
	--dispatch-gang) DISPATCH_GANG="$2"; shift 2 ;;
	--dispatch-pods) DISPATCH_PODS="$2"; shift 2 ;;
	--soak-minutes) SOAK_MINUTES="$2"; shift 2 ;;
	--out) OUT="$2"; shift 2 ;;
	--peers-contention) PEERS_ARGS+=(--contention "$2"); shift 2 ;;
	--peers-flood) PEERS_ARGS+=(--flood "$2"); shift 2 ;;
	--peers-gang) PEERS_ARGS+=(--gang "$2"); shift 2 ;;
	--peers-workloads) PEERS_ARGS+=(--workloads "$2"); shift 2 ;;
	--peers-systems) PEERS_ARGS+=(--systems "$2"); shift 2 ;;
	*) usage ;;
	esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ && "$DURATION" =~ ^[1-9][0-9]*$ ]] || die "--runs and --duration take positive numbers"
part() { [[ ",$PARTS," == *",$1,"* ]]; }

BENCH_BUILD="${RAYGATE_BENCH_BUILD:-$ROOT/build-bench}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/raygate-bench.XXXXXX")"
STAMP="$(date -u +%Y-%m-%d-%H%M)"
((QUICK)) && STAMP="$STAMP-quick"
PIDS_STARTED=()
CLUSTER_STARTED=0

cleanup() {
	local pid
	for pid in "${PIDS_STARTED[@]}"; do kill "$pid" 2>/dev/null || true; done
	if ((CLUSTER_STARTED)); then bash "$here/cluster.sh" down >/dev/null 2>&1 || true; fi
	declare -F dispatch_down >/dev/null && dispatch_down
	rm -rf "$WORK"
}
trap cleanup EXIT

# ------------------------------------------------------------------ helpers

# save NAME: stdin (JSON) becomes part NAME of the results.
save() { cat >"$WORK/part-$1.json"; }

now() { date +%s.%N; }

# ------------------------------------------------------------------ build

build() {
	say "building raygate and the benchmark programs (release) in $BENCH_BUILD"
	local opts=(-Dbench=true -Dtests=false -Dbuildtype=release -Dsanitize=false)
	if [[ ! -f "$BENCH_BUILD/build.ninja" ]]; then
		meson setup "$BENCH_BUILD" "${opts[@]}" >"$WORK/meson-setup.log" || { cat "$WORK/meson-setup.log"; die "meson setup failed"; }
	else
		meson configure "$BENCH_BUILD" "${opts[@]}" >"$WORK/meson-setup.log" || { cat "$WORK/meson-setup.log"; die "meson configure failed"; }
	fi
	meson compile -C "$BENCH_BUILD" >"$WORK/meson-compile.log" || { tail -30 "$WORK/meson-compile.log"; die "build failed"; }
}

# The peer, built through the Go module proxy once per source version, cached in RAYGATE_CACHE.
build_peer() {
	local src="$ROOT/hack/bench/peer" hash
	hash="$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)"
	PEER="$RAYGATE_CACHE/bench-peer-$hash"
	if [[ ! -x "$PEER" ]]; then
		say "building the controller-runtime peer (Go) into $PEER"
		mkdir -p "$RAYGATE_CACHE"
		(cd "$src" && go build -trimpath -o "$PEER.tmp" .) && mv "$PEER.tmp" "$PEER"
	fi
}

# ------------------------------------------------------------------ 1. webhook

NCPU="$(nproc)"
SERVER_CPU=$((NCPU - 1))
if ((NCPU > 1)); then WRK_CPUS="0-$((NCPU - 2))"; WRK_THREADS=$((NCPU - 1)); else WRK_CPUS=0; WRK_THREADS=1; fi
BENCH_PORT=$((29600 + ${RAYGATE_PORT_OFFSET:-0}))

https_ready() { curl -s --max-time 2 --cacert "$WORK/certs/ca.crt" -o /dev/null "https://127.0.0.1:$1/$2"; }

# start_server NAME PORT ARGS...: pinned to SERVER_CPU; sets SERVER_PID.
start_server() {
	local name="$1" port="$2"; shift 2
	taskset -c "$SERVER_CPU" "$@" >"$WORK/$name.log" 2>&1 &
	SERVER_PID=$!
	PIDS_STARTED+=("$SERVER_PID")
	wait_until 20 "$name on port $port" https_ready "$port" healthz || { cat "$WORK/$name.log"; die "$name did not start"; }
}

vmhwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }

# wrk_run PORT BODY SECONDS: one wrk run; prints {rps, p50_us, p99_us, p999_us}.
wrk_run() {
	local out line
	out="$(BODY_FILE="$2" taskset -c "$WRK_CPUS" wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"$3"s --latency \
		-s "$ROOT/hack/bench/post.lua" "https://127.0.0.1:$1/mutate" 2>&1)" || { echo "$out" >&2; die "wrk failed"; }
	line="$(grep '^RESULT ' <<<"$out")" || { echo "$out" >&2; die "wrk printed no RESULT"; }
	# RESULT rps=.. p50_us=.. p99_us=.. p999_us=.. errors=.. non2xx=..
	local -A r
	local kv
	for kv in ${line#RESULT }; do r[${kv%%=*}]="${kv#*=}"; done
	((r[errors] == 0 && r[non2xx] == 0)) || { echo "$out" >&2; die "wrk saw ${r[errors]} errors and ${r[non2xx]} non-2xx answers on port $1"; }
	jq -nc --argjson rps "${r[rps]}" --argjson p50 "${r[p50_us]}" --argjson p99 "${r[p99_us]}" --argjson p999 "${r[p999_us]}" \
		'{rps: $rps, p50_us: $p50, p99_us: $p99, p999_us: $p999}'
}

bench_webhook() {
	build_peer
	mkdir -p "$WORK/certs"
	"$BENCH_BUILD/certs/raygate-certs" generate --dir "$WORK/certs" --dns localhost --ip 127.0.0.1 >/dev/null 2>&1
	local pod="$ROOT/tests/fixtures/bench/pod-review.json" rc="$ROOT/tests/fixtures/bench/raycluster-large-review.json"
	local p_rg=$BENCH_PORT p_limit=$((BENCH_PORT + 1)) p_peer=$((BENCH_PORT + 2))

	start_server raygate "$p_rg" "$BENCH_BUILD/webhook/raygate-webhook" --addr "127.0.0.1:$p_rg" \
		--cert "$WORK/certs/tls.crt" --key "$WORK/certs/tls.key"
	local pid_rg=$SERVER_PID
	start_server peer "$p_peer" "$PEER" --host 127.0.0.1 --port "$p_peer" --cert-dir "$WORK/certs"
	local pid_peer=$SERVER_PID
	# The peer's /healthz is not served by controller-runtime's webhook server: ready above means "answers HTTPS".

	local body kind results="[]" rss_limit=0
	for kind in pod raycluster; do
		[[ $kind == pod ]] && body="$pod" || body="$rc"
		# The limit answers what raygate answers for this body, byte for byte.
		curl -sf --cacert "$WORK/certs/ca.crt" -H 'Content-Type: application/json' --data-binary @"$body" \
			"https://127.0.0.1:$p_rg/mutate" >"$WORK/response-$kind.json" || die "raygate did not answer the $kind review"
		jq -e '.response.allowed == true and .response.patchType == "JSONPatch"' "$WORK/response-$kind.json" >/dev/null ||
			die "raygate's answer to the $kind review is not an allowed JSONPatch"
		start_server limit "$p_limit" "$BENCH_BUILD/hack/bench/bench-limit" --addr "127.0.0.1:$p_limit" \
			--cert "$WORK/certs/tls.crt" --key "$WORK/certs/tls.key" --response "$WORK/response-$kind.json"
		local pid_limit=$SERVER_PID
		local servers=("raygate:$p_rg" "limit:$p_limit")
		if [[ $kind == pod ]]; then
			curl -sf --cacert "$WORK/certs/ca.crt" -H 'Content-Type: application/json' --data-binary @"$body" \
				"https://127.0.0.1:$p_peer/mutate" | jq -e '.response.patch | @base64d | fromjson |
					any(.path == "/spec/schedulingGates" and .value[0].name == "raygate.io/gang")' >/dev/null ||
				die "the peer does not gate the pod"
			servers+=("peer:$p_peer")
		fi
		local s name port r
		for s in "${servers[@]}"; do wrk_run "${s#*:}" "$body" 1 >/dev/null; done # warm-up
		for ((r = 1; r <= RUNS; r++)); do
			for s in "${servers[@]}"; do
				name="${s%%:*}" port="${s#*:}"
				say "webhook $kind: $name run $r/$RUNS (${DURATION}s)"
				results="$(jq -c --arg k "$kind" --arg s "$name" --argjson m "$(wrk_run "$port" "$body" "$DURATION")" \
					'. + [$m + {body: $k, server: $s}]' <<<"$results")"
			done
		done
		local hwm
		hwm="$(vmhwm_kb "$pid_limit")"
		((hwm > rss_limit)) && rss_limit=$hwm
		kill "$pid_limit"
		wait "$pid_limit" 2>/dev/null || true
	done
	local rss_rg rss_peer
	rss_rg="$(vmhwm_kb "$pid_rg")" rss_peer="$(vmhwm_kb "$pid_peer")"
	kill "$pid_rg" "$pid_peer"

	jq -c --argjson rg "$rss_rg" --argjson limit "$rss_limit" --argjson peer "$rss_peer" \
		--arg pod_bytes "$(wc -c <"$pod")" --arg rc_bytes "$(wc -c <"$rc")" \
		--argjson conns "$CONNECTIONS" --argjson dur "$DURATION" --arg scpu "$SERVER_CPU" --arg wcpu "$WRK_CPUS" '
		def st: sort as $s | ($s | length) as $n |
			{median: (if $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end),
			 min: $s[0], max: $s[-1], n: $n, samples: .};
		def fig($b; $s): map(select(.body == $b and .server == $s)) |
			if length == 0 then null else
			{rps: map(.rps) | st, p50_us: map(.p50_us) | st, p99_us: map(.p99_us) | st, p999_us: map(.p999_us) | st} end;
		{setup: {connections: $conns, duration_s: $dur, server_cpu: $scpu, wrk_cpus: $wcpu,
		         body_bytes: {pod: ($pod_bytes | tonumber), raycluster: ($rc_bytes | tonumber)}},
		 pod: {raygate: fig("pod"; "raygate"), limit: fig("pod"; "limit"), peer: fig("pod"; "peer")},
		 raycluster: {raygate: fig("raycluster"; "raygate"), limit: fig("raycluster"; "limit")},
		 rss_kb: {raygate: $rg, limit: $limit, peer: $peer}}' <<<"$results" | save webhook
}

# ------------------------------------------------------------------ 2. admit

bench_admit() {
	local g all="[]"
	for g in $ADMIT_SIZES; do
		say "admit: $g gangs of 10 pods, $RUNS runs"
		all="$(jq -c --argjson r "$("$BENCH_BUILD/hack/bench/admit_bench" --gangs "$g" --runs "$RUNS")" '. + [$r]' <<<"$all")"
	done
	jq -c '
		def st: sort as $s | ($s | length) as $n |
			{median: (if $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end),
			 min: $s[0], max: $s[-1], n: $n};
		def both: {wall: (.wall | st), cpu: (.cpu | st)};
		map({config, bytes_per_pod, load_ms,
		     full_pass_ms: (.full_pass_ms | both), full_pass_counts,
		     steady_full_pass_ms: (.steady_full_pass_ms | both), steady_full_pass_counts,
		     pod_created_ms: (.pod_created_ms | both), pod_created_counts,
		     pending_gang_deleted_ms: (.pending_gang_deleted_ms | both), pending_gang_deleted_counts,
		     running_gang_deleted_ms: (.running_gang_deleted_ms | both), running_gang_deleted_counts})' <<<"$all" | save admit
	bench_admit_scan
}

# The eviction scan over running gangs, and the cache's memory against the pods' JSON.
bench_admit_scan() {
	local out
	say "admit: eviction scan over $SCAN_GANGS admitted gangs of 10 running pods, $RUNS runs"
	out="$("$BENCH_BUILD/hack/bench/admit_bench" --scan --gangs "$SCAN_GANGS" --runs "$RUNS" \
		--pod-template "$ROOT/tests/fixtures/bench/pod-review.json")"
	jq -c '
		def st: sort as $s | ($s | length) as $n |
			{median: (if $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end),
			 min: $s[0], max: $s[-1], p90: $s[([($n * 0.9 | ceil) - 1, 0] | max)], n: $n};
		def both: {wall: (.wall | st), cpu: (.cpu | st)};
		{config: (.config | del(.pod_template)), load_average: [.load_average_start, .load_average_end], scan_period_ms,
		 scan_ms: (.scan_ms | both), scan_tenth_unready_ms: (.scan_tenth_unready_ms | both), memory}' <<<"$out" >"$WORK/admit-scan.json"
	jq -r '"admit: eviction scan \(.scan_ms.cpu.median * 1000 | round / 1000) ms CPU (p90 \(.scan_ms.cpu.p90 * 1000 | round / 1000)), " +
		"a tenth not Ready \(.scan_tenth_unready_ms.cpu.median * 1000 | round / 1000) ms; cache heap \(.memory.heap_over_json * 1000 | round / 1000)x " +
		"the pods'"'"' JSON; load average \(.load_average | join(" -> "))"' "$WORK/admit-scan.json" >&2
	save admit_scan <"$WORK/admit-scan.json"
}

# ------------------------------------------------------------------ 2b. topology

# The same GPU cluster and gangs, unconstrained and every gang asking for one rack; prints the figures and the ratios.
bench_topology() {
	local mode out="{}" args=(--gangs "$TOPO_GANGS" --nodes "$TOPO_NODES" --domains "$TOPO_DOMAINS" --pods-per-gang 5 --gpus 4 --runs "$RUNS")
	for mode in none required; do
		say "topology: $TOPO_GANGS gangs, $TOPO_NODES nodes in $TOPO_DOMAINS racks, --topology $mode, $RUNS runs"
		out="$(jq -c --arg m "$mode" --argjson r "$("$BENCH_BUILD/hack/bench/admit_bench" "${args[@]}" --topology "$mode")" \
			'. + {($m): $r}' <<<"$out")"
	done
	jq -c -f "$here/bench/topology_summary.jq" <<<"$out" >"$WORK/topology.json"
	jq -r '"topology: constrained / unconstrained (thread CPU ms, median): " +
		([.passes[] | "\(.name) \(.required_ms | . * 100 | round / 100) / \(.none_ms | . * 100 | round / 100) = \(.ratio | . * 100 | round / 100)x"] | join(", ")) +
		"; within \(.target_ratio)x: \(if .within then "yes" elif .honoured then "NO" else "NO (no gang placed in one rack)" end); load average \(.load_average | join(" -> "))"' "$WORK/topology.json" >&2
	save topology <"$WORK/topology.json"
}

# ------------------------------------------------------------------ 2c. dra

# The same GPU cluster and gangs, GPUs as allocatable and as DRA devices; prints the figures and the ratios.
bench_dra() {
	local mode out="{}" args=(--gangs "$DRA_GANGS" --nodes "$DRA_NODES" --pods-per-gang 5 --gpus 4 --runs "$RUNS")
	for mode in none dra; do
		say "dra: $DRA_GANGS gangs, $DRA_NODES nodes of 8 GPUs, $([[ $mode == dra ]] && echo "DRA devices" || echo "no devices"), $RUNS runs"
		out="$(jq -c --arg m "$mode" --argjson r "$("$BENCH_BUILD/hack/bench/admit_bench" "${args[@]}" $([[ $mode == dra ]] && echo --dra))" \
			'. + {($m): $r}' <<<"$out")"
	done
	jq -c -f "$here/bench/dra_summary.jq" <<<"$out" >"$WORK/dra.json"
	jq -r '"dra: with devices / without (thread CPU ms, median): " +
		([.passes[] | "\(.name) \(.dra_ms | . * 100 | round / 100) / \(.none_ms | . * 100 | round / 100) = \(.ratio | . * 100 | round / 100)x"] | join(", ")) +
		"; within \(.target_ratio)x: \(if .within then "yes" else "NO" end)\(if .same_decisions then "" else " (the first passes decided differently)" end)" +
		"; ledger rebuild: slice changed \(.dra.ledger_rebuild_ms.slice_changed_prepare_ms.cpu.median | . * 100 | round / 100) ms, class changed \(.dra.ledger_rebuild_ms.class_changed_prepare_ms.cpu.median | . * 100 | round / 100) ms" +
		"; load average \(.load_average | join(" -> "))"' "$WORK/dra.json" >&2
	save dra <"$WORK/dra.json"
}

# ------------------------------------------------------------------ 3. e2e

WEBHOOK_CONFIG="$WORK/webhook-configuration.json"

raygate_on() {
	kc apply -f "$WEBHOOK_CONFIG" >/dev/null
	bash "$here/cluster.sh" start-gate >/dev/null
}

raygate_off() {
	kc delete mutatingwebhookconfiguration raygate --ignore-not-found >/dev/null
	bash "$here/cluster.sh" stop raygate-gate >/dev/null
}

# raycluster NAME QUEUE PODS: a RayCluster of a head and PODS-1 workers, small requests.
raycluster() {
	cat <<YAML
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $1, labels: {volcano.sh/queue-name: $2}}
spec:
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 10m, memory: 16Mi}}}]}}
  workerGroupSpecs:
  - groupName: w
    replicas: $(($3 - 1))
    minReplicas: $(($3 - 1))
    maxReplicas: $(($3 - 1))
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.9.0, resources: {requests: {cpu: 10m, memory: 16Mi}}}]}}
YAML
}

queue() {
	kc apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec: {capability: {cpu: 100000}}
YAML
}

bound_pods() { kc get pods -n "$1" --field-selector spec.nodeName!= -o name 2>/dev/null | wc -l; }

delete_namespace() {
	kc delete namespace "$1" --wait=false >/dev/null 2>&1 || true
	local deadline=$((SECONDS + 600))
	while kc get namespace "$1" >/dev/null 2>&1; do
		((SECONDS < deadline)) || die "namespace $1 was not deleted in 10 minutes"
		sleep 1
	done
}

# One run of "CLUSTERS RayClusters x 10 pods at once": prints seconds from the first create to all pods bound.
many_clusters() {
	local ns="$1" want=$((E2E_CLUSTERS * 10)) i t0 t1
	kc create namespace "$ns" >/dev/null
	for ((i = 0; i < E2E_CLUSTERS; i++)); do raycluster "rc-$i" bench-room 10; done >"$WORK/many.yaml"
	t0="$(now)"
	kc apply -n "$ns" -f "$WORK/many.yaml" >/dev/null
	local deadline=$((SECONDS + 900))
	until (($(bound_pods "$ns") >= want)); do
		((SECONDS < deadline)) || die "$ns: $want pods were not bound in 15 minutes"
		sleep 0.25
	done
	t1="$(now)"
	echo "$t1 - $t0" | bc -l
}

# The gate's "gates removed" log lines written after epoch second $1, as {action, gang, pods, seconds, at}.
gate_ungates_since() {
	jq -R -c --argjson since "$1" 'fromjson? | select(.msg | test("^(admit|finish) .*: gates removed from [0-9]+ of [0-9]+ pods in ")) |
		(.ts | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) as $s | (.ts | capture("\\.(?<ms>[0-9]+)Z$").ms | tonumber / 1000) as $ms |
		select($s + $ms >= $since) |
		(.msg | capture("^(?<action>[a-z]+) (?<gang>[^ ]+) .*gates removed from (?<ok>[0-9]+) of (?<n>[0-9]+) pods in (?<secs>[0-9.]+) s")) as $m |
		{action: $m.action, gang: $m.gang, pods: ($m.n | tonumber), seconds: ($m.secs | tonumber), at: ($s + $ms)}' \
		"$STATE/logs/raygate-gate.log" 2>/dev/null || true
}

# One gang of E2E_GANG pods waiting for a queue that does not exist: prints {admissible_to_ungated_s, controller_ungate_s}.
big_gang() {
	local ns="$1" q="$2" n="$E2E_GANG" t0 deadline
	kc create namespace "$ns" >/dev/null
	raycluster big "$q" "$n" | kc apply -n "$ns" -f - >/dev/null
	deadline=$((SECONDS + 900))
	until [[ "$(kc get pods -n "$ns" -l ray.io/cluster=big -o name | wc -l)" == "$n" ]]; do
		((SECONDS < deadline)) || die "KubeRay did not create $n pods"
		sleep 1
	done
	local gated
	gated="$(kc get pods -n "$ns" -l ray.io/cluster=big -o jsonpath='{range .items[*]}{.spec.schedulingGates[*].name}{"\n"}{end}' | grep -c raygate.io/gang || true)"
	[[ "$gated" == "$n" ]] || die "only $gated of $n pods are gated"
	sleep 2 # let the controller's waiting pass and its Events settle
	t0="$(now)"
	queue "$q"
	local line="" deadline2=$((SECONDS + 300))
	until [[ -n "$line" ]]; do
		((SECONDS < deadline2)) || die "the gang $ns/big was not admitted in 5 minutes"
		sleep 0.2
		line="$(gate_ungates_since "$t0" | jq -c --arg g "$ns/ray-big-pg" 'select(.gang == $g and .action == "admit")' | head -1)"
	done
	gated="$(kc get pods -n "$ns" -l ray.io/cluster=big -o jsonpath='{range .items[*]}{.spec.schedulingGates[*].name}{"\n"}{end}' | grep -c raygate.io/gang || true)"
	[[ "$gated" == 0 ]] || die "$gated pods of $ns/big are still gated after the controller reported the gang ungated"
	jq -c --argjson t0 "$t0" '{admissible_to_ungated_s: (.at - $t0), controller_ungate_s: .seconds}' <<<"$line"
}

# apiserver_admission_webhook_admission_duration_seconds buckets for raygate's webhooks, as {name: {le: count}}.
scrape_webhook_histogram() {
	kc get --raw /metrics | awk '/^apiserver_admission_webhook_admission_duration_seconds_bucket\{/ && /name="[a-z]+\.raygate\.io"/' |
		sed -E 's/.*name="([^"]+)".*le="([^"]+)"\} ([0-9.e+]+)$/\1 \2 \3/' |
		jq -R -s -c 'split("\n") | map(select(length > 0) | split(" ")) |
			reduce .[] as $x ({}; .[$x[0]][$x[1]] += ($x[2] | tonumber))'
}

# raygate's own raygate_webhook_request_duration_seconds buckets (from its /metrics), as {kind: {le: count}}.
scrape_raygate_histogram() {
	curl -s --max-time 5 --cacert "$STATE/raygate-certs/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT/metrics" |
		awk '/^raygate_webhook_request_duration_seconds_bucket\{/' |
		sed -E 's/.*kind="([^"]+)".*le="([^"]+)"\} ([0-9.e+]+)$/\1 \2 \3/' |
		jq -R -s -c 'split("\n") | map(select(length > 0) | split(" ")) |
			reduce .[] as $x ({}; .[$x[0]][$x[1]] += ($x[2] | tonumber))'
}

bench_e2e() {
	local before after
	if bash "$here/cluster.sh" status >/dev/null 2>&1; then
		die "a local cluster already runs in $STATE (RAYGATE_PORT_OFFSET=${RAYGATE_PORT_OFFSET:-0}): take it down first"
	fi
	say "e2e: starting a local control plane with $E2E_NODES nodes (raygate from $BENCH_BUILD)"
	CLUSTER_STARTED=1
	RAYGATE_BUILD="$BENCH_BUILD" bash "$here/cluster.sh" up --nodes "$E2E_NODES" >"$WORK/cluster-up.log" 2>&1 ||
		{ tail -30 "$WORK/cluster-up.log"; die "cluster up failed"; }
	export RAYGATE_BUILD="$BENCH_BUILD"
	kc get mutatingwebhookconfiguration raygate -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields)' >"$WEBHOOK_CONFIG"
	queue bench-room

	before="$(scrape_webhook_histogram)"
	local own_before own_after
	own_before="$(scrape_raygate_histogram)"
	local r v with="[]" without="[]" gates="[]" t_run secs
	for ((r = 1; r <= RUNS; r++)); do
		for v in $( ((r % 2)) && echo "raygate none" || echo "none raygate"); do
			if [[ $v == raygate ]]; then raygate_on; else raygate_off; fi
			say "e2e: $E2E_CLUSTERS RayClusters x 10 pods, ${v/none/without raygate}, run $r/$RUNS"
			t_run="$(now)"
			secs="$(many_clusters "bench-many-$r-$v")"
			if [[ $v == raygate ]]; then
				with="$(jq -c --argjson s "$secs" '. + [$s]' <<<"$with")"
				gates="$(jq -c -s --argjson prev "$gates" '$prev + map(select(.action == "admit") | .seconds)' < <(gate_ungates_since "$t_run"))"
			else
				without="$(jq -c --argjson s "$secs" '. + [$s]' <<<"$without")"
			fi
			delete_namespace "bench-many-$r-$v"
		done
	done
	raygate_on
	local big="[]" b
	for ((r = 1; r <= RUNS; r++)); do
		say "e2e: one gang of $E2E_GANG pods, run $r/$RUNS"
		b="$(big_gang "bench-gang-$r" "bench-gang-q-$r")"
		big="$(jq -c --argjson b "$b" '. + [$b]' <<<"$big")"
		delete_namespace "bench-gang-$r"
		kc delete queue "bench-gang-q-$r" >/dev/null
	done
	after="$(scrape_webhook_histogram)"
	own_after="$(scrape_raygate_histogram)"

	jq -nc --argjson with "$with" --argjson without "$without" --argjson gates "$gates" --argjson big "$big" \
		--argjson before "$before" --argjson after "$after" --argjson own_before "$own_before" --argjson own_after "$own_after" \
		--argjson nodes "$E2E_NODES" --argjson clusters "$E2E_CLUSTERS" --argjson gang "$E2E_GANG" \
		'{$with, $without, $gates, $big, $before, $after, $own_before, $own_after, $nodes, $clusters, $gang}' |
		jq -c -f "$here/bench/e2e_summary.jq" | save e2e
}

# ------------------------------------------------------------------ 4. peers

bench_peers() {
	# 3 runs unless --runs says more: each run is every workload on every system.
	local quick=() runs=3
	((QUICK)) && quick=(--quick)
	((RUNS_GIVEN && RUNS > 3)) && runs=$RUNS
	# Alone, the peers part's runs are the results' runs.
	[[ "$PARTS" == peers ]] && RUNS=$runs
	RAYGATE_BUILD="$BENCH_BUILD" bash "$here/bench/peers/run.sh" "${quick[@]}" "${PEERS_ARGS[@]}" --runs "$runs" \
		--out "$WORK/part-peers.json.tmp"
	save peers <"$WORK/part-peers.json.tmp"
	rm -f "$WORK/part-peers.json.tmp"
}

# ------------------------------------------------------------------ 5. dispatch

. "$here/bench/dispatch.sh"

# ------------------------------------------------------------------ 6. soak

# bench_soak: hack/bench/soak.sh on the release build; its report is the part soak (its status kept for the end)
bench_soak() {
	say "soak: $SOAK_MINUTES min on workers a and b and a manager (RAYGATE_PORT_OFFSET ${RAYGATE_PORT_OFFSET:-0}, + 20, + 40)"
	RAYGATE_BUILD="$BENCH_BUILD" bash "$here/bench/soak.sh" --minutes "$SOAK_MINUTES" --out "$WORK/soak" --down || SOAK_RC=$?
	local json
	json="$(ls "$WORK"/soak/soak-*.json 2>/dev/null | tail -1)"
	[[ -n "$json" ]] || die "soak: no report (exit $SOAK_RC)"
	save soak <"$json"
}

# ------------------------------------------------------------------ report

machine_json() {
	jq -nc --arg model "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" --argjson cores "$NCPU" \
		--arg kernel "$(uname -r)" --arg mem "$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)" \
		--arg load_start "$LOAD_START" --arg load_end "$(cut -d' ' -f1-3 /proc/loadavg)" \
		'{cores: $cores, model: $model, memory: $mem, kernel: $kernel, load_average_start: $load_start, load_average_end: $load_end}'
}

versions_json() {
	jq -nc --arg raygate "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)" \
		--arg h2o "$(pkg-config --modversion libh2o-evloop)" --arg openssl "$(pkg-config --modversion openssl)" \
		--arg jansson "$(pkg-config --modversion jansson)" --arg wrk "$(wrk -v 2>&1 | head -1 | awk '{print $2}')" \
		--arg go "$(go env GOVERSION 2>/dev/null || echo none)" \
		--arg cr "$(sed -n 's/^\tsigs.k8s.io\/controller-runtime \(v[^ ]*\)$/\1/p' "$ROOT/hack/bench/peer/go.mod")" \
		--arg k8s "$K8S_VERSION" --arg kwok "$KWOK_VERSION" --arg kuberay "$KUBERAY_VERSION" --arg cc "$(cc --version | head -1)" \
		'{raygate: $raygate, compiler: $cc, buildtype: "release", h2o: $h2o, openssl: $openssl, jansson: $jansson, wrk: $wrk,
		  go: $go, controller_runtime: $cr, kubernetes: $k8s, kwok: $kwok, kuberay: $kuberay}'
}

# The Markdown report (also printed) from the results JSON.
report_md() {
	jq -r -f "$here/bench/report.jq" "$1"
}

# ------------------------------------------------------------------ main

main() {
	bash "$here/deps.sh" >/dev/null
	LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"
	build
	part webhook && bench_webhook
	part admit && bench_admit
	part topology && bench_topology
	part dra && bench_dra
	part e2e && bench_e2e
	part peers && bench_peers
	part dispatch && bench_dispatch
	part soak && bench_soak

	mkdir -p "$OUT"
	json="$OUT/$STAMP.json"
	jq -s --arg date "$(date -u +%Y-%m-%dT%H:%MZ)" --argjson machine "$(machine_json)" --argjson versions "$(versions_json)" \
		--arg command "hack/bench.sh${ARGS:+ $ARGS}" --argjson runs "$RUNS" --arg note "${BENCH_NOTE:-}" '
		(map(to_entries[]) | from_entries) as $parts |
		{date: $date, command: $command, runs: $runs, machine: ($machine + (if $note != "" then {note: $note} else {} end)),
		 versions: $versions} + $parts' \
		<(for f in "$WORK"/part-*.json; do jq -c --arg k "$(basename "$f" .json | sed 's/^part-//')" '{($k): .}' "$f"; done) >"$json"
	{
		report_md "$json"
		jq -r -f "$here/bench/peers/report.jq" "$json"
		if part soak; then jq '.soak' "$json" >"$WORK/soak-part.json" && python3 "$here/bench/soak_report.py" --markdown "$WORK/soak-part.json"; fi
	} >"$OUT/$STAMP.md"
	cat "$OUT/$STAMP.md"
	say "results: $json and $OUT/$STAMP.md (the latest tables go in docs/benchmarks.md, between its markers)"
	((SOAK_RC == 0)) || die "the soak failed (exit $SOAK_RC): $(jq '.soak.violations | length' "$json") violation(s), in the report"
}

# Everything above is definitions: bash has read the whole file before main runs, so editing it meanwhile is harmless.
main
exit
