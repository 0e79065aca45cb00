# Helpers for the leader election tests (source after lib.sh): gate controller
# instances started with --leader-elect as components raygate-gate and
# raygate-gate-2, the Lease raygate-system/raygate-gate, and putting the single
# controller without leader election back afterwards.
LEASE_NS=raygate-system

# gate_identity COMPONENT: the identity the instance's latest start runs as (from its log).
gate_identity() {
	grep -o 'leader election: candidate [^ ]*' "$STATE/logs/$1.log" 2>/dev/null | tail -1 | awk '{print $4}'
}

lease_holder() { kc get lease -n "$LEASE_NS" raygate-gate -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
holder_is() { [[ "$(lease_holder)" == "$1" ]]; }

# start_candidate COMPONENT [ARGS...]: starts an instance with --leader-elect
# and prints its identity once it is a candidate.
start_candidate() {
	local c="$1"; shift
	local before
	before="$(gate_identity "$c")"
	if [[ "$c" == raygate-gate ]]; then
		"$ROOT/hack/cluster.sh" start-gate --leader-elect "$@" >&2
	else
		"$ROOT/hack/cluster.sh" start-gate --name "$c" --leader-elect "$@" >&2
	fi
	new_identity() { local id; id="$(gate_identity "$c")"; [[ -n "$id" && "$id" != "$before" ]]; }
	wait_until 20 "$c is a candidate" new_identity || fail "$c did not start leader election"
	gate_identity "$c"
}

# log_has COMPONENT TEXT: the instance's log holds TEXT (fixed string).
log_has() { grep -qF -- "$2" "$STATE/logs/$1.log"; }


# Stops every instance and starts the default one (no leader election) again.
restore_gates() {
	"$ROOT/hack/cluster.sh" stop raygate-gate-2 >/dev/null 2>&1 || true
	"$ROOT/hack/cluster.sh" stop raygate-gate >/dev/null 2>&1 || true
	kc delete lease -n "$LEASE_NS" raygate-gate --ignore-not-found >/dev/null 2>&1 || true
	"$ROOT/hack/cluster.sh" start-gate >/dev/null 2>&1 || true
}

# Stops the default instance and removes any Lease a previous run left, so the
# first candidate does not wait out a dead holder.
prepare_gates() {
	"$ROOT/hack/cluster.sh" stop raygate-gate-2 >/dev/null 2>&1 || true
	"$ROOT/hack/cluster.sh" stop raygate-gate
	kc delete lease -n "$LEASE_NS" raygate-gate --ignore-not-found >/dev/null
}
