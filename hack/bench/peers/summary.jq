# The peers part's JSON from hack/bench/peers/run.sh's result lines
# ({system, run, workload, load, result}, slurped): medians with min and max
# per system, and every run's result.
def st: map(select(. != null)) | sort as $s | ($s | length) as $n |
	if $n == 0 then null else
	{median: (if $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end),
	 min: $s[0], max: $s[-1], n: $n} end;
# Objects of numbers (one per run) -> {key: st}; a key a run lacks counts 0 there.
def keyst: map(select(. != null)) | if length == 0 then null else
	(map(keys) | add | unique) as $k | . as $c | reduce $k[] as $x ({}; .[$x] = ($c | map(.[$x] // 0) | st)) end;
# What a workload's runs cost the apiserver (results' .cost): its CPU seconds
# per Ray pod, and the audit log's mutating requests per Ray pod in total, by
# component (st) and by component and request (medians).
def apicost: {
	apiserver_cpu_s_per_pod: map(.cost.apiserver_cpu_s_per_pod) | st,
	audit_mutations_per_pod: map(.cost.audit.mutations_per_pod) | st,
	mutations_by_component: map(.cost.audit.by_component) | keyst,
	mutations_by_request: (map(.cost.audit.by_request) | map(select(. != null)) | if length == 0 then null else
		(map(keys) | add | unique) as $cs | . as $r |
		reduce $cs[] as $c ({}; .[$c] = ($r | map(.[$c] // {}) | keyst | map_values(.median))) end)};
def ok: map(select(.result.error == null));
def of($w): map(select(.workload == $w));

. as $all |
($systems | split(" ")) as $sys |
{
	setup: {nodes: $nodes, node_capacity: $cap, runs: $runs, quick: ($quick == 1), contention_clusters: $contention,
	        contention_seed: $seed, flood_clusters: $flood, flood_pods_per_cluster: 10, gang_pods: $gang, systems: $sys},
	versions: {kueue: $kueue, scheduler_plugins: $sp,
	           volcano: "not run: the Go module proxy refuses volcano.sh/volcano here"},
	by_system: ($sys | map(. as $s | {key: $s, value: ($all | map(select(.system == $s)) | {
		load: map(.load),
		errors: map(select(.result.error != null) | {workload, run, error: .result.error}),
		walkthrough: (of("walkthrough") | ok | .[0].result // null),
		autoscaling: (of("autoscaling") | ok | .[0].result // null),
		rayjob: (of("rayjob") | ok | .[0].result // null),
		contention: (of("contention") | ok | map(.result) | if length == 0 then null else {
			pods: .[0].pods, ask_cpu: .[0].ask_cpu, node_cpu: .[0].node_cpu, ask_over_nodes: .[0].ask_over_nodes,
			settled_s: map(.settled_s) | st,
			# Settled: the last sample came a quiet period after the last change (not the time limit).
			settled_runs: map(select(if .quiet then .settled else (.samples[-1].t - .settled_s) >= ((if $quick == 1 then 15 else 30 end) - 1.5) end)) | length,
			full_end: map(.full_end) | st, partial_end: map(.partial_end) | st, partial_max: map(.partial_max) | st,
			partial_cluster_s: map(.partial_cluster_s) | st, pending_end: map(.pending_end) | st,
			useful_cpu_share: map(.useful_cpu_share) | st, cpu_in_partial_clusters: map(.cpu_in_partial_clusters) | st,
			scheduler_attempts_per_pod: map(.cost.scheduler_attempts_per_pod) | st,
			gang_cpu_s: map(.cost.gang_cpu_s) | st} + apicost end),
		flood: (of("flood") | ok | map(.result) | if length == 0 then null else {
			pods: (.[0].clusters * .[0].pods_per_cluster), nodes_added: (.[0].nodes_added // 0),
			all_bound_s: map(.all_bound_s) | st, partial_max: map(.partial_max) | st,
			requests_per_pod: (map(.cost.apiserver_requests_per_pod) | keyst // {}),
			mutations_per_pod: map(.cost.apiserver_mutations_per_pod) | st,
			etcd_writes_per_pod: map(.cost.etcd_writes_per_pod) | st,
			gang_cpu_s: map(.cost.gang_cpu_s) | st, gang_hwm_kb: map(.cost.gang_hwm_kb) | st,
			procs_cpu_s: (map(.cost.procs) | (map(keys) | add | unique) as $ps | . as $c |
				reduce $ps[] as $p ({}; .[$p] = ($c | map(.[$p].cpu_s) | st))),
			scheduler_attempts_per_pod: map(.cost.scheduler_attempts_per_pod) | st} + apicost end),
		gang: (of("gang") | ok | map(.result) | if length == 0 then null else {
			pods: .[0].pods, nodes_added: (.[0].nodes_added // 0),
			admissible_to_all_bound_s: map(.admissible_to_all_bound_s) | st,
			created_to_all_bound_s: map(.created_to_all_bound_s) | st,
			first_pod_s: map(.first_pod_s) | st, last_pod_s: map(.last_pod_s) | st,
			requests_per_pod: (map(.cost.apiserver_requests_per_pod // {}) | keyst // {}),
			mutations_per_pod: map(.cost.apiserver_mutations_per_pod) | st,
			etcd_writes_per_pod: map(.cost.etcd_writes_per_pod) | st,
			gang_cpu_s: map(.cost.gang_cpu_s) | st, gang_hwm_kb: map(.cost.gang_hwm_kb) | st,
			scheduler_attempts_per_pod: map(.cost.scheduler_attempts_per_pod) | st} + apicost end)
	})}) | from_entries),
	runs: ($all | map(del(.result.samples?))),
	contention_samples: ($all | of("contention") | ok | map({system, run, samples: .result.samples}))
} |
# Ratios to no gang system, of medians measured in this run.
.by_system.none as $none |
.ratios = (.by_system | with_entries(select(.key != "none") | .value |= {
	flood_all_bound: (if .flood and $none.flood then .flood.all_bound_s.median / $none.flood.all_bound_s.median else null end),
	gang_created_to_all_bound: (if .gang and $none.gang then .gang.created_to_all_bound_s.median / $none.gang.created_to_all_bound_s.median else null end),
	gang_admissible_to_all_bound: (if .gang and $none.gang then .gang.admissible_to_all_bound_s.median / $none.gang.created_to_all_bound_s.median else null end)
}))
