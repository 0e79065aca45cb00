# hack/bench.sh part 2b (topology, docs/topology.md): two admit_bench runs on the same cluster and gangs into the figures.
#
# Input, one object: {none: R, required: R}, R being what hack/bench/admit_bench prints (--topology none / required).
# Output: the "topology" part of bench/results/<date>.json:
#   config        the run's sizes (the required run's, without its topology)
#   none, required   per pass the samples' median, min and max (thread CPU and wall ms), and what the passes decided
#   passes        per pass (name, key into none and required), the constrained and unconstrained medians of thread CPU ms and their ratio
#   honoured      whether the constrained first pass placed any admitted gang in one rack (when none was, the
#                 constraint was ignored and the ratios say nothing)
#   target_ratio, within   the issue's bound and whether every full pass (pending, steady) stays within it, honoured
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
	{name: "pending gang deleted", key: "pending_gang_deleted_ms", counts: "pending_gang_deleted_counts", gate: false},
	{name: "running gang deleted", key: "running_gang_deleted_ms", counts: "running_gang_deleted_counts", gate: false}
];

def figures: . as $r | reduce passes[] as $p ({bound_pods: $r.bound_pods, load_average: [$r.load_average_start, $r.load_average_end]};
	.[$p.key] = ($r[$p.key] | both) | .[$p.counts] = $r[$p.counts]);

2 as $target | . as $in |
(passes | map(. as $p | {name: $p.name, key: $p.key, gate: $p.gate}
	+ ({none_ms: $in.none[$p.key].cpu, required_ms: $in.required[$p.key].cpu} | map_values(st.median))
	| .ratio = (if .none_ms > 0 then .required_ms / .none_ms else null end))) as $passes |
{
	config: (.required.config | del(.topology)),
	none: (.none | figures),
	required: (.required | figures),
	passes: $passes,
	honoured: (.required.full_pass_counts.topology_placed > 0),
	target_ratio: $target,
	within: (.required.full_pass_counts.topology_placed > 0 and ($passes | map(select(.gate)) | all(.ratio != null and .ratio <= $target))),
	load_average: [.none.load_average_start, .required.load_average_end]
}
