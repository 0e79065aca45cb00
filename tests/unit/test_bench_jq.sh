#!/bin/bash
# hack/bench.sh's jq programs on fixtures (tests/fixtures/bench/):
# - hack/bench/e2e_summary.jq on e2e-summary/input.json must give e2e-summary/expected.json
#   (worked by hand; numbers compared to 1e-9);
# - hack/bench/report.jq on report/results.json must print report/report.md exactly
#   (a real run's results and the report it produced, targets met and not met).
# usage: test_bench_jq.sh SOURCE_ROOT
set -u
root="$1"
fx="$root/tests/fixtures/bench"
failed=0

got="$(jq -c -f "$root/hack/bench/e2e_summary.jq" "$fx/e2e-summary/input.json")" || { echo "FAIL: e2e_summary.jq did not run"; exit 1; }
if ! jq -n -e --argjson a "$got" --slurpfile b "$fx/e2e-summary/expected.json" '
	def same($x; $y):
		if ($x | type) == "number" and ($y | type) == "number" then ($x - $y | if . < 0 then -. else . end) < 1e-9
		elif ($x | type) == "object" and ($y | type) == "object" then
			($x | keys) == ($y | keys) and all($x | keys[]; . as $k | same($x[$k]; $y[$k]))
		elif ($x | type) == "array" and ($y | type) == "array" then
			($x | length) == ($y | length) and all(range($x | length); . as $i | same($x[$i]; $y[$i]))
		else $x == $y end;
	same($a; $b[0] | del(.comment))' >/dev/null; then
	echo "FAIL: e2e_summary.jq on e2e-summary/input.json:"
	diff <(jq -S . <<<"$got") <(jq -S 'del(.comment)' "$fx/e2e-summary/expected.json")
	failed=1
fi

if ! diff -u "$fx/report/report.md" <(jq -r -f "$root/hack/bench/report.jq" "$fx/report/results.json"); then
	echo "FAIL: report.jq on report/results.json differs from report/report.md (above)"
	failed=1
fi
[[ "$failed" == 0 ]] && echo "e2e_summary.jq and report.jq: as expected"
exit "$failed"
