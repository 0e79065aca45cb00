# hack/bench.sh --parts dispatch (docs/dispatch.md): sourced by hack/bench.sh, whose
# helpers (now, save, say, die, WORK, RUNS, BENCH_BUILD) it uses.
#
# Three local clusters (hack/multi.sh): workers a and b (DISPATCH_PODS / 100 + 2 kwok
# nodes of cpu 64, memory 256Gi, 110 pods each: a KubeRay pod asks cpu 200m, its
# init container's) at RAYGATE_PORT_OFFSET N and N + 20, the
# manager at N + 40 with raygate-dispatch at its defaults (--resync 2s), state
# in RAYGATE_STATE-dispatch-a, -b, -m. raygate from BENCH_BUILD.
# 1. The dispatcher's memory (VmRSS and the peak VmHWM from /proc) with 0, 1 and 2 workers
#    registered, each read 3 resyncs after the change: per worker.
# 2. Latency, RUNS runs alternating: a RayCluster of DISPATCH_GANG pods
#    created on the manager in a Queue dispatched to "a,b", until all its pods
#    are bound on the worker it went to; the same RayCluster created directly
#    on worker a, until all bound. Sampled by kubectl every 0.2 s or so.
# 3. The dispatcher's memory per 1,000 pods: DISPATCH_PODS pods (RayClusters
#    of 10, created directly on worker a), VmRSS before and after (3 resyncs
#    after all are bound).
# The load average (1 min) is read at the end of every measure.

. "$here/multi.sh"

DISPATCH_GANG="${DISPATCH_GANG:-10}"
DISPATCH_PODS="${DISPATCH_PODS:-1000}"
DISPATCH_NS=bench-dispatch
DISPATCH_Q=bench-dq
DISPATCH_STARTED=0
DISPATCH_SETTLE=6 # 3 resyncs of the default 2 s

load1() { cut -d' ' -f1 /proc/loadavg; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

dispatch_down() {
	local w
	((DISPATCH_STARTED)) || return 0
	for w in m a b; do multi_cluster "$w" down >/dev/null 2>&1 || true; done
}

# dispatch_up: the three clusters, both workers' Queue and the namespace
dispatch_up() {
	local w nodes=$((DISPATCH_PODS / 100 + 2))
	((_po % 50 == 0)) || die "--parts dispatch needs a RAYGATE_PORT_OFFSET that is a multiple of 50, not $_po"
	multi_init "$STATE-dispatch-a" "$_po" "$STATE-dispatch-b" $((_po + 20)) "$STATE-dispatch-m" $((_po + 40))
	for w in a b m; do
		if multi_cluster "$w" status >/dev/null 2>&1; then die "a local cluster already runs in $(multi_state "$w"): take it down first"; fi
	done
	say "dispatch: starting workers a and b ($nodes nodes each) and the manager (raygate from $BENCH_BUILD)"
	DISPATCH_STARTED=1
	export RAYGATE_BUILD="$BENCH_BUILD"
	multi_up_start a "$WORK/up-dispatch-a.log" --nodes "$nodes" --node-capacity cpu=64,memory=256Gi
	multi_up_start b "$WORK/up-dispatch-b.log" --nodes "$nodes" --node-capacity cpu=64,memory=256Gi
	multi_up_start m "$WORK/up-dispatch-m.log" --manager --cluster-name bench
	for w in a b m; do multi_up_wait "$w" || die "dispatch: cluster $w did not come up"; done
	DISPATCH_PID="$(multi_dispatch_pid)"
	kill -0 "$DISPATCH_PID" 2>/dev/null || die "dispatch: raygate-dispatch does not run on the manager"
	for w in a b m; do on "$w" create namespace "$DISPATCH_NS" >/dev/null; done
	for w in a b; do queue_on "$w" "$DISPATCH_Q"; done
	on m apply -f - >/dev/null <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $DISPATCH_Q, annotations: {raygate.io/dispatch-to: "a,b"}}
		spec: {weight: 1}
	YAML
}

queue_on() {
	on "$1" apply -f - >/dev/null <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $2}
		spec: {weight: 1}
	YAML
}

worker_up() {
	[[ "$(on m get secret -n raygate-system "raygate-worker-$1" -o jsonpath='{.metadata.annotations.raygate\.io/worker-status}')" == up ]]
}

# dispatch_rss WHAT: {what, rss_kb, hwm_kb, load} after DISPATCH_SETTLE seconds, printed too (VmHWM: the peak so far)
dispatch_rss() {
	sleep "$DISPATCH_SETTLE"
	local kb hwm l
	kb="$(rss_kb "$DISPATCH_PID")" hwm="$(awk '/^VmHWM:/ {print $2}' "/proc/$DISPATCH_PID/status")" l="$(load1)"
	say "dispatch: raygate-dispatch VmRSS $kb kB (peak $hwm kB), $1; load average $l"
	jq -nc --arg w "$1" --argjson kb "$kb" --argjson hwm "$hwm" --argjson l "$l" '{what: $w, rss_kb: $kb, hwm_kb: $hwm, load: $l}'
}

# all_bound W NAME N: exactly N pods of the Ray cluster NAME on W, all bound
all_bound() {
	[[ "$(on "$1" get pods -n "$DISPATCH_NS" -l "ray.io/cluster=$2" -o json |
		jq -r '"\(.items | length) \([.items[] | select(.spec.nodeName != null)] | length)"')" == "$3 $3" ]]
}

no_pods_of() { [[ -z "$(on "$1" get pods -n "$DISPATCH_NS" -l "ray.io/cluster=$2" -o name)" ]]; }

# until_true LIMIT WHAT CMD...: polls CMD until it succeeds; dies after LIMIT seconds
until_true() {
	local limit="$1" what="$2" deadline
	shift 2
	deadline=$((SECONDS + limit))
	until "$@" 2>/dev/null; do
		((SECONDS < deadline)) || die "dispatch: $what did not happen in ${limit}s"
		sleep 0.1
	done
}

dispatched_to() { on m get rayclusters.ray.io -n "$DISPATCH_NS" "$1" -o jsonpath='{.metadata.annotations.raygate\.io/dispatched-to}'; }
has_dispatched() { [[ -n "$(dispatched_to "$1")" ]]; }

# lat_direct NAME: seconds from creating it on worker a to all its pods bound there
lat_direct() {
	local t0 t1
	raycluster "$1" "$DISPATCH_Q" "$DISPATCH_GANG" >"$WORK/lat.yaml"
	t0="$(now)"
	on a apply -n "$DISPATCH_NS" -f "$WORK/lat.yaml" >/dev/null
	until_true 300 "$1 bound on a" all_bound a "$1" "$DISPATCH_GANG"
	t1="$(now)"
	on a delete rayclusters.ray.io -n "$DISPATCH_NS" "$1" --wait=false >/dev/null
	until_true 300 "$1's pods gone from a" no_pods_of a "$1"
	jq -nc --argjson s "$(echo "$t1 - $t0" | bc -l)" --argjson l "$(load1)" '{seconds: $s, load: $l}'
}

# lat_dispatched NAME: seconds from creating it on the manager to all its pods bound on its worker
lat_dispatched() {
	local t0 t1 td w
	raycluster "$1" "$DISPATCH_Q" "$DISPATCH_GANG" >"$WORK/lat.yaml"
	t0="$(now)"
	on m apply -n "$DISPATCH_NS" -f "$WORK/lat.yaml" >/dev/null
	until_true 300 "$1 dispatched" has_dispatched "$1"
	td="$(now)" w="$(dispatched_to "$1")"
	until_true 300 "$1 bound on $w" all_bound "$w" "$1" "$DISPATCH_GANG"
	t1="$(now)"
	on m delete rayclusters.ray.io -n "$DISPATCH_NS" "$1" --wait=false >/dev/null
	no_rc_m() { ! on m get rayclusters.ray.io -n "$DISPATCH_NS" "$1" >/dev/null 2>&1; }
	until_true 300 "$1 gone from the manager" no_rc_m "$1"
	until_true 300 "$1's pods gone from $w" no_pods_of "$w" "$1"
	jq -nc --argjson s "$(echo "$t1 - $t0" | bc -l)" --argjson d "$(echo "$td - $t0" | bc -l)" --arg w "$w" \
		--argjson l "$(load1)" '{seconds: $s, dispatched_s: $d, worker: $w, load: $l}'
}

# dispatch_pods: DISPATCH_PODS pods on worker a, the dispatcher's RSS before and after
dispatch_pods() {
	local n=$((DISPATCH_PODS / 10)) i before after
	before="$(dispatch_rss "before $((n * 10)) pods on a")"
	for ((i = 0; i < n; i++)); do raycluster "mem-$i" "$DISPATCH_Q" 10; done >"$WORK/mem.yaml"
	on a apply -n "$DISPATCH_NS" -f "$WORK/mem.yaml" >/dev/null
	bound_all() { (($(on a get pods -n "$DISPATCH_NS" --field-selector spec.nodeName!= -o name | wc -l) >= n * 10)); }
	until_true 900 "$((n * 10)) pods bound on a" bound_all
	after="$(dispatch_rss "after $((n * 10)) pods on a")"
	jq -nc --argjson b "$before" --argjson a "$after" --argjson p "$((n * 10))" \
		'{pods: $p, before: $b, after: $a, per_1000_pods_kb: (($a.rss_kb - $b.rss_kb) * 1000 / $p)}'
}

bench_dispatch() {
	local r mem0 mem1 mem2 direct="[]" dispatched="[]" x pods
	dispatch_up
	mem0="$(dispatch_rss "0 workers")"
	multi_register a a >/dev/null 2>&1 || die "dispatch: add-worker a failed"
	until_true 60 "worker a up" worker_up a
	mem1="$(dispatch_rss "1 worker")"
	multi_register b b >/dev/null 2>&1 || die "dispatch: add-worker b failed"
	until_true 60 "worker b up" worker_up b
	mem2="$(dispatch_rss "2 workers")"
	for ((r = 1; r <= RUNS; r++)); do
		for v in $( ((r % 2)) && echo "dispatched direct" || echo "direct dispatched"); do
			x="$("lat_$v" "lat-$r-$v")"
			say "dispatch: a RayCluster of $DISPATCH_GANG pods, $v, run $r/$RUNS: $(jq -r '"\(.seconds * 100 | round / 100) s\(if .worker then " (dispatched after \(.dispatched_s * 100 | round / 100) s, to \(.worker))" else "" end); load average \(.load)"' <<<"$x")"
			if [[ $v == direct ]]; then direct="$(jq -c --argjson x "$x" '. + [$x]' <<<"$direct")"; else dispatched="$(jq -c --argjson x "$x" '. + [$x]' <<<"$dispatched")"; fi
		done
	done
	pods="$(dispatch_pods)"
	jq -nc --argjson m0 "$mem0" --argjson m1 "$mem1" --argjson m2 "$mem2" --argjson direct "$direct" \
		--argjson dispatched "$dispatched" --argjson pods "$pods" --argjson gang "$DISPATCH_GANG" \
		--argjson nodes $((DISPATCH_PODS / 100 + 2)) '{$m0, $m1, $m2, $direct, $dispatched, $pods, $gang, $nodes}' |
		jq -c -f "$here/bench/dispatch_summary.jq" | save dispatch
	dispatch_down
	DISPATCH_STARTED=0
}
