#!/usr/bin/env bash
# Runs every libFuzzer harness (tests/fuzz) for SECONDS each (default 60),
# one after another, niced, in its own clang build dir, and prints the
# executions each made. Exits non-zero if a harness crashed, leaked, hung or
# broke its contract; the input that did it is kept in the artifacts folder.
#
#   hack/fuzz.sh [SECONDS] [HARNESS...]     e.g. hack/fuzz.sh 10, hack/fuzz.sh 600 admission
#
# Build dir: $RAYGATE_FUZZ_BUILD (default build-fuzz). Corpora grow in
# <build>/fuzz-corpus/<harness> across runs; seeds are taken fresh from
# tests/fixtures each run (tests/fuzz/seeds.py).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"

secs="${1:-60}"
[[ "$secs" =~ ^[0-9]+$ ]] && ((secs > 0)) || die "usage: hack/fuzz.sh [SECONDS] [HARNESS...]"
shift || true
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(admission dra gang kubeconfig quantity watchstream)
FUZZ_BUILD="${RAYGATE_FUZZ_BUILD:-$ROOT/build-fuzz}"

bash "$here/deps.sh" >/dev/null
if [[ ! -f "$FUZZ_BUILD/build.ninja" ]]; then
	CC=clang meson setup "$FUZZ_BUILD" "$ROOT" -Dfuzz=true -Dtests=false >/dev/null
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("tests/fuzz/fuzz_$h"); done
nice -n 10 meson compile -C "$FUZZ_BUILD" "${targets[@]}" >/dev/null

seeds="$FUZZ_BUILD/fuzz-seeds"
rm -rf "$seeds"
python3 "$ROOT/tests/fuzz/seeds.py" "$ROOT/tests/fixtures" "$seeds"

total=0 failed=()
results="$FUZZ_BUILD/fuzz-results.json" # one JSON line per harness, read by hack/test.sh's summary
: >"$results"
for h in "${harnesses[@]}"; do
	corpus="$FUZZ_BUILD/fuzz-corpus/$h" artifacts="$FUZZ_BUILD/fuzz-artifacts"
	log="$FUZZ_BUILD/fuzz-logs/$h.log"
	mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
	dict=()
	case "$h" in
	admission | gang) dict=(-dict="$ROOT/tests/fuzz/admission.dict") ;;
	*) [[ -f "$ROOT/tests/fuzz/$h.dict" ]] && dict=(-dict="$ROOT/tests/fuzz/$h.dict") ;;
	esac
	rc=0
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb: 2 GiB is a leak or a blow-up.
	ASAN_OPTIONS=detect_leaks=1 nice -n 10 "$FUZZ_BUILD/tests/fuzz/fuzz_$h" "${dict[@]}" \
		-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$artifacts/$h-" "$corpus" "$seeds/$h" >"$log" 2>&1 || rc=$?
	execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
	execs="${execs:-0}"
	total=$((total + execs))
	result=OK
	((rc == 0)) || result=FAIL
	printf '{"name": "fuzz_%s", "result": "%s", "executions": %s, "seconds": %s}\n' "$h" "$result" "$execs" "$secs" >>"$results"
	if ((rc != 0)); then
		failed+=("$h")
		printf 'fuzz: %-12s FAILED (exit %d) after %s executions; log %s\n' "$h" "$rc" "$execs" "$log"
		{ grep -E '^(==[0-9]+==ERROR|SUMMARY|.*fails|admission contract)' "$log" | head -5 | sed 's/^/    /'; } || true
		{ ls -t "$artifacts"/"$h"-* 2>/dev/null | head -1 | sed 's/^/    input: /'; } || true
	else
		printf 'fuzz: %-12s %10s executions in %ss, corpus %s inputs\n' "$h" "$execs" "$secs" "$(ls "$corpus" | wc -l)"
	fi
done
printf 'fuzz: %s executions in total, %d harness(es) failed\n' "$total" "${#failed[@]}"
((${#failed[@]} == 0))
