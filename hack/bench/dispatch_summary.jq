# hack/bench.sh --parts dispatch: its measures in ({m0, m1, m2: the
# dispatcher's RSS with 0, 1, 2 workers; direct, dispatched: the latency runs;
# pods: RSS before and after the pods; gang, nodes}), the part's results out.
# Tested by tests/unit/test_bench_jq.sh on tests/fixtures/bench/dispatch-summary/.
def st: sort as $s | ($s | length) as $n |
	{median: (if $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end),
	 min: $s[0], max: $s[-1], n: $n, samples: .};
. as {m0: $m0, m1: $m1, m2: $m2, direct: $direct, dispatched: $dispatched, pods: $pods, gang: $gang, nodes: $nodes} |
($dispatched | map(.seconds) | st) as $d | ($direct | map(.seconds) | st) as $w |
{setup: {nodes_per_worker: $nodes, gang_pods: $gang, resync_s: 2},
 latency: {dispatched_s: $d, direct_s: $w, nominated_s: ($dispatched | map(.dispatched_s) | st),
           overhead_s: ($d.median - $w.median), ratio: (if $w.median > 0 then $d.median / $w.median else null end),
           workers: ($dispatched | map(.worker)),
           load: {dispatched: ($dispatched | map(.load)), direct: ($direct | map(.load))}},
 memory: {workers: [$m0, $m1, $m2],
          first_worker_kb: ($m1.rss_kb - $m0.rss_kb), second_worker_kb: ($m2.rss_kb - $m1.rss_kb),
          pods: $pods}}
