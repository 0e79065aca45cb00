# Helpers for the e2e tests: each test is a bash script run by meson (suite
# e2e) against the real local control plane from hack/cluster.sh. A test
# sources this file, calls e2e_setup, and fails (exit non-zero) on the first
# broken assertion, printing what it expected and what it saw.
_e2e_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$_e2e_here/../../hack/lib.sh"
set -euo pipefail

E2E_NAME="$(basename "$0" .sh)"
NS=""

# e2e_uid: 8 random hex digits, for names no earlier test or run used
e2e_uid() { printf '%04x%04x' $RANDOM $RANDOM; }

# Starts the cluster if it is not up (idempotent), puts back what an earlier
# test may have left changed (e2e_baseline) and creates the test's namespace.
e2e_setup() {
	if ! "$ROOT/hack/cluster.sh" status >/dev/null 2>&1; then
		"$ROOT/hack/cluster.sh" up --legacy "$@" || fail "the local control plane did not come up"
	fi
	e2e_baseline
	NS="e2e-${E2E_NAME//_/-}-$(e2e_uid)"
	NS="${NS:0:60}"
	kc create -f - >/dev/null <<-YAML
		apiVersion: v1
		kind: Namespace
		metadata: {name: $NS, labels: {e2e.raygate.io/test: $E2E_NAME}}
	YAML
	E2E_TMP="$(mktemp -d "${TMPDIR:-/tmp}/raygate-e2e.XXXXXX")"
	E2E_GATE_FROM="$(gate_log_from 2>/dev/null || echo 1)"
	trap e2e_teardown EXIT
	say "=== $E2E_NAME in namespace $NS$(e2e_held || echo " (--hold-gangs=$(hold_mode))")"
	e2e_hold_mode
}

# e2e_watch FILE KIND [ARG...]: `kubectl get KIND ARG... -w -o json` in the
# test's namespace, written to FILE in the background until the test ends
# (every version of the objects, to check afterwards what they went through).
# E2E_WATCH_PID: its process, to stop it earlier.
e2e_watch() {
	local out="$1"
	shift
	kc get -n "$NS" "$@" -w -o json >"$out" 2>/dev/null &
	E2E_WATCH_PID=$!
	e2e_on_exit "kill $E2E_WATCH_PID 2>/dev/null"
}

# e2e_baseline: what an earlier test changed and did not put back (its own
# cleanup did not run: a timeout killed it) is put back, so that no test
# depends on the one before: kube-apiserver and the gate controller run with
# the arguments they were first started with, no further gate instance runs,
# no node a test added is left and none is cordoned, the Volcano CRDs are
# installed, and no cluster-scoped object a test made (labelled
# e2e.raygate.io/added: Queues, PersistentVolumes, PriorityClasses,
# ClusterRoles and their bindings, webhook configurations) nor a test's
# namespace (labelled e2e.raygate.io/test; its pods would hold node room) is
# left. Tests run one at a time: whatever is left is an earlier test's.
e2e_baseline() {
	local c pid
	for c in kube-apiserver raygate-gate; do
		pid="$(cat "$STATE/pids/$c.pid" 2>/dev/null)" || continue
		[[ -f "$STATE/pids/$c.args" ]] || continue
		# (read through cat: /proc files show size 0, and cmp would call them different without reading)
		! cmp -s <(cat "/proc/$pid/cmdline" 2>/dev/null) "$STATE/pids/$c.args" || continue
		say "e2e: $c runs with other arguments than it was started with (left so by an earlier test): restarting it"
		if [[ $c == kube-apiserver ]]; then
			restart_api
			control_plane_settled
		else
			"$ROOT/hack/cluster.sh" stop raygate-gate
			"$ROOT/hack/cluster.sh" start-gate >/dev/null
		fi
	done
	for c in $(grep -x 'raygate-gate-.*' "$STATE/components" 2>/dev/null); do
		[[ -f "$STATE/pids/$c.pid" ]] && { say "e2e: stopping $c (left by an earlier test)"; "$ROOT/hack/cluster.sh" stop "$c"; }
	done
	# Nodes the tests add carry this label (cluster.sh add-node --label).
	kc delete nodes -l e2e.raygate.io/added --ignore-not-found >/dev/null
	for c in $(kc get nodes -o jsonpath='{range .items[?(@.spec.unschedulable)]}{.metadata.name}{"\n"}{end}'); do
		say "e2e: node $c is cordoned (left so by an earlier test): uncordoning it"
		kc uncordon "$c" >/dev/null
	done
	if ! kc get crd podgroups.scheduling.volcano.sh queues.scheduling.volcano.sh >/dev/null 2>&1; then
		say "e2e: a Volcano CRD is missing (removed by an earlier test): installing them"
		kc apply --server-side --force-conflicts -f "$ROOT/manifests/crds/" >/dev/null
		_established() { kc wait --for condition=Established --timeout 5s crd/podgroups.scheduling.volcano.sh crd/queues.scheduling.volcano.sh; }
		wait_until 60 "Volcano CRDs established" _established || fail "the Volcano CRDs were not established"
	fi
	local left
	left="$(kc get queues.scheduling.volcano.sh,pv,priorityclasses,clusterroles,clusterrolebindings,mutatingwebhookconfigurations \
		-l e2e.raygate.io/added -o name)"
	if [[ -n "$left" ]]; then
		say "e2e: deleting what earlier tests left: $(echo $left)"
		# Twice: a Queue's validation may deny deleting a parent before its children are gone.
		kc delete $left --ignore-not-found --wait=false >/dev/null 2>&1 ||
			kc delete $left --ignore-not-found --wait=false >/dev/null 2>&1 ||
			say "e2e: some could not be deleted (yet): $(echo $left)"
	fi
	# The devices of dra_nodes and the DeviceClasses of dra_class, where DRA is served;
	# a slice also goes with its node (owner).
	kc delete resourceslices,deviceclasses -l e2e.raygate.io/added --ignore-not-found --wait=false >/dev/null 2>&1 || true
	# The HyperNodes of racks_up, when Volcano's topology CRD is installed.
	kc delete hypernodes.topology.volcano.sh -l e2e.raygate.io/added --ignore-not-found --wait=false >/dev/null 2>&1 || true
	if [[ -z "${E2E_KEEP:-}" ]]; then
		for c in $(kc get namespaces -l e2e.raygate.io/test -o jsonpath='{range .items[?(@.status.phase=="Active")]}{.metadata.name}{"\n"}{end}'); do
			say "e2e: deleting namespace $c (left by an earlier test)"
			kc delete rayclusters.ray.io -n "$c" --all --wait=false >/dev/null 2>&1 || true
			kc delete namespace "$c" --wait=false >/dev/null
		done
	fi
	return 0
}

# e2e_on_exit COMMAND: COMMAND (a string, eval'd) runs when the test ends,
# after the report of a failure and before the namespace goes; the last one
# registered first. (A test's own EXIT trap would hide the test's status
# from e2e_teardown.)
E2E_ON_EXIT=()
e2e_on_exit() { E2E_ON_EXIT=("$1" "${E2E_ON_EXIT[@]}"); }

e2e_teardown() {
	local rc=$? cmd
	inv_kill
	if ((rc != 0 && rc != 77)); then
		say "--- $E2E_NAME failed; state of $NS:"
		kc get rayclusters.ray.io,pods -n "$NS" -o wide 2>&1 | sed 's/^/    /' >&2 || true
		kc get events -n "$NS" --sort-by .lastTimestamp 2>&1 | tail -20 | sed 's/^/    /' >&2 || true
		# What the gate controller said meanwhile (a test may restart it: its log is appended to)
		say "--- the gate controller's log since the test began (info and above, last 40 lines):"
		tail -n "+${E2E_GATE_FROM:-1}" "$STATE/logs/raygate-gate.log" 2>/dev/null | grep -v '"level":"debug"' | tail -40 |
			cut -c1-400 | sed 's/^/    /' >&2 || true
	fi
	for cmd in "${E2E_ON_EXIT[@]}"; do eval "$cmd" || true; done
	if [[ -n "${E2E_TMP:-}" ]]; then
		if ((rc == 0 || rc == 77)) && [[ -z "${E2E_KEEP:-}" ]]; then rm -rf "$E2E_TMP"; else say "--- $E2E_NAME's scratch files kept in $E2E_TMP"; fi
	fi
	# Said again last: a log cut to its tail (CI's) still shows why the test failed.
	((rc == 0 || rc == 77)) || say "--- $E2E_NAME failed: ${E2E_FAILED:-exit status $rc}"
	if [[ -n "$NS" && -z "${E2E_KEEP:-}" ]]; then
		# RayClusters first: a namespace controller that lost discovery (an apiserver restart) may leave them behind.
		kc delete rayclusters.ray.io -n "$NS" --all --wait=false >/dev/null 2>&1 || true
		kc delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
		e2e_delete_queues "${E2E_QUEUES[@]}"
	fi
	return $rc
}

# e2e_delete_queues QUEUE...: deletes the Queues, the last first (children
# before their parents). The webhook refuses to delete a queue with children or
# with gangs by its status, which the gate controller clears once the gangs'
# pods are gone: what is refused is tried again, for up to 30 s.
e2e_delete_queues() {
	local left=() again q i deadline=$((SECONDS + 30))
	for ((i = $# - 1; i >= 0; i--)); do left+=("${@:i+1:1}"); done
	for ((i = 0; ${#left[@]} > 0 && SECONDS < deadline; i++)); do
		((i == 0)) || sleep 0.5
		again=()
		for q in "${left[@]}"; do
			kc delete queue "$q" --ignore-not-found --wait=false >/dev/null 2>&1 || again+=("$q")
		done
		left=(${again[@]+"${again[@]}"})
	done
	((${#left[@]} == 0)) || say "e2e: Queues not deleted (the next test's baseline tries again): ${left[*]}"
}

fail() { E2E_FAILED="$*"; say "FAIL: $*"; exit 1; }
# skip WHY: the test does not apply to this cluster (exit 77: meson counts it skipped, not passed or failed)
skip() { say "SKIP: $E2E_NAME: $*"; exit 77; }
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
# and the KubeRay operator's informers come back with a backoff; the tests
# that follow need them working. A fresh namespace getting its default service
# account is the sign for the first, kuberay_caught_up for the second.
control_plane_settled() {
	local probe="e2e-settle-$(e2e_uid)"
	kc create namespace "$probe" >/dev/null || fail "cannot create namespace $probe"
	probe_sa() { kc get serviceaccount -n "$probe" default; }
	wait_until 180 "kube-controller-manager serving again (namespace $probe's default service account)" probe_sa ||
		{ kc delete namespace "$probe" --wait=false >/dev/null 2>&1; fail "kube-controller-manager did not recover"; }
	pass "kube-controller-manager serves again"
	kuberay_caught_up "$probe"
	kc delete namespace "$probe" --wait=false >/dev/null 2>&1 || true
}

# kuberay_caught_up NAMESPACE: waits until the KubeRay operator sees the pods
# created now. After an apiserver restart its informers come back with a
# backoff (seen: 40 s), and meanwhile it acts on its old view: it has created
# a RayCluster's pods a second time, and KubeRay v1.5.1 never deletes an extra
# head pod ("Please delete extra head pods"): that cluster stays with two.
# The probe is a RayCluster of one small head pod in no queue (not gated), in
# NAMESPACE: KubeRay has seen its pod once it reports it running and ready
# (condition HeadPodReady). Its informer delivers events in order, so it has
# then seen every pod created before that one. A second head it made for the
# probe meanwhile is deleted, as KubeRay asks.
kuberay_caught_up() {
	local ns="$1" probe="kuberay-probe-$(e2e_uid)" t0=$SECONDS
	raycluster "$probe" head='cpu: 10m, memory: 16Mi' | kc apply -n "$ns" -f - >/dev/null
	_probe_seen() {
		local heads
		heads="$(kc get pods -n "$ns" -l "ray.io/cluster=$probe,ray.io/node-type=head" --sort-by .metadata.creationTimestamp -o name)"
		if (($(grep -c . <<<"$heads") > 1)); then
			kc delete -n "$ns" $(tail -n +2 <<<"$heads") --wait=false >/dev/null 2>&1
			return 1
		fi
		kc get rayclusters.ray.io -n "$ns" "$probe" -o json |
			jq -e '[.status.conditions[]? | select(.type == "HeadPodReady" and .status == "True")] | length == 1' >/dev/null
	}
	wait_until 180 "the KubeRay operator reports its probe $ns/$probe's head pod ready" _probe_seen ||
		fail "the KubeRay operator did not catch up (probe $ns/$probe)"
	kc delete rayclusters.ray.io -n "$ns" "$probe" --wait=false >/dev/null
	pass "the KubeRay operator sees pods created now (${ns}/$probe, $((SECONDS - t0))s)"
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
	raycluster "$1" queue="$2" cpu="${3:-1}" | kc apply -n "$NS" -f - >/dev/null
}

# make_queue NAME CPU MEMORY [DEQUEUE_STRATEGY]: a Queue (fifo or traverse; unset by default)
make_queue() { tree_queue "$1" cpu="$2" memory="$3" ${4:+strategy=$4}; }

# tree_queue NAME [KEY=VALUE...]: creates (or updates) a Queue (the tree of docs/queues.md).
# Keys, each unset by default:
#   parent=QUEUE       spec.parent
#   cpu=C memory=M     spec.capability (cpu, memory or both)
#   deserved=C         spec.deserved's cpu
#   guarantee=C        spec.guarantee.resource's cpu
#   weight=W           spec.weight (default 1)
#   strategy=S         spec.dequeueStrategy (fifo or traverse)
# Queues are deleted when the test ends, the last made first (children before their parents).
# Fails (kubectl's status) when the Queue is refused.
tree_queue() {
	local name="$1" parent="" cpu="" memory="" deserved="" guarantee="" weight=1 strategy="" arg cap=()
	shift
	for arg; do
		case "$arg" in
		parent=* | cpu=* | memory=* | deserved=* | guarantee=* | weight=* | strategy=*) printf -v "${arg%%=*}" %s "${arg#*=}" ;;
		*) fail "tree_queue: unknown parameter '$arg'" ;;
		esac
	done
	[[ -z "$cpu" ]] || cap+=("cpu: \"$cpu\"")
	[[ -z "$memory" ]] || cap+=("memory: \"$memory\"")
	queue_yaml "$name" "$weight" "$parent" "$(IFS=,; echo "${cap[*]}")" "$deserved" "$guarantee" "$strategy" | kc apply -f - >/dev/null ||
		return
	[[ " ${E2E_QUEUES[*]} " == *" $name "* ]] || E2E_QUEUES=("$name" "${E2E_QUEUES[@]}")
}

# queue_yaml NAME WEIGHT PARENT CAPABILITY DESERVED-CPU GUARANTEE-CPU STRATEGY: a test's Queue as YAML on stdout
# (CAPABILITY: the inside of spec.capability's braces, e.g. 'cpu: "4", memory: 64Gi'; empty values leave their
# field out), labelled as one the tests added.
queue_yaml() {
	cat <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $1, labels: {e2e.raygate.io/added: "true"}}
		spec:
		  weight: $2
		  ${3:+parent: $3}
		  ${4:+capability: {$4\}}
		  ${5:+deserved: {cpu: \"$5\"\}}
		  ${6:+guarantee: {resource: {cpu: \"$6\"\}\}}
		  ${7:+dequeueStrategy: $7}
	YAML
}
E2E_QUEUES=()

# queue_deserved NAME CPU [MEMORY]: sets the Queue's spec.deserved (cpu only without MEMORY)
queue_deserved() {
	kc patch queue "$1" --type merge -p "{\"spec\":{\"deserved\":{\"cpu\":\"$2\"${3:+,\"memory\":\"$3\"}}}}" >/dev/null
}

# live_gates CLUSTER: "LIVE GATED" of the Ray cluster's pods that are not
# being deleted (the gate controller's gang is its live pods), in one read
live_gates() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1" -o json |
		jq -r '[.items[] | select(.metadata.deletionTimestamp == null)] |
			"\(length) \([.[] | select([.spec.schedulingGates[]?.name] | index("raygate.io/gang"))] | length)"'
}

# now_ms: wall-clock milliseconds
now_ms() { local t="${EPOCHREALTIME/[.,]/}"; echo $((10#$t / 1000)); }

# all_or_none_watch CLUSTER N SECONDS: waits up to SECONDS for the cluster's N
# live pods, all ungated, and fails if it is ever partly released for longer
# than E2E_HALF_MS (3000) ms: some of its live pods ungated but fewer than N.
# Pods beyond N that stay gated are not a half-released gang: autoscaled pods
# wait for room, and KubeRay has been seen creating a cluster's pods twice
# after an apiserver restart and deleting the extra ones later; the final
# check (exactly N live pods) waits for those.
all_or_none_watch() {
	local c="$1" n="$2" limit="$3" since=-1 t live gated ungated
	local deadline=$((SECONDS + limit))
	while ((SECONDS < deadline)); do
		read -r live gated < <(live_gates "$c") || { live=0 gated=0; }
		ungated=$((live - gated)) t="$(now_ms)"
		if ((ungated > 0 && ungated < n)); then
			((since < 0)) && since=$t
			((t - since <= ${E2E_HALF_MS:-3000})) ||
				fail "$c half ungated for $((t - since)) ms ($ungated of $n pods ungated; $live live pods, $gated gated)"
		else
			since=-1
		fi
		((gated == 0 && live == n)) && return 0
		sleep 0.1 # polling interval
	done
	say "$c: $live live pods, $gated gated after ${limit}s (want $n, none gated)"
	return 1
}

# created_before_now KIND NAME...: waits until the clock is past the second
# in which each of the objects (in the test's namespace) was created:
# creationTimestamp has 1 s resolution, and what is created after this is
# then strictly "created later".
created_before_now() {
	local kind="$1" n t latest=0
	shift
	for n in "$@"; do
		t="$(kc get "$kind" -n "$NS" "$n" -o jsonpath='{.metadata.creationTimestamp}')"
		t="$(date -d "$t" +%s)"
		((t > latest)) && latest=$t
	done
	_clock_past() { (($(date +%s) > $1)); }
	wait_until 10 "the clock past second $latest" _clock_past "$latest" || fail "the clock did not pass $latest"
}

# gate_metric SERIES: the value of a series of the gate controller's /metrics
# (exact text before the value, e.g. 'raygate_leader' or
# 'raygate_gang_ungate_spread_seconds_bucket{le="1"}'), 0 when absent
gate_metric() {
	curl -sf --max-time 5 "http://127.0.0.1:$GATE_METRICS_PORT/metrics" |
		awk -v s="$1" '$1 == s {v = $2} END {print v == "" ? 0 : v}'
}

# gate_metrics SERIES...: their values from one scrape, on one line (0 when
# absent): series that must agree (a histogram's count and a bucket) cannot
# be read from two scrapes, an observation may land between them
gate_metrics() {
	curl -sf --max-time 5 "http://127.0.0.1:$GATE_METRICS_PORT/metrics" |
		awk 'BEGIN {for (i = 1; i < ARGC; i++) {want[ARGV[i]] = i; v[i] = 0}; n = ARGC; ARGC = 1}
			$1 in want {v[want[$1]] = $2}
			END {for (i = 1; i < n; i++) printf "%s%s", v[i], (i < n - 1 ? " " : "\n")}' "$@"
}

# head_pod CLUSTER: the name of the Ray cluster's head pod
head_pod() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1,ray.io/node-type=head" -o jsonpath='{.items[0].metadata.name}'
}

# pod_copy POD NAME: POD's JSON (in the test's namespace) as a new pod NAME: labels, annotations and the controller's
# ownerReference kept; no node, priority, gates nor service account token volume (a second head as KubeRay could
# make from a stale view: gate_extra_head, born_ungated)
pod_copy() {
	kc get pod -n "$NS" "$1" -o json |
		jq --arg name "$2" '{apiVersion, kind,
			metadata: {name: $name, namespace: .metadata.namespace, labels: .metadata.labels,
				annotations: (.metadata.annotations // {}), ownerReferences: .metadata.ownerReferences},
			spec: (.spec | del(.nodeName, .priority, .schedulingGates)
				| .volumes |= ((. // []) | map(select(.name | startswith("kube-api-access-") | not)))
				| .containers |= map(.volumeMounts |= ((. // []) | map(select(.name | startswith("kube-api-access-") | not)))))}'
}
# ungated_pods CLUSTER: names of its pods without raygate.io/gang, one per line
ungated_pods() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1" -o json |
		jq -r '.items[] | select([.spec.schedulingGates[]?.name] | index("raygate.io/gang") | not) | .metadata.name'
}

# stays SECONDS DESCRIPTION COMMAND...: COMMAND keeps succeeding for the
# whole time (polled every 0.5 s, and once more at the end). For what must
# not happen: a slow machine can only make it see less, never fail wrongly.
stays() {
	local limit="$1" what="$2"
	shift 2
	local deadline=$(($(now_ms) + limit * 1000))
	while :; do
		"$@" >/dev/null 2>&1 || fail "$what (broke within ${limit}s)"
		(($(now_ms) < deadline)) || break
		sleep 0.5 # polling interval
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

# raycluster NAME [KEY=VALUE...]: a RayCluster's YAML on stdout (for kc apply
# -f -). Metadata keys (the rest are raycluster_spec's):
#   queue=QUEUE        label volcano.sh/queue-name (none: not raygate's)
#   priority=CLASS     label ray.io/priority-class-name
#   labels=ENTRIES     more labels, as YAML flow mapping entries ('a: "1", b: x')
#   annotations=ENTRIES  annotations, the same way
raycluster() {
	local name="$1" queue="" priority="" annotations="" more="" arg spec=() labels body
	shift
	for arg; do
		case "$arg" in
		queue=* | priority=* | annotations=*) printf -v "${arg%%=*}" %s "${arg#*=}" ;;
		labels=*) more="${arg#labels=}" ;;
		*) spec+=("$arg") ;;
		esac
	done
	body="$(raycluster_spec "${spec[@]}")" || return 1 # (a parameter it refuses: nothing written)
	labels="${queue:+volcano.sh/queue-name: $queue}"
	labels="$labels${priority:+${labels:+, }ray.io/priority-class-name: $priority}"
	labels="$labels${more:+${labels:+, }$more}"
	printf 'apiVersion: ray.io/v1\nkind: RayCluster\n'
	echo "metadata: {name: $name${labels:+, labels: {$labels\}}${annotations:+, annotations: {$annotations\}}}"
	echo 'spec:'
	sed 's/^/  /' <<<"$body"
}

# raycluster_spec [KEY=VALUE...]: a RayCluster's spec as YAML on stdout (a
# RayService's rayClusterConfig, indented by the caller). Keys:
#   version=V          rayVersion and the images' tag (default 2.9.0)
#   cpu=C memory=M     the head's requests (default 1 and 1Gi)
#   head=REQUESTS      the head's requests as YAML flow mapping entries, written
#                      as given ('cpu: "0.5", memory: 1.5Gi'); instead of cpu=, memory=
#   limits=1           the head's limits equal to its requests
#   group=NAME:REPLICAS:MIN:MAX[:REQUESTS]  a worker group (repeatable); its
#                      containers' requests as head= (default cpu 1, memory
#                      1Gi; an empty REQUESTS: no resources)
#   workers=N          group=worker:N:N:N
#   claim=CLAIM        the workers mount the PersistentVolumeClaim CLAIM at /data
#   autoscaling=1      in-tree autoscaling, its sidecar at cpu 100m, memory 128Mi
#   tolerations=LIST   every pod's tolerations, a YAML flow sequence ('[{key: k, operator: Exists}]')
#   wlimits=1          the workers' limits equal to their requests (needed for nvidia.com/gpu)
#   hosts=N            every worker group's numOfHosts (a multi-host group: REPLICAS sets of N pods)
#   wannotations=ENTRIES  the worker groups' template annotations (YAML flow mapping entries)
# No group: workerGroupSpecs [].
raycluster_spec() {
	local version=2.9.0 cpu=1 memory=1Gi head="" limits="" claim="" autoscaling="" tolerations="" hosts="" wannotations="" wlimits=""
	local arg groups=() g gname r min max req
	for arg; do
		case "$arg" in
		version=* | cpu=* | memory=* | head=* | limits=* | claim=* | autoscaling=* | tolerations=* | hosts=* | wannotations=* | wlimits=*)
			printf -v "${arg%%=*}" %s "${arg#*=}" ;;
		group=*) groups+=("${arg#group=}") ;;
		workers=*) groups+=("worker:${arg#workers=}:${arg#workers=}:${arg#workers=}") ;;
		*) fail "raycluster_spec: unknown parameter '$arg'" ;;
		esac
	done
	head="${head:-cpu: \"$cpu\", memory: $memory}"
	echo "rayVersion: \"$version\""
	if [[ -n "$autoscaling" ]]; then
		echo 'enableInTreeAutoscaling: true'
		echo 'autoscalerOptions:'
		echo '  resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 100m, memory: 128Mi}}'
	fi
	cat <<-YAML
		headGroupSpec:
		  rayStartParams: {}
		  template:
		    spec:
		      containers:
		      - {name: ray-head, image: "rayproject/ray:$version", resources: {requests: {$head}${limits:+, limits: {$head\}}}}
	YAML
	[[ -z "$tolerations" ]] || echo "      tolerations: $tolerations"
	((${#groups[@]})) || { echo 'workerGroupSpecs: []'; return 0; }
	echo 'workerGroupSpecs:'
	for g in "${groups[@]}"; do
		IFS=: read -r gname r min max req <<<"$g"
		[[ "$g" == *:*:*:*:* ]] || req='cpu: "1", memory: 1Gi'
		cat <<-YAML
			- groupName: $gname
			  replicas: $r
			  minReplicas: $min
			  maxReplicas: $max${hosts:+
			  numOfHosts: $hosts}
			  rayStartParams: {}
			  template:${wannotations:+
			    metadata: {annotations: {$wannotations\}\}}
			    spec:
			      containers:
			      - {name: ray-worker, image: "rayproject/ray:$version"${req:+, resources: {requests: {$req\}${wlimits:+, limits: {$req\}}\}}${claim:+, volumeMounts: [{name: data, mountPath: /data\}]}}
		YAML
		[[ -z "$claim" ]] || echo "      volumes: [{name: data, persistentVolumeClaim: {claimName: $claim}}]"
		[[ -z "$tolerations" ]] || echo "      tolerations: $tolerations"
	done
}

# is COMMAND... EXPECTED: COMMAND prints EXPECTED (for eventually and stays)
is() { [[ "$("${@:1:$#-1}")" == "${!#}" ]]; }

# has_pods CLUSTER N: the Ray cluster has exactly N pods
has_pods() { [[ "$(count_pods "$1")" == "$2" ]]; }

# all_gated CLUSTER N: exactly N pods, all gated
all_gated() { [[ "$(count_pods "$1")" == "$2" && "$(gated_count "$1")" == "$2" ]]; }


# gone KIND NAME: no such object in the test's namespace
gone() { ! kc get -n "$NS" "$1" "$2" >/dev/null 2>&1; }

# rc_annotation CLUSTER KEY: an annotation of the RayCluster ("" when absent)
rc_annotation() {
	kc get rayclusters.ray.io -n "$NS" "$1" -o json | jq -r --arg k "$2" '.metadata.annotations[$k] // ""'
}

# admitted CLUSTER: the RayCluster carries raygate.io/admitted-at
admitted() { [[ -n "$(rc_annotation "$1" raygate.io/admitted-at)" ]]; }

# bound_count CLUSTER: its pods with a node
bound_count() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1" -o json | jq '[.items[] | select(.spec.nodeName != null)] | length'
}

# metric_value NAME{LABELS}: a sample of the gate's /metrics ("" when absent)
metric_value() {
	curl -sf --max-time 5 "http://127.0.0.1:$GATE_METRICS_PORT/metrics" | awk -v s="$1" '$1 == s {print $2}'
}

# cluster_of NAME [CRD]: the RayClusters KubeRay made for the RayJob (or the
# CRD's object, e.g. RayService) NAME, by name; empty until then
cluster_of() {
	kc get rayclusters.ray.io -n "$NS" -l "ray.io/originated-from-cr-name=$1,ray.io/originated-from-crd=${2:-RayJob}" \
		-o jsonpath='{.items[*].metadata.name}'
}
has_cluster() { [[ -n "$(cluster_of "$@")" ]]; }

# sample_job NAME QUEUE: samples/rayjob-sample.yaml renamed and put in QUEUE, applied
sample_job() {
	sed -e "s/name: rayjob-sample/name: $1/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $2/" \
		"$ROOT/samples/rayjob-sample.yaml" | kc apply -n "$NS" -f - >/dev/null
}

# submitter_bound JOB: a submitter pod of the RayJob (K8sJobMode) is bound to a node
submitter_bound() {
	kc get pods -n "$NS" -l "batch.kubernetes.io/job-name=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -q .
}

# job_follows JOB CLUSTER GONE-JOB: the RayJob GONE-JOB is deleted; then JOB's
# cluster CLUSTER (3 pods) is admitted whole in its room, and JOB's submitter bound
job_follows() {
	kc delete rayjob -n "$NS" "$3" --wait=false >/dev/null
	all_or_none_watch "$2" 3 120 || fail "$1's cluster $2 was not admitted after $3 was deleted"
	pass "$1's cluster $2 admitted whole once $3 is gone"
	eventually 60 "$1's submitter bound" submitter_bound "$1"
}

# allocated QUEUE: the Queue's status.allocated (compact, sorted JSON; {} when none)
allocated() { kc get queue "$1" -o json | jq -cS '.status.allocated // {}'; }

# pg_message PODGROUP: the message of its Unschedulable condition when True
pg_message() {
	kc get podgroups.scheduling.volcano.sh -n "$NS" "$1" -o json 2>/dev/null |
		jq -r '.status.conditions[]? | select(.type == "Unschedulable" and .status == "True") | .message'
}
# pg_says PODGROUP TEXT: that message says TEXT
pg_says() { pg_message "$1" | grep -F -- "$2" >/dev/null; }

# waits_saying CLUSTER TEXT...: the Ray cluster is not admitted, and one
# message of why it waits (a GangWaiting Event on its head, or its PodGroup's
# Unschedulable condition) says every TEXT
waits_saying() {
	local c="$1" m t
	shift
	! admitted "$c" || return 1
	while IFS= read -r m; do
		for t; do [[ "$m" == *"$t"* ]] || continue 2; done
		return 0
	done < <(pod_events "$(head_pod "$c")"; pg_message "ray-$c-pg")
	return 1
}

# wait_texts CLUSTER: those messages, one per line (to print when waits_saying failed)
wait_texts() { { pod_events "$(head_pod "$1")"; pg_message "ray-$1-pg"; } | sort -u | sed 's/^/    /' >&2; }

# native_api: the cluster serves Kubernetes' own gang scheduling (scheduling.k8s.io/v1beta1 PodGroups: docs/native-gang.md)
native_api() { kc get --raw /apis/scheduling.k8s.io/v1beta1 2>/dev/null | jq -e '.resources[] | select(.name == "podgroups")' >/dev/null; }
# native_step MODE: raygate's webhook and gate restarted with --native-gang MODE (on, off, auto); the test's exit
# restores both as the cluster started them (the step is opt-in: docs/native-gang.md)
native_step() {
	"$ROOT/hack/cluster.sh" restart raygate-webhook --native-gang "$1" >/dev/null
	wait_until 20 "the webhook back" webhook_ready || fail "the webhook did not restart with --native-gang $1"
	"$ROOT/hack/cluster.sh" stop raygate-gate
	"$ROOT/hack/cluster.sh" start-gate --native-gang "$1" >/dev/null
	if [[ -z "${E2E_NATIVE_RESTORE:-}" ]]; then
		E2E_NATIVE_RESTORE=1
		e2e_on_exit native_restore
	fi
}
native_restore() {
	"$ROOT/hack/cluster.sh" restart raygate-webhook >/dev/null 2>&1 || true
	wait_until 20 "the webhook back" webhook_ready || true
	restore_gate
}
# e2e_held: the test runs with the webhook holding gangs (--hold-gangs: queued RayClusters held
# suspended until admitted, their pods born ungated), as it does by default; RAYGATE_HOLD_GANGS=0 (pods_gated, or
# the gated_* tests of tests/e2e/meson.build) runs it with --hold-gangs=false, every queued pod created gated.
e2e_held() { [[ "$(hold_mode)" == wait ]]; }
# hold_mode: the webhook's --hold-gangs the test runs with, as RAYGATE_HOLD_GANGS asks (hack/cluster.sh's
# hold_flag): wait (1 or unset), off (0) or decide
hold_mode() {
	case "${RAYGATE_HOLD_GANGS:-1}" in 0 | off) echo off ;; decide) echo decide ;; *) echo wait ;; esac
}
# hold_decide: the test runs with --hold-gangs=decide (call it before e2e_setup): a held RayCluster whose gang must
# wait is released, its pods created gated
hold_decide() { export RAYGATE_HOLD_GANGS=decide; }
# pods_gated: the test watches the gated pods of waiting gangs: it runs with --hold-gangs=false (call it before
# e2e_setup; hack/cluster.sh keeps the flag across the test's restarts of the webhook).
pods_gated() { export RAYGATE_HOLD_GANGS=0; }
# webhook_hold_mode: the local webhook's command line's last --hold-gangs, as hold_mode says it (wait without one);
# nothing when it does not run
webhook_hold_mode() {
	local arg mode=wait pid
	pid="$(cat "$STATE/pids/raygate-webhook.pid" 2>/dev/null)" || return 0
	while IFS= read -r -d '' arg; do
		case "$arg" in
		--hold-gangs=true | --hold-gangs=wait) mode=wait ;;
		--hold-gangs=false | --hold-gangs=off) mode=off ;;
		--hold-gangs=decide) mode=decide ;;
		esac
	done <"/proc/$pid/cmdline" 2>/dev/null || return 0
	echo "$mode"
}
# e2e_hold_mode: the local webhook restarted when it holds gangs and the test does not (e2e_held), or the other way
# round; nothing when it does not run (a test stopped it; raygate in-cluster: its manifests' default, held).
e2e_hold_mode() {
	webhook_running || return 0
	local have
	have="$(webhook_hold_mode)"
	[[ -z "$have" || "$have" == "$(hold_mode)" ]] && return 0
	"$ROOT/hack/cluster.sh" restart raygate-webhook "--hold-gangs=$(hold_mode)" >/dev/null
	wait_until 20 "the webhook back" webhook_ready || fail "the webhook did not restart with --hold-gangs as the test runs"
}
# hold_gangs: the webhook holds gangs for this test (the default: says so where a test is about it)
hold_gangs() {
	export RAYGATE_HOLD_GANGS=1
	e2e_hold_mode
}
# held_waiting CLUSTER: the RayCluster is held by the webhook (--hold-gangs), suspended and not admitted: a gang
# that waits whole with no pod at all (KubeRay makes none until the gate's admission record clears the suspend)
held_waiting() {
	[[ "$(kc get rayclusters.ray.io -n "$NS" "$1" -o json | jq -r '[.metadata.annotations["raygate.io/held-suspended"],
		.spec.suspend, .metadata.annotations["raygate.io/admitted-at"] // ""] | map(tostring) | join(" ")')" == "true true " ]]
}
# made_waiting CLUSTER N: a gang not admitted, as it waits: the RayCluster held by the webhook (e2e_held), no pod
# at all (held_waiting), or, with --hold-gangs=false, KubeRay made its N pods, all gated; with --hold-gangs=decide
# either: held until the gate's first decision (while the gate is down), released after it
made_waiting() {
	if e2e_held; then
		[[ "$(count_pods "$1")" == 0 ]] && held_waiting "$1"
	elif [[ "$(hold_mode)" == decide ]] && held_waiting "$1"; then
		[[ "$(count_pods "$1")" == 0 ]]
	else
		[[ "$(count_pods "$1")" == "$2" && "$(gated_count "$1")" == "$2" ]]
	fi
}
# webhook_ready: raygate's webhook answers its /readyz
webhook_ready() { curl -sf --max-time 2 --cacert "$STATE/raygate-certs/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT/readyz" >/dev/null; }
gate_running() { [[ "$("$ROOT/hack/cluster.sh" status 2>/dev/null)" == *"raygate-gate"*"running"* ]]; }

webhook_running() { "$ROOT/hack/cluster.sh" status 2>/dev/null | grep "^raygate-webhook *running" >/dev/null; }

# restore_webhook: the webhook started again unless it runs (for e2e_on_exit after a test stopped it)
restore_webhook() { webhook_running || "$ROOT/hack/cluster.sh" start-webhook >/dev/null 2>&1 || true; }

# queue_unchecked COMMAND...: runs COMMAND, a Queue write raygate's webhook
# refuses (a stored Queue that breaks a rule, as one made before the
# webhook or while it was down), with the webhook stopped: the Queue validation
# fails open (manifests/queue-webhook-configuration.yaml), so the write is
# stored. The webhook is started again after it (and on exit); COMMAND's status.
queue_unchecked() {
	local rc=0
	[[ " ${E2E_ON_EXIT[*]} " == *" restore_webhook "* ]] || e2e_on_exit restore_webhook
	"$ROOT/hack/cluster.sh" stop raygate-webhook >/dev/null
	! webhook_running || fail "queue_unchecked: the webhook is still running"
	"$@" || rc=$?
	"$ROOT/hack/cluster.sh" start-webhook >/dev/null
	wait_until 20 "the webhook back" webhook_ready || fail "queue_unchecked: the webhook did not start again"
	return $rc
}

# restore_gate: the gate controller as hack/cluster.sh starts it, with no flag
# (for e2e_on_exit after a test restarted it otherwise)
restore_gate() {
	"$ROOT/hack/cluster.sh" stop raygate-gate >/dev/null 2>&1 || true
	"$ROOT/hack/cluster.sh" start-gate >/dev/null 2>&1 || true
}

# ------------------------------------------------------------- topology (docs/topology.md)
# racks_up: 16 kwok nodes of this test's own, in 4 racks of 4:
# rK-nJ-UID (K and J 1..4), labelled RACK_KEY=rK (raygate.io/e2e-rack),
# e2e.raygate.io/rack-set=UID and e2e.raygate.io/added (a later test's
# baseline deletes what is left), kubernetes.io/hostname its name; nvidia.com/gpu
# 8, cpu 32, memory 256Gi and 110 pods each. They carry the taint
# e2e.raygate.io/racks=UID:NoSchedule, so no pod of another test lands there;
# the test's pods tolerate it (RACK_TOLERATIONS, e.g. raycluster
# tolerations="$RACK_TOLERATIONS"). The cluster's own nodes have no GPU.
# They are deleted when the test ends, with the HyperNodes of
# racks_hypernodes. Sets RACK_UID, RACK_KEY, RACK_TOLERATIONS and RACK_NODES
# (the names, rack by rack).
RACK_KEY=raygate.io/e2e-rack
racks_up() {
	local k j nodes=()
	RACK_UID="$(e2e_uid)"
	RACK_TOLERATIONS="[{key: e2e.raygate.io/racks, operator: Equal, value: \"$RACK_UID\", effect: NoSchedule}]"
	RACK_NODES=()
	for k in 1 2 3 4; do
		for j in 1 2 3 4; do RACK_NODES+=("r$k-n$j-$RACK_UID"); done
	done
	e2e_on_exit "racks_down $RACK_UID"
	for k in "${RACK_NODES[@]}"; do nodes+=("$(rack_node "$k" "${k%%-*}")"); done
	printf '%s\n' "${nodes[@]}" | jq -s '{apiVersion: "v1", kind: "List", items: .}' | kc apply -f - >/dev/null ||
		fail "could not create the rack nodes"
	_racks_ready() {
		[[ "$(kc get nodes -l "e2e.raygate.io/rack-set=$RACK_UID" -o json |
			jq '[.items[] | select(.status.conditions[]? | .type == "Ready" and .status == "True")] | length')" == 16 ]]
	}
	eventually 60 "16 rack nodes ($RACK_KEY r1..r4, set $RACK_UID) Ready" _racks_ready
}

# volcano_sample QUEUE: KubeRay's documented RayCluster for Volcano's network topology (the guide's
# test-cluster-0, named volcano, in QUEUE: labels ray.io/scheduler-name: volcano,
# volcano.sh/network-topology-mode: hard, volcano.sh/network-topology-highest-tier-allowed: "1"), with only the
# racks' toleration added (racks_up), on stdout
volcano_sample() {
	local out
	out="$(sed -e "s/name: test-cluster-0/name: volcano/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $1/" \
		"$ROOT/samples/raycluster-test-cluster-0.yaml" |
		sed -e 's/^\(    volcano.sh\/queue-name: .*\)$/    ray.io\/scheduler-name: volcano\n\1\n    volcano.sh\/network-topology-mode: hard\n    volcano.sh\/network-topology-highest-tier-allowed: "1"/' \
			-e "s|^\(      spec:\)$|\1\n        tolerations: $RACK_TOLERATIONS|")"
	grep -c 'tolerations:' <<<"$out" | grep -qx 2 || fail "the Volcano sample was not given the racks' toleration: $out"
	printf '%s\n' "$out"
}

# racks_hypernodes: Volcano HyperNodes over racks_up's racks: tier 1
# e2e-UID-rK per rack (rack 1's members by exactMatch, rack 2's by
# regexMatch, racks 3 and 4 by labelMatch), tier 2 e2e-UID-spine over the
# four (members of type HyperNode).
racks_hypernodes() {
	local k
	kc get crd hypernodes.topology.volcano.sh >/dev/null 2>&1 || fail "the HyperNode CRD is not installed"
	{
		rack_hypernode 1 "$(printf '{type: Node, selector: {exactMatch: {name: r1-n%s-%s}}}, ' 1 "$RACK_UID" 2 "$RACK_UID" 3 "$RACK_UID" 4 "$RACK_UID" | sed 's/, $//')"
		rack_hypernode 2 "{type: Node, selector: {regexMatch: {pattern: \"^r2-n[0-9]-$RACK_UID\$\"}}}"
		for k in 3 4; do
			rack_hypernode $k "{type: Node, selector: {labelMatch: {matchLabels: {$RACK_KEY: r$k, e2e.raygate.io/rack-set: \"$RACK_UID\"}}}}"
		done
		echo "---"
		echo "{apiVersion: topology.volcano.sh/v1alpha1, kind: HyperNode, metadata: {name: e2e-$RACK_UID-spine, labels: {e2e.raygate.io/added: \"true\"}},"
		echo " spec: {tier: 2, members: [$(for k in 1 2 3 4; do printf '{type: HyperNode, selector: {exactMatch: {name: e2e-%s-r%s}}}, ' "$RACK_UID" $k; done | sed 's/, $//')]}}"
	} | kc apply -f - >/dev/null || fail "could not create the HyperNodes"
	pass "HyperNodes e2e-$RACK_UID-r1..r4 (tier 1) and e2e-$RACK_UID-spine (tier 2)"
}

# rack_node NAME RACK: a rack node's manifest (JSON)
rack_node() {
	jq -n --arg name "$1" --arg rack "$2" --arg key "$RACK_KEY" --arg uid "$RACK_UID" '
		{apiVersion: "v1", kind: "Node",
		 metadata: {name: $name,
			annotations: {"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
			labels: {"kubernetes.io/hostname": $name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", type: "kwok",
				($key): $rack, "e2e.raygate.io/rack-set": $uid, "e2e.raygate.io/added": "true"}},
		 spec: {taints: [{key: "e2e.raygate.io/racks", value: $uid, effect: "NoSchedule"}]},
		 status: ({cpu: "32", memory: "256Gi", "nvidia.com/gpu": "8", pods: "110"} | {allocatable: ., capacity: .})}'
}

# rack_hypernode K MEMBERS: the tier 1 HyperNode of rack K (YAML; MEMBERS flow sequence entries)
rack_hypernode() {
	echo "---"
	echo "{apiVersion: topology.volcano.sh/v1alpha1, kind: HyperNode, metadata: {name: e2e-$RACK_UID-r$1, labels: {e2e.raygate.io/added: \"true\"}},"
	echo " spec: {tier: 1, members: [$2]}}"
}

# racks_down UID: the rack nodes and HyperNodes of set UID deleted (kept with
# E2E_KEEP; the next test's baseline deletes them). The test's RayClusters and
# pods go first, while kwok still plays those nodes' kubelets: a pod bound to
# a node that is gone stays terminating until the pod garbage collector
# removes it (tens of seconds), and with it the gang in its Queue's status,
# which keeps the Queue from being deleted.
racks_down() {
	[[ -z "${E2E_KEEP:-}" ]] || return 0
	_rack_pods_gone() {
		[[ "$(kc get pods -n "$NS" -o json | jq --arg u "-$1" '[.items[] | select((.spec.nodeName // "") | endswith($u))] | length')" == 0 ]]
	}
	kc delete rayclusters.ray.io -n "$NS" --all --wait=false >/dev/null 2>&1 || true
	kc delete pods -n "$NS" -l e2e.raygate.io/filler --wait=false >/dev/null 2>&1 || true
	wait_until 30 "the test's pods gone from the rack nodes" _rack_pods_gone "$1" || true
	kc delete nodes -l "e2e.raygate.io/rack-set=$1" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	kc delete hypernodes.topology.volcano.sh e2e-$1-r1 e2e-$1-r2 e2e-$1-r3 e2e-$1-r4 e2e-$1-spine \
		--ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# rack_of NODE: its RACK_KEY label ("" for a node outside the racks)
rack_of() { kc get node "$1" -o json | jq -r --arg k "$RACK_KEY" '.metadata.labels[$k] // ""'; }

# pod_racks CLUSTER [SELECTOR]: "POD NODE RACK" of the Ray cluster's bound pods (with the
# extra label SELECTOR, e.g. ray.io/node-type=worker), one per line
pod_racks() {
	local nodes
	nodes="$(kc get nodes -o json | jq -c --arg k "$RACK_KEY" '[.items[] | {key: .metadata.name, value: (.metadata.labels[$k] // "-")}] | from_entries')"
	kc get pods -n "$NS" -l "ray.io/cluster=$1${2:+,$2}" -o json |
		jq -r --argjson r "$nodes" '.items[] | select(.spec.nodeName != null) | "\(.metadata.name) \(.spec.nodeName) \($r[.spec.nodeName] // "-")"'
}

# filler_pod NAME NODE GPUS: a plain pod (no queue: outside raygate's gangs) on NODE (node
# selector), holding GPUS nvidia.com/gpu there
filler_pod() {
	kc apply -n "$NS" -f - >/dev/null <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: $1, labels: {e2e.raygate.io/filler: "true"}}
		spec:
		  nodeSelector: {kubernetes.io/hostname: $2}
		  tolerations: $RACK_TOLERATIONS
		  containers: [{name: c, image: busybox, resources: {requests: {nvidia.com/gpu: "$3"}, limits: {nvidia.com/gpu: "$3"}}}]
	YAML
}

. "$_e2e_here/invariants.sh"

# ------------------------------------------------------------- devices (docs/dra.md)
# Dynamic Resource Allocation (resource.k8s.io/v1, Kubernetes 1.34 and later;
# docs/dra.md): kwok nodes publish devices in ResourceSlices (hack/cluster.sh
# add-node --dra), kube-controller-manager makes the workers' claims from a
# ResourceClaimTemplate and kube-scheduler allocates them; no driver.
DRA_DRIVER=gpu.example.com
DRA_RESOURCE=example.com/gpu

# dra_api: the cluster serves resource.k8s.io/v1 (ResourceSlices)
dra_api() { kc get --raw /apis/resource.k8s.io/v1 2>/dev/null | jq -e '.resources[] | select(.name == "resourceslices")' >/dev/null; }

# dra_or_skip: the test skips (exit 77) where resource.k8s.io/v1 is not served (Kubernetes before 1.34)
dra_or_skip() { dra_api || skip "this cluster (Kubernetes $K8S_VERSION) does not serve resource.k8s.io/v1"; }

# dra_nodes N DEVICES: N kwok nodes of this test's own (dra-K-UID, cpu 8, memory 32Gi), each publishing DEVICES
# devices of DRA_DRIVER; the DeviceClass DRA_DRIVER made by dra_class first. Deleted when the test ends (the
# next test's baseline deletes what is left). Sets DRA_NODES.
dra_nodes() {
	local n="$1" devices="$2" uid k
	uid="$(e2e_uid)"
	DRA_NODES=()
	for ((k = 1; k <= n; k++)); do DRA_NODES+=("dra-$k-$uid"); done
	e2e_on_exit "dra_nodes_down ${DRA_NODES[*]}"
	for k in "${DRA_NODES[@]}"; do
		"$ROOT/hack/cluster.sh" add-node "$k" --node-capacity cpu=8,memory=32Gi --label e2e.raygate.io/added=true \
			--dra "$DRA_DRIVER=$devices" || fail "could not add node $k with $devices devices"
	done
	_dra_ready() {
		[[ "$(kc get nodes "${DRA_NODES[@]}" -o json |
			jq '[(.items // [.])[] | select(.status.conditions[]? | .type == "Ready" and .status == "True")] | length')" == "$n" ]]
	}
	eventually 60 "$n kwok nodes Ready, $devices devices of $DRA_DRIVER each (${DRA_NODES[*]})" _dra_ready
}

# dra_nodes_down NODE...: the test's Ray clusters first (kwok must still play their nodes), then the nodes
dra_nodes_down() {
	[[ -z "${E2E_KEEP:-}" ]] || return 0
	kc delete rayclusters.ray.io -n "$NS" --all --wait=false >/dev/null 2>&1 || true
	_dra_pods_gone() { [[ "$(kc get pods -n "$NS" -o json | jq '[.items[] | select(.spec.nodeName != null and (.spec.nodeName | startswith("dra-")))] | length')" == 0 ]]; }
	wait_until 30 "the test's pods gone from the device nodes" _dra_pods_gone || true
	kc delete nodes "$@" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# dra_class [extended|annotation|plain]: the DeviceClass DRA_DRIVER (its driver's devices), mapped to the queue
# resource DRA_RESOURCE by spec.extendedResourceName (extended, the default), or by the annotation
# raygate.io/quota-resource alone, or not at all (plain). Deleted when the test ends.
dra_class() {
	local args=()
	case "${1:-extended}" in
	extended) args=(--extended-resource "$DRA_RESOURCE") ;;
	annotation) args=(--quota-resource "$DRA_RESOURCE") ;;
	plain) ;;
	*) fail "dra_class: extended, annotation or plain, not '$1'" ;;
	esac
	"$ROOT/hack/cluster.sh" device-class "$DRA_DRIVER" --driver "$DRA_DRIVER" --label e2e.raygate.io/added=true "${args[@]}" ||
		fail "could not create the DeviceClass $DRA_DRIVER"
	[[ " ${E2E_ON_EXIT[*]} " == *" dra_class_down "* ]] || e2e_on_exit "dra_class_down "
}
dra_class_down() { [[ -n "${E2E_KEEP:-}" ]] || kc delete deviceclass "$DRA_DRIVER" --ignore-not-found --wait=false >/dev/null 2>&1 || true; }

# dra_template NAME [COUNT]: a ResourceClaimTemplate in the test's namespace asking COUNT (default 1) devices of DRA_DRIVER
dra_template() {
	kc apply -n "$NS" -f - >/dev/null <<-YAML
		apiVersion: resource.k8s.io/v1
		kind: ResourceClaimTemplate
		metadata: {name: $1}
		spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: $DRA_DRIVER, count: ${2:-1}}}]}}}
	YAML
}

# dra_claim NAME [COUNT]: a ResourceClaim in the test's namespace, COUNT (default 1) devices of DRA_DRIVER
dra_claim() {
	kc apply -n "$NS" -f - >/dev/null <<-YAML
		apiVersion: resource.k8s.io/v1
		kind: ResourceClaim
		metadata: {name: $1}
		spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: $DRA_DRIVER, count: ${2:-1}}}]}}
	YAML
}

# dra_queue NAME GPUS [CPU MEMORY]: a Queue with capability DRA_RESOURCE GPUS, cpu CPU (default 32), memory
# MEMORY (default 128Gi); deleted when the test ends
dra_queue() {
	kc apply -f - >/dev/null <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $1, labels: {e2e.raygate.io/added: "true"}}
		spec: {weight: 1, capability: {cpu: "${3:-32}", memory: "${4:-128Gi}", $DRA_RESOURCE: "$2"}}
	YAML
	[[ " ${E2E_QUEUES[*]} " == *" $1 "* ]] || E2E_QUEUES=("$1" "${E2E_QUEUES[@]}")
}

# dra_cluster NAME QUEUE WORKERS HOW [PRIORITY-CLASS]: a RayCluster (applied in the test's namespace) of a head
# (cpu 1, memory 1Gi, no device) and WORKERS workers (cpu 1, memory 1Gi), each with a device as HOW says:
#   template:T   its own claim from the ResourceClaimTemplate T (spec.resourceClaims[].resourceClaimTemplateName)
#   claim:C      the ResourceClaim C, shared by all the workers (resourceClaimName)
#   extended     DRA_RESOURCE: 1 in its requests and limits (the DeviceClass's extendedResourceName)
dra_cluster() {
	local name="$1" queue="$2" workers="$3" how="$4" prio="${5:-}" claims="" req='cpu: "1", memory: 1Gi' cref=""
	case "$how" in
	template:*) claims="resourceClaims: [{name: gpu, resourceClaimTemplateName: ${how#template:}}]"; cref=", claims: [{name: gpu}]" ;;
	claim:*) claims="resourceClaims: [{name: gpu, resourceClaimName: ${how#claim:}}]"; cref=", claims: [{name: gpu}]" ;;
	extended) req="$req, $DRA_RESOURCE: \"1\"" ;;
	*) fail "dra_cluster: template:T, claim:C or extended, not '$how'" ;;
	esac
	kc apply -n "$NS" -f - >/dev/null <<-YAML
		apiVersion: ray.io/v1
		kind: RayCluster
		metadata: {name: $name, labels: {volcano.sh/queue-name: $queue${prio:+, ray.io/priority-class-name: $prio}}}
		spec:
		  rayVersion: "2.9.0"
		  headGroupSpec:
		    rayStartParams: {}
		    template:
		      spec:
		        containers:
		        - {name: ray-head, image: "rayproject/ray:2.9.0", resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "1", memory: 1Gi}}}
		  workerGroupSpecs:
		  - groupName: gpu
		    replicas: $workers
		    minReplicas: $workers
		    maxReplicas: $workers
		    rayStartParams: {}
		    template:
		      spec:
		        ${claims:-resourceClaims: []}
		        containers:
		        - {name: ray-worker, image: "rayproject/ray:2.9.0", resources: {requests: {$req}, limits: {$req}$cref}}
	YAML
}

# count_pods_all: the pods of the test's namespace
count_pods_all() { kc get pods -n "$NS" -o name | grep -c . || true; }

# waits_whole CLUSTER N: the Ray cluster has N pods, all gated, none bound
waits_whole() { [[ "$(count_pods "$1")" == "$2" && "$(gated_count "$1")" == "$2" && "$(bound_count "$1")" == 0 ]]; }

# all_bound CLUSTER N: N pods, all bound to a node
all_bound() { [[ "$(count_pods "$1")" == "$2" && "$(bound_count "$1")" == "$2" ]]; }

# devices_held: how many devices of DRA_DRIVER the claims of the test's namespace hold (status.allocation)
devices_held() {
	kc get resourceclaims -n "$NS" -o json |
		jq --arg d "$DRA_DRIVER" '[.items[].status.allocation.devices.results[]? | select(.driver == $d)] | length'
}

# waits_told CLUSTER SECONDS TEXT...: within SECONDS, a message of why CLUSTER waits says every TEXT (waits_saying);
# fails printing what they do say
waits_told() {
	local c="$1" limit="$2"
	shift 2
	wait_until "$limit" "$c's wait reason says: $*" waits_saying "$c" "$@" ||
		{ say "what $c's wait reasons say:"; wait_texts "$c"; fail "$c's wait reason does not say: $* (not within ${limit}s)"; }
	pass "$c waits, saying: $*"
}
