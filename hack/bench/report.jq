# hack/bench.sh's report: bench/results/<date>.json in, the Markdown table out.
# Tested by tests/unit/test_bench_jq.sh on tests/fixtures/bench/report/.

# The targets, once: each row of a target table says the bound and compares with it.
def targets: {
	webhook: {
		rps_share_of_limit: 0.6, # raygate's req/s at least this share of the limit server's (pod, RayCluster)
		p99_ms: 1,               # raygate's p99 latency (pod, RayCluster)
		rps_times_peer: 3,       # raygate's req/s at least this many times the controller-runtime peer's (pod)
		rss_mb: 20               # raygate's peak RSS
	},
	admit: {
		gangs: 10000,            # the size the targets apply to (nodes: half as many)
		full_pass_ms: 20,
		pod_created_ms: 1,
		gang_deleted_ms: 1,      # pending and running
		bytes_per_pod: 1024,
		scan_ms_per_s: 5,        # the eviction scan over running gangs: CPU ms per second at the gate's scan period
		cache_over_json: 2       # the cache's heap per cached pod, against the pod's JSON
	},
	e2e: {
		ratio: 1.25,             # first create -> all bound, with raygate / without
		big_gang_s: 2            # the big gang: admissible -> all gates removed
	}
};

# 10000 -> "10,000"
def commas: tostring | if length <= 3 then . else (.[:-3] | commas) + "," + .[-3:] end;

def r1: if . == null then "–" else (. * 10 | round / 10 | tostring) end;
def r2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
def r3: if . == null then "–" else (. * 1000 | round / 1000 | tostring) end;
def k: if . == null then "–" else (. | round | tostring) end;
def fig(f): if . == null then "–" else "\(.median | f) (\(.min | f)–\(.max | f))" end;
def ms: if . == null then "–" else (. / 1000 | r3) end;
def ok(c): if c then "met" else "**not met**" end;
"# raygate benchmarks, \(.date)\n",
"Machine: \(.machine.cores) cores, \(.machine.model), \(.machine.memory), Linux \(.machine.kernel); load average \(.machine.load_average_start) at the start, \(.machine.load_average_end) at the end.",
(if .machine.note then "\n**\(.machine.note)**" else empty end),
"\nVersions: raygate \(.versions.raygate) (\(.versions.buildtype), \(.versions.compiler)), h2o \(.versions.h2o), OpenSSL \(.versions.openssl), jansson \(.versions.jansson), wrk \(.versions.wrk), Go \(.versions.go), controller-runtime \(.versions.controller_runtime), Kubernetes \(.versions.kubernetes), kwok \(.versions.kwok), KubeRay \(.versions.kuberay).",
"\nCommand: `\(.command)`. Each figure: median of \(.runs) runs (min–max).\n",
(if .webhook then (.webhook as $w | targets.webhook as $t |
"## 1. Webhook: throughput and latency\n",
"wrk, TLS, keep-alive, \($w.setup.connections) connections, \($w.setup.duration_s) s per run; servers pinned to CPU \($w.setup.server_cpu), wrk to CPU \($w.setup.wrk_cpus). Bodies: KubeRay worker pod \($w.setup.body_bytes.pod) B, RayCluster \($w.setup.body_bytes.raycluster) B.\n",
"| body | server | req/s | p50 ms | p99 ms | p99.9 ms |",
"|---|---|---|---|---|---|",
(["pod", "raycluster"][] as $b | ["raygate", "limit", "peer"][] as $s | $w[$b][$s] | select(. != null) |
	"| \($b) | \($s) | \(.rps | fig(k)) | \(.p50_us | fig(ms)) | \(.p99_us | fig(ms)) | \(.p999_us | fig(ms)) |"),
"\nPeak RSS (VmHWM): raygate \($w.rss_kb.raygate / 1024 | r1) MB, limit \($w.rss_kb.limit / 1024 | r1) MB, peer \($w.rss_kb.peer / 1024 | r1) MB.\n",
"| target | measured | |",
"|---|---|---|",
"| raygate ≥ \($t.rps_share_of_limit * 100 | r1)% of the limit’s req/s (pod) | \(($w.pod.raygate.rps.median / $w.pod.limit.rps.median * 100) | r1)% | \(ok($w.pod.raygate.rps.median >= $t.rps_share_of_limit * $w.pod.limit.rps.median)) |",
"| raygate ≥ \($t.rps_share_of_limit * 100 | r1)% of the limit’s req/s (RayCluster) | \(($w.raycluster.raygate.rps.median / $w.raycluster.limit.rps.median * 100) | r1)% | \(ok($w.raycluster.raygate.rps.median >= $t.rps_share_of_limit * $w.raycluster.limit.rps.median)) |",
"| raygate p99 ≤ \($t.p99_ms) ms (pod, RayCluster) | \($w.pod.raygate.p99_us.median | ms), \($w.raycluster.raygate.p99_us.median | ms) ms | \(ok($w.pod.raygate.p99_us.median <= $t.p99_ms * 1000 and $w.raycluster.raygate.p99_us.median <= $t.p99_ms * 1000)) |",
"| raygate ≥ \($t.rps_times_peer)× the peer’s req/s (pod) | \(($w.pod.raygate.rps.median / $w.pod.peer.rps.median) | r2)× | \(ok($w.pod.raygate.rps.median >= $t.rps_times_peer * $w.pod.peer.rps.median)) |",
"| raygate RSS ≤ \($t.rss_mb) MB | \($w.rss_kb.raygate / 1024 | r1) MB | \(ok($w.rss_kb.raygate <= $t.rss_mb * 1024)) |",
"") else empty end),
(if .admit then (.admit as $a | targets.admit as $t |
"## 2. Admission decisions at scale (in process)\n",
"lib/sched/cache + lib/sched/admit on synthetic objects: gangs of 10 pods in 100 queues, nodes = gangs/2 (cpu 32, memory 128Gi); four queues in five capped at 80% of their share. Times in ms, thread CPU time (wall time in the JSON).\n",
"| gangs | nodes | full pass (pending) | decisions | full pass (steady) | pod created | pending gang deleted | running gang deleted | bytes/pod |",
"|---|---|---|---|---|---|---|---|---|",
($a[] | "| \(.config.gangs) | \(.config.nodes) | \(.full_pass_ms.cpu | fig(r2)) | \(.full_pass_counts.admit) admit, \(.full_pass_counts.wait | to_entries | map("\(.value) \(.key)") | join(", ")) | \(.steady_full_pass_ms.cpu | fig(r2)) | \(.pod_created_ms.cpu | fig(r3)) | \(.pending_gang_deleted_ms.cpu | fig(r3)) | \(.running_gang_deleted_ms.cpu | fig(r3)) | \(.bytes_per_pod | k) |"),
"",
($a | map(select(.config.gangs == $t.gangs))[0] // null | if . == null then empty else
"| target (\(.config.gangs | commas) gangs, \(.config.nodes | commas) nodes) | measured | |",
"|---|---|---|",
"| one full pass ≤ \($t.full_pass_ms) ms | \(.full_pass_ms.cpu.median | r2) ms | \(ok(.full_pass_ms.cpu.median <= $t.full_pass_ms)) |",
"| one pod created ≤ \($t.pod_created_ms) ms | \(.pod_created_ms.cpu.median | r3) ms | \(ok(.pod_created_ms.cpu.median <= $t.pod_created_ms)) |",
"| one gang deleted ≤ \($t.gang_deleted_ms) ms (pending; running) | \(.pending_gang_deleted_ms.cpu.median | r3) ms; \(.running_gang_deleted_ms.cpu.median | r3) ms | \(ok(.pending_gang_deleted_ms.cpu.median <= $t.gang_deleted_ms and .running_gang_deleted_ms.cpu.median <= $t.gang_deleted_ms)) |",
"| memory per cached pod ≤ \($t.bytes_per_pod / 1024) KB | \(.bytes_per_pod | k) B | \(ok(.bytes_per_pod <= $t.bytes_per_pod)) |",
"" end)) else empty end),
(if .admit_scan then (.admit_scan as $s | targets.admit as $t | ($s.scan_ms.cpu.median * 1000 / $s.scan_period_ms) as $per_s |
"## 2a. Eviction scan and the cache’s memory (in process)\n",
"admit_bench --scan: \($s.config.gangs | commas) admitted gangs of \($s.config.pods_per_gang) running pods (a KubeRay worker: tests/fixtures/bench/pod-review.json), \($s.config.nodes | commas) nodes, placement timeout \($s.config.placement_timeout_ms / 1000) s, readiness timeout \($s.config.pods_ready_timeout_ms / 1000) s. Process CPU ms per scan, median (min–max) and p90; the gate scans at most every \($s.scan_period_ms) ms. Load average \($s.load_average | join(" → ")).\n",
"| state | CPU ms per scan | p90 | CPU ms per second |",
"|---|---|---|---|",
"| every pod bound and Ready | \($s.scan_ms.cpu | fig(r3)) | \($s.scan_ms.cpu.p90 | r3) | \($per_s | r3) |",
"| one worker of every tenth gang not Ready | \($s.scan_tenth_unready_ms.cpu | fig(r3)) | \($s.scan_tenth_unready_ms.cpu.p90 | r3) | \($s.scan_tenth_unready_ms.cpu.median * 1000 / $s.scan_period_ms | r3) |",
"",
"Memory per 1,000 cached pods: pods’ JSON \($s.memory.json_bytes_per_1000_pods / 1048576 | r2) MB (compact, no managedFields); cache heap \($s.memory.heap_bytes_per_1000_pods / 1048576 | r2) MB (\($s.memory.heap_over_json | r3)×); RSS growth \($s.memory.rss_bytes_per_1000_pods / 1048576 | r2) MB (\($s.memory.rss_over_json | r3)×).\n",
"| target | measured | |",
"|---|---|---|",
"| eviction scan ≤ \($t.scan_ms_per_s) ms of CPU per second (every pod running) | \($per_s | r3) ms | \(ok($per_s <= $t.scan_ms_per_s)) |",
"| cache heap per pod ≤ \($t.cache_over_json)× its JSON | \($s.memory.heap_over_json | r3)× | \(ok($s.memory.heap_over_json <= $t.cache_over_json)) |",
"") else empty end),
(if .topology then (.topology as $p |
"## 2b. Topology-constrained admission (in process)\n",
"admit_bench: \($p.config.gangs | commas) gangs (a head, \($p.config.pods_per_gang - 1) workers of \($p.config.gpus_per_worker) nvidia.com/gpu, every third gang’s of \($p.config.gpus_per_worker * 2)) in \($p.config.queues) queues, \($p.config.nodes | commas) nodes (nvidia.com/gpu 8) in \($p.config.domains) racks; constrained: every RayCluster asks `raygate.io/topology-required` of the rack label. Thread CPU ms; load average \($p.load_average | join(" → ")).\n",
"| pass | unconstrained | constrained | ratio |",
"|---|---|---|---|",
($p.passes[] as $x |
	"| \($x.name) | \($p.none[$x.key].cpu | fig(r3)) | \($p.required[$x.key].cpu | fig(r3)) | \($x.ratio | r2)× |"),
"",
(["none", "required"][] as $m | $p[$m].full_pass_counts as $c |
	"First pass, \(if $m == "none" then "unconstrained" else "constrained" end): \($c.admit) admit (\($c.topology_placed) in one rack), \($c.wait | to_entries | map("\(.value) \(.key)") | join(", ")) wait."),
"",
"| target | measured | |",
"|---|---|---|",
"| constrained full passes ≤ \($p.target_ratio)× unconstrained (pending; steady) | \([$p.passes[] | select(.gate) | "\(.ratio | r2)×"] | join("; ")) | \(ok($p.within))\(if $p.honoured then "" else " (no admitted gang was placed in one rack: the constraint was not honoured)" end) |",
"") else empty end),
(if .dra then (.dra as $p |
"## 2c. DRA devices (in process)\n",
"admit_bench: \($p.config.gangs | commas) gangs (a head, \($p.config.pods_per_gang - 1) workers of \($p.config.gpus_per_worker) GPUs, every third gang’s of \($p.config.gpus_per_worker * 2)) in \($p.config.queues) queues, \($p.config.nodes | commas) nodes of 8 GPUs; without devices: nvidia.com/gpu in the nodes’ allocatable and the containers’ requests; with: a ResourceSlice of 8 devices per node, a DeviceClass mapping them to nvidia.com/gpu, workers asking through ResourceClaimTemplates, bound workers’ claims allocated, each pass preceded by dracache_prepare. Thread CPU ms; load average \($p.load_average | join(" → ")).\n",
"| pass | without devices | DRA devices | ratio |",
"|---|---|---|---|",
($p.passes[] as $x |
	"| \($x.name) | \($p.none[$x.key].cpu | fig(r3)) | \($p.dra[$x.key].cpu | fig(r3)) | \($x.ratio | r2)× |"),
"",
"First pass: \($p.dra.full_pass_counts.admit) admit, \($p.dra.full_pass_counts.wait | to_entries | map("\(.value) \(.key)") | join(", ")) wait\(if $p.same_decisions then " (the same without devices)" else "; without devices: \($p.none.full_pass_counts.admit) admit (**the passes decided differently**)" end); \($p.dra.bound_pods | commas) pods bound after it.\n",
"The ledger’s rebuild (dracache_prepare, thread CPU ms): after a ResourceSlice changed \($p.dra.ledger_rebuild_ms.slice_changed_prepare_ms.cpu | fig(r2)); after the DeviceClass changed (every pod and gang priced again too) \($p.dra.ledger_rebuild_ms.class_changed_prepare_ms.cpu | fig(r2)).\n",
"| target | measured | |",
"|---|---|---|",
"| full passes with DRA devices ≤ \($p.target_ratio)× without (pending; steady) | \([$p.passes[] | select(.gate) | "\(.ratio | r2)×"] | join("; ")) | \(ok($p.within)) |",
"") else empty end),
(if .e2e then (.e2e as $e | targets.e2e as $t |
"## 3. End to end on the local control plane\n",
"\($e.setup.nodes) kwok nodes; \($e.setup.clusters) RayClusters × \($e.setup.pods_per_cluster) pods created at once into a queue with room for all; one gang of \($e.setup.gang_pods) pods.\n",
"| measure | median (min–max) |",
"|---|---|",
"| first create → all pods bound, with raygate | \($e.many.with_raygate_s | fig(r2)) s |",
"| first create → all pods bound, without raygate | \($e.many.without_raygate_s | fig(r2)) s |",
"| ratio with / without (target ≤ \($t.ratio)) | \($e.many.ratio | r2) \(ok(($e.many.ratio // 99) <= $t.ratio)) |",
"| gang of \($e.setup.gang_pods): admissible → all gates removed (target ≤ \($t.big_gang_s) s) | \($e.big_gang.admissible_to_ungated_s | fig(r2)) s \(ok(($e.big_gang.admissible_to_ungated_s.median // 99) <= $t.big_gang_s)) |",
"| of which the controller’s gate removal | \($e.big_gang.controller_ungate_s | fig(r2)) s |",
"| gate removal per gang (\($e.gate_removal_s.n) gangs of 10, from the gate’s log) | p50 \($e.gate_removal_s.p50 | r3) s, p99 \($e.gate_removal_s.p99 | r3) s |",
($e.apiserver_webhook_latency_s | to_entries[] | "| apiserver admission latency, webhook \(.key) (\(.value.count) calls) | p50 \(.value.p50 | r3 ) s, p99 \(.value.p99 | r3) s |"),
($e.raygate_webhook_handling_s // {} | to_entries[] | select(.value.count > 0) | "| raygate’s own handling of a \(.key) review (its histogram, \(.value.count) requests) | p50 \(.value.p50 * 1000 | r3) ms, p99 \(.value.p99 * 1000 | r3) ms |"),
"") else empty end),
(if .dispatch then (.dispatch as $p |
"## 5. Dispatch to many clusters (three local control planes)\n",
"Workers a and b (\($p.setup.nodes_per_worker) kwok nodes each) and a manager with raygate-dispatch at its defaults (`--resync \($p.setup.resync_s)s`). A RayCluster of \($p.setup.gang_pods) pods created on the manager (its Queue dispatched to \"a,b\") until all its pods are bound on the worker it went to, against the same RayCluster created directly on worker a; sampled with kubectl (about 0.2 s). Load average (1 min) at the end of each measure.\n",
"| measure | median (min–max) | load average |",
"|---|---|---|",
"| manager create → all pods bound on the worker | \($p.latency.dispatched_s | fig(r2)) s | \($p.latency.load.dispatched | map(tostring) | join(", ")) |",
"| of which create → dispatched-to written | \($p.latency.nominated_s | fig(r2)) s | |",
"| worker create → all pods bound (direct) | \($p.latency.direct_s | fig(r2)) s | \($p.latency.load.direct | map(tostring) | join(", ")) |",
"| dispatch overhead (medians), ratio | \($p.latency.overhead_s | r2) s, \($p.latency.ratio | r2)× | |",
"",
"Dispatched to: \($p.latency.workers | group_by(.) | map("\(.[0]) \(length)×") | join(", ")).\n",
"| raygate-dispatch | VmRSS kB | VmHWM kB (peak until then) | load average |",
"|---|---|---|---|",
(($p.memory.workers + [$p.memory.pods.before, $p.memory.pods.after])[] | "| \(.what) | \(.rss_kb) | \(.hwm_kb // "–") | \(.load) |"),
"",
"Per worker: \($p.memory.first_worker_kb) kB (the first), \($p.memory.second_worker_kb) kB (the second); per 1,000 pods on a worker: \($p.memory.pods.per_1000_pods_kb | k) kB.",
"") else empty end)
