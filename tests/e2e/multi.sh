# The many-cluster harness of the dispatch tests: a test sources
# this file (it sources lib.sh), calls multi_setup, and has three clusters:
#
#   a  worker: the test's own cluster (RAYGATE_STATE, RAYGATE_PORT_OFFSET N;
#      e2e_setup brings it up as for any test): kwok nodes, KubeRay, raygate
#   b  worker: a cluster like it at N + 20, state RAYGATE_STATE-b (2 nodes of
#      cpu 8, memory 32Gi)
#   m  manager: hack/cluster.sh up --manager at N + 40, state RAYGATE_STATE-m,
#      with the dispatcher (--cluster-name manager), both workers registered
#      (add-worker a, add-worker b)
#
# N is a multiple of 50; hack/e2e.sh leaves N + 50 free after the shard of the
# dispatch_* tests (hack/lib.sh says why). The test's namespace NS exists on
# all three. b and m are taken down when the test ends (a stays: it is the
# shard's); what the test made on a goes with NS and its Queues.
#
# Shared (RAYGATE_E2E_MULTI_SHARED set: hack/e2e.sh sets it, and takes b and m
# down at the shard's start and end): a test that passed leaves b and m up,
# holding nothing of its own (its manager objects deleted, so their copies go,
# NS and its Queues deleted on b and m), and the next dispatch test of the
# shard takes them over when they are healthy and clean (multi_reusable),
# with the dispatcher started again with that test's arguments; else (or
# after a failure) they are brought up afresh as above.
#
#   multi_setup [DISPATCH-ARG...]  the above; DISPATCH-ARGs go to raygate-dispatch
#                     (after the harness's own: --dispatch-timeout 30s --resync 1s)
#                     MULTI_MANAGER_KUBERAY=1: the manager runs KubeRay's operator and
#                     raygate's /dispatch-suspend webhook (up --manager --kuberay);
#                     a shared manager is reused only by tests asking the same
#   multi_dispatch_restart [DISPATCH-ARG...]  raygate-dispatch on m killed
#                     (SIGKILL, as a crash) and started again with multi_setup's
#                     arguments and these; 1 when it did not start
#   on a|b|m ARGS...  kubectl against that cluster
#   mq NAME [a=CPU] [b=CPU] [to=a,b] [parent=Q] [weight=W] [deserved=CPU]
#      [guarantee=CPU] [strategy=S]   a Queue NAME on each worker (capability cpu
#                     CPU there, memory 64Gi; unset: no capability; the other
#                     keys as tree_queue's, the same on both) and on the
#                     manager, annotated raygate.io/dispatch-to TO (default a,b;
#                     to=none: no manager Queue, e.g. for a parent)
#   multi_api a|b     "SERVER TOKEN-FILE CA-FILE" of a worker's apiserver (for the checkers)
#   samp_start / samp_assert [WHAT] / samp_stop   the at-most-once sampler
#                     (dispatch_sampler.py) on both workers, every 0.5 s
#   samp_ever UID     the workers the gang of manager uid UID was ever bound in
_multi_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$_multi_here/lib.sh"

. "$ROOT/hack/multi.sh"
# (multi_cluster, on and multi_state are hack/multi.sh's)
multi_init "$STATE" "$_po" "$STATE-b" $((_po + 20)) "$STATE-m" $((_po + 40))
MULTI_UP=()

MULTI_DISPATCH_ARGS=()

multi_setup() {
	((_po % 50 == 0)) || fail "the many-cluster tests need a RAYGATE_PORT_OFFSET that is a multiple of 50, not $_po"
	# A TERM (meson's timeout) must run the EXIT trap: the clusters b and m go down there.
	trap 'exit 143' TERM INT
	e2e_setup
	# (eval'd by e2e_teardown, whose $rc is then the test's status)
	e2e_on_exit 'multi_teardown "$rc"'
	MULTI_DISPATCH_ARGS=(--dispatch-timeout 30s --resync 1s "$@")
	local t0=$SECONDS w reuse=0
	if [[ -n "${RAYGATE_E2E_MULTI_SHARED:-}" ]] && multi_reusable; then
		reuse=1
	else
		multi_bring_up
		pass "worker b (offset $MULTI_B_OFFSET) and the manager (offset $MULTI_M_OFFSET) up in $((SECONDS - t0))s"
	fi
	for w in a b; do
		multi_register "$w" "$w" || fail "add-worker $w failed"
	done
	if ((reuse)); then
		# Started again after the registrations: it reads the Secrets of this test.
		multi_dispatch_restart || fail "raygate-dispatch did not start again on the manager"
		pass "worker b and the manager of an earlier test reused in $((SECONDS - t0))s (the dispatcher started again)"
	fi
	for w in b m; do
		on "$w" create namespace "$NS" >/dev/null || fail "cannot create namespace $NS on $w"
		on "$w" label namespace "$NS" "e2e.raygate.io/test=$E2E_NAME" >/dev/null
	done
	pass "workers a and b registered on the manager; namespace $NS on all three"
}

# multi_bring_up: b and m afresh (what an earlier run left in their state folders goes first), both at once
multi_bring_up() {
	multi_cluster b down >/dev/null 2>&1 || true
	multi_cluster m down >/dev/null 2>&1 || true
	MULTI_UP=(b m)
	multi_up_start b "$E2E_TMP/up-b.log" --nodes 2 --node-capacity cpu=8,memory=32Gi
	local m_extra=()
	[[ -z "${MULTI_MANAGER_KUBERAY:-}" ]] || m_extra=(--kuberay)
	multi_up_start m "$E2E_TMP/up-m.log" --manager "${m_extra[@]}" --cluster-name manager -- "${MULTI_DISPATCH_ARGS[@]}"
	multi_up_wait b || fail "worker b did not come up"
	multi_up_wait m || fail "the manager did not come up"
	# (status read whole first: grep -q stopping early would fail the pipe under pipefail)
	MULTI_M_STATUS="$(multi_cluster m status 2>/dev/null)" || true
	grep -q "^raygate-dispatch *running" <<<"$MULTI_M_STATUS" ||
		fail "raygate-dispatch does not run on the manager (is build/dispatch/raygate-dispatch built?)"
}

# multi_reusable: b and m were left by a passed test of this shard (the mark),
# run, b has its two Ready nodes, and no pod of an earlier test is left on b
# (waited for: their namespaces are being deleted). Then MULTI_UP=(b m).
multi_reusable() {
	[[ -f "$MULTI_M_STATE/e2e-shared" ]] || return 1
	local kind
	kind="$(cat "$MULTI_M_STATE/e2e-shared")"
	rm -f "$MULTI_M_STATE/e2e-shared" # taken: a failure of this test leaves no mark
	[[ "$kind" == "kuberay=${MULTI_MANAGER_KUBERAY:+1}" ]] || return 1 # a manager with KubeRay, or not, as asked
	multi_cluster b status >/dev/null 2>&1 && multi_cluster m status >/dev/null 2>&1 || return 1
	[[ "$(on b get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" == 2 ]] || return 1
	_no_earlier_pods() { [[ -z "$(on b get pods -A -l ray.io/cluster -o name 2>/dev/null)" ]]; }
	wait_until 60 "no pod of an earlier test left on b" _no_earlier_pods || return 1
	MULTI_UP=(b m)
}

multi_dispatch_restart() {
	multi_cluster m stop raygate-dispatch KILL >/dev/null
	multi_cluster m start-dispatch "${MULTI_DISPATCH_ARGS[@]}" "$@" >/dev/null
}

# multi_teardown RC: b and m down, or (shared, RC 0) left clean for the next test;
# the dispatcher's grant on a deleted either way (the next test registers a again)
multi_teardown() {
	samp_kill
	local rc=0 w
	if [[ -n "${E2E_FAILED:-}" ]]; then
		say "--- the dispatcher's log (last 40 lines):"
		tail -40 "$MULTI_M_STATE/logs/raygate-dispatch.log" 2>/dev/null | cut -c1-400 | sed 's/^/    /' >&2 || true
		for w in m b; do
			say "--- $w: RayClusters and RayJobs in $NS:"
			on "$w" get rayclusters.ray.io,rayjobs.ray.io -n "$NS" -o wide 2>&1 | sed 's/^/    /' >&2 || true
		done
	fi
	[[ -z "${E2E_KEEP:-}" ]] || { say "--- E2E_KEEP: clusters b and m kept (RAYGATE_STATE=$MULTI_B_STATE, $MULTI_M_STATE)"; return 0; }
	if [[ -n "${RAYGATE_E2E_MULTI_SHARED:-}" && "${1:-1}" == 0 && ${#MULTI_UP[@]} -gt 0 ]]; then
		if multi_leave_clean; then
			MULTI_UP=()
		else
			say "--- b and m could not be left clean: taken down"
		fi
	fi
	for w in "${MULTI_UP[@]}"; do multi_cluster "$w" down >/dev/null 2>&1 || rc=1; done
	# The dispatcher's grant on a (the shard's cluster) goes with its manager; raygate-system stays (the gate's).
	on a delete clusterrolebinding,clusterrole raygate-dispatch-read raygate-dispatch-write --ignore-not-found >/dev/null 2>&1 || true
	on a delete serviceaccount -n raygate-system raygate-dispatch --ignore-not-found >/dev/null 2>&1 || true
	[[ -z "$SAMP_DIR" ]] || rm -rf "$SAMP_DIR"
	return $rc
}

# multi_leave_clean: the test's manager objects deleted (the dispatcher deletes
# their copies, then drops its finalizer), NS and the test's Queues deleted on
# b and m, the mark for the next test (multi_reusable) written; 1 when the
# manager objects did not go within 60 s.
multi_leave_clean() {
	local w q st
	st="$(multi_cluster m status 2>/dev/null)" || true # read whole: grep -q stopping early would fail the pipe
	grep -q "^raygate-dispatch *running" <<<"$st" || multi_dispatch_restart || return 1
	on m delete rayclusters.ray.io,rayjobs.ray.io -n "$NS" --all --wait=false >/dev/null 2>&1 || true
	_m_empty() { [[ -z "$(on m get rayclusters.ray.io,rayjobs.ray.io -n "$NS" -o name 2>/dev/null)" ]]; }
	wait_until 60 "the manager's objects of $NS gone (their copies deleted)" _m_empty || return 1
	for w in b m; do
		on "$w" delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
		for q in "${E2E_QUEUES[@]}"; do on "$w" delete queue "$q" --ignore-not-found --wait=false >/dev/null 2>&1 || true; done
	done
	echo "kuberay=${MULTI_MANAGER_KUBERAY:+1}" >"$MULTI_M_STATE/e2e-shared"
}

# mq NAME [a=CPU] [b=CPU] [to=WORKERS|none] [parent=Q] [weight=W] [deserved=CPU] [guarantee=CPU] [strategy=S]:
# the Queue NAME on both workers and (unless to=none) the manager. The webhook refuses a child whose parent (or a
# guarantee beyond the parent's) its watch has not seen yet: each write is tried again for up to 20 s.
mq() {
	local name="$1" a="" b="" to="a,b" parent="" weight=1 deserved="" guarantee="" strategy="" arg w cap yaml
	shift
	for arg; do
		case "$arg" in
		a=* | b=* | to=* | parent=* | weight=* | deserved=* | guarantee=* | strategy=*) printf -v "${arg%%=*}" %s "${arg#*=}" ;;
		*) fail "mq: unknown parameter '$arg'" ;;
		esac
	done
	for w in a b; do
		cap="${!w}"
		yaml="$(queue_yaml "$name" "$weight" "$parent" "${cap:+cpu: \"$cap\", memory: 64Gi}" "$deserved" "$guarantee" "$strategy")"
		wait_until 20 "Queue $name on $w" _mq_apply "$w" "$yaml" || fail "cannot make Queue $name on $w"
	done
	if [[ "$to" != none ]]; then
		on m apply -f - >/dev/null <<-YAML || fail "cannot make Queue $name on the manager"
			apiVersion: scheduling.volcano.sh/v1beta1
			kind: Queue
			metadata: {name: $name, annotations: {raygate.io/dispatch-to: "$to"}}
			spec: {weight: 1}
		YAML
	fi
	# a's Queues go when the test ends (b and the manager go whole).
	[[ " ${E2E_QUEUES[*]} " == *" $name "* ]] || E2E_QUEUES=("$name" "${E2E_QUEUES[@]}")
}
_mq_apply() { on "$1" apply -f - <<<"$2"; }

# multi_api a|b: "SERVER TOKEN-FILE CA-FILE" of the worker's apiserver
multi_api() {
	local st
	st="$(multi_state "$1")"
	echo "https://127.0.0.1:$(grep -o 'server: https://127.0.0.1:[0-9]*' "$st/kubeconfig" | sed 's/.*://') $st/pki/admin.token $st/pki/ca.crt"
}

# mq_cap WORKER NAME CPU: the capability of the Queue NAME on WORKER set to cpu CPU
mq_cap() {
	on "$1" patch queue "$2" --type merge -p "{\"spec\":{\"capability\":{\"cpu\":\"$3\",\"memory\":\"64Gi\"}}}" >/dev/null ||
		fail "cannot set Queue $2's capability on $1"
}

# m_annotation KIND NAME KEY: an annotation of the manager's object ("" when absent)
m_annotation() {
	on m get "$1" -n "$NS" "$2" -o json 2>/dev/null | jq -r --arg k "$3" '.metadata.annotations[$k] // ""'
}

# dispatched_to KIND NAME: the manager object's raygate.io/dispatched-to
dispatched_to() { m_annotation "$1" "$2" raygate.io/dispatched-to; }

# m_uid KIND NAME: the manager object's uid
m_uid() { on m get "$1" -n "$NS" "$2" -o jsonpath='{.metadata.uid}'; }

# copy_origin WORKER KIND NAME: the origin uid on the worker's copy ("" when there is none)
copy_origin() {
	on "$1" get "$2" -n "$NS" "$3" -o json 2>/dev/null | jq -r '.metadata.annotations["raygate.io/dispatch-origin-uid"] // ""'
}

# has_copy WORKER KIND NAME UID: the worker has the copy of the manager object UID
has_copy() { [[ "$(copy_origin "$1" "$2" "$3")" == "$4" ]]; }

# no_copy WORKER KIND NAME: the worker has no object of that name
no_copy() { ! on "$1" get "$2" -n "$NS" "$3" >/dev/null 2>&1; }

# w_bound WORKER CLUSTER: the Ray cluster's pods on WORKER with a node
w_bound() {
	on "$1" get pods -n "$NS" -l "ray.io/cluster=$2" -o json | jq '[.items[] | select(.spec.nodeName != null)] | length'
}

# w_all_bound WORKER CLUSTER N: exactly N pods of the Ray cluster on WORKER, all bound
w_all_bound() {
	[[ "$(on "$1" get pods -n "$NS" -l "ray.io/cluster=$2" -o json |
		jq '"\(.items | length) \([.items[] | select(.spec.nodeName != null)] | length)"' -r)" == "$3 $3" ]]
}

# m_raycluster NAME QUEUE RAYCLUSTER-ARG...: a RayCluster on the manager (lib.sh's raycluster)
m_raycluster() {
	local name="$1" queue="$2"
	shift 2
	raycluster "$name" queue="$queue" "$@" | on m apply -n "$NS" -f - >/dev/null || fail "cannot create RayCluster $name on the manager"
}

# ------------------------------------------------------------- the sampler
SAMP_PID="" SAMP_DIR=""

samp_start() {
	local w st
	SAMP_DIR="$(mktemp -d "${TMPDIR:-/tmp}/raygate-samp.XXXXXX")"
	: >"$SAMP_DIR/violations"
	local args=()
	for w in a b; do
		read -r -a st <<<"$(multi_api "$w")"
		args+=(--worker "$w=${st[0]},${st[1]},${st[2]}")
	done
	python3 "$_multi_here/dispatch_sampler.py" "${args[@]}" --namespace "$NS" \
		--violations "$SAMP_DIR/violations" --status "$SAMP_DIR/status" &
	SAMP_PID=$!
	wait_until 30 "the sampler's first poll" samp_polled_since 0 || fail "the dispatch sampler does not poll"
	say "dispatch sampler running (pid $SAMP_PID) on a and b, namespace $NS"
}

samp_polls() { jq -r '.polls' "$SAMP_DIR/status" 2>/dev/null || echo 0; }
samp_polled_since() { (($(samp_polls) > $1)); }

# samp_ever UID: the workers the gang UID was ever seen bound in, comma-separated, sorted
samp_ever() { jq -r --arg u "$1" '(.ever[$u] // []) | sort | join(",")' "$SAMP_DIR/status"; }

samp_assert() {
	local what="${1:-no gang bound in two clusters at once}" before
	[[ -n "$SAMP_PID" ]] || fail "samp_assert without samp_start"
	[[ ! -s "$SAMP_DIR/violations" ]] ||
		fail "$what: $(wc -l <"$SAMP_DIR/violations") sample(s) with a gang bound in two clusters, the first: $(head -1 "$SAMP_DIR/violations")"
	kill -0 "$SAMP_PID" 2>/dev/null || fail "$what: the sampler is not running"
	before="$(samp_polls)"
	wait_until 30 "another poll of the sampler" samp_polled_since "$before" || fail "$what: the sampler stopped polling"
	[[ ! -s "$SAMP_DIR/violations" ]] || fail "$what: $(head -1 "$SAMP_DIR/violations")"
	pass "$what ($(samp_polls) polls of both workers, $(jq -r .errors "$SAMP_DIR/status") failed)"
}

samp_stop() {
	[[ -n "$SAMP_PID" ]] || return 0
	samp_assert "${1:-}"
	samp_kill
}

samp_kill() {
	if [[ -n "$SAMP_PID" ]]; then
		kill "$SAMP_PID" 2>/dev/null || true
		wait "$SAMP_PID" 2>/dev/null || true
		SAMP_PID=""
	fi
	return 0
}
