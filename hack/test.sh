#!/usr/bin/env bash
# The test command: installs what is needed, builds the upstream programs
# (cached) and raygate, runs the unit suite and the local suite (the webhook
# binary on loopback: hostile input over TLS, slow clients), the same two
# suites in an AddressSanitizer+UndefinedBehaviorSanitizer build (build-san),
# the unit suite under valgrind, a short pass of every libFuzzer harness
# (build-fuzz, RAYGATE_FUZZ_SECONDS each, default 5), the e2e suite as
# shards side by side, each against a real local control plane of its own,
# and the in-cluster suite (raygate from its image on a real node:
# hack/cluster.sh up --real-node) in one shard after its e2e tests
# (hack/e2e.sh); exits non-zero on any failure. A real node that cannot start
# is a failure, not a skip.
#
#   hack/test.sh [--unit-only] [--keep-cluster] [--no-real-node] [--shards N]
#     --unit-only: everything but e2e and in-cluster; --no-real-node: no in-cluster suite
#     --shards N: the e2e suite in N shards (default 3, or RAYGATE_E2E_SHARDS), split
#       by tests/e2e/durations.txt; shard K on RAYGATE_PORT_OFFSET + 50 (K - 1)
#       (0, 50, ... when unset), state in .cluster-e2e-K; --keep-cluster: leave them up
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"

usage() { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&$((${1:-2} ? 2 : 1)); exit "${1:-2}"; }
unit_only=0 keep=0 real_node=1 shards="${RAYGATE_E2E_SHARDS:-3}"
while (($#)); do
	case "$1" in
	--unit-only) unit_only=1; shift ;;
	--keep-cluster) keep=1; shift ;;
	--no-real-node) real_node=0; shift ;;
	--shards) shards="${2:-}"; shift 2 || usage ;;
	--shards=*) shards="${1#*=}"; shift ;;
	--help | -h) usage 0 ;;
	*) usage ;;
	esac
done
((unit_only)) || check_shards "$shards"

step() { printf '\n==> %s\n' "$*"; }

SAN_BUILD="${RAYGATE_SAN_BUILD:-$ROOT/build-san}"
FUZZ_BUILD="${RAYGATE_FUZZ_BUILD:-$ROOT/build-fuzz}"
export RAYGATE_FUZZ_BUILD="$FUZZ_BUILD"
rm -f "$BUILD/meson-logs/unit.json" "$BUILD/meson-logs/local.json" "$BUILD/meson-logs/valgrind-valgrind.json" \
	"$BUILD/meson-logs/valgrind-webhook.json" \
	"$BUILD/meson-logs/e2e-plan.txt" "$BUILD/meson-logs/incluster.json" "$SAN_BUILD/meson-logs/san-unit.json" "$SAN_BUILD/meson-logs/san-local.json" \
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
bash "$here/build-upstream.sh" --with helm

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
bash "$here/fuzz.sh" "${RAYGATE_FUZZ_SECONDS:-5}" || rc=1

if ((unit_only == 0)); then
	step "e2e tests (real control planes: $shards shards side by side)"
	# The shards start clusters of their own, on ports a cluster in $STATE may hold.
	if "$here/cluster.sh" status >/dev/null 2>&1 || [[ -f "$STATE/real-node.enabled" ]]; then
		say "taking down the local cluster in $STATE: the e2e shards start their own"
		"$here/cluster.sh" down >/dev/null 2>&1 || true
	fi
	e2e_args=(--shards "$shards")
	((keep)) && e2e_args+=(--keep-cluster)
	((real_node)) || e2e_args+=(--no-real-node)
	bash "$here/e2e.sh" "${e2e_args[@]}" || rc=1
fi

step "summary"
logs=("$BUILD/meson-logs/unit.json" "$BUILD/meson-logs/local.json" "$SAN_BUILD/meson-logs/san-unit.json"
	"$SAN_BUILD/meson-logs/san-local.json" "$BUILD/meson-logs/valgrind-valgrind.json" "$BUILD/meson-logs/valgrind-webhook.json"
	"$FUZZ_BUILD/fuzz-results.json")
# The e2e shards' logs and the in-cluster suite's, by the plan hack/e2e.sh ran.
((unit_only)) || logs=(--e2e-plan "$BUILD/meson-logs/e2e-plan.txt" "${logs[@]}")
python3 "$here/test-summary.py" "${logs[@]}" || rc=1
exit $rc
