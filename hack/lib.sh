# Shared helpers for hack/*.sh and tests/e2e/*.sh. Source it; it sets:
#   ROOT        the repository
#   STATE       the local cluster's state folder (.cluster/, git-ignored)
#   KUBECONFIG  the local cluster's admin kubeconfig (exported)
#   KUBECTL     the kubectl built from the same Kubernetes release
#   KUBECACHEDIR kubectl's discovery and HTTP cache, the local cluster's own
#               (exported): ~/.kube/cache is keyed by server address, and an
#               earlier cluster on the same port may have served other API groups
_lib_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$_lib_here/.." && pwd)"
# Absolute, whatever the caller's folder: a relative RAYGATE_STATE is taken
# from where the command runs, and the paths written into the kubeconfig (its
# CA), the components' arguments and the e2e tests (meson runs them elsewhere)
# must all name that same folder. Unset: .cluster/ for RAYGATE_PORT_OFFSET 0,
# .cluster-OFFSET/ for another, so that two clusters never share one.
STATE="${RAYGATE_STATE:-$ROOT/.cluster${RAYGATE_PORT_OFFSET:+-$RAYGATE_PORT_OFFSET}}"
[[ "$STATE" != "$ROOT/.cluster-0" ]] || STATE="$ROOT/.cluster"
STATE="$(realpath -m -- "$STATE")"
export RAYGATE_STATE="$STATE"
# The versions: the environment's, else those the cluster in STATE was brought
# up with (hack/cluster.sh up records them), else versions.sh's newest.
[[ -n "${RAYGATE_K8S_VERSION:-}" || ! -f "$STATE/k8s-version" ]] || RAYGATE_K8S_VERSION="$(cat "$STATE/k8s-version")"
[[ -n "${RAYGATE_KUBERAY_VERSION:-}" || ! -f "$STATE/kuberay-version" ]] || RAYGATE_KUBERAY_VERSION="$(cat "$STATE/kuberay-version")"
. "$_lib_here/versions.sh"
# Not exported: a script's children (the tests, hack/cluster.sh) resolve them
# again, so that a command on a cluster takes that cluster's.
export KUBECONFIG="$STATE/kubeconfig"
export KUBECACHEDIR="$STATE/kube-cache"
KUBECTL="$K8S_BIN/kubectl"
BUILD="${RAYGATE_BUILD:-$ROOT/build}"

# Ports, all on 127.0.0.1; moved off the defaults so a developer's own
# cluster or a system etcd does not collide. RAYGATE_PORT_OFFSET shifts them
# all, so that several local clusters (each with its own RAYGATE_STATE) can
# run side by side, e.g. one per git worktree, or hack/test.sh's e2e shards
# (RAYGATE_PORT_OFFSET, +50, +100, ...).
_po="${RAYGATE_PORT_OFFSET:-0}"
# Offsets are multiples of 50 up to 950: under 1,000 the ports of one cluster
# (these, the real node's, the peers', hack/bench.sh's and the tests' own, like
# test_gate_metrics' GATE_METRICS_PORT + 7) differ by 1 to 26, 131 to 159, 346
# to 379 and 503 to 512, never by a multiple of 50; an offset of 3000 would put
# one cluster's apiserver on another's webhook port. The many-cluster tests
# (tests/e2e/multi.sh) add a worker at N + 20 and a manager at N + 40 beside
# the cluster at N: those differ from N and each other by 20 or 40, which no two
# ports of a cluster do (but the peers' Kueue, never run there), and N + 40
# needs N + 50 free (its etcd peer and controller-manager ports are N + 50's
# etcd and kwok ports): hack/e2e.sh skips N + 50 after that shard.
[[ "$_po" =~ ^[0-9]+$ ]] && ((_po % 50 % 20 == 0 && _po <= 990)) ||
	{ echo "RAYGATE_PORT_OFFSET must be one of 0, 50, 100, ..., 950 (or one of those + 20 or + 40)" >&2; exit 2; }
ETCD_PORT="${RAYGATE_ETCD_PORT:-$((23790 + _po))}"
ETCD_PEER_PORT="${RAYGATE_ETCD_PEER_PORT:-$((23800 + _po))}"
APISERVER_PORT="${RAYGATE_APISERVER_PORT:-$((26443 + _po))}"
KCM_PORT="${RAYGATE_KCM_PORT:-$((20257 + _po))}"
SCHED_PORT="${RAYGATE_SCHED_PORT:-$((20259 + _po))}"
KWOK_PORT="${RAYGATE_KWOK_PORT:-$((20247 + _po))}"
KUBERAY_METRICS_PORT="${RAYGATE_KUBERAY_METRICS_PORT:-$((28080 + _po))}"
KUBERAY_HEALTH_PORT="${RAYGATE_KUBERAY_HEALTH_PORT:-$((28082 + _po))}"
# Karpenter (up --karpenter) binds these on every interface: it takes a port, not an address.
KARPENTER_METRICS_PORT="${RAYGATE_KARPENTER_METRICS_PORT:-$((28084 + _po))}"
KARPENTER_HEALTH_PORT="${RAYGATE_KARPENTER_HEALTH_PORT:-$((28086 + _po))}"
WEBHOOK_PORT="${RAYGATE_WEBHOOK_PORT:-$((29443 + _po))}"
GATE_METRICS_PORT="${RAYGATE_GATE_METRICS_PORT:-$((29090 + _po))}"
DISPATCH_METRICS_PORT="${RAYGATE_DISPATCH_METRICS_PORT:-$((29091 + _po))}"

# check_state_offset: dies when the state folder belongs to a cluster on
# another RAYGATE_PORT_OFFSET (hack/cluster.sh up records it): its ports are
# not this command's, and two clusters never share a state folder.
check_state_offset() {
	local had
	had="$(cat "$STATE/port-offset" 2>/dev/null)" || return 0
	[[ "$had" == "$_po" ]] ||
		die "$STATE is the state of the cluster on RAYGATE_PORT_OFFSET=$had, not $_po: set that offset, or another RAYGATE_STATE"
}

# hack/e2e.sh's shards: shard K (1..N) runs a cluster of its own on
# RAYGATE_PORT_OFFSET + 50 (K - 1), its state in $STATE-e2e-K.
shard_offset() { echo $((_po + 50 * ($1 - 1))); }
shard_state() { echo "$STATE-e2e-$1"; }
# check_shards N: dies unless N is a number of shards whose offsets all exist.
check_shards() {
	[[ "$1" =~ ^[1-9][0-9]*$ ]] || die "--shards takes a number from 1, not '$1'"
	(($(shard_offset "$1") <= 950)) ||
		die "$1 shards from RAYGATE_PORT_OFFSET=$_po need offsets up to $(shard_offset "$1"); the last is 950"
}

kc() { "$KUBECTL" "$@"; }

say() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.2 s.
wait_until() {
	local limit="$1" what="$2"; shift 2
	local deadline=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			say "timed out after ${limit}s waiting for: $what"
			return 1
		fi
		sleep 0.2
	done
}
