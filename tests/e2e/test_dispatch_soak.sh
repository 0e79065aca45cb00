#!/usr/bin/env bash
# The soak's hour in its 10-minute form: hack/bench/soak.sh (which says what it
# drives and checks) for RAYGATE_SOAK_MINUTES (default 10) from
# RAYGATE_SOAK_SEED (default: drawn, printed). It fails on any violation: an
# invariant of either worker's checker, a gang bound in two clusters at once,
# a gang that fits left waiting once the churn stops, a checker that stopped.
# Its report (JSON and markdown) goes into RAYGATE_SOAK_OUT (default
# BUILD/meson-logs/dispatch_soak).
# Named dispatch_*: the many-cluster tests share a shard and its offsets (hack/e2e-shards.py).
_soak_root="$(cd "$(dirname "$0")/../.." && pwd)"
. "$_soak_root/hack/bench/soak.sh" --minutes "${RAYGATE_SOAK_MINUTES:-10}" \
	--out "${RAYGATE_SOAK_OUT:-${RAYGATE_BUILD:-$_soak_root/build}/meson-logs/dispatch_soak}"
