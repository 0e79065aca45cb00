# hack/bench.sh part 2c (dra, docs/dra.md): two admit_bench runs on the same cluster and gangs into the figures.
#
# Input, one object: {none: R, dra: R}, R being what hack/bench/admit_bench prints (--gpus 4, without and with --dra).
# Output: the "dra" part of bench/results/<date>.json:
#   config        the run's sizes (the dra run's)
#   none, dra     per pass the samples' median, min and max (thread CPU and wall ms), and what the passes decided;
#                 dra's with ledger_rebuild_ms: dracache_prepare after a slice and after the DeviceClass changed
#   passes        per pass (name, key into none and dra), the medians of thread CPU ms without and with devices and their ratio
#   same_decisions   whether both first passes admitted the same gangs and pods and waited for the same reasons
#   target_ratio, within   the issue's bound (1.5) and whether every full pass (pending, steady) stays within it
#   load_average  /proc/loadavg's three figures at the start of the first run and at the end of the last
# Tested by tests/unit/test_bench_jq.sh.

def st: sort as $s | ($s | length) as $n |
	{median: (if $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end),
	 min: $s[0], max: $s[-1], n: $n};
def both: {wall: (.wall | st), cpu: (.cpu | st)};

# The passes compared, in the report's order; gate: counted in "within".
def passes: [
	{name: "full pass (pending)", key: "full_pass_ms", counts: "full_pass_counts", gate: true},
	{name: "full pass (steady)", key: "steady_full_pass_ms", counts: "steady_full_pass_counts", gate: true},
	{name: "pod created", key: "pod_created_ms", counts: "pod_created_counts", gate: false},
	{name: "pending gang deleted", key: "pending_gang_deleted_ms", counts: "pending_gang_deleted_counts", gate: false},
	{name: "running gang deleted", key: "running_gang_deleted_ms", counts: "running_gang_deleted_counts", gate: false}
];

def figures: . as $r | reduce passes[] as $p ({bound_pods: $r.bound_pods, load_ms: $r.load_ms,
		load_average: [$r.load_average_start, $r.load_average_end]};
	.[$p.key] = ($r[$p.key] | both) | .[$p.counts] = $r[$p.counts])
	| if $r.ledger_rebuild_ms then .ledger_rebuild_ms = ($r.ledger_rebuild_ms | map_values(both)) else . end;

1.5 as $target | . as $in |
(passes | map(. as $p | {name: $p.name, key: $p.key, gate: $p.gate}
	+ ({none_ms: $in.none[$p.key].cpu, dra_ms: $in.dra[$p.key].cpu} | map_values(st.median))
	| .ratio = (if .none_ms > 0 then .dra_ms / .none_ms else null end))) as $passes |
{
	config: .dra.config,
	none: (.none | figures),
	dra: (.dra | figures),
	passes: $passes,
	same_decisions: ((.none.full_pass_counts | del(.queues_evaluated)) == (.dra.full_pass_counts | del(.queues_evaluated))),
	target_ratio: $target,
	within: ($passes | map(select(.gate)) | all(.ratio != null and .ratio <= $target)),
	load_average: [.none.load_average_start, .dra.load_average_end]
}
