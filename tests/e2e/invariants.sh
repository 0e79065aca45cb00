# The invariant checker of the fault drills (tests/e2e/invariants.py), run in
# the background while a test goes on. Sourced by lib.sh.
#
#   inv_start [ARGS...]  starts it on the test's namespace (ARGS go to invariants.py,
#                        e.g. --grace 8); waits for its first poll
#   inv_assert [WHAT]    fails the test if anything was violated so far, or if the
#                        checker stopped polling; else says how many polls held
#   inv_stop             stops it and asserts one last time
#
# Violations are printed on the test's stderr as they happen ("INVARIANT
# VIOLATED [kind]: ...") and kept in $INV_DIR/violations.
INV_PID=""
INV_DIR=""

inv_start() {
	INV_DIR="$(mktemp -d "${TMPDIR:-/tmp}/raygate-inv.XXXXXX")"
	: >"$INV_DIR/violations"
	python3 "$_e2e_here/invariants.py" --server "https://127.0.0.1:$APISERVER_PORT" \
		--token "$STATE/pki/admin.token" --ca "$STATE/pki/ca.crt" --namespace "$NS" \
		--violations "$INV_DIR/violations" --status "$INV_DIR/status" "$@" &
	INV_PID=$!
	wait_until 30 "the invariant checker's first poll" inv_polled_since 0 || fail "the invariant checker does not poll"
	say "invariant checker running (pid $INV_PID) on namespace $NS"
}

inv_polls() { jq -r '.polls' "$INV_DIR/status" 2>/dev/null || echo 0; }

inv_polled_since() { (($(inv_polls) > $1)); }

inv_assert() {
	local what="${1:-invariants held}" before
	[[ -n "$INV_PID" ]] || fail "inv_assert without inv_start"
	if [[ -s "$INV_DIR/violations" ]]; then
		say "--- invariant violations:"
		sed 's/^/    /' "$INV_DIR/violations" >&2
		fail "$what: $(wc -l <"$INV_DIR/violations") invariant violation(s), the first: $(head -1 "$INV_DIR/violations" | cut -c1-300)"
	fi
	kill -0 "$INV_PID" 2>/dev/null || fail "$what: the invariant checker is not running"
	# It must still be polling: wait for one more poll than now.
	before="$(inv_polls)"
	wait_until 30 "another poll of the invariant checker" inv_polled_since "$before" || fail "$what: the invariant checker stopped polling"
	[[ -s "$INV_DIR/violations" ]] && { sed 's/^/    /' "$INV_DIR/violations" >&2; fail "$what: invariant violated"; }
	pass "$what ($(inv_polls) polls, $(jq -r '.errors' "$INV_DIR/status") failed while the apiserver was away)"
}

inv_stop() {
	[[ -n "$INV_PID" ]] || return 0
	inv_assert "${1:-invariants held throughout}"
	kill "$INV_PID" 2>/dev/null || true
	wait "$INV_PID" 2>/dev/null || true
	INV_PID=""
}

# For e2e_teardown: stop the checker without asserting.
inv_kill() {
	if [[ -n "$INV_PID" ]]; then
		kill "$INV_PID" 2>/dev/null || true
		wait "$INV_PID" 2>/dev/null || true
		INV_PID=""
	fi
	[[ -n "$INV_DIR" && -z "${E2E_KEEP:-}" ]] && rm -rf "$INV_DIR"
	return 0
}
