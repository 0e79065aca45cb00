#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for raygate's tests and demo:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok managing
# fake nodes, the KubeRay operator, and (unless --no-raygate) raygate's webhook
# and gate controller from build/.
#
#   hack/cluster.sh up [--nodes N] [--node-capacity cpu=8,memory=32Gi[,nvidia.com/gpu=2,...]]
#                      [--gang raygate|kueue|coscheduling|none] [--no-raygate] [--real-node]
#                      [--k8s VERSION] [--kuberay-version VERSION] [--native-gang | --no-native-gang]
#                      [--legacy] [--karpenter [--karpenter-cpu-limit N]]
#     --k8s and --kuberay-version pick the Kubernetes and KubeRay releases
#     (default hack/versions.sh's newest; built once by hack/build-upstream.sh);
#     the cluster's later commands use the same ones (recorded in its state).
#     --native-gang serves Kubernetes' own gang scheduling (KEP-4671: the
#     Workload and PodGroup of scheduling.k8s.io/v1beta1, feature gate
#     GenericWorkload; Kubernetes 1.37 and later), which raygate's webhook and
#     gate then use as the last step (docs/native-gang.md): the default where
#     the release has it; --no-native-gang leaves the beta API off.
#     --legacy also serves the legacy Ray operator's RayCluster (cluster.ray.io),
#     for raygate's tests of it (the e2e shards): there `kubectl get raycluster`
#     is ambiguous, so a cluster without it leaves the name to KubeRay's.
#     --real-node adds a real node (containerd, kubelet, kube-proxy; hack/real-node.sh)
#     and installs raygate in-cluster from its image (kubectl apply -k
#     hack/real-node-overlay) instead of starting the host binaries.
#     --karpenter adds Karpenter with its kwok cloud provider (built by
#     hack/build-upstream.sh --with karpenter; docs/nodes.md): its CRDs (the
#     NodePool, NodeClaim, KWOKNodeClass and CapacityBuffer kinds), a
#     KWOKNodeClass and a NodePool `default` (cpu limit N, default 64;
#     consolidation of empty or underused nodes after 30 s), and the controller
#     (log .cluster/logs/karpenter.log) making the nodes pending pods need: kwok
#     nodes (annotation kwok.x-k8s.io/node=fake) the local kwok runs. With
#     --nodes 0 every node is Karpenter's.
#     --gang picks the one gang system (default raygate; --no-raygate = --gang none).
#     kueue: Kueue's manager (RayCluster and RayJob integrations, webhooks on
#     127.0.0.1) and its CRDs; coscheduling: scheduler-plugins' scheduler, with
#     the Coscheduling plugin, in place of kube-scheduler, its PodGroup CRD, and
#     KubeRay started with --batch-scheduler=scheduler-plugins. Both are peers
#     built by hack/build-upstream.sh for hack/bench.sh --parts peers.
#   hack/cluster.sh up --manager [--kuberay] [--cluster-name NAME] [-- DISPATCH-ARG...]
#     A manager of many clusters (docs/dispatch.md): etcd,
#     kube-apiserver and kube-controller-manager, KubeRay's and Volcano's CRDs
#     served, no KubeRay operator, no scheduler, no nodes; and the dispatcher
#     build/dispatch/raygate-dispatch (--cluster-name NAME, default manager;
#     DISPATCH-ARGs after its own, e.g. --dispatch-lease 20s), its log
#     .cluster/logs/raygate-dispatch.log.
#     --kuberay: KubeRay's operator on the manager too, and raygate's webhook
#     registered at /dispatch-suspend only (it suspends the RayClusters and
#     RayJobs of dispatching Queues, so that KubeRay makes no pods for them).
#   hack/cluster.sh add-worker NAME KUBECONFIG   (against the manager)
#     Registers the cluster of KUBECONFIG as worker NAME: grants the manager's
#     dispatcher manifests/dispatch/worker-rbac.yaml there and writes its
#     ServiceAccount token, with the server and CA, as a kubeconfig into the
#     manager's Secret raygate-system/raygate-worker-NAME (label
#     raygate.io/worker-cluster=NAME, key kubeconfig).
#   hack/cluster.sh start-dispatch [ARGS...]   (a manager's dispatcher, again)
#   hack/cluster.sh down | status | env
#   hack/cluster.sh add-node NAME [--node-capacity ...] [--label k=v]... [--dra DRIVER=N]...   (used by tests)
#     --dra DRIVER=N: the kwok node publishes N devices of DRIVER (Dynamic
#     Resource Allocation, resource.k8s.io/v1: Kubernetes 1.34 and later;
#     docs/dra.md): a ResourceSlice NAME-DRIVER (spec.nodeName NAME, pool NAME,
#     devices gpu-0..gpu-N-1 with attributes index (int) and model (string),
#     the node its owner, the node's --labels), and a DeviceClass named DRIVER
#     selecting device.driver == "DRIVER" unless one of that name exists.
#     kube-scheduler allocates those devices and kwok runs the pods: no driver.
#   hack/cluster.sh device-class NAME --driver DRIVER [--extended-resource R]
#                   [--quota-resource R] [--label k=v]...
#     Creates or replaces the DeviceClass NAME (selector device.driver ==
#     "DRIVER"), with spec.extendedResourceName R (KEP-5004: pods asking for R
#     in their requests get DRIVER's devices) and the annotation
#     raygate.io/quota-resource R (the queue resource raygate counts its devices as).
#   hack/cluster.sh restart COMPONENT [EXTRA-ARG...] | stop COMPONENT [SIGNAL] (used by tests)
#   hack/cluster.sh start-gate [--name raygate-gate-X] [ARGS...] | start-webhook (used by tests)
#     --name runs another gate controller as its own component (pid, log
#     .cluster/logs/raygate-gate-X.log); status, stop and down include it.
#
# RAYGATE_APISERVER_AUDIT=1: kube-apiserver writes an audit log of every
# mutating request (Metadata level: who, verb, resource; no bodies) to
# .cluster/logs/audit.log, for hack/bench.sh --parts peers' count by component.
#
# State (kubeconfig, PKI, logs, pids) lives in .cluster/ (RAYGATE_STATE; a
# relative one is taken from the current folder; unset and RAYGATE_PORT_OFFSET
# N: .cluster-N/). A state folder is one cluster's: a command with another
# RAYGATE_PORT_OFFSET than it was brought up with is refused (but down).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
. "$here/real-node.sh"

PIDS="$STATE/pids"
LOGS="$STATE/logs"
PKI="$STATE/pki"
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok kuberay-operator raygate-webhook raygate-gate)
# A manager (up --manager) runs these.
MANAGER_COMPONENTS=(etcd kube-apiserver kube-controller-manager raygate-dispatch)
[[ "$(cat "$STATE/role" 2>/dev/null)" != manager ]] || COMPONENTS=("${MANAGER_COMPONENTS[@]}")
# A cluster brought up with --karpenter runs it too (up records its NodePool's cpu limit there).
[[ ! -f "$STATE/karpenter" ]] || COMPONENTS+=(karpenter)

usage() { sed -n '2,/^# State/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

pid_of() { # component -> pid if its recorded process is alive
	local f="$PIDS/$1.pid" pid
	[[ -f "$f" ]] || return 1
	pid="$(cat "$f")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
	# Guard against pid reuse: the process must still be the one we started.
	[[ "$(cat "/proc/$pid/cmdline" 2>/dev/null | tr '\0' ' ')" == *"$(cat "$PIDS/$1.cmd" 2>/dev/null)"* ]] || return 1
	echo "$pid"
}

running() { pid_of "$1" >/dev/null; }

# COMPONENTS, then any other component started (extra gate instances), in start order.
all_components() {
	local c
	printf '%s\n' "${COMPONENTS[@]}"
	[[ -f "$STATE/components" ]] || return 0
	while read -r c; do
		[[ " ${COMPONENTS[*]} " == *" $c "* ]] || printf '%s\n' "$c"
	done <"$STATE/components"
}

# component_env COMPONENT: the NAME=VALUE settings of its environment beyond
# ours (which has KUBECONFIG), one a line; start and restart both set them.
# Karpenter's SYSTEM_NAMESPACE is what its chart sets (v1.14.1 reads it nowhere yet).
component_env() {
	case "$1" in
	karpenter) echo SYSTEM_NAMESPACE=karpenter ;;
	esac
}

# start COMPONENT BINARY ARGS...: runs it detached, logs to .cluster/logs.
start() {
	local name="$1" envs=(); shift
	if running "$name"; then return 0; fi
	[[ -x "$1" ]] || die "$name: $1 is not built (run hack/build-upstream.sh / meson compile -C build)"
	mkdir -p "$PIDS" "$LOGS"
	mapfile -t envs < <(component_env "$name")
	# setsid: the component must not share our process group, so a Ctrl-C in
	# the caller's terminal does not take the cluster down half-way. env execs
	# setsid, which execs the component: $! is its pid.
	env ${envs[@]+"${envs[@]}"} setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$PIDS/$name.pid"
	echo "$1" >"$PIDS/$name.cmd"
	# The arguments it was first started with: what restart starts it with again.
	[[ -f "$PIDS/$name.args" ]] || printf '%s\0' "$@" >"$PIDS/$name.args"
	grep -qx "$name" "$STATE/components" 2>/dev/null || echo "$name" >>"$STATE/components"
}

stop() { # component [signal]
	local name="$1" sig="${2:-TERM}" pid i
	pid="$(pid_of "$name")" || { rm -f "$PIDS/$name.pid" "$PIDS/$name.cmd"; return 0; }
	kill "-$sig" "$pid" 2>/dev/null || true
	for i in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; sleep 0.2; fi
	rm -f "$PIDS/$name.pid" "$PIDS/$name.cmd"
}

# ---------------------------------------------------------------- PKI
make_pki() {
	[[ -f "$PKI/admin.token" ]] && return 0
	mkdir -p "$PKI"
	(
		cd "$PKI"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
			-subj "/CN=raygate-local-ca" -keyout ca.key -out ca.crt 2>/dev/null
		cat >apiserver.ext <<-EOF
			subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
			extendedKeyUsage=serverAuth
			keyUsage=critical,digitalSignature,keyEncipherment
		EOF
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=kube-apiserver" \
			-keyout apiserver.key -out apiserver.csr 2>/dev/null
		openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
			-extfile apiserver.ext -out apiserver.crt 2>/dev/null
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
		openssl rand -hex 24 >admin.token
		# token,user,uid,"group1,group2"
		echo "$(cat admin.token),raygate-admin,raygate-admin,\"system:masters\"" >tokens.csv
		chmod 600 ./*.key admin.token tokens.csv
	)
}

write_kubeconfig() {
	cat >"$KUBECONFIG" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		- name: raygate-local
		  cluster:
		    server: https://127.0.0.1:$APISERVER_PORT
		    certificate-authority: $PKI/ca.crt
		users:
		- name: raygate-admin
		  user:
		    token: $(cat "$PKI/admin.token")
		contexts:
		- name: raygate-local
		  context:
		    cluster: raygate-local
		    user: raygate-admin
		current-context: raygate-local
	EOF
	chmod 600 "$KUBECONFIG"
}

api_ready() {
	curl -sf --max-time 2 --cacert "$PKI/ca.crt" -H "Authorization: Bearer $(cat "$PKI/admin.token")" \
		"https://127.0.0.1:$APISERVER_PORT/readyz" >/dev/null
}

# ---------------------------------------------------------------- nodes
# node_manifest NAME CAPACITY [LABEL...]: a kwok-managed fake Node.
node_manifest() {
	local name="$1" capacity="$2"; shift 2
	local kv k v cap="" labels=""
	IFS=',' read -ra kvs <<<"$capacity"
	local have_pods=0
	for kv in "${kvs[@]}"; do
		k="${kv%%=*}"; v="${kv#*=}"
		[[ "$k" == pods ]] && have_pods=1
		cap+="      \"$k\": \"$v\""$'\n'
	done
	((have_pods)) || cap+="      \"pods\": \"110\""$'\n'
	cap="$(printf '%s' "$cap" | sed '$!s/$/,/')"
	for kv in "$@"; do labels+=", \"${kv%%=*}\": \"${kv#*=}\""; done
	cat <<-EOF
		{
		  "apiVersion": "v1",
		  "kind": "Node",
		  "metadata": {
		    "name": "$name",
		    "annotations": {"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
		    "labels": {"kubernetes.io/hostname": "$name", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"$labels}
		  },
		  "status": {
		    "allocatable": {
		$cap
		    },
		    "capacity": {
		$cap
		    }
		  }
		}
	EOF
}

add_node() { # name capacity labels...
	node_manifest "$@" | kc apply -f - >/dev/null
}

# ---------------------------------------------------------------- raygate
# raygate runs from build/ on 127.0.0.1, registered with the same
# webhook configurations as manifests/, but with a url and the locally
# generated caBundle instead of the in-cluster Service.
RAYGATE_CERTS="$STATE/raygate-certs"

webhook_ready() {
	curl -sf --max-time 2 --cacert "$RAYGATE_CERTS/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT/readyz" >/dev/null
}

# register_webhook [MANIFEST...]: by default both configurations of a worker
# (the Mutating one, and the Validating one for Queues); each webhook's url keeps its path.
register_webhook() {
	local bundle f files=()
	(($#)) || set -- "$ROOT/manifests/webhook-configuration.yaml" "$ROOT/manifests/queue-webhook-configuration.yaml"
	for f in "$@"; do files+=(-f "$f"); done
	bundle="$("$BUILD/certs/raygate-certs" ca-bundle --dir "$RAYGATE_CERTS")"
	kc create --dry-run=client -o json "${files[@]}" |
		jq --arg base "https://127.0.0.1:$WEBHOOK_PORT" --arg ca "$bundle" '
			def local: .webhooks |= map(.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca});
			if .kind == "List" then .items |= map(local) else local end' |
		kc apply -f - >/dev/null
}

# hold_flag: the webhook's --hold-gangs as RAYGATE_HOLD_GANGS asks: wait (pods born ungated, the default: also
# 1 or unset), off (also 0: every queued pod created gated) or decide (held until the gate's first decision).
hold_flag() {
	case "${RAYGATE_HOLD_GANGS:-1}" in
	0 | off) echo --hold-gangs=off ;;
	decide) echo --hold-gangs=decide ;;
	*) echo --hold-gangs=wait ;;
	esac
}

# start_webhook [MANIFEST...]: the webhook from build/, registered with MANIFESTs (register_webhook); with
# --hold-gangs as RAYGATE_HOLD_GANGS asks (hold_flag).
start_webhook() {
	local webhook="$BUILD/webhook/raygate-webhook"
	[[ -x "$webhook" ]] || die "raygate is not built: meson setup build && meson compile -C build (or use --no-raygate)"
	"$BUILD/certs/raygate-certs" generate --dir "$RAYGATE_CERTS" --dns localhost --ip 127.0.0.1 2>>"$LOGS/raygate-certs.log" >/dev/null
	start raygate-webhook "$webhook" --addr "127.0.0.1:$WEBHOOK_PORT" \
		--cert "$RAYGATE_CERTS/tls.crt" --key "$RAYGATE_CERTS/tls.key" --kubeconfig "$KUBECONFIG" \
		"$(hold_flag)"
	wait_until 20 "raygate webhook /readyz" webhook_ready || { tail -20 "$LOGS/raygate-webhook.log"; die "raygate's webhook did not start"; }
	register_webhook "$@"
}

# start_gate [--name COMPONENT] [EXTRA ARGS...]: the gate controller from
# build/ (tests pass flags here, e.g. --leader-elect or the test-only
# --test-fault-exit-after-ungates N). COMPONENT (default raygate-gate) names a
# further instance: raygate-gate-<suffix>.
start_gate() {
	local gate="$BUILD/gate/raygate-gate" name=raygate-gate
	if [[ "${1:-}" == --name ]]; then
		name="${2:-}"; shift 2 || die "--name takes a component name"
		[[ "$name" =~ ^raygate-gate(-[a-z0-9]+)?$ ]] || die "a gate instance is named raygate-gate or raygate-gate-<suffix>, not '$name'"
	fi
	[[ -x "$gate" ]] || die "raygate is not built: meson setup build && meson compile -C build (or use --no-raygate)"
	# The namespace of the leader election Lease.
	kc get namespace raygate-system >/dev/null 2>&1 || kc create namespace raygate-system >/dev/null
	if [[ "$name" != raygate-gate ]]; then
		# A further instance serves metrics only where its ARGS say (--metrics-addr).
		start "$name" "$gate" --kubeconfig "$KUBECONFIG" --namespace raygate-system "$@"
		return
	fi
	start raygate-gate "$gate" --kubeconfig "$KUBECONFIG" --namespace raygate-system \
		--metrics-addr "127.0.0.1:$GATE_METRICS_PORT" "$@"
	wait_until 20 "raygate gate /healthz" curl -sf --max-time 2 "http://127.0.0.1:$GATE_METRICS_PORT/healthz" ||
		{ tail -20 "$LOGS/raygate-gate.log"; die "raygate's gate controller did not start"; }
}

start_raygate() {
	start_webhook
	start_gate
}

# ---------------------------------------------------------------- peers
# The gang systems raygate is compared with (hack/bench.sh --parts peers).
. "$here/bench/peers/gang.sh"

# ---------------------------------------------------------------- up
# versioned_up ARG...: when ARGs pick versions (--k8s, --kuberay-version),
# runs `up` again with them in the environment, without those flags: every
# path (K8S_BIN, KUBECTL, the CRDs) is derived from them when the script starts.
versioned_up() {
	local rest=() k8s="" kuberay=""
	while (($#)); do
		case "$1" in
		--k8s) k8s="${2:-}"; shift 2 || usage ;;
		--k8s=*) k8s="${1#*=}"; shift ;;
		--kuberay-version) kuberay="${2:-}"; shift 2 || usage ;;
		--kuberay-version=*) kuberay="${1#*=}"; shift ;;
		*) rest+=("$1"); shift ;;
		esac
	done
	[[ -n "$k8s$kuberay" ]] || return 0
	[[ -z "$k8s" || "$k8s" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || { say "--k8s takes a release such as $K8S_NEWEST, not '$k8s'"; exit 2; }
	[[ -z "$kuberay" || "$kuberay" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || { say "--kuberay-version takes a release such as $KUBERAY_NEWEST, not '$kuberay'"; exit 2; }
	RAYGATE_K8S_VERSION="${k8s:-$K8S_VERSION}" RAYGATE_KUBERAY_VERSION="${kuberay:-$KUBERAY_VERSION}" exec bash "$0" up "${rest[@]}"
}

cmd_up() {
	local nodes=4 capacity="cpu=8,memory=32Gi" gang=raygate real_node=0 native=-1 legacy=0 karpenter=0 karpenter_cpu=64
	versioned_up "$@"
	while (($#)); do
		case "$1" in
		--manager) shift; cmd_up_manager "$@"; return ;;
		--nodes) nodes="$2"; shift 2 ;;
		--nodes=*) nodes="${1#*=}"; shift ;;
		--node-capacity) capacity="$2"; shift 2 ;;
		--node-capacity=*) capacity="${1#*=}"; shift ;;
		--no-raygate) gang=none; shift ;;
		--gang) gang="${2:-}"; shift 2 || usage ;;
		--gang=*) gang="${1#*=}"; shift ;;
		--real-node) real_node=1; shift ;;
		--legacy) legacy=1; shift ;;
		--karpenter) karpenter=$((karpenter | 1)); shift ;;
		--karpenter-cpu-limit) karpenter_cpu="${2:-}"; karpenter=$((karpenter | 2)); shift 2 || usage ;;
		--karpenter-cpu-limit=*) karpenter_cpu="${1#*=}"; karpenter=$((karpenter | 2)); shift ;;
		--native-gang) native=1; shift ;;
		--no-native-gang) native=0; shift ;;
		*) usage ;;
		esac
	done
	[[ "$nodes" =~ ^[0-9]+$ ]] || die "--nodes takes a number"
	# karpenter: 1 --karpenter, 2 --karpenter-cpu-limit (only with it).
	((karpenter != 2)) || die "--karpenter-cpu-limit goes with --karpenter"
	[[ "$karpenter_cpu" =~ ^[1-9][0-9]*$ ]] || die "--karpenter-cpu-limit takes a number of cpus, not '$karpenter_cpu'"
	if ((native < 0)); then
		native=0
		native_gang_supported && native=1
	fi
	if ((native)) && ! native_gang_supported; then
		say "--native-gang needs Kubernetes 1.37 or later (scheduling.k8s.io/v1beta1), not $K8S_VERSION"
		exit 2
	fi
	case "$gang" in raygate | kueue | coscheduling | none) ;; *) say "--gang takes raygate, kueue, coscheduling or none, not '$gang'"; exit 2 ;; esac
	local t0=$SECONDS
	local peer_build=()
	[[ "$gang" == kueue || "$gang" == coscheduling ]] && peer_build=(--peers "$gang")
	((real_node)) && peer_build+=(--with real-node,helm)
	((karpenter)) && peer_build+=(--with karpenter)
	# Quiet when everything is built; on a new machine it shows the build (several minutes, once).
	RAYGATE_K8S_VERSION="$K8S_VERSION" RAYGATE_KUBERAY_VERSION="$KUBERAY_VERSION" bash "$here/build-upstream.sh" "${peer_build[@]}" 2>&1 | sed -u '/: cached$/d; /^build-upstream: all upstream programs present$/d' >&2
	[[ -x "$ETCD_BIN/etcd" ]] || die "etcd not found in $ETCD_BIN: run hack/build-upstream.sh"
	rm -rf "$KUBECACHEDIR" # what a cluster that was here before served is not this one's
	claim_state worker
	echo "$gang" >"$STATE/gang"
	echo "$native" >"$STATE/native-gang"
	((karpenter == 0)) || echo "$karpenter_cpu" >"$STATE/karpenter"
	make_pki
	write_kubeconfig
	local api_extra=()
	[[ "${RAYGATE_APISERVER_AUDIT:-0}" == 1 ]] && mapfile -d '' -t api_extra < <(audit_args)
	if ((real_node)); then
		real_node_prepare
		mapfile -d '' -t -O "${#api_extra[@]}" api_extra < <(real_node_apiserver_args)
	fi

	((native)) && mapfile -d '' -t -O "${#api_extra[@]}" api_extra < <(printf '%s\0' \
		--runtime-config scheduling.k8s.io/v1beta1=true --feature-gates GenericWorkload=true)
	start_api "${api_extra[@]}"

	# CRDs before the controller-manager: its garbage collector discovers the
	# resources it must watch at start (then only every 30 s), and deleting a
	# RayCluster must delete its pods at once.
	# KubeRay's CRDs are too large for client-side apply annotations.
	kc apply --server-side --force-conflicts -f "$(kuberay_crd_dir)" >/dev/null
	kc apply --server-side --force-conflicts -f "$ROOT/manifests/crds/" >/dev/null
	# The legacy Ray operator's RayCluster (cluster.ray.io), for raygate's tests of it: from here on
	# `kubectl get raycluster` is ambiguous, say rayclusters.ray.io or rayclusters.cluster.ray.io.
	((legacy == 0)) || kc apply --server-side --force-conflicts -f "$ROOT/tests/e2e/legacy/cluster.ray.io_rayclusters.yaml" >/dev/null
	peer_crds "$gang"
	((karpenter == 0)) || karpenter_crds
	wait_until 60 "CRDs established" crds_established || die "CRDs were not established"

	start_kcm
	if [[ "$gang" == coscheduling ]]; then
		start_coscheduling_scheduler
	else
		start kube-scheduler "$K8S_BIN/kube-scheduler" \
			--kubeconfig "$KUBECONFIG" --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
			--bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false --profiling=false --v 1 \
			$(native_gates)
	fi
	start kwok "$KWOK_BIN/kwok" --kubeconfig "$KUBECONFIG" \
		--manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
		--node-ip 127.0.0.1 --node-lease-duration-seconds 40 --cidr 10.244.0.1/16 \
		--server-address "127.0.0.1:$KWOK_PORT"


	# RayMultiHostIndexing: KubeRay v1.5.1 labels the pods of one replica of a
	# multi-host worker group (numOfHosts > 1) ray.io/worker-group-replica-name
	# only with it; raygate's slices (docs/topology.md) are those pods.
	start kuberay-operator "$KUBERAY_BIN/ray-operator" \
		--kubeconfig "$KUBECONFIG" --feature-gates RayMultiHostIndexing=true \
		--metrics-addr "127.0.0.1:$KUBERAY_METRICS_PORT" --health-probe-bind-address "127.0.0.1:$KUBERAY_HEALTH_PORT" \
		--enable-leader-election=false $(kuberay_batch_flag "$gang")

	local i
	for ((i = 0; i < nodes; i++)); do add_node "kwok-node-$i" "$capacity"; done
	echo "$nodes $capacity" >"$STATE/nodes"

	wait_until 60 "namespace default's service account" kc get serviceaccount default -n default ||
		{ tail -30 "$LOGS/kube-controller-manager.log"; die "kube-controller-manager is not working"; }
	if ((nodes > 0)); then
		wait_until 60 "$nodes kwok nodes Ready" nodes_ready "$nodes" || { tail -30 "$LOGS/kwok.log"; die "kwok nodes did not become Ready"; }
	fi
	wait_until 60 "kube-scheduler healthz" curl -skf "https://127.0.0.1:$SCHED_PORT/healthz" ||
		{ tail -30 "$LOGS/kube-scheduler.log"; die "kube-scheduler is not healthy"; }
	wait_until 60 "KubeRay operator readyz" curl -sf "http://127.0.0.1:$KUBERAY_HEALTH_PORT/readyz" ||
		{ tail -30 "$LOGS/kuberay-operator.log"; die "the KubeRay operator is not ready"; }

	if ((real_node)); then real_node_start; fi
	((karpenter == 0)) || start_karpenter "$karpenter_cpu"
	if [[ "$gang" == raygate ]] && ((real_node)); then
		real_node_install_raygate
	else
		case "$gang" in
		raygate) start_raygate ;;
		kueue) start_kueue ;;
		esac
	fi
	say "cluster up in $((SECONDS - t0))s: Kubernetes $K8S_VERSION$( ((native)) && echo " (native gang on)"), KubeRay $KUBERAY_VERSION, $nodes nodes ($capacity)$( ((karpenter)) && echo " and Karpenter's (cpu limit $karpenter_cpu)"), gang system $gang; export KUBECONFIG=$KUBECONFIG"
}

# ---------------------------------------------------------------- Karpenter (docs/nodes.md)
# karpenter_crds: the CRDs of Karpenter's kwok provider, from its module: the
# NodePool, NodeClaim and NodeOverlay kinds (karpenter.sh), the CapacityBuffer
# (autoscaling.x-k8s.io, served for its CapacityBuffer feature) and the KWOKNodeClass.
karpenter_crds() {
	local mod
	mod="$(karpenter_module_dir)"
	[[ -d "$mod/kwok/charts/crds" ]] || die "Karpenter's CRDs not found in $mod (hack/build-upstream.sh --with karpenter)"
	kc apply --server-side --force-conflicts -f "$mod/kwok/charts/crds/" \
		-f "$mod/kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml" >/dev/null
}

karpenter_ready() { curl -sf --max-time 2 "http://127.0.0.1:$KARPENTER_HEALTH_PORT/readyz" >/dev/null; }

# start_karpenter CPU-LIMIT: the namespace karpenter, a KWOKNodeClass and the
# NodePool default, then Karpenter, until ready. Its nodes carry the
# annotation kwok.x-k8s.io/node=fake, so the local kwok runs them. It serves
# metrics and health probes on every interface (it has no flag for the
# address): on the cluster's own ports (hack/lib.sh).
start_karpenter() {
	kc get namespace karpenter >/dev/null 2>&1 || kc create namespace karpenter >/dev/null
	kc apply -f - >/dev/null <<-EOF
		apiVersion: karpenter.kwok.sh/v1alpha1
		kind: KWOKNodeClass
		metadata:
		  name: default
		---
		apiVersion: karpenter.sh/v1
		kind: NodePool
		metadata:
		  name: default
		spec:
		  template:
		    spec:
		      requirements:
		      - {key: kubernetes.io/os, operator: In, values: [linux]}
		      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
		      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
		      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
		      expireAfter: Never
		  limits:
		    cpu: "$1"
		  disruption:
		    consolidationPolicy: WhenEmptyOrUnderutilized
		    consolidateAfter: 30s
	EOF
	start karpenter "$KARPENTER_BIN/karpenter" --disable-leader-election \
		--metrics-port "$KARPENTER_METRICS_PORT" --health-probe-port "$KARPENTER_HEALTH_PORT" \
		--feature-gates CapacityBuffer=true
	wait_until 60 "Karpenter readyz" karpenter_ready || { tail -30 "$LOGS/karpenter.log"; die "Karpenter is not ready"; }
}

# advertise_args [EXTRA-APISERVER-ARG...]: how the apiserver advertises
# itself. With a real node (its extra arguments advertise the host's address)
# nothing. Otherwise no pod reaches the API through the `kubernetes` Service
# (kwok's pods run nowhere; raygate, KubeRay and the tests use the kubeconfig
# on 127.0.0.1), so the Service gets no endpoints (--endpoint-reconciler-type
# none) and the apiserver advertises 127.0.0.1: Kubernetes 1.37 refuses a
# loopback address for the endpoint reconciler, and nothing else uses it.
advertise_args() {
	[[ " $* " == *" --advertise-address "* ]] && return 0
	printf '%s\n' --advertise-address 127.0.0.1 --endpoint-reconciler-type none
}

# start_api [EXTRA-APISERVER-ARG...]: etcd and kube-apiserver, until ready.
start_api() {
	start etcd "$ETCD_BIN/etcd" --name raygate-local --data-dir "$STATE/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "raygate-local=http://127.0.0.1:$ETCD_PEER_PORT" \
		--quota-backend-bytes 4294967296 --snapshot-count 100000
	wait_until 30 "etcd health" curl -sf "http://127.0.0.1:$ETCD_PORT/health" || { tail -20 "$LOGS/etcd.log"; die "etcd did not start"; }

	start kube-apiserver "$K8S_BIN/kube-apiserver" \
		--bind-address 127.0.0.1 --secure-port "$APISERVER_PORT" $(advertise_args "$@") \
		--etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
		--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-cluster-ip-range 10.96.0.0/16 \
		--authorization-mode Node,RBAC --allow-privileged=true \
		--enable-priority-and-fairness=false \
		--max-requests-inflight 2000 --max-mutating-requests-inflight 1000 \
		--profiling=false --v 1 "$@"
	wait_until 90 "kube-apiserver /readyz" api_ready || { tail -30 "$LOGS/kube-apiserver.log"; die "kube-apiserver did not become ready"; }
}

start_kcm() {
	start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
		--kubeconfig "$KUBECONFIG" --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
		--bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
		--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
		--use-service-account-credentials=false \
		--kube-api-qps 500 --kube-api-burst 1000 --concurrent-gc-syncs 50 --profiling=false --v 1 $(native_gates)
}

# Whether K8S_VERSION serves the native gang's beta API (1.37 and later).
native_gang_supported() {
	local minor="${K8S_VERSION#v1.}"
	minor="${minor%%.*}"
	((minor >= 37))
}

# native_gates: the feature gate of the native gang, for the scheduler and the
# controller-manager, when the cluster in STATE was brought up with it.
native_gates() {
	[[ "$(cat "$STATE/native-gang" 2>/dev/null)" == 1 ]] && printf '%s\n' --feature-gates GenericWorkload=true
	return 0
}

# claim_state ROLE: the state folder made this cluster's (worker: a cluster
# of nodes; manager: up --manager); refused while it holds another running
# cluster: up twice in one folder is one cluster (what runs stays), but a
# manager and a worker never share one.
claim_state() {
	local had
	had="$(cat "$STATE/role" 2>/dev/null)" || had=""
	if [[ -n "$had" && "$had" != "$1" ]] && running kube-apiserver; then
		die "$STATE holds a running $had cluster: take it down first, or use another RAYGATE_STATE"
	fi
	mkdir -p "$STATE" "$PIDS" "$LOGS"
	echo "$1" >"$STATE/role"
	echo "$_po" >"$STATE/port-offset"
	echo "$K8S_VERSION" >"$STATE/k8s-version"
	echo "$KUBERAY_VERSION" >"$STATE/kuberay-version"
}

# ---------------------------------------------------------------- many clusters (docs/dispatch.md)
# cmd_up_manager [--cluster-name NAME] [-- DISPATCH-ARG...]
cmd_up_manager() {
	local name=manager t0=$SECONDS kuberay=0
	while (($#)); do
		case "$1" in
		--kuberay) kuberay=1; shift ;;
		--cluster-name) name="${2:-}"; shift 2 || usage ;;
		--cluster-name=*) name="${1#*=}"; shift ;;
		--) shift; break ;;
		*) usage ;;
		esac
	done
	[[ "$name" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "--cluster-name takes a DNS label, not '$name'"
	RAYGATE_K8S_VERSION="$K8S_VERSION" RAYGATE_KUBERAY_VERSION="$KUBERAY_VERSION" bash "$here/build-upstream.sh" 2>&1 | sed -u '/: cached$/d; /^build-upstream: all upstream programs present$/d' >&2
	[[ -x "$ETCD_BIN/etcd" ]] || die "etcd not found in $ETCD_BIN: run hack/build-upstream.sh"
	rm -rf "$KUBECACHEDIR"
	claim_state manager
	COMPONENTS=("${MANAGER_COMPONENTS[@]}")
	echo "$name" >"$STATE/cluster-name"
	make_pki
	write_kubeconfig
	start_api
	# What is dispatched (KubeRay's kinds) and the Queues and PodGroups of raygate; no operator runs them here.
	kc apply --server-side --force-conflicts -f "$(kuberay_crd_dir)" >/dev/null
	kc apply --server-side --force-conflicts -f "$ROOT/manifests/crds/" >/dev/null
	wait_until 60 "CRDs established" crds_established || die "CRDs were not established"
	# The controller-manager: namespaces deleted whole, service accounts, garbage collection.
	start_kcm
	wait_until 60 "namespace default's service account" kc get serviceaccount default -n default ||
		{ tail -30 "$LOGS/kube-controller-manager.log"; die "kube-controller-manager is not working"; }
	kc get namespace raygate-system >/dev/null 2>&1 || kc create namespace raygate-system >/dev/null
	((kuberay)) && start_manager_kuberay
	start_dispatch "$@"
	say "manager $name up in $((SECONDS - t0))s (no nodes, $( ((kuberay)) && echo "KubeRay and raygate's /dispatch-suspend webhook" || echo "no KubeRay operator")); export KUBECONFIG=$KUBECONFIG"
	say "register workers: RAYGATE_STATE=$STATE RAYGATE_PORT_OFFSET=$_po hack/cluster.sh add-worker NAME KUBECONFIG"
}

# start_manager_kuberay: KubeRay's operator on a manager (up --manager
# --kuberay), and raygate's webhook first, registered at /dispatch-suspend
# only (manifests/dispatch/manager-webhook-configuration.yaml): the
# RayClusters and RayJobs of a dispatching Queue are suspended before KubeRay
# sees them, so it makes no pods for them (docs/dispatch.md).
start_manager_kuberay() {
	start_webhook "$ROOT/manifests/dispatch/manager-webhook-configuration.yaml"
	start kuberay-operator "$KUBERAY_BIN/ray-operator" \
		--kubeconfig "$KUBECONFIG" --metrics-addr "127.0.0.1:$KUBERAY_METRICS_PORT" \
		--health-probe-bind-address "127.0.0.1:$KUBERAY_HEALTH_PORT" --enable-leader-election=false
	wait_until 60 "KubeRay operator readyz" curl -sf "http://127.0.0.1:$KUBERAY_HEALTH_PORT/readyz" ||
		{ tail -30 "$LOGS/kuberay-operator.log"; die "the KubeRay operator is not ready"; }
}

# start_dispatch [ARG...]: the manager's dispatcher from build/, with ARGs
# after its usual flags (a later flag wins). Not built: says so, and the
# manager goes on without it (start-dispatch later).
start_dispatch() {
	local bin="$BUILD/dispatch/raygate-dispatch" name
	[[ "$(cat "$STATE/role" 2>/dev/null)" == manager ]] || die "start-dispatch: $STATE is not a manager (up --manager)"
	if [[ ! -x "$bin" ]]; then
		say "WARNING: the dispatcher is not built ($bin): the manager runs without it (meson compile -C $BUILD, then hack/cluster.sh start-dispatch)"
		return 0
	fi
	name="$(cat "$STATE/cluster-name")"
	start raygate-dispatch "$bin" --kubeconfig "$KUBECONFIG" --cluster-name "$name" --namespace raygate-system \
		--metrics-addr "127.0.0.1:$DISPATCH_METRICS_PORT" "$@"
	sleep 1
	running raygate-dispatch || { tail -20 "$LOGS/raygate-dispatch.log"; die "raygate-dispatch exited at once"; }
	say "raygate-dispatch running (log $LOGS/raygate-dispatch.log, metrics 127.0.0.1:$DISPATCH_METRICS_PORT)"
}

# cmd_add_worker NAME KUBECONFIG: registers a worker on this manager.
cmd_add_worker() {
	local name="${1:-}" wkc="${2:-}" sa=raygate-dispatch token cfg
	(($# == 2)) || usage
	[[ "$name" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "add-worker: a worker's name is a DNS label, not '$name'"
	[[ -r "$wkc" ]] || die "add-worker: no kubeconfig at $wkc"
	[[ "$(cat "$STATE/role" 2>/dev/null)" == manager ]] || die "add-worker: $STATE is not a manager (up --manager)"
	wkc="$(realpath -- "$wkc")"
	# On the worker: least privilege for the manager's dispatcher, and a token of its ServiceAccount.
	"$KUBECTL" --kubeconfig "$wkc" apply --server-side --force-conflicts -f "$ROOT/manifests/dispatch/worker-rbac.yaml" >/dev/null ||
		die "add-worker: cannot apply manifests/dispatch/worker-rbac.yaml on $name"
	token="$("$KUBECTL" --kubeconfig "$wkc" create token "$sa" -n raygate-system --duration 8760h)" ||
		die "add-worker: cannot make a token of $name's ServiceAccount raygate-system/$sa"
	cfg="$(worker_kubeconfig "$name" "$wkc" "$token")" || die "add-worker: cannot read the server and CA of $wkc"
	kc get namespace raygate-system >/dev/null 2>&1 || kc create namespace raygate-system >/dev/null
	# Server-side: a client-side apply would keep the token in the Secret's
	# last-applied-configuration annotation, readable without the data.
	jq -n --arg name "$name" --arg cfg "$cfg" '{apiVersion: "v1", kind: "Secret", type: "Opaque",
		metadata: {name: ("raygate-worker-" + $name), namespace: "raygate-system",
			labels: {"raygate.io/worker-cluster": $name}},
		data: {kubeconfig: ($cfg | @base64)}}' |
		kc apply --server-side --force-conflicts --field-manager raygate-add-worker -f - >/dev/null ||
		die "add-worker: cannot write the Secret"
	say "worker $name registered: Secret raygate-system/raygate-worker-$name on the manager"
}

# worker_kubeconfig NAME KUBECONFIG TOKEN: a kubeconfig (JSON) for the
# worker's server and CA (inline) with TOKEN, nothing else of KUBECONFIG.
worker_kubeconfig() {
	"$KUBECTL" --kubeconfig "$2" config view --raw --minify --flatten -o json |
		jq -e --arg name "$1" --arg token "$3" '.clusters[0].cluster as $c |
			select($c.server and $c["certificate-authority-data"]) |
			{apiVersion: "v1", kind: "Config", "current-context": $name,
			 clusters: [{name: $name, cluster: {server: $c.server, "certificate-authority-data": $c["certificate-authority-data"]}}],
			 users: [{name: "raygate-dispatch", user: {token: $token}}],
			 contexts: [{name: $name, context: {cluster: $name, user: "raygate-dispatch"}}]}'
}

# audit_args: kube-apiserver's audit flags (NUL-separated), after writing the
# policy: mutating verbs at Metadata level, one event per request (at
# ResponseComplete), nothing else; a log that is never rotated during a run.
audit_args() {
	cat >"$STATE/audit-policy.yaml" <<-EOF
		apiVersion: audit.k8s.io/v1
		kind: Policy
		omitStages: [RequestReceived, ResponseStarted, Panic]
		rules:
		- level: Metadata
		  verbs: [create, update, patch, delete, deletecollection]
		- level: None
	EOF
	printf '%s\0' --audit-policy-file "$STATE/audit-policy.yaml" --audit-log-path "$LOGS/audit.log" \
		--audit-log-format json --audit-log-mode blocking --audit-log-maxsize 100000 --audit-log-maxbackup 1
}

crds_established() {
	local total est
	total="$(kc get crd -o name | wc -l)"
	est="$(kc get crd -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Established")].status}{"\n"}{end}' | grep -c True)"
	((total >= 5 && est == total))
}

nodes_ready() {
	local want="$1" got
	got="$(kc get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True)"
	((got >= want))
}

cmd_down() {
	local i all
	mapfile -t all < <(all_components)
	real_node_down
	for ((i = ${#all[@]} - 1; i >= 0; i--)); do stop "${all[$i]}"; done
	rm -rf "$STATE"
	say "cluster down"
}

cmd_status() {
	local c pid rc=0
	for c in $(all_components); do
		if pid="$(pid_of "$c")"; then
			printf '%-24s running (pid %s)\n' "$c" "$pid"
		elif ! grep -qx "$c" "$STATE/components" 2>/dev/null; then
			printf '%-24s not started\n' "$c"
			[[ "$c" == raygate-* ]] || rc=1
		else
			printf '%-24s stopped\n' "$c"
			# Further gate instances come and go with the tests.
			[[ " ${COMPONENTS[*]} " != *" $c "* ]] || rc=1
		fi
	done
	if api_ready 2>/dev/null; then
		kc get nodes --no-headers 2>/dev/null | awk '{print "node " $1 " " $2}'
	fi
	return $rc
}

cmd_env() {
	echo "export KUBECONFIG=$KUBECONFIG"
	echo "export KUBECACHEDIR=$KUBECACHEDIR"
	echo "export PATH=$K8S_BIN:\$PATH"
}

# bad_flag COMMAND FLAG [WHY]: says which flag COMMAND refuses, and exits 2.
bad_flag() { say "$1: ${3:-unknown flag} '$2'"; exit 2; }

# flag_value COMMAND FLAG ARGC: FLAG needs a value (ARGC: the arguments left, FLAG's own included).
flag_value() { (($3 >= 2)) || bad_flag "$1" "$2" "flag needs a value:"; }

cmd_add_node() {
	local name="${1:-}"
	[[ -n "$name" && "$name" != -* ]] || { say "add-node: the node's name comes first"; exit 2; }
	shift
	local capacity="cpu=8,memory=32Gi" labels=() dra=() d
	while (($#)); do
		case "$1" in
		--node-capacity | --label | --dra) flag_value add-node "$1" $# ;;&
		--node-capacity) capacity="$2"; shift 2 ;;
		--label) labels+=("$2"); shift 2 ;;
		--dra)
			[[ "$2" =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?=[0-9]+$ ]] ||
				bad_flag add-node "--dra $2" "--dra takes DRIVER=N (a driver name such as gpu.example.com, a count), not"
			dra+=("$2"); shift 2 ;;
		*) bad_flag add-node "$1" ;;
		esac
	done
	if ((${#dra[@]})); then dra_served || die "add-node --dra: this cluster (Kubernetes $K8S_VERSION) does not serve resource.k8s.io/v1"; fi
	add_node "$name" "$capacity" "${labels[@]}"
	for d in ${dra[@]+"${dra[@]}"}; do
		node_devices "$name" "${d%%=*}" "${d#*=}" ${labels[@]+"${labels[@]}"}
		kc get deviceclass "${d%%=*}" >/dev/null 2>&1 || device_class "${d%%=*}" "${d%%=*}" "" "" ${labels[@]+"${labels[@]}"}
	done
}

# ---------------------------------------------------------------- devices (docs/dra.md)
# dra_served: the cluster serves Dynamic Resource Allocation's GA API (Kubernetes 1.34 and later).
dra_served() { kc get --raw /apis/resource.k8s.io/v1 2>/dev/null | jq -e '.resources[] | select(.name == "resourceslices")' >/dev/null; }

# labels_json LABEL...: k=v pairs as a JSON object
labels_json() {
	local kv
	for kv; do jq -n --arg k "${kv%%=*}" --arg v "${kv#*=}" '{($k): $v}'; done | jq -s 'add // {}'
}

# node_devices NODE DRIVER N [LABEL...]: the node's ResourceSlice of DRIVER with N
# devices (replacing one written before; owned by the node, so it goes with it).
node_devices() {
	local node="$1" driver="$2" n="$3" uid
	shift 3
	uid="$(kc get node "$node" -o jsonpath='{.metadata.uid}')" || die "add-node: node $node is not there"
	jq -n --arg node "$node" --arg uid "$uid" --arg driver "$driver" --argjson n "$n" --argjson labels "$(labels_json "$@")" '
		{apiVersion: "resource.k8s.io/v1", kind: "ResourceSlice",
		 metadata: {name: ($node + "-" + $driver), labels: $labels,
			ownerReferences: [{apiVersion: "v1", kind: "Node", name: $node, uid: $uid}]},
		 spec: {driver: $driver, nodeName: $node, pool: {name: $node, generation: 1, resourceSliceCount: 1},
			devices: [range($n) | {name: "gpu-\(.)", attributes: {index: {int: .}, model: {string: "example-gpu"}}}]}}' |
		kc apply -f - >/dev/null || die "add-node: the ResourceSlice of $driver on $node was refused"
}

# device_class NAME DRIVER EXTENDED-RESOURCE QUOTA-RESOURCE [LABEL...]: the DeviceClass (created or replaced).
device_class() {
	local name="$1" driver="$2" ext="$3" quota="$4"
	shift 4
	jq -n --arg name "$name" --arg driver "$driver" --arg ext "$ext" --arg quota "$quota" --argjson labels "$(labels_json "$@")" '
		{apiVersion: "resource.k8s.io/v1", kind: "DeviceClass",
		 metadata: ({name: $name, labels: $labels} + (if $quota == "" then {} else {annotations: {"raygate.io/quota-resource": $quota}} end)),
		 spec: ({selectors: [{cel: {expression: ("device.driver == \"" + $driver + "\"")}}]}
			+ (if $ext == "" then {} else {extendedResourceName: $ext} end))}' |
		kc apply --server-side --force-conflicts --field-manager raygate-cluster-sh -f - >/dev/null ||
		die "device-class: the DeviceClass $name was refused"
}

cmd_device_class() {
	local name="${1:-}" driver="" ext="" quota="" labels=()
	[[ -n "$name" && "$name" != -* ]] || { say "device-class: the class's name comes first"; exit 2; }
	shift
	while (($#)); do
		case "$1" in
		--driver | --extended-resource | --quota-resource | --label) flag_value device-class "$1" $# ;;&
		--driver) driver="$2"; shift 2 ;;
		--extended-resource) ext="$2"; shift 2 ;;
		--quota-resource) quota="$2"; shift 2 ;;
		--label) labels+=("$2"); shift 2 ;;
		*) bad_flag device-class "$1" ;;
		esac
	done
	[[ -n "$driver" ]] || { say "device-class: --driver DRIVER is required"; exit 2; }
	dra_served || die "device-class: this cluster (Kubernetes $K8S_VERSION) does not serve resource.k8s.io/v1"
	device_class "$name" "$driver" "$ext" "$quota" ${labels[@]+"${labels[@]}"}
}

cmd_stop() {
	local c="${1:?component}"
	stop "$c" "${2:-TERM}"
}

# restart COMPONENT [EXTRA-ARG...]: stops it and starts it again with the
# arguments it was first started with, plus EXTRA-ARGs (for this run only: a
# later restart without them drops them again).
cmd_restart() {
	local c="${1:?component}"; shift
	[[ -f "$PIDS/$c.pid" ]] || die "$c is not running"
	local -a args
	if [[ -f "$PIDS/$c.args" ]]; then
		mapfile -d '' -t args <"$PIDS/$c.args"
	else
		mapfile -d '' -t args <"/proc/$(cat "$PIDS/$c.pid")/cmdline"
		printf '%s\0' "${args[@]}" >"$PIDS/$c.args"
	fi
	# While RAYGATE_HOLD_GANGS is set, a restart of the webhook holds gangs as it asks (hold_flag), unless told.
	if [[ "$c" == raygate-webhook && -n "${RAYGATE_HOLD_GANGS:-}" && " $* " != *" --hold-gangs"* ]]; then
		set -- "$@" "$(hold_flag)"
	fi
	stop "$c"
	start "$c" "${args[@]}" "$@"
}

[[ "${1:-}" == down ]] || check_state_offset
case "${1:-}" in
up) shift; cmd_up "$@" ;;
add-worker) shift; cmd_add_worker "$@" ;;
start-dispatch) shift; start_dispatch "$@" ;;
down) cmd_down ;;
status) cmd_status ;;
env) cmd_env ;;
add-node) shift; cmd_add_node "$@" ;;
device-class) shift; cmd_device_class "$@" ;;
restart) shift; cmd_restart "$@" ;;
stop) shift; cmd_stop "$@" ;;
start-gate) shift; start_gate "$@" ;;
start-webhook) start_webhook ;;
*) usage ;;
esac
