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
	inv_kill
	if ((rc != 0)); then
		say "--- $E2E_NAME failed; state of $NS:"
		kc get rayclusters.ray.io,pods -n "$NS" -o wide 2>&1 | sed 's/^/    /' >&2 || true
		kc get events -n "$NS" --sort-by .lastTimestamp 2>&1 | tail -20 | sed 's/^/    /' >&2 || true
	fi
	if [[ -n "$NS" && -z "${E2E_KEEP:-}" ]]; then
		# RayClusters first: a namespace controller that lost discovery (an apiserver restart) may leave them behind.
		kc delete rayclusters.ray.io -n "$NS" --all --wait=false >/dev/null 2>&1 || true
		kc delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
		local q
		for q in "${E2E_QUEUES[@]}"; do kc delete queue "$q" --wait=false >/dev/null 2>&1 || true; done
	fi
	return $rc
}

fail() { say "FAIL: $*"; exit 1; }
pass() { say "ok: $* [${SECONDS}s]"; }

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

# control_plane_settled: after an apiserver restart, kube-controller-manager's
# informers come back with a backoff; the tests that follow need it working. A
# fresh namespace getting its default service account is the sign.
control_plane_settled() {
	local probe="e2e-settle-$RANDOM"
	kc create namespace "$probe" >/dev/null || fail "cannot create namespace $probe"
	probe_sa() { kc get serviceaccount -n "$probe" default; }
	wait_until 180 "kube-controller-manager serving again (namespace $probe's default service account)" probe_sa ||
		{ kc delete namespace "$probe" --wait=false >/dev/null 2>&1; fail "kube-controller-manager did not recover"; }
	kc delete namespace "$probe" --wait=false >/dev/null 2>&1 || true
	pass "kube-controller-manager serves again"
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

# pods_running_count CLUSTER N: exactly N of its pods Running
pods_running_count() { [[ "$(count_pods "$1" Running)" == "$2" ]]; }

# pods_are CLUSTER N PHASE: exactly N pods, all in PHASE
pods_are() {
	[[ "$(count_pods "$1")" == "$2" && "$(count_pods "$1" "$3")" == "$2" ]]
}

# gated_count CLUSTER: pods of the Ray cluster still carrying raygate.io/gang
gated_count() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1" \
		-o jsonpath='{range .items[*]}{.spec.schedulingGates[*].name}{"\n"}{end}' | grep -c 'raygate.io/gang' || true
}

# sample_cluster FILE NEW-NAME QUEUE: a sample RayCluster renamed and put in QUEUE
sample_cluster() {
	sed -e "s/name: test-cluster-0/name: $2/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $3/" "$1"
}

api_up() { kc get --raw /readyz >/dev/null 2>&1; }

# restart_api [EXTRA-ARG...]: restarts kube-apiserver (with its arguments plus
# the extra ones) and waits until it is ready again
restart_api() {
	local t0=$SECONDS
	"$ROOT/hack/cluster.sh" restart kube-apiserver "$@"
	wait_until 120 "kube-apiserver /readyz" api_up || fail "kube-apiserver did not come back"
	pass "kube-apiserver restarted ${*:-with its usual arguments}, ready in $((SECONDS - t0))s"
}

# gate_log_from: the number of the gate log's next line (for tail -n +N)
gate_log_from() { echo $(($(wc -l <"$STATE/logs/raygate-gate.log") + 1)); }

# head_only_cluster NAME QUEUE [CPU]: creates a RayCluster of one head pod
# (CPU, default 1, and 1Gi) and no workers in the test's namespace, in QUEUE
head_only_cluster() {
	kc apply -n "$NS" -f - >/dev/null <<-YAML
		apiVersion: ray.io/v1
		kind: RayCluster
		metadata: {name: $1, labels: {volcano.sh/queue-name: $2}}
		spec:
		  rayVersion: "2.9.0"
		  headGroupSpec:
		    rayStartParams: {}
		    template:
		      spec:
		        containers:
		        - {name: ray-head, image: "rayproject/ray:2.9.0", resources: {requests: {cpu: "${3:-1}", memory: 1Gi}}}
		  workerGroupSpecs: []
	YAML
}

# make_queue NAME CPU MEMORY [DEQUEUE_STRATEGY]: a Queue (fifo or traverse; unset by default)
make_queue() {
	local name="$1" cpu="$2" mem="$3" strategy="${4:-}"
	kc apply -f - >/dev/null <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $name}
		spec:
		  weight: 1
		  capability: {cpu: "$cpu", memory: "$mem"}
		  ${strategy:+dequeueStrategy: $strategy}
	YAML
	E2E_QUEUES+=("$name")
}
E2E_QUEUES=()

# all_or_none_watch CLUSTER N SECONDS: samples the cluster's pods and fails if
# its gates are ever partly removed for longer than 3 s (a half-admitted gang).
all_or_none_watch() {
	local c="$1" n="$2" limit="$3" since=-1 g
	local deadline=$((SECONDS + limit))
	while ((SECONDS < deadline)); do
		g="$(gated_count "$c")"
		if ((g > 0 && g < n)); then
			((since < 0)) && since=$SECONDS
			((SECONDS - since <= 3)) || fail "$c half ungated for over 3 s ($g of $n pods still gated)"
		else
			since=-1
		fi
		[[ "$g" == 0 && "$(count_pods "$c")" == "$n" ]] && return 0
		sleep 0.1
	done
	return 1
}

# head_pod CLUSTER: the name of the Ray cluster's head pod
head_pod() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1,ray.io/node-type=head" -o jsonpath='{.items[0].metadata.name}'
}

# ungated_pods CLUSTER: names of its pods without raygate.io/gang, one per line
ungated_pods() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1" -o json |
		jq -r '.items[] | select([.spec.schedulingGates[]?.name] | index("raygate.io/gang") | not) | .metadata.name'
}

# stays SECONDS DESCRIPTION COMMAND...: COMMAND keeps succeeding for the whole time (polled every 0.5 s).
stays() {
	local limit="$1" what="$2"; shift 2
	local deadline=$((SECONDS + limit))
	while ((SECONDS < deadline)); do
		"$@" >/dev/null 2>&1 || fail "$what (broke within ${limit}s)"
		sleep 0.5
	done
	pass "$what (for ${limit}s)"
}

# pod_events POD: the messages of the GangWaiting Events on the pod, one per line
pod_events() {
	kc get events -n "$NS" --field-selector "involvedObject.name=$1,reason=GangWaiting" -o json | jq -r '.items[].message'
}

# pod_told POD TEXT: a GangWaiting Event on the pod says TEXT
pod_told() { pod_events "$1" | grep -F -- "$2" >/dev/null; }

describe_has() { # pod text
	kc describe pod -n "$NS" "$1" | grep -F -- "$2" >/dev/null
}

. "$_e2e_here/invariants.sh"
