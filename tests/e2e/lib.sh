# Helpers for the e2e tests: each test is a bash script run by meson (suite
# e2e) against the real local control plane from hack/cluster.sh. A test
# sources this file, calls e2e_setup, and fails (exit non-zero) on the first
# broken assertion, printing what it expected and what it saw.
_e2e_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$_e2e_here/../../hack/lib.sh"
set -euo pipefail

E2E_NAME="$(basename "$0" .sh)"
NS=""

# Starts the cluster if it is not up (idempotent) and creates the test's namespace.
e2e_setup() {
	if ! "$ROOT/hack/cluster.sh" status >/dev/null 2>&1; then
		"$ROOT/hack/cluster.sh" up "$@" || fail "the local control plane did not come up"
	fi
	NS="e2e-${E2E_NAME//_/-}-$RANDOM"
	NS="${NS:0:60}"
	kc create namespace "$NS" >/dev/null
	trap e2e_teardown EXIT
	say "=== $E2E_NAME in namespace $NS"
}

e2e_teardown() {
	local rc=$?
	if ((rc != 0)); then
		say "--- $E2E_NAME failed; state of $NS:"
		kc get rayclusters,pods -n "$NS" -o wide 2>&1 | sed 's/^/    /' >&2 || true
		kc get events -n "$NS" --sort-by .lastTimestamp 2>&1 | tail -20 | sed 's/^/    /' >&2 || true
	fi
	if [[ -n "$NS" && -z "${E2E_KEEP:-}" ]]; then
		kc delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
	fi
	return $rc
}

fail() { say "FAIL: $*"; exit 1; }
pass() { say "ok: $*"; }

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	[[ "$2" == "$3" ]] || fail "$1: expected '$2', got '$3'"
	pass "$1 = '$3'"
}

# eventually SECONDS DESCRIPTION COMMAND...: COMMAND must succeed within the time.
eventually() {
	local limit="$1" what="$2"; shift 2
	wait_until "$limit" "$what" "$@" || fail "$what (not within ${limit}s)"
	pass "$what"
}

# pods of a Ray cluster: name phase node, one per line
ray_pods() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.status.phase} {.spec.nodeName}{"\n"}{end}'
}

count_pods() { # cluster [phase]
	local c="$1" phase="${2:-}"
	if [[ -n "$phase" ]]; then
		ray_pods "$c" | awk -v p="$phase" '$2 == p' | wc -l
	else
		ray_pods "$c" | grep -c . || true
	fi
}

# pods_are CLUSTER N PHASE: exactly N pods, all in PHASE
pods_are() {
	[[ "$(count_pods "$1")" == "$2" && "$(count_pods "$1" "$3")" == "$2" ]]
}
