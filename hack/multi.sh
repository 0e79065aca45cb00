# Three local clusters side by side for dispatch to many clusters
# (docs/dispatch.md): workers a and b and a manager m, each a hack/cluster.sh
# cluster with a state folder and a port offset of its own. Sourced, after
# hack/lib.sh, by hack/demo.sh --multi, hack/bench.sh --parts dispatch and
# tests/e2e/multi.sh.
#
#   multi_init A-STATE A-OFFSET B-STATE B-OFFSET M-STATE M-OFFSET
#   multi_cluster a|b|m COMMAND...   hack/cluster.sh COMMAND for that cluster
#   on a|b|m ARGS...                 kubectl against it
#   multi_state a|b|m                its state folder
#   multi_up_start a|b|m LOG UP-ARG...  hack/cluster.sh up UP-ARGs in the
#                                    background (a manager: UP-ARGs start with
#                                    --manager), its output in LOG
#   multi_up_wait a|b|m              waits for it; 1 (and LOG's tail on stderr)
#                                    when it failed
#   multi_register NAME a|b          registers the worker as NAME on m
#                                    (hack/cluster.sh add-worker)
#   multi_dispatch_pid               raygate-dispatch's pid on m
#
# The offsets: a at N (a multiple of 50), b at N + 20, m at N + 40; hack/lib.sh
# says why those never collide, and that N + 50 must then be free.

MULTI_A_STATE="" MULTI_A_OFFSET="" MULTI_B_STATE="" MULTI_B_OFFSET="" MULTI_M_STATE="" MULTI_M_OFFSET=""
declare -gA MULTI_UP_PID=() MULTI_UP_LOG=()

multi_init() {
	MULTI_A_STATE="$(realpath -m -- "$1")" MULTI_A_OFFSET="$2"
	MULTI_B_STATE="$(realpath -m -- "$3")" MULTI_B_OFFSET="$4"
	MULTI_M_STATE="$(realpath -m -- "$5")" MULTI_M_OFFSET="$6"
}

# _multi_which a|b|m: sets st and po to that cluster's state and offset
_multi_which() {
	case "$1" in
	a) st="$MULTI_A_STATE" po="$MULTI_A_OFFSET" ;;
	b) st="$MULTI_B_STATE" po="$MULTI_B_OFFSET" ;;
	m) st="$MULTI_M_STATE" po="$MULTI_M_OFFSET" ;;
	*) die "no cluster '$1' (a, b or m)" ;;
	esac
	[[ -n "$st" ]] || die "multi_init was not called"
}

multi_state() {
	local st po
	_multi_which "$1"
	echo "$st"
}

multi_cluster() {
	local st po
	_multi_which "$1"
	shift
	RAYGATE_STATE="$st" RAYGATE_PORT_OFFSET="$po" "$ROOT/hack/cluster.sh" "$@"
}

on() {
	local st po
	_multi_which "$1"
	shift
	KUBECONFIG="$st/kubeconfig" KUBECACHEDIR="$st/kube-cache" "$KUBECTL" "$@"
}

multi_up_start() {
	local w="$1" log="$2"
	shift 2
	MULTI_UP_LOG[$w]="$log"
	multi_cluster "$w" up "$@" >"$log" 2>&1 &
	MULTI_UP_PID[$w]=$!
}

multi_up_wait() {
	local w="$1"
	[[ -n "${MULTI_UP_PID[$w]:-}" ]] || die "multi_up_wait $w without multi_up_start"
	if ! wait "${MULTI_UP_PID[$w]}"; then
		tail -20 "${MULTI_UP_LOG[$w]}" >&2
		return 1
	fi
	grep -F "WARNING" "${MULTI_UP_LOG[$w]}" >&2 || true
}

multi_register() {
	multi_cluster m add-worker "$1" "$(multi_state "$2")/kubeconfig"
}

multi_dispatch_pid() {
	cat "$(multi_state m)/pids/raygate-dispatch.pid"
}
