#!/usr/bin/env bash
# The test command: installs what is needed, builds the upstream programs
# (cached) and raygate, runs the unit suite and the local suite (the webhook
# binary on loopback: hostile input over TLS, slow clients), the same two
# suites in an AddressSanitizer+UndefinedBehaviorSanitizer build (build-san),
# the unit suite under valgrind, a short pass of every libFuzzer harness
# (build-fuzz, RAYGATE_FUZZ_SECONDS each, default 10), the e2e suite
# against a real local control plane, and the in-cluster suite (raygate from
# its image on a real node: hack/cluster.sh up --real-node); exits non-zero on
# any failure. A real node that cannot start is a failure, not a skip.
#
#   hack/test.sh [--unit-only] [--keep-cluster] [--no-real-node]
#     --unit-only: everything but e2e and in-cluster; --no-real-node: no in-cluster suite
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"

unit_only=0 keep=0 real_node=1
for a in "$@"; do
	case "$a" in
	--unit-only) unit_only=1 ;;
	--keep-cluster) keep=1 ;;
	--no-real-node) real_node=0 ;;
	*) die "usage: hack/test.sh [--unit-only] [--keep-cluster] [--no-real-node]" ;;
	esac
done

step() { printf '\n==> %s\n' "$*"; }

SAN_BUILD="${RAYGATE_SAN_BUILD:-$ROOT/build-san}"
FUZZ_BUILD="${RAYGATE_FUZZ_BUILD:-$ROOT/build-fuzz}"
export RAYGATE_FUZZ_BUILD="$FUZZ_BUILD"
rm -f "$BUILD/meson-logs/unit.json" "$BUILD/meson-logs/local.json" "$BUILD/meson-logs/valgrind-valgrind.json" \
	"$BUILD/meson-logs/valgrind-webhook.json" \
	"$BUILD/meson-logs/e2e.json" "$BUILD/meson-logs/incluster.json" "$SAN_BUILD/meson-logs/san-unit.json" "$SAN_BUILD/meson-logs/san-local.json" \
	"$FUZZ_BUILD/fuzz-results.json"

step "dependencies"
bash "$here/deps.sh"

step "build"
if [[ ! -f "$BUILD/build.ninja" ]]; then
	meson setup "$BUILD" "$ROOT"
fi
meson compile -C "$BUILD"

# Before the unit suite: it runs helm (lint and template of charts/raygate).
step "upstream programs (cached in $RAYGATE_CACHE)"
bash "$here/build-upstream.sh"

rc=0
step "unit tests"
meson test -C "$BUILD" --suite unit --print-errorlogs --logbase unit || rc=1

step "local tests (the webhook binary on loopback)"
meson test -C "$BUILD" --suite local --print-errorlogs --logbase local || rc=1

step "sanitizer build (ASan+UBSan): unit and local tests"
if [[ ! -f "$SAN_BUILD/build.ninja" ]]; then
	meson setup "$SAN_BUILD" "$ROOT" -Dsanitize=true >/dev/null
fi
if nice -n 10 meson compile -C "$SAN_BUILD" >/dev/null; then
	meson test -C "$SAN_BUILD" --suite unit --print-errorlogs --logbase san-unit || rc=1
	meson test -C "$SAN_BUILD" --suite local --print-errorlogs --logbase san-local || rc=1
else
	say "sanitizer build: FAILED to compile"
	rc=1
fi

step "unit tests and the webhook binary under valgrind"
bash "$here/valgrind.sh" "$BUILD" || rc=1

step "fuzzing: a short pass of each harness"
bash "$here/fuzz.sh" "${RAYGATE_FUZZ_SECONDS:-10}" || rc=1

if ((unit_only == 0)); then
	step "e2e tests (real control plane)"
	started=0 cluster_ok=1
	# The e2e suite runs raygate's host binaries: not on a real-node cluster.
	if [[ -f "$STATE/real-node.enabled" ]]; then "$here/cluster.sh" down >/dev/null 2>&1 || true; fi
	if ! "$here/cluster.sh" status >/dev/null 2>&1; then
		"$here/cluster.sh" down >/dev/null 2>&1 || true
		"$here/cluster.sh" up || { say "the local control plane could not start"; cluster_ok=0; rc=1; }
		started=1
	fi
	if ((cluster_ok)); then
		meson test -C "$BUILD" --suite e2e --print-errorlogs --logbase e2e || rc=1
	else
		say "e2e: FAILED, no control plane"
	fi
	if ((started && !keep)); then "$here/cluster.sh" down; fi
fi

if ((unit_only == 0 && real_node)); then
	step "in-cluster tests (raygate from its image on a real node)"
	if [[ ! -f "$STATE/real-node.enabled" ]] || ! "$here/cluster.sh" status >/dev/null 2>&1; then
		"$here/cluster.sh" down >/dev/null 2>&1 || true
		if "$here/cluster.sh" up --real-node; then
			meson test -C "$BUILD" --suite incluster --print-errorlogs --logbase incluster || rc=1
		else
			say "in-cluster tests: FAILED, the real node could not start (the error above says why)"
			rc=1
		fi
	else
		meson test -C "$BUILD" --suite incluster --print-errorlogs --logbase incluster || rc=1
	fi
	((keep)) || "$here/cluster.sh" down
fi

step "summary"
logs=("$BUILD/meson-logs/unit.json" "$BUILD/meson-logs/local.json" "$SAN_BUILD/meson-logs/san-unit.json"
	"$SAN_BUILD/meson-logs/san-local.json" "$BUILD/meson-logs/valgrind-valgrind.json" "$BUILD/meson-logs/valgrind-webhook.json"
	"$FUZZ_BUILD/fuzz-results.json")
((unit_only)) || logs+=("$BUILD/meson-logs/e2e.json")
((unit_only || !real_node)) || logs+=("$BUILD/meson-logs/incluster.json")
python3 - "${logs[@]}" <<'PY' || true
import json, os, sys
ok = fail = skip = 0
results = []
for path in sys.argv[1:]:
    if not os.path.exists(path):
        fail += 1  # a suite that did not run is a failure, never a silent skip
        continue
    results += [json.loads(line)["result"] for line in open(path)]
for r in results:
    if r in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r == "SKIP": skip += 1
    else: fail += 1
print(f"{ok} passed, {fail} failed, {skip} skipped")
PY
exit $rc
