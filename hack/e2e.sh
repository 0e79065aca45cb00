#!/usr/bin/env bash
# The e2e suite as shards side by side (hack/test.sh's e2e step), each shard
# against a local control plane of its own (hack/cluster.sh up), and the
# in-cluster suite after the e2e tests of one shard, on a --real-node cluster
# in that shard's place, and the oldest-version suite (a subset of the e2e
# tests on hack/versions.sh's oldest Kubernetes and KubeRay) after the tests
# of one shard, on a cluster of those releases in its place (it is independent of the other shard's cluster: its
# own ports, state, cgroups, CNI bridge and pod range; the host's iptables get
# only its own KUBE-* chains). hack/e2e-shards.py splits the tests by the
# durations of tests/e2e/durations.txt so the shards take about equal time;
# every e2e test runs exactly once, a new one (meson.build) lands in a shard.
#
#   hack/e2e.sh [--shards N] [--keep-cluster] [--no-real-node] [--no-oldest] [TEST...]
#     --shards N: N shards (default 3, or RAYGATE_E2E_SHARDS). Shard K (1..N)
#       uses RAYGATE_PORT_OFFSET + 50 (K - 1) (offset 0 when unset: shards on
#       0, 50) and the state folder .cluster-e2e-K (RAYGATE_STATE-e2e-K); the
#       shards after the one with the dispatch_* tests one offset more (that
#       one's clusters at + 20 and + 40 need + 50 free; tests/e2e/multi.sh).
#     --keep-cluster: leave the shards' clusters up; --no-real-node: no in-cluster suite;
#     --no-oldest: no oldest-version suite
#     TEST...: only these e2e tests (names of tests/e2e/meson.build)
#
# Logs (in build/meson-logs): the plan e2e-plan.txt (a line per shard: its
# estimated seconds, +incluster, +oldest, its tests), e2e-K.json and testlog-e2e-K.txt
# per shard, incluster.json, oldest.json, e2e-durations.txt (this run's seconds, in the
# format of tests/e2e/durations.txt). The output of the shards is interleaved,
# each line prefixed [e2e-K]. Exits non-zero when a test failed, a shard's
# cluster did not start or a test did not run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"

usage() { sed -n '2,/^# Logs/p' "$0" | sed '$d; s/^# \{0,1\}//' >&$((${1:-2} ? 2 : 1)); exit "${1:-2}"; }

shards="${RAYGATE_E2E_SHARDS:-3}" keep=0 real_node=1 oldest=1 only=()
while (($#)); do
	case "$1" in
	--shards) shards="${2:-}"; shift 2 || usage ;;
	--shards=*) shards="${1#*=}"; shift ;;
	--keep-cluster) keep=1; shift ;;
	--no-real-node) real_node=0; shift ;;
	--no-oldest) oldest=0; shift ;;
	--help | -h) usage 0 ;;
	-*) usage ;;
	*) only+=("$1"); shift ;;
	esac
done
check_shards "$shards"

# Once, before the shards (each runs meson test --no-rebuild): also brings
# meson-info, the list of tests the split reads, up to date.
meson compile -C "$BUILD" >/dev/null || die "meson compile -C $BUILD failed"
# Also the upstream programs: each shard's hack/cluster.sh up would build them into the one cache at once.
with=()
((real_node)) && with=(--with real-node,helm)
bash "$here/build-upstream.sh" "${with[@]}" 2>&1 | sed -u '/: cached$/d; /^build-upstream: all upstream programs present$/d' >&2
if ((oldest)); then
	RAYGATE_K8S_VERSION="$K8S_OLDEST" RAYGATE_KUBERAY_VERSION="$KUBERAY_OLDEST" bash "$here/build-upstream.sh" 2>&1 |
		sed -u '/: cached$/d; /^build-upstream: all upstream programs present$/d' >&2
fi

LOGDIR="$BUILD/meson-logs"
PLAN="$LOGDIR/e2e-plan.txt"
mkdir -p "$LOGDIR"
rm -f "$PLAN" "$LOGDIR"/e2e-*.json "$LOGDIR/incluster.json" "$LOGDIR/oldest.json" "$LOGDIR/e2e.json"
extras=()
((real_node)) && extras+=(--incluster)
((oldest)) && extras+=(--oldest)
python3 "$here/e2e-shards.py" "$BUILD" "$shards" "${extras[@]}" "${only[@]}" >"$PLAN.tmp" || die "no plan for the e2e shards"
mv "$PLAN.tmp" "$PLAN"

# multi_down STATE OFFSET: the many-cluster tests' worker b and manager m of
# the shard (tests/e2e/multi.sh): shared by its dispatch tests, or left by one
# that was killed before its own cleanup.
multi_down() {
	RAYGATE_STATE="$1-b" RAYGATE_PORT_OFFSET=$(($2 + 20)) "$here/cluster.sh" down >/dev/null 2>&1 || true
	RAYGATE_STATE="$1-m" RAYGATE_PORT_OFFSET=$(($2 + 40)) "$here/cluster.sh" down >/dev/null 2>&1 || true
}

# run_shard K OFFSET [+incluster] [+oldest] TEST...: the e2e tests on a
# cluster of the shard's own, then (+incluster) the in-cluster suite on a
# --real-node cluster in its place, then (+oldest) the oldest-version suite on
# a cluster of the oldest releases in its place.
run_shard() {
	local k="$1" off="$2" incl=0 old=0 rc=0 t0=$SECONDS
	shift 2
	[[ "${1:-}" == +incluster ]] && { incl=1; shift; }
	[[ "${1:-}" == +oldest ]] && { old=1; shift; }
	export RAYGATE_PORT_OFFSET="$off" RAYGATE_STATE
	RAYGATE_STATE="$(shard_state "$k")"
	local cluster="$here/cluster.sh"
	"$cluster" down >/dev/null 2>&1 || true # what an earlier run left in this state folder
	multi_down "$RAYGATE_STATE" "$off"
	# The many-cluster tests of the shard share its worker b and manager m (tests/e2e/multi.sh), down at its end.
	export RAYGATE_E2E_MULTI_SHARED=1
	if (($# == 0)); then
		: # only the in-cluster suite (a run of a few TESTs)
	elif "$cluster" up --legacy; then
		# --no-rebuild: the shards share the build folder (built above).
		meson test -C "$BUILD" --no-rebuild --suite e2e --print-errorlogs --logbase "e2e-$k" "$@" || rc=1
		say "e2e shard $k: e2e tests done in $((SECONDS - t0))s"
	else
		say "e2e shard $k: FAILED, the local control plane could not start"
		rc=1
	fi
	if ((incl)); then
		"$cluster" down >/dev/null 2>&1 || true
		if "$cluster" up --real-node; then
			meson test -C "$BUILD" --no-rebuild --suite incluster --print-errorlogs --logbase incluster || rc=1
		else
			say "in-cluster tests: FAILED, the real node could not start (the error above says why)"
			rc=1
		fi
	fi
	if ((old)); then
		"$cluster" down >/dev/null 2>&1 || true
		if "$cluster" up --k8s "$K8S_OLDEST" --kuberay-version "$KUBERAY_OLDEST"; then
			meson test -C "$BUILD" --no-rebuild --suite oldest --print-errorlogs --logbase oldest || rc=1
			say "e2e shard $k: oldest-version suite ($K8S_OLDEST, KubeRay $KUBERAY_OLDEST) done in $((SECONDS - t0))s"
		else
			say "oldest-version tests: FAILED, a cluster of Kubernetes $K8S_OLDEST could not start"
			rc=1
		fi
	fi
	if ((keep)); then
		say "e2e shard $k: cluster kept: RAYGATE_STATE=$RAYGATE_STATE RAYGATE_PORT_OFFSET=$off hack/cluster.sh env"
	else
		"$cluster" down >/dev/null 2>&1 || true
	fi
	multi_down "$RAYGATE_STATE" "$off"
	say "e2e shard $k: done in $((SECONDS - t0))s"
	return "$rc"
}

# Interrupted: no shard goes on, no shard's cluster stays up (but --keep-cluster).
interrupted() {
	say "e2e: interrupted: stopping the shards"
	kill "${pids[@]}" 2>/dev/null || true
	wait || true
	local i
	for ((i = 1; i <= k; i++)); do
		((keep)) || RAYGATE_STATE="$(shard_state "$i")" RAYGATE_PORT_OFFSET="${offs[i - 1]}" "$here/cluster.sh" down >/dev/null 2>&1 || true
		multi_down "$(shard_state "$i")" "${offs[i - 1]}"
	done
	exit 130
}
# The shards' offsets: 50 apart, 100 after the shard with the many-cluster tests.
offs=() ests=() lines=() off="$_po"
while read -r est tests; do
	offs+=("$off") ests+=("$est") lines+=("$tests")
	off=$((off + 50))
	[[ " $tests " != *" dispatch_"* ]] || off=$((off + 50))
done <"$PLAN"
((offs[${#offs[@]} - 1] <= 950)) || die "the shards from RAYGATE_PORT_OFFSET=$_po need offsets up to ${offs[-1]}; the last is 950"
t0=$SECONDS k=0 pids=()
trap interrupted INT TERM
for ((k = 1; k <= ${#offs[@]}; k++)); do
	off="${offs[k - 1]}" tests="${lines[k - 1]}"
	say "e2e shard $k: RAYGATE_PORT_OFFSET=$off, $(shard_state "$k"), ~${ests[k - 1]}s by tests/e2e/durations.txt: $tests"
	# Each line of the shard's output prefixed, as it comes.
	run_shard "$k" "$off" $tests </dev/null > >(sed -u "s/^/[e2e-$k] /") 2>&1 &
	pids+=($!)
done
k=${#offs[@]}
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
sleep 0.2 # the prefixing seds' last lines

say "e2e: $k shards in $((SECONDS - t0))s"
python3 "$here/test-summary.py" --e2e-plan "$PLAN" --durations "$LOGDIR/e2e-durations.txt" >&2 || rc=1
exit $rc
