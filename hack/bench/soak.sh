#!/usr/bin/env bash
# The soak's hour: everything at once on two workers and a manager.
#
#   hack/bench/soak.sh [--minutes N] [--out DIR] [--down]
#   hack/bench.sh --parts soak [--soak-minutes N] [--out DIR]   (runs this)
#   meson test -C build dispatch_soak   (tests/e2e/test_dispatch_soak.sh: RAYGATE_SOAK_MINUTES, default 10)
#
# The clusters are tests/e2e/multi.sh's: worker a at RAYGATE_PORT_OFFSET N (a
# multiple of 50; brought up when it is not), worker b at N + 20, the manager m
# at N + 40 with raygate-dispatch (--dispatch-lease 20s --dispatch-lease-margin
# 10s); N + 50 must be free. b and m go down at the end (in the e2e suite's
# shard: left for the next dispatch test), and a too with --down.
#
# For N minutes (default RAYGATE_SOAK_MINUTES, else 60), from the seed
# RAYGATE_SOAK_SEED (printed; the same seed draws the same numbers: the same
# actions, but for those that pick among what the clusters hold, such as the
# autoscaling cluster to scale), one step at a time (hack/bench/soak_actions.sh):
# - a queue tree on both workers: a parent with a guarantee, a weight and a
#   deserved share over two leaves that deserve half of it each (one with a
#   guarantee of its own), so that one borrowing from the other is reclaimed,
#   and a leaf at the root deserving by its weight; the leaves are
#   dispatching Queues on the manager
#   (raygate.io/dispatch-to "a,b"); random dequeue strategies and preemption
#   policies (raygate.io/preemption);
# - RayClusters of random shapes (a third autoscaling, a third of priority
#   ray-high, a quarter asking raygate.io/topology-required on the nodes' rack
#   label e2e.raygate.io/soak-rack) and RayJobs, a third created on the
#   manager (dispatched), the others directly on a worker (a gang waits on a
#   worker only so: the dispatcher sends one only where it fits), up to 16
#   at once; some deleted;
# - autoscaling scale-ups and scale-downs (on the worker that runs the cluster:
#   what KubeRay's autoscaler there does), priorities: preemption and reclaim;
#   every 40 to 90 s a borrowing episode on a worker (two gangs in one child
#   of the parent, then one in the other: reclaim's terms, which random churn
#   seldom meets);
# - now and then: a worker's gate killed (SIGKILL) and started again; the
#   dispatcher killed and started again; worker a cut off from the manager
#   (its Secret on the manager points at a closed port) for 15 to 75 s, then
#   restored.
# Throughout: invariants.py on each worker (every clause; --grace 30
# --evict-grace 30, a gate's restart included) and dispatch_sampler.py on
# both workers every 0.5 s (a gang bound in two clusters at once). At the end
# the churn stops, the cut is restored, and once both workers are quiet every
# gang that fits must be admitted (invariants.py --settled on each).
#
# The report goes into DIR (default bench/results) as soak-<date>.json and
# .md (hack/bench/soak_report.py): "violations", a list, each with its
# clause, worker and objects; "counts", measured: created (by the harness's
# successful creates), admitted, evicted, preempted, reclaimed (the workers'
# gate metrics raygate_gangs_admitted_total, raygate_gangs_evicted_total,
# raygate_preemptions_total, each gate scraped just before it is killed and
# at the end, summed over its lives), redispatched (the dispatcher's
# raygate_dispatch_actions_total, likewise: "redispatch", a lost worker's
# gang sent elsewhere, and "withdraw", one that waited past --dispatch-timeout
# on its worker), moved (gangs the sampler saw bound in both workers, one
# after the other), gate_restarts and
# dispatcher_restarts (their "started" lines in the logs), partitions (cuts in
# which the manager marked worker a not up). Exit status 1 when there is any
# violation (or the harness itself failed), 0 otherwise.
_soak_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOAK_MINUTES="${RAYGATE_SOAK_MINUTES:-60}" SOAK_OUT="" SOAK_DOWN=0 SOAK_ARGS="$*"
while (($#)); do
	case "$1" in
	--minutes) SOAK_MINUTES="$2"; shift 2 ;;
	--out) SOAK_OUT="$2"; shift 2 ;;
	--down) SOAK_DOWN=1; shift ;;
	*) sed -n '2,/^_soak_here/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
[[ "$SOAK_MINUTES" =~ ^[1-9][0-9]*$ ]] || { echo "--minutes takes a positive number, not '$SOAK_MINUTES'" >&2; exit 2; }
set --
. "$_soak_here/../../tests/e2e/multi.sh"
. "$_soak_here/soak_actions.sh"
SOAK_OUT="$(realpath -m -- "${SOAK_OUT:-$ROOT/bench/results}")"

soak_main() {
	local u
	multi_setup --dispatch-lease 20s --dispatch-lease-margin 10s
	# --down: a too, once e2e_teardown has deleted what the run left on it
	((SOAK_DOWN == 0)) || trap '_soak_exit' EXIT
	SOAK_DIR="$E2E_TMP/soak"
	mkdir -p "$SOAK_DIR" "$SOAK_OUT"
	# (run last registered first: a failed run's report is written while its checkers still run, and they
	# stop before the rack labels go: a pod's rack must not vanish under them)
	e2e_on_exit soak_unrack
	e2e_on_exit soak_checkers_kill
	e2e_on_exit soak_report_once
	u="$(e2e_uid)" # before the seed: names no earlier run of the same seed used
	SEED="${RAYGATE_SOAK_SEED:-$((($(date +%s%N) / 1000) % 32768))}"
	say "soak: seed $SEED for $SOAK_MINUTES min (replay with RAYGATE_SOAK_SEED=$SEED RAYGATE_SOAK_MINUTES=$SOAK_MINUTES)"
	RANDOM=$SEED
	SOAK_T0=$SECONDS SOAK_STARTED="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	soak_world "s$u"
	soak_checkers_start
	soak_churn $((SOAK_MINUTES * 60))
	soak_calm
	soak_settle
	SOAK_ENDED=1
	soak_report_once
	(($(jq '.violations | length' "$SOAK_JSON") == 0)) ||
		fail "$(jq '.violations | length' "$SOAK_JSON") violation(s) (seed $SEED), the first: $(jq -c '.violations[0]' "$SOAK_JSON" | cut -c1-400)"
	pass "the soak held: no violation in $SOAK_MINUTES min (seed $SEED); report $SOAK_JSON"
}

_soak_exit() {
	local rc=$?
	set +e
	(exit $rc) # e2e_teardown reads the run's status from $?
	e2e_teardown
	multi_cluster a down >/dev/null 2>&1
	exit $rc
}

# soak_report_once: the report, once (from the end of the run, or from the exit of a failed one)
SOAK_JSON=""
soak_report_once() {
	[[ -z "$SOAK_JSON" && -n "${SOAK_DIR:-}" ]] || return 0
	local stamp
	stamp="$(date -u +%Y-%m-%d-%H%M)"
	SOAK_JSON="$SOAK_OUT/soak-$stamp.json"
	soak_collect
	python3 "$_soak_here/soak_report.py" --dir "$SOAK_DIR" --json "$SOAK_JSON" --md "$SOAK_OUT/soak-$stamp.md" ||
		fail "the soak's report could not be written"
	say "soak report: $SOAK_JSON and $SOAK_OUT/soak-$stamp.md"
	jq -r '"soak: \(.counts | to_entries | map("\(.key) \(.value | if type == "object" then .total else . end)") | join(", ")); \(.violations | length) violation(s)"' \
		"$SOAK_JSON" >&2
}

# (one line: bash has read it whole before the run, so editing this file meanwhile is harmless)
soak_main; exit
