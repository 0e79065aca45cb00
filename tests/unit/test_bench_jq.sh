#!/bin/bash
# hack/bench.sh's jq programs on fixtures (tests/fixtures/bench/):
# - hack/bench/e2e_summary.jq on e2e-summary/input.json must give e2e-summary/expected.json
#   (worked by hand; numbers compared to 1e-9);
# - hack/bench/topology_summary.jq on topology-summary/input.json must give
#   topology-summary/expected.json (medians 40, 30, 0.25, 25 unconstrained and
#   60, 75, 0.5, 100 constrained: ratios 1.5, 2.5, 2, 4, the steady pass over 2x);
# - hack/bench/dra_summary.jq on dra-summary/input.json (a small real run) must give
#   dra-summary/expected.json (its output when written, checked by hand);
# - hack/bench/dispatch_summary.jq on dispatch-summary/input.json must give
#   dispatch-summary/expected.json (medians 4.0 and 1.6: overhead 2.4 s, 2.5x);
# - hack/bench/report.jq on report/results.json must print report/report.md exactly
#   (a real run's results and the report it produced, targets met and not met),
#   and on report/topology-results.json (the topology part alone) report/topology-report.md,
#   on report/scan-results.json (the eviction scan and the cache's memory alone) report/scan-report.md,
#   on report/dispatch-results.json (the dispatch part alone) report/dispatch-report.md,
#   on report/dra-results.json (the dra part alone) report/dra-report.md.
# usage: test_bench_jq.sh SOURCE_ROOT
set -u
root="$1"
fx="$root/tests/fixtures/bench"
failed=0

# summary NAME: hack/bench/NAME_summary.jq on NAME-summary/input.json against NAME-summary/expected.json.
summary() {
	local dir="$fx/$1-summary" got
	got="$(jq 'del(.comment)' "$dir/input.json" | jq -c -f "$root/hack/bench/$1_summary.jq")" || { echo "FAIL: $1_summary.jq did not run"; failed=1; return; }
	if ! jq -n -e --argjson a "$got" --slurpfile b "$dir/expected.json" '
		def same($x; $y):
			if ($x | type) == "number" and ($y | type) == "number" then ($x - $y | if . < 0 then -. else . end) < 1e-9
			elif ($x | type) == "object" and ($y | type) == "object" then
				($x | keys) == ($y | keys) and all($x | keys[]; . as $k | same($x[$k]; $y[$k]))
			elif ($x | type) == "array" and ($y | type) == "array" then
				($x | length) == ($y | length) and all(range($x | length); . as $i | same($x[$i]; $y[$i]))
			else $x == $y end;
		same($a; $b[0] | del(.comment))' >/dev/null; then
		echo "FAIL: $1_summary.jq on $1-summary/input.json:"
		diff <(jq -S . <<<"$got") <(jq -S 'del(.comment)' "$dir/expected.json")
		failed=1
	fi
}
summary e2e
summary topology
summary dispatch
summary dra

if ! diff -u "$fx/report/report.md" <(jq -r -f "$root/hack/bench/report.jq" "$fx/report/results.json"); then
	echo "FAIL: report.jq on report/results.json differs from report/report.md (above)"
	failed=1
fi
if ! diff -u "$fx/report/topology-report.md" <(jq -r -f "$root/hack/bench/report.jq" "$fx/report/topology-results.json"); then
	echo "FAIL: report.jq on report/topology-results.json differs from report/topology-report.md (above)"
	failed=1
fi
if ! diff -u "$fx/report/scan-report.md" <(jq -r -f "$root/hack/bench/report.jq" "$fx/report/scan-results.json"); then
	echo "FAIL: report.jq on report/scan-results.json differs from report/scan-report.md (above)"
	failed=1
fi
if ! diff -u "$fx/report/dispatch-report.md" <(jq -r -f "$root/hack/bench/report.jq" "$fx/report/dispatch-results.json"); then
	echo "FAIL: report.jq on report/dispatch-results.json differs from report/dispatch-report.md (above)"
	failed=1
fi
if ! diff -u "$fx/report/dra-report.md" <(jq -r -f "$root/hack/bench/report.jq" "$fx/report/dra-results.json"); then
	echo "FAIL: report.jq on report/dra-results.json differs from report/dra-report.md (above)"
	failed=1
fi
[[ "$failed" == 0 ]] && echo "e2e_summary.jq, topology_summary.jq, dispatch_summary.jq, dra_summary.jq and report.jq: as expected"
exit "$failed"
