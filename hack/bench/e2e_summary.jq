# hack/bench.sh part 3 (end to end): the samples of every run into the figures of the report.
#
# Input, one object:
#   with, without    seconds from the first create to all pods bound, one per run, with / without raygate
#   gates            seconds the gate took to remove one gang's gates (from its log), every gang of every run
#   big              one {admissible_to_ungated_s, controller_ungate_s} per run of the big gang
#   before, after    the apiserver's admission webhook histogram {webhook: {le: cumulative count}} around the runs
#   own_before, own_after   raygate's own request histogram {kind: {le: count}} around the runs
#   nodes, clusters, gang   the sizes
# Output: the "e2e" part of bench/results/<date>.json. Tested by tests/unit/test_bench_jq.sh.

# Median, min, max and the samples (in run order).
def st: sort as $s | ($s | length) as $n |
	{median: (if $n == 0 then null elif $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end),
	 min: $s[0], max: $s[-1], n: $n, samples: .};

# The p-th percentile, nearest rank.
def pct($p): sort as $s | if ($s | length) == 0 then null else $s[((($s | length) * $p / 100) | ceil) - 1] end;

# histogram_quantile over cumulative buckets {le: count}, linear within a bucket, as Prometheus does.
def hq($q): to_entries | map({le: (if .key == "+Inf" then infinite else (.key | tonumber) end), c: .value}) | sort_by(.le) as $b |
	($b[-1].c) as $total | if $total == 0 then null else ($q * $total) as $rank |
	(first($b | to_entries[] | select(.value.c >= $rank))) as $hit |
	(if $hit.key == 0 then {le: 0, c: 0} else $b[$hit.key - 1] end) as $lo |
	if $hit.value.le == infinite then $lo.le
	else $lo.le + ($hit.value.le - $lo.le) * (($rank - $lo.c) / (($hit.value.c - $lo.c) | if . == 0 then 1 else . end)) end end;

# after - before, bucket by bucket: what the runs added.
def delta($before): with_entries(.key as $w | .value |= with_entries(.value -= ((($before[$w]) // {})[.key] // 0)));

def quantiles: with_entries(.value |= {count: (.["+Inf"] // 0), p50: hq(0.5), p99: hq(0.99)});

. as $in |
{setup: {nodes: $in.nodes, clusters: $in.clusters, pods_per_cluster: 10, gang_pods: $in.gang},
 many: {with_raygate_s: ($in.with | st), without_raygate_s: ($in.without | st),
        ratio: (if ($in.without | length) > 0 and ($in.with | length) > 0 then (($in.with | st).median / ($in.without | st).median) else null end)},
 gate_removal_s: {n: ($in.gates | length), p50: ($in.gates | pct(50)), p99: ($in.gates | pct(99)), max: ($in.gates | max)},
 big_gang: {admissible_to_ungated_s: ($in.big | map(.admissible_to_ungated_s) | st),
            controller_ungate_s: ($in.big | map(.controller_ungate_s) | st)},
 apiserver_webhook_latency_s: ($in.after | delta($in.before) | quantiles),
 raygate_webhook_handling_s: ($in.own_after | delta($in.own_before) | quantiles)}
